---- MODULE Empty ----
EXTENDS Naturals
VARIABLE x
Init == x \in {} 
Next == x' = x
====
