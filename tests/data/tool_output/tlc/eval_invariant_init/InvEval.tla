---- MODULE InvEval ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x
TypeOK == x[1] = 0
====
