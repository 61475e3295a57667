---- MODULE Lock ----
EXTENDS Naturals
CONSTANT Procs
VARIABLES lock, pc
Init == lock = FALSE /\ pc = [p \in Procs |-> "idle"]
Acquire(p) == pc[p] = "idle" /\ ~lock /\ lock' = TRUE /\ pc' = [pc EXCEPT ![p] = "cs"]
Release(p) == pc[p] = "cs" /\ lock' = FALSE /\ pc' = [pc EXCEPT ![p] = "idle"]
Never == lock /\ ~lock /\ UNCHANGED <<lock, pc>>
Next == \/ \E p \in Procs : Acquire(p)
        \/ \E p \in Procs : Release(p)
        \/ Never
====
