---- MODULE V ----
EXTENDS Integers, Sequences, TLC
VARIABLES a, b, c, d, e, f, g, h
Init == /\ a = 1..3
        /\ b = SUBSET {1, 2}
        /\ c = [{1, 2} -> {3}]
        /\ d = [k : {1}]
        /\ e = [x \in {"a", "b"} |-> 1]
        /\ f = "héllo ünï"
        /\ g = [x \in {2, 3} |-> x]
        /\ h = <<{}, <<>>, [i \in {} |-> 1], -0, -5..-3>>
Next == UNCHANGED <<a,b,c,d,e,f,g,h>>
Inv == Len(h) = 0
====
