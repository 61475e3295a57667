------------------------------ MODULE RwMutex ------------------------------
(* parking_lot's RwLock with its state word as one number, as the code keeps it:             *)
(* ONE_READER = 16 per reader, WRITER_BIT = 8, UPGRADABLE_BIT = 4 (the parked bits are 0).    *)
(* Threads are in a phase; the three blocking calls share one Begin(t, kind), the try calls   *)
(* one Try(t, kind), and both read and upgradable acquisitions are one Get(t).                *)
EXTENDS Integers

CONSTANT T

ONE == 16
WBIT == 8
UBIT == 4

VARIABLES word, phase, wants

vars == <<word, phase, wants>>

Readers == word \div ONE
HasW == (word \div WBIT) % 2 = 1
HasU == (word \div UBIT) % 2 = 1

Init ==
    /\ word = 0
    /\ phase = [t \in T |-> "Idle"]
    /\ wants = [t \in T |-> "none"]

Begin(t, k) ==
    /\ phase[t] = "Idle"
    /\ phase' = [phase EXCEPT ![t] = "Blocked"]
    /\ wants' = [wants EXCEPT ![t] = k]
    /\ UNCHANGED word

\* A blocked reader or upgradable reader gets in (lock_shared / lock_upgradable).
Get(t) ==
    /\ phase[t] = "Blocked"
    /\ \/ /\ wants[t] = "R" /\ ~HasW
          /\ word' = word + ONE
          /\ phase' = [phase EXCEPT ![t] = "Shared"]
       \/ /\ wants[t] = "U" /\ ~HasW /\ ~HasU
          /\ word' = word + ONE + UBIT
          /\ phase' = [phase EXCEPT ![t] = "Upgradable"]
    /\ UNCHANGED wants

Claim(t) ==
    /\ phase[t] = "Blocked" /\ wants[t] = "W"
    /\ ~HasW /\ ~HasU
    /\ word' = word + WBIT
    /\ phase' = [phase EXCEPT ![t] = "Draining"]
    /\ UNCHANGED wants

Drained(t) ==
    /\ phase[t] = "Draining"
    /\ Readers = 0
    /\ phase' = [phase EXCEPT ![t] = "Exclusive"]
    /\ UNCHANGED <<word, wants>>

Try(t, k) ==
    /\ phase[t] = "Idle"
    /\ CASE k = "R" -> ~HasW /\ word' = word + ONE /\ phase' = [phase EXCEPT ![t] = "Shared"]
         [] k = "U" -> ~HasW /\ ~HasU /\ word' = word + ONE + UBIT /\ phase' = [phase EXCEPT ![t] = "Upgradable"]
         [] k = "W" -> word = 0 /\ word' = WBIT /\ phase' = [phase EXCEPT ![t] = "Exclusive"]
    /\ wants' = [wants EXCEPT ![t] = k]

TryFail(t) ==
    /\ phase[t] = "Idle"
    /\ HasW
    /\ UNCHANGED vars

\* upgrade(): fetch_sub((ONE_READER | UPGRADABLE_BIT) - WRITER_BIT)
Promote(t) ==
    /\ phase[t] = "Upgradable"
    /\ word' = word - ONE - UBIT + WBIT
    /\ phase' = [phase EXCEPT ![t] = "Draining"]
    /\ wants' = [wants EXCEPT ![t] = "W"]

TryPromote(t) ==
    /\ phase[t] = "Upgradable"
    /\ Readers = 1
    /\ word' = word - ONE - UBIT + WBIT
    /\ phase' = [phase EXCEPT ![t] = "Exclusive"]
    /\ wants' = [wants EXCEPT ![t] = "W"]

Demote(t) ==
    /\ phase[t] = "Exclusive"
    /\ word' = word + ONE - WBIT
    /\ phase' = [phase EXCEPT ![t] = "Shared"]
    /\ wants' = [wants EXCEPT ![t] = "R"]

Drop(t) ==
    /\ phase[t] \in {"Shared", "Upgradable", "Exclusive"}
    /\ word' = word - (CASE phase[t] = "Shared" -> ONE
                          [] phase[t] = "Upgradable" -> ONE + UBIT
                          [] phase[t] = "Exclusive" -> WBIT)
    /\ phase' = [phase EXCEPT ![t] = "Idle"]
    /\ wants' = [wants EXCEPT ![t] = "none"]

Next ==
    \E t \in T :
        \/ \E k \in {"R", "U", "W"} : Begin(t, k) \/ Try(t, k)
        \/ Get(t) \/ Claim(t) \/ Drained(t) \/ TryFail(t)
        \/ Promote(t) \/ TryPromote(t) \/ Demote(t) \/ Drop(t)

Spec == Init /\ [][Next]_vars
        /\ \A t \in T : WF_vars(Drop(t)) /\ WF_vars(Drained(t)) /\ WF_vars(Get(t)) /\ WF_vars(Claim(t))
=============================================================================
