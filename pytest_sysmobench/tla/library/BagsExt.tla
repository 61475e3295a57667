------------------------------- MODULE BagsExt -------------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the BagsExt operators, *)
(* for TLC 2.15, which does not ship the TLA+ CommunityModules.  Written   *)
(* from the documented names and meanings; a bag is, as in the standard    *)
(* Bags module, a function from its elements to their (positive) counts.   *)
(***************************************************************************)
LOCAL INSTANCE Bags
LOCAL INSTANCE Integers
LOCAL INSTANCE Folds

(* B with one more copy of x. *)
BagAdd(B, x) ==
    IF x \in DOMAIN B
    THEN [e \in DOMAIN B |-> IF e = x THEN B[e] + 1 ELSE B[e]]
    ELSE [e \in DOMAIN B \cup {x} |-> IF e = x THEN 1 ELSE B[e]]

(* B with one copy of x fewer (B itself if x is not in B). *)
BagRemove(B, x) ==
    IF x \in DOMAIN B
    THEN IF B[x] = 1
         THEN [e \in DOMAIN B \ {x} |-> B[e]]
         ELSE [e \in DOMAIN B |-> IF e = x THEN B[e] - 1 ELSE B[e]]
    ELSE B

(* B without any copy of x. *)
BagRemoveAll(B, x) == [e \in DOMAIN B \ {x} |-> B[e]]

(* Starting from base, combine f(x) for every copy of every element x of   *)
(* B with op, taking the elements in the order given by choose.            *)
MapThenFoldBag(op(_, _), base, f(_), choose(_), B) ==
    LET Step(x, acc) == LET RECURSIVE Rep(_, _)
                            Rep(k, a) == IF k = 0 THEN a ELSE op(f(x), Rep(k - 1, a))
                        IN  Rep(B[x], acc)
    IN MapThenFoldSet(Step, base, LAMBDA x : x, choose, DOMAIN B)

(* Combine every copy of every element of B with op, starting from base.   *)
FoldBag(op(_, _), base, B) ==
    MapThenFoldBag(op, base, LAMBDA x : x, LAMBDA S : CHOOSE x \in S : TRUE, B)

(* The sum of the elements of a bag of numbers, copies counted.            *)
SumBag(B) == FoldBag(LAMBDA x, y : x + y, 0, B)

(* The product of the elements of a bag of numbers, copies counted.        *)
ProductBag(B) == FoldBag(LAMBDA x, y : x * y, 1, B)

=============================================================================
