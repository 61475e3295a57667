--------------------------- MODULE TestFalseAssume ---------------------------
(* Negative control: this assumption is false, TLC must report 2104.       *)
EXTENDS SequencesExt

ASSUME Reverse(<<1, 2, 3>>) = <<1, 2, 3>>

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
