---- MODULE Redef ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Init == x = 1
Next == x' = x
====
