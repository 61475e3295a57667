---- MODULE Const ----
EXTENDS Naturals
CONSTANT N
VARIABLE x
Init == x = N
Next == x' = x
====
