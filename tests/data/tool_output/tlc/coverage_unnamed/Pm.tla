---- MODULE Pm ----
EXTENDS Integers
VARIABLE x
Init == x = 0
Step(d) == x' = x + d
Next == \/ x < 2 /\ x' = x + 1
        \/ x > -2 /\ x' = x - 1
        \/ Step(0)
====
