-------------------------------- MODULE Spin --------------------------------
(* SpinMutex of the spin crate, written in a vocabulary of its own: thread  *)
(* records, a lock() call with its kind as a parameter, the winning CAS and *)
(* entering the critical section as two steps, try_lock as one action that *)
(* succeeds or fails, and a history variable.                              *)
EXTENDS SpinBase, TLC, TLAPS

vars == <<flag, proc, lastOwner>>

Init ==
    /\ flag = FALSE
    /\ proc = [p \in Procs |-> Idle]
    /\ lastOwner = "nobody"

Call(p, kind) ==
    /\ kind = "lock"
    /\ proc[p].at = "Idle"
    /\ proc' = [proc EXCEPT ![p] = [at |-> "Spinning", via |-> kind]]
    /\ UNCHANGED <<flag, lastOwner>>

Cas(p) ==
    /\ proc[p].at = "Spinning"
    /\ ~flag
    /\ flag' = TRUE
    /\ proc' = [proc EXCEPT ![p].at = "Won"]
    /\ UNCHANGED lastOwner

Enter(p) ==
    /\ proc[p].at = "Won"
    /\ proc' = [proc EXCEPT ![p].at = "Owner"]
    /\ lastOwner' = p
    /\ UNCHANGED flag

Try(p) ==
    /\ proc[p].at = "Idle"
    /\ \/ /\ ~flag
          /\ flag' = TRUE
          /\ proc' = [proc EXCEPT ![p] = [at |-> "Owner", via |-> "try"]]
          /\ lastOwner' = p
       \/ /\ flag
          /\ UNCHANGED vars

Release(p) ==
    /\ proc[p].at = "Owner"
    /\ flag' = FALSE
    /\ proc' = [proc EXCEPT ![p] = Idle]
    /\ UNCHANGED lastOwner

Next == \E p \in Procs : Call(p, "lock") \/ Cas(p) \/ Enter(p) \/ Try(p) \/ Release(p)

Spec == Init /\ [][Next]_vars /\ \A p \in Procs : WF_vars(Cas(p)) /\ WF_vars(Enter(p)) /\ WF_vars(Release(p))

THEOREM FlagIsBoolean == Spec => [](flag \in BOOLEAN)
    BY PTL DEF Spec
=============================================================================
