---- MODULE Counter ----
EXTENDS Naturals, TLC
VARIABLE x
Init == x = 0
Inc == x < 5 /\ x' = x + 1 /\ PrintT(<<"inc", x>>)
Reset == x = 5 /\ x' = 5
Next == Inc \/ Reset
Small == x <= 5
====
