-------------------------------- MODULE Mutex -------------------------------
(* parking_lot's Mutex with its waiters as a bag (a count per thread), the  *)
(* owner as a set of at most one thread, and the hand-off of unlock_fair as *)
(* an action with the receiving thread as a parameter.                     *)
EXTENDS Naturals, FiniteSets, Bags, BagsExt

CONSTANT Thr

VARIABLES held, queue, owners, kind

vars == <<held, queue, owners, kind>>

Init ==
    /\ held = FALSE
    /\ queue = EmptyBag
    /\ owners = {}
    /\ kind = [t \in Thr |-> "none"]

Idle(t) == t \notin owners /\ ~BagIn(t, queue)

Enqueue(t) ==
    /\ Idle(t)
    /\ queue' = BagAdd(queue, t)
    /\ kind' = [kind EXCEPT ![t] = "lock"]
    /\ UNCHANGED <<held, owners>>

Grab(t) ==
    /\ BagIn(t, queue)
    /\ ~held
    /\ held' = TRUE
    /\ queue' = BagRemove(queue, t)
    /\ owners' = {t}
    /\ UNCHANGED kind

Barge(t) ==
    /\ Idle(t)
    /\ ~held
    /\ held' = TRUE
    /\ owners' = {t}
    /\ kind' = [kind EXCEPT ![t] = "try"]
    /\ UNCHANGED queue

Refused(t) ==
    /\ Idle(t)
    /\ held
    /\ UNCHANGED vars

Leave(t) ==
    /\ t \in owners
    /\ held' = FALSE
    /\ owners' = {}
    /\ kind' = [kind EXCEPT ![t] = "none"]
    /\ UNCHANGED queue

Pass(t, w) ==
    /\ t \in owners
    /\ BagIn(w, queue)
    /\ owners' = {w}
    /\ queue' = BagRemove(queue, w)
    /\ kind' = [kind EXCEPT ![t] = "none"]
    /\ UNCHANGED held

Next ==
    \E t \in Thr :
        \/ Enqueue(t) \/ Grab(t) \/ Barge(t) \/ Refused(t) \/ Leave(t)
        \/ \E w \in Thr : Pass(t, w)

Spec == Init /\ [][Next]_vars /\ \A t \in Thr : WF_vars(Grab(t)) /\ WF_vars(Leave(t) \/ \E w \in Thr : Pass(t, w))
=============================================================================
