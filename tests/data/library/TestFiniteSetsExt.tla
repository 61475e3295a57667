-------------------------- MODULE TestFiniteSetsExt --------------------------
(* Checks every operator of our FiniteSetsExt (and Folds) on small values.  *)
EXTENDS Integers, Sequences, FiniteSets, FiniteSetsExt

ASSUME FoldSet(LAMBDA x, y : x + y, 0, 1..4) = 10
ASSUME FoldSet(LAMBDA x, y : x + y, 7, {}) = 7
ASSUME FoldSet(LAMBDA x, y : {x} \cup y, {}, {1, 2}) = {1, 2}
ASSUME ReduceSet(LAMBDA x, y : x + y, 1..4, 0) = 10
ASSUME SumSet({1, 2, 3}) = 6 /\ SumSet({}) = 0 /\ SumSet(1..100) = 5050
ASSUME ProductSet({2, 3, 4}) = 24 /\ ProductSet({}) = 1
ASSUME MapThenSumSet(LAMBDA x : x * x, {1, 2, 3}) = 14
ASSUME MapThenSumSet(LAMBDA x : x, {}) = 0
ASSUME MapThenFoldSet(LAMBDA x, y : x + y, 0, LAMBDA x : 2 * x,
                      LAMBDA T : CHOOSE t \in T : TRUE, {1, 2, 3}) = 12
\* With a choose function that fixes the order the fold is deterministic.
ASSUME MapThenFoldSet(LAMBDA x, y : <<x>> \o y, << >>, LAMBDA x : x,
                      LAMBDA T : CHOOSE t \in T : \A u \in T : t =< u, {3, 1, 2})
       = <<1, 2, 3>>
ASSUME FlattenSet({{1}, {2, 3}, {}}) = {1, 2, 3} /\ FlattenSet({}) = {}
ASSUME SymDiff({1, 2}, {2, 3}) = {1, 3} /\ SymDiff({1}, {1}) = {}
ASSUME Quantify(1..9, LAMBDA n : n % 2 = 0) = 4 /\ Quantify({}, LAMBDA n : TRUE) = 0
ASSUME kSubset(2, {1, 2, 3}) = {{1, 2}, {1, 3}, {2, 3}}
ASSUME kSubset(0, {1, 2}) = {{}} /\ kSubset(3, {1, 2}) = {} /\ kSubset(2, {}) = {}
ASSUME kSubset(-1, {1, 2}) = {}
ASSUME kSubset(3, 1..3) = {1..3}
ASSUME Cardinality(kSubset(3, 1..12)) = 220
ASSUME \A T \in kSubset(3, 1..12) : Cardinality(T) = 3
ASSUME Max({3, 1, 2}) = 3 /\ Min({3, 1, 2}) = 1 /\ Max({-5, -2}) = -2
ASSUME Max({7}) = 7 /\ Min({7}) = 7
ASSUME Choices({{1, 2}, {2, 3}, {5}}) = {{2, 5}, {1, 2, 5}, {1, 3, 5}, {2, 3, 5}}
ASSUME Choices({}) = {{}} /\ Choices({{1}, {}}) = {}
ASSUME ChooseUnique({2, 3, 4, 5}, LAMBDA x : x % 3 = 1) = 4

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
