---- MODULE Spin ----
EXTENDS Naturals
CONSTANT Procs
VARIABLES lock, pc
vars == <<lock, pc>>
Init == lock = FALSE /\ pc = [p \in Procs |-> "spin"]
Acquire(p) == pc[p] = "spin" /\ ~lock /\ lock' = TRUE /\ pc' = [pc EXCEPT ![p] = "cs"]
Release(p) == pc[p] = "cs" /\ lock' = FALSE /\ pc' = [pc EXCEPT ![p] = "spin"]
Next == \E p \in Procs : Acquire(p) \/ Release(p)
Spec == Init /\ [][Next]_vars /\ \A p \in Procs : WF_vars(Acquire(p)) /\ WF_vars(Release(p))
NoStarve == \A p \in Procs : pc[p] = "spin" ~> pc[p] = "cs"
====
