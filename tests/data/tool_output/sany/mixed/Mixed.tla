---- MODULE Mixed ----
EXTENDS Naturals, Sequences
VARIABLES x, q
G(a) == a + 1
Init == x = 0 /\ q = <<>>
Next == /\ x' = G(x, 2)
        /\ q' = Append(q, Undefined1)
        /\ Undefined2(x)
====
