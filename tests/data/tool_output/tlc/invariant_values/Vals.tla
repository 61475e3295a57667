---- MODULE Vals ----
EXTENDS Integers, Sequences, TLC
CONSTANT Procs
VARIABLES n, s, rec, seq, fn, str, big
Init == /\ n = -3
        /\ s = {1, 2, 3}
        /\ rec = [a |-> 1, b |-> "x", c |-> <<TRUE, FALSE>>]
        /\ seq = <<>>
        /\ fn = [p \in Procs |-> {}]
        /\ str = "quote\" back\\ tab\t nl\n end"
        /\ big = [i \in 1..12 |-> [id |-> i, name |-> "some longer text here", tags |-> {"alpha", "beta", "gamma"}, ok |-> i % 2 = 0]]
Next == /\ n' = n + 1
        /\ seq' = Append(seq, [k |-> n, v |-> {p \in Procs : TRUE}])
        /\ fn' = [p \in Procs |-> fn[p] \cup {n}]
        /\ UNCHANGED <<s, rec, str, big>>
Inv == n < -1
====
