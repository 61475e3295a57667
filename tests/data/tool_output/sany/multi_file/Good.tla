---- MODULE Good ----
EXTENDS Naturals, Sequences
VARIABLE x
Init == x = 0
Next == x' = x + 1
====
