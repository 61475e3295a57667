---- MODULE Inv ----
EXTENDS Naturals
VARIABLES x, y
Init == x = 3 /\ y = "a"
Next == x' = x + 1 /\ y' = y
Small == x < 2
====
