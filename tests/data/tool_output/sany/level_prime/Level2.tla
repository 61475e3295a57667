---- MODULE Level2 ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x + 1
Bad == (x')'
====
