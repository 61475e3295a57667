-------------------------------- MODULE Mutex -------------------------------
(* parking_lot's Mutex as one record per thread, one Unlock action with the *)
(* successor (if any) as a parameter, and try_lock as one action.          *)
EXTENDS Naturals, FiniteSets, TLAPS

CONSTANT Workers, NoOne

VARIABLES word, th

INSTANCE MutexTypes

vars == <<word, th>>

Init == word = 0 /\ th = [w \in Workers |-> Out]

Ask(w) == th[w] = Out /\ th' = [th EXCEPT ![w] = Waiting] /\ UNCHANGED word

Take(w) == th[w] = Waiting /\ word = 0 /\ word' = 1 /\ th' = [th EXCEPT ![w] = Holding("lock")]

TryIt(w) ==
    /\ th[w] = Out
    /\ IF word = 0
       THEN word' = 1 /\ th' = [th EXCEPT ![w] = Holding("try")]
       ELSE UNCHANGED vars

GiveUp(w, next) ==
    /\ th[w].where = "inside"
    /\ IF next = NoOne
       THEN word' = 0 /\ th' = [th EXCEPT ![w] = Out]
       ELSE /\ th[next] = Waiting
            /\ th' = [th EXCEPT ![w] = Out, ![next] = Holding("lock")]
            /\ UNCHANGED word

Next == \E w \in Workers : Ask(w) \/ Take(w) \/ TryIt(w) \/ \E n \in Workers \cup {NoOne} : GiveUp(w, n)

Spec == Init /\ [][Next]_vars
        /\ \A w \in Workers : WF_vars(Take(w)) /\ WF_vars(\E n \in Workers \cup {NoOne} : GiveUp(w, n))

THEOREM Spec => [](word \in {0, 1}) BY PTL
=============================================================================
