---- MODULE Div ----
EXTENDS Integers
VARIABLE x
Init == x = 1
Next == x' = -4 \div (x - 1)
====
