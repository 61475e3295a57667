-------------------------------- MODULE Spin --------------------------------
(* SpinMutex of the spin crate over sets and numbers: the lock word is 0 or *)
(* 1, the spinning threads are a set, the holder a single value, and        *)
(* try_lock is one action whose outcome is a parameter.                    *)
EXTENDS Naturals, FiniteSets

CONSTANT T

VARIABLES bit, waiting, holder, how

None == "none"
vars == <<bit, waiting, holder, how>>

Init ==
    /\ bit = 0
    /\ waiting = {}
    /\ holder = None
    /\ how = [t \in T |-> "-"]

Begin(t) ==
    /\ how[t] = "-"
    /\ waiting' = waiting \cup {t}
    /\ how' = [how EXCEPT ![t] = "L"]
    /\ UNCHANGED <<bit, holder>>

Win(t) ==
    /\ t \in waiting
    /\ bit = 0
    /\ bit' = 1
    /\ holder' = t
    /\ waiting' = waiting \ {t}
    /\ UNCHANGED how

Attempt(t, ok) ==
    /\ how[t] = "-"
    /\ IF ok
       THEN /\ bit = 0
            /\ bit' = 1
            /\ holder' = t
            /\ how' = [how EXCEPT ![t] = "T"]
            /\ UNCHANGED waiting
       ELSE /\ bit = 1
            /\ UNCHANGED vars

Drop(t) ==
    /\ holder = t
    /\ bit' = 0
    /\ holder' = None
    /\ how' = [how EXCEPT ![t] = "-"]
    /\ UNCHANGED waiting

Next == \E t \in T : Begin(t) \/ Win(t) \/ Drop(t) \/ \E ok \in BOOLEAN : Attempt(t, ok)

Spec == Init /\ [][Next]_vars /\ \A t \in T : WF_vars(Win(t)) /\ WF_vars(Drop(t))
=============================================================================
