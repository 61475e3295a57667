---- MODULE Mutex ----
EXTENDS Naturals
CONSTANT Procs
VARIABLES pc, lock
Init == pc = [p \in Procs |-> "idle"] /\ lock = FALSE
Acquire(p) == pc[p] = "idle" /\ pc' = [pc EXCEPT ![p] = "cs"] /\ lock' = TRUE
Release(p) == pc[p] = "cs" /\ pc' = [pc EXCEPT ![p] = "idle"] /\ lock' = FALSE
Next == \E p \in Procs : Acquire(p) \/ Release(p)
MutualExclusion == \A p, q \in Procs : (pc[p] = "cs" /\ pc[q] = "cs") => p = q
====
