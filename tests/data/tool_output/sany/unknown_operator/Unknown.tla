---- MODULE Unknown ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = Foo(x) /\ Bar
====
