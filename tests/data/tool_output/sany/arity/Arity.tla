---- MODULE Arity ----
EXTENDS Naturals
VARIABLE x
F(a, b) == a + b
Init == x = 0
Next == x' = F(x)
====
