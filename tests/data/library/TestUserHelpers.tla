--------------------------- MODULE TestUserHelpers ---------------------------
(* A spec that extends SequencesExt and defines its own Max, Min, Range and *)
(* IsInjective, as AI-written specs often do: must not clash.              *)
EXTENDS Integers, SequencesExt

Max(a, b) == IF a > b THEN a ELSE b
Min(S) == CHOOSE m \in S : \A y \in S : m =< y
Range(f) == {f[i] : i \in DOMAIN f}
IsInjective(f) == \A i, j \in DOMAIN f : f[i] = f[j] => i = j

ASSUME Max(1, 2) = 2 /\ Min({3, 4}) = 3 /\ Range(Reverse(<<1>>)) = {1}

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
