------------------------------ MODULE TestBagsExt ------------------------------
(* Every BagsExt operator evaluated by TLC on small bags.                     *)
EXTENDS Naturals, Bags, BagsExt, TLC

B == SetToBag({1, 2}) (+) SetToBag({2})

ASSUME BagAdd(B, 3) = B (+) SetToBag({3})
ASSUME BagAdd(B, 2)[2] = 3
ASSUME BagAdd(EmptyBag, 7) = SetToBag({7})
ASSUME BagRemove(B, 2) = SetToBag({1, 2})
ASSUME BagRemove(B, 1) = SetToBag({2}) (+) SetToBag({2})
ASSUME BagRemove(B, 9) = B
ASSUME BagRemoveAll(B, 2) = SetToBag({1})
ASSUME SumBag(B) = 5
ASSUME SumBag(EmptyBag) = 0
ASSUME ProductBag(B) = 4
ASSUME FoldBag(LAMBDA a, b : a + b, 10, B) = 15
ASSUME MapThenFoldBag(LAMBDA a, b : a + b, 0, LAMBDA x : 10 * x, LAMBDA S : CHOOSE x \in S : TRUE, B) = 50
ASSUME BagCardinality(BagAdd(B, 4)) = 4

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
