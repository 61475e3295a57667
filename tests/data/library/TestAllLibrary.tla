--------------------------- MODULE TestAllLibrary ---------------------------
(* All our library modules (and the standard ones) extended together: no  *)
(* name clashes; one operator of each module is evaluated.                  *)
EXTENDS Naturals, Integers, Sequences, FiniteSets, Bags, TLC,
        SequencesExt, FiniteSetsExt, Functions, Folds, BagsExt, TLAPS

ASSUME Reverse(<<1, 2>>) = <<2, 1>>
ASSUME Max(ToSet(<<4, -7, 2>>)) = 4
ASSUME Range(SetToSortSeq({2, 1}, <)) = {1, 2}
ASSUME MapThenFoldSet(LAMBDA x, y : x + y, 0, LAMBDA x : x, Min, {1, 2}) = 3
ASSUME SumBag(SetToBag({1, 2})) = 3
ASSUME FoldFunction(LAMBDA x, y : x + y, 0, <<1, 2>>) = FoldSeq(LAMBDA x, y : x + y, 0, <<1, 2>>)

VARIABLE x
Init == x = 0
Next == UNCHANGED x
THEOREM Init => x = 0 BY PTL, SMT, Zenon DEF Init
=============================================================================
