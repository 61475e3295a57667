------------------------- MODULE TestCommunityMeaning -------------------------
(* Our library against the meaning a spec author gets from TLC with the     *)
(* CommunityModules: where those have a Java override (modules/tlc2/       *)
(* overrides/*.java) TLC runs the override, elsewhere the community TLA+   *)
(* definition.  Every expected value is a literal worked out by hand from  *)
(* the definition named in the comment above it.  The operators are        *)
(* non-commutative or mix types, so that the order of the arguments of op   *)
(* and the order of traversal show.  Numbers, not strings, are folded      *)
(* where the order shows: TLC orders strings by when it first read them.  *)
EXTENDS Integers, Sequences, FiniteSets, Bags, TLC,
        SequencesExt, FiniteSetsExt, Functions, Folds, BagsExt

Push(x, acc) == Append(acc, x)           \* element first, accumulator second
Snoc2(acc, x) == Append(acc, x)          \* accumulator first, element second
Pair(a, b) == <<a, b>>
Minus(a, b) == a - b

-----------------------------------------------------------------------------
(* FiniteSetsExt.java foldSet: acc := op(x, acc) for each x of the set in  *)
(* TLC's order (ascending for numbers), starting from base.                *)
ASSUME FoldSet(Push, << >>, {3, 1, 2}) = <<1, 2, 3>>
ASSUME FoldSet(Push, << >>, 3..5) = <<3, 4, 5>>
ASSUME FoldSet(Pair, 0, {2, 1}) = <<2, <<1, 0>> >>
ASSUME FoldSet(Minus, 0, 1..4) = 4 - (3 - (2 - (1 - 0)))
ASSUME FoldSet(Minus, 0, 1..4) = 2
ASSUME FoldSet(Push, << >>, {<<2>>, <<1, 1>>, << >>}) = << << >>, <<2>>, <<1, 1>> >>
ASSUME FoldSet(Push, << >>, {{2}, {1, 3}, {}}) = << {}, {2}, {1, 3} >>
ASSUME FoldSet(Push, << >>, {}) = << >>
\* element and accumulator of different types
ASSUME FoldSet(LAMBDA r, acc : acc + r.n, 0, {[n |-> 1], [n |-> 2]}) = 3
\* FiniteSetsExt.tla ReduceSet(op, set, acc) == FoldSet(op, acc, set): the override
ASSUME ReduceSet(Push, {3, 1, 2}, << >>) = <<1, 2, 3>>
ASSUME ReduceSet(Minus, 1..4, 0) = 2
\* FiniteSetsExt.tla SumSet / ProductSet: FoldSet with + and *
ASSUME SumSet({3, -1, 2}) = 4 /\ SumSet({}) = 0 /\ ProductSet({}) = 1
ASSUME ProductSet({-2, 3}) = -6
\* FiniteSetsExt.java kSubset: {} for k < 0 or k > Cardinality(S), {{}} for k = 0
ASSUME kSubset(0, {}) = {{}} /\ kSubset(1, {}) = {} /\ kSubset(-1, {1}) = {}
ASSUME kSubset(2, {5, 6}) = {{5, 6}}
\* FiniteSetsExt.java quantify: counts the elements satisfying the test
ASSUME Quantify({-1, 0, 1}, LAMBDA x : x >= 0) = 2

-----------------------------------------------------------------------------
(* Folds.tla MapThenFoldSet (no override): op(f(x1), op(f(x2), ...          *)
(* op(f(xn), base))) with x1 = choose(S), x2 = choose(S \ {x1}), ...        *)
ASSUME MapThenFoldSet(Push, << >>, LAMBDA x : 10 * x,
                      LAMBDA S : CHOOSE x \in S : TRUE, {3, 1, 2})
       = <<30, 20, 10>>
ASSUME MapThenFoldSet(Push, << >>, LAMBDA x : x,
                      LAMBDA S : CHOOSE x \in S : \A y \in S : x >= y, {3, 1, 2})
       = <<1, 2, 3>>
\* the community's FoldsTests: x - y over <<1, 2, 3, 4>>, by Max and by Min
ASSUME LET seq == <<1, 2, 3, 4>>
       IN  /\ MapThenFoldSet(Minus, 0, LAMBDA i : seq[i],
                             LAMBDA s : CHOOSE x \in s : \A y \in s : x >= y,
                             DOMAIN seq) = 2
           /\ MapThenFoldSet(Minus, 0, LAMBDA i : seq[i],
                             LAMBDA s : CHOOSE x \in s : \A y \in s : x =< y,
                             DOMAIN seq) = -2
ASSUME MapThenFoldSet(Push, 7, LAMBDA x : x, LAMBDA S : CHOOSE x \in S : TRUE, {}) = 7
\* FiniteSetsExt.tla MapThenSumSet: MapThenFoldSet with +
ASSUME MapThenSumSet(LAMBDA e : e.n, {[n |-> 0], [n |-> 1], [n |-> 2]}) = 3

-----------------------------------------------------------------------------
(* Functions.java foldFunctionOnSet: acc := op(fun[i], acc) for each index *)
(* i in TLC's order, starting from base; foldFunction over DOMAIN fun.     *)
ASSUME FoldFunction(Push, << >>, <<30, 10, 20>>) = <<30, 10, 20>>
ASSUME FoldFunction(Push, << >>, [i \in {3, 1, 2} |-> 10 * i]) = <<10, 20, 30>>
ASSUME FoldFunction(Minus, 0, <<1, 2, 3, 4>>) = 2
ASSUME FoldFunction(Pair, 0, <<5, 6>>) = <<6, <<5, 0>> >>
ASSUME FoldFunction(Push, << >>, << >>) = << >>
ASSUME FoldFunctionOnSet(Push, << >>, <<10, 20, 30>>, {3, 1}) = <<10, 30>>
ASSUME FoldFunctionOnSet(Push, << >>, <<10, 20, 30>>, {}) = << >>
ASSUME FoldFunctionOnSet(LAMBDA r, acc : acc + r.n, 100,
                         <<[n |-> 1], [n |-> 2], [n |-> 4]>>, {1, 3}) = 105
\* Functions.tla Pointwise(f, g, T(_,_)): the operator comes last
ASSUME Pointwise(<<1, 2>>, <<10, 20>>, Minus) = <<-9, -18>>
ASSUME Pointwise(("a" :> 0 @@ "b" :> 1), ("a" :> 1 @@ "b" :> 1 @@ "c" :> 3), +)
       = ("a" :> 1 @@ "b" :> 2)
\* Functions.java antiFunction: the inverse of an injective function
ASSUME AntiFunction(<<20, 10>>) = (20 :> 1 @@ 10 :> 2)
ASSUME AntiFunction(<< >>) = << >>
\* Functions.tla Inverse: CHOOSE s \in S : t \in Range(f) => f[s] = t
ASSUME Inverse(<<5, 5>>, {1, 2}, {5, 6}) = (5 :> 1 @@ 6 :> 1)
\* Functions.java IsInjective
ASSUME IsInjective(<< >>) /\ ~ IsInjective(<<1, 1>>) /\ IsInjective(<<{1}, {2}>>)

-----------------------------------------------------------------------------
(* SequencesExt.java: foldSeq = foldFunction (acc := op(seq[i], acc), i =   *)
(* 1, 2, ...); foldLeft acc := op(acc, seq[i]) from the front; foldRight    *)
(* acc := op(seq[i], acc) from the back; the *Domain variants fold i.      *)
ASSUME FoldSeq(Push, << >>, <<3, 1, 2>>) = <<3, 1, 2>>
ASSUME FoldSeq(Minus, 0, <<1, 2, 3, 4>>) = 4 - (3 - (2 - (1 - 0)))
ASSUME FoldSeq(Pair, 0, <<5, 6>>) = <<6, <<5, 0>> >>
ASSUME FoldSeq(Push, 0, << >>) = 0
ASSUME FoldLeft(Snoc2, << >>, <<3, 1, 2>>) = <<3, 1, 2>>
ASSUME FoldLeft(Pair, 0, <<5, 6>>) = << <<0, 5>>, 6 >>
ASSUME FoldLeft(Minus, 10, <<1, 2, 3>>) = ((10 - 1) - 2) - 3
ASSUME FoldRight(Push, <<3, 1, 2>>, << >>) = <<2, 1, 3>>
ASSUME FoldRight(Pair, <<5, 6>>, 0) = <<5, <<6, 0>> >>
ASSUME FoldRight(Minus, <<1, 2, 3>>, 10) = 1 - (2 - (3 - 10))
ASSUME FoldLeft(Snoc2, 7, << >>) = 7 /\ FoldRight(Push, << >>, 7) = 7
ASSUME FoldLeftDomain(Snoc2, << >>, <<"x", "y", "z">>) = <<1, 2, 3>>
ASSUME FoldRightDomain(Push, <<"x", "y", "z">>, << >>) = <<3, 2, 1>>
ASSUME FoldLeftDomain(Minus, 0, <<7, 7, 7>>) = ((0 - 1) - 2) - 3
ASSUME FoldRightDomain(Minus, <<7, 7, 7>>, 0) = 1 - (2 - (3 - 0))
\* long sequences: the overrides are loops, and so must ours not overflow
ASSUME FoldLeft(+, 0, [i \in 1..5000 |-> i]) = 12502500
ASSUME FoldRight(Minus, [i \in 1..3000 |-> i], 0) = -1500
ASSUME FoldSeq(Minus, 0, [i \in 1..3000 |-> i]) = 1500

(* SequencesExt.java SetToSeq: the set's elements in TLC's order.          *)
ASSUME SetToSeq({3, 1, 2}) = <<1, 2, 3>>
ASSUME SetToSeq({<<2>>, <<1, 1>>, << >>}) = << << >>, <<2>>, <<1, 1>> >>
(* SequencesExt.tla SetToSortSeq == SortSeq(SetToSeq(S), op).              *)
ASSUME SetToSortSeq({3, 1, 2}, >) = <<3, 2, 1>>
ASSUME SetToSortSeq({3, 1, 2, 4}, LAMBDA a, b : a % 2 < b % 2) = <<2, 4, 1, 3>>

(* SequencesExt.java selectInSeq / selectLastInSeq: first (last) match,    *)
(* testing from the front (back) and stopping there; 0 if none.            *)
ASSUME SelectInSeq(<<1, "a">>, LAMBDA x : x = 1) = 1
ASSUME SelectLastInSeq(<<"a", 1>>, LAMBDA x : x = 1) = 2
ASSUME SelectInSeq(<< >>, LAMBDA x : TRUE) = 0
(* SequencesExt.java SelectInSubSeq / SelectLastInSubSeq: the index is     *)
(* into seq itself (the community's SequencesExtTests: <<1,1,2>>, 2, 3,    *)
(* e = 1 gives 2); 0 if from > to.                                         *)
ASSUME SelectInSubSeq(<<1, 1, 2>>, 2, 3, LAMBDA e : e = 1) = 2
ASSUME SelectInSubSeq(<<1, 1, 2, 2>>, 2, 4, LAMBDA e : e = 2) = 3
ASSUME SelectInSubSeq(<<2, 1, 2, 3>>, 2, 2, LAMBDA e : e = 2) = 0
ASSUME SelectInSubSeq(<<2, 1, 2, 3>>, 3, 2, LAMBDA e : e = 2) = 0
ASSUME SelectInSubSeq(<< >>, 1, 0, LAMBDA e : TRUE) = 0
ASSUME SelectLastInSubSeq(<<1, 1, 2>>, 1, 3, LAMBDA e : e = 1) = 2
ASSUME SelectLastInSubSeq(<<1, 1, 2, 2>>, 2, 4, LAMBDA e : e = 2) = 4
ASSUME SelectLastInSubSeq(<<2, 2, 1, 3>>, 2, 4, LAMBDA e : e = 2) = 2
ASSUME SelectLastInSubSeq(<<2, 2, 1, 3>>, 3, 4, LAMBDA e : e = 2) = 0
ASSUME SelectLastInSubSeq(<<2, 2, 1, 3>>, 4, 1, LAMBDA e : e = 2) = 0
(* SequencesExt.java removeFirst / removeFirstMatch: nothing after the     *)
(* first match is compared or tested.                                      *)
ASSUME RemoveFirst(<<1, "a">>, 1) = <<"a">>
ASSUME RemoveFirstMatch(<<1, "a">>, LAMBDA x : x = 1) = <<"a">>
ASSUME RemoveFirst(<< >>, 3) = << >>
(* SequencesExt.java longestCommonPrefix (also on strings).                *)
ASSUME LongestCommonPrefix({<<1, 2, 3>>, <<1, 2, 4>>, <<1, 2>>}) = <<1, 2>>
ASSUME LongestCommonPrefix({<< >>, <<1>>}) = << >>
ASSUME LongestCommonPrefix({"abc", "abd"}) = "ab"
(* SequencesExt.tla CommonPrefixes: {} for S = {}.                          *)
ASSUME CommonPrefixes({}) = {} /\ CommonPrefixes({<< >>}) = {<< >>}
(* SequencesExt.tla Interleave: << <<>>, <<>> >> for two empty sequences.  *)
ASSUME Interleave(<< >>, << >>) = << << >>, << >> >>
ASSUME Interleave(<<1, 3>>, <<2, 4>>) = << <<1>>, <<2>>, <<3>>, <<4>> >>
(* SequencesExt.tla IndexFirstSubSeq, ReplaceFirstSubSeq,                  *)
(* ReplaceAllSubSeqs (cases where the definition has one answer).          *)
ASSUME IndexFirstSubSeq(<< >>, << >>) = 1
ASSUME ReplaceFirstSubSeq(<<9>>, << >>, << >>) = <<9>>
ASSUME ReplaceFirstSubSeq(<<9>>, <<1, 2, 3>>, <<1, 2>>) = <<1, 2>>
ASSUME ReplaceAllSubSeqs(<<9>>, <<1, 1>>, <<2, 1, 1>>) = <<2, 9>>
ASSUME ReplaceAllSubSeqs(<<9>>, <<1, 2>>, <<1, 2, 1, 2>>) = <<9, 9>>
ASSUME ReplaceAllSubSeqs(<<1>>, <<1>>, <<1, 2>>) = <<1, 2>>

-----------------------------------------------------------------------------
(* BagsExt.java foldBag: acc := op(acc, x) for every copy of every element *)
(* x, the elements in TLC's order, starting from base.                     *)
Msgs == SetToBag({[n |-> 1, src |-> "a"], [n |-> 2, src |-> "b"]})
          (+) SetToBag({[n |-> 2, src |-> "b"]})
ASSUME FoldBag(Snoc2, << >>, SetToBag({3, 1}) (+) SetToBag({1})) = <<1, 1, 3>>
ASSUME FoldBag(Snoc2, << >>, (1 :> 2) @@ (2 :> 1) @@ (3 :> 3)) = <<1, 1, 2, 3, 3, 3>>
ASSUME FoldBag(Pair, 0, <<2, 1>>) = << <<<<0, 1>>, 1>>, 2>>
ASSUME FoldBag(Minus, 100, <<2, 1>>) = ((100 - 1) - 1) - 2
\* the accumulator and the elements of different types, as in etcd's spec
ASSUME FoldBag(LAMBDA acc, m : acc + m.n, 0, Msgs) = 5
ASSUME FoldBag(LAMBDA acc, m : [acc EXCEPT ![m.src] = @ + m.n],
               [s \in {"a", "b"} |-> 0], Msgs) = [a |-> 1, b |-> 4]
ASSUME FoldBag(Snoc2, << >>, EmptyBag) = << >>
\* the community's BagsExtTests: large counts
ASSUME FoldBag(+, 0, (1 :> 1000) @@ (-2 :> 500)) = 0
ASSUME ProductBag((0 :> 1) @@ (10000 :> 1000)) = 0
\* BagsExt.tla SumBag / ProductBag: FoldBag with + and *
ASSUME SumBag((1 :> 2) @@ (2 :> 1) @@ (3 :> 2)) = 10
ASSUME SumBag((1 :> 2) @@ (-2 :> 1)) = 0 /\ ProductBag((1 :> 2) @@ (-2 :> 1)) = -2
ASSUME SumBag(EmptyBag) = 0 /\ ProductBag(EmptyBag) = 1

(* BagsExt.tla MapThenFoldBag (no override): Block(x) folds the B[x]       *)
(* copies of f(x) onto base, op(...op(base, f(x))..., f(x)); the blocks    *)
(* are combined by MapThenFoldSet with CHOOSE order (choose is not used):  *)
(* op(Block(x1), op(Block(x2), ... op(Block(xn), base))).                  *)
ASSUME MapThenFoldBag(+, 10, LAMBDA x : x, LAMBDA S : CHOOSE x \in S : TRUE,
                      SetToBag({1, 2}) (+) SetToBag({2}))
       = (10 + 1) + ((10 + 2 + 2) + 10)
ASSUME MapThenFoldBag(Pair, 0, LAMBDA x : 10 * x, LAMBDA S : CHOOSE x \in S : TRUE,
                      (1 :> 2) @@ (2 :> 1))
       = << <<<<0, 10>>, 10>>, << <<0, 20>>, 0 >> >>
\* choose is not used: the largest-first choice gives the same result
ASSUME MapThenFoldBag(LAMBDA x, y : x \o y, << >>, LAMBDA x : <<x>>,
                      LAMBDA S : CHOOSE x \in S : \A y \in S : x >= y,
                      (1 :> 2) @@ (2 :> 1) @@ (3 :> 3))
       = <<1, 1, 2, 3, 3, 3>>
ASSUME MapThenFoldBag(+, 5, LAMBDA x : 1, LAMBDA S : CHOOSE x \in S : TRUE, EmptyBag) = 5

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
