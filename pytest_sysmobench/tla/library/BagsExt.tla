------------------------------- MODULE BagsExt -------------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the BagsExt operators, *)
(* for TLC 2.15, which does not ship the TLA+ CommunityModules.  A bag is, *)
(* as in the standard Bags module, a function from its elements to their   *)
(* (positive) counts.                                                      *)
(*                                                                         *)
(* Each operator means what it means to a spec author running TLC with the *)
(* CommunityModules: where those have a Java override (FoldBag, hence also *)
(* SumBag and ProductBag), TLC evaluates the override, so the definitions  *)
(* here compute what the override computes; elsewhere they agree with the  *)
(* community TLA+ definition, quirks included.                             *)
(***************************************************************************)
LOCAL INSTANCE Bags
LOCAL INSTANCE Integers
LOCAL INSTANCE Folds
LOCAL INSTANCE TLC

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

(***************************************************************************)
(* MapThenFoldBag has no override, so its meaning is the community TLA+   *)
(* definition, which is not FoldBag with f applied first:                  *)
(*   - the copies of each element x are folded on their own, from base:    *)
(*       Block(x) = op(...op(op(base, f(x)), f(x))..., f(x))               *)
(*     with B[x] applications of op (TLC fails unless B[x] is a positive   *)
(*     integer);                                                           *)
(*   - the blocks are combined as MapThenFoldSet combines values,          *)
(*       op(Block(x1), op(Block(x2), ... op(Block(xn), base) ...))         *)
(*     with x1, x2, ... in TLC's CHOOSE order: the choose argument is not  *)
(*     used.                                                               *)
(* So base enters once per distinct element and once more at the end.      *)
(* For an associative and commutative op with identity base the result is  *)
(* the fold of f over every copy.                                          *)
(*   MapThenFoldBag(LAMBDA x, y : x + y, 10, LAMBDA x : x,                 *)
(*                  LAMBDA S : CHOOSE x \in S : TRUE,                      *)
(*                  SetToBag({1, 2}) (+) SetToBag({2}))                    *)
(*     = (10 + 1) + ((10 + 2 + 2) + 10) = 35                               *)
(***************************************************************************)
MapThenFoldBag(op(_, _), base, f(_), choose(_), B) ==
    LET Block(x) ==
          LET blk[k \in 1..B[x]] ==
                op(IF k = 1 THEN base ELSE blk[k - 1], f(x))
          IN  blk[B[x]]
    IN  MapThenFoldSet(op, base, Block,
                       LAMBDA S : CHOOSE x \in S : TRUE, DOMAIN B)

(***************************************************************************)
(* FoldBag(op, base, B) is what TLC's FoldBag override computes: a left    *)
(* fold, acc := op(acc, x) once for every copy of every element x of B,    *)
(* starting from acc = base, the copies of an element one after the        *)
(* other.  The accumulator is op's first argument, so it need not be of    *)
(* the elements' type:                                                     *)
(*   FoldBag(LAMBDA acc, m : acc + m.n, 0, bag_of_records)                 *)
(*   FoldBag(LAMBDA acc, x : Append(acc, x), << >>,                        *)
(*           SetToBag({"a", "b"}) (+) SetToBag({"a"})) = <<"a", "a", "b">> *)
(* TLC fails unless every count is a positive integer.                     *)
(*                                                                         *)
(* Order: the override takes the elements in the order in which TLC holds  *)
(* the bag's domain.  For a bag in a variable or a constant that is TLC's  *)
(* normal order, the order of CHOOSE used here; a bag built with @@ in the *)
(* expression being evaluated may be held in the order it was built, which *)
(* only an op whose result depends on the order can observe.               *)
(***************************************************************************)
FoldBag(op(_, _), base, B) ==
    LET \* acc folded with the copies k0..k1 of x.  The range is halved and
        \* the left half evaluated before the right one starts ("\notin {}"
        \* compares nothing), so TLC's stack grows with the log of the count.
        RECURSIVE Copies(_, _, _, _)
        Copies(x, k0, k1, acc) ==
          IF k0 > k1 THEN acc
          ELSE IF k0 = k1 THEN op(acc, x)
          ELSE LET mid == (k0 + k1) \div 2
                   left == Copies(x, k0, mid, acc)
               IN  IF left \notin {} THEN Copies(x, mid + 1, k1, left)
                   ELSE left
        AllCopies(x, acc) ==
          IF B[x] \in Nat /\ B[x] > 0
          THEN Copies(x, 1, B[x], acc)
          ELSE Assert(FALSE, "FoldBag: a count is not a positive integer")
        RECURSIVE Walk(_, _)
        Walk(D, acc) ==
          IF D = {} THEN acc
          ELSE LET x == CHOOSE y \in D : TRUE
                   next == AllCopies(x, acc)
               IN  IF next \notin {} THEN Walk(D \ {x}, next) ELSE next
    IN  Walk(DOMAIN B, base)

(* The sum of the elements of a bag of numbers, copies counted.            *)
SumBag(B) == FoldBag(LAMBDA x, y : x + y, 0, B)

(* The product of the elements of a bag of numbers, copies counted.        *)
ProductBag(B) == FoldBag(LAMBDA x, y : x * y, 1, B)

=============================================================================
