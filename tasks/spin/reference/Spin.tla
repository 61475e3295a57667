-------------------------------- MODULE Spin --------------------------------
(***************************************************************************)
(* Expert reference spec of SpinMutex from the Rust `spin` crate 0.9.5     *)
(* (src/mutex/spin.rs).                                                    *)
(*                                                                         *)
(*  lock():      loop { compare_exchange_weak(false, true) ; on failure    *)
(*               spin while is_locked() }.  Calling lock() is Lock(t); the *)
(*               CAS that wins is Acquire(t).  A failed or spurious CAS    *)
(*               and the relax loop change nothing observable, so they are *)
(*               not separate steps: a spinning thread simply stays "spin".*)
(*  try_lock():  one strong compare_exchange(false, true).  Success is     *)
(*               TryLock(t); failure (returns None) is TryLockFail(t),     *)
(*               which leaves every variable unchanged.                    *)
(*  drop(guard): lock.store(false).  This is Unlock(t).                    *)
(*                                                                         *)
(* The names differ from the task's canonical vocabulary on purpose; see   *)
(* mapping.yaml.                                                           *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANT Threads             \* the threads that use the lock

VARIABLES
    lock,       \* the AtomicBool inside the SpinMutex
    pc,         \* pc[t] \in {"idle", "spin", "cs"}: idle, inside lock() spinning, holding the guard
    callType    \* callType[t] \in {"none", "lock", "try"}: the call t is in or holds the lock through

vars == <<lock, pc, callType>>

TypeOK ==
    /\ lock \in BOOLEAN
    /\ pc \in [Threads -> {"idle", "spin", "cs"}]
    /\ callType \in [Threads -> {"none", "lock", "try"}]

Init ==
    /\ lock = FALSE
    /\ pc = [t \in Threads |-> "idle"]
    /\ callType = [t \in Threads |-> "none"]

\* t calls lock() and enters the compare_exchange_weak loop.
Lock(t) ==
    /\ pc[t] = "idle"
    /\ pc' = [pc EXCEPT ![t] = "spin"]
    /\ callType' = [callType EXCEPT ![t] = "lock"]
    /\ UNCHANGED lock

\* The compare_exchange_weak(false, true) of spinning thread t succeeds.
Acquire(t) ==
    /\ pc[t] = "spin"
    /\ lock = FALSE
    /\ lock' = TRUE
    /\ pc' = [pc EXCEPT ![t] = "cs"]
    /\ UNCHANGED callType

\* t calls try_lock() while the lock is free: the strong CAS succeeds.
TryLock(t) ==
    /\ pc[t] = "idle"
    /\ lock = FALSE
    /\ lock' = TRUE
    /\ pc' = [pc EXCEPT ![t] = "cs"]
    /\ callType' = [callType EXCEPT ![t] = "try"]

\* t calls try_lock() while the lock is held: the CAS fails, try_lock returns
\* None and t is idle again, so nothing observable changes.
TryLockFail(t) ==
    /\ pc[t] = "idle"
    /\ lock = TRUE
    /\ UNCHANGED vars

\* t drops its guard: lock.store(false, Release).
Unlock(t) ==
    /\ pc[t] = "cs"
    /\ lock' = FALSE
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ callType' = [callType EXCEPT ![t] = "none"]

Next ==
    \E t \in Threads :
        \/ Lock(t)
        \/ Acquire(t)
        \/ TryLock(t)
        \/ TryLockFail(t)
        \/ Unlock(t)

\* A guard is eventually dropped, and a spinning thread keeps retrying its CAS
\* while the lock is free.  Weak fairness on Acquire gives progress (some thread
\* gets the lock) but not starvation freedom, which the real lock lacks.
Fairness ==
    \A t \in Threads : WF_vars(Acquire(t)) /\ WF_vars(Unlock(t))

Spec == Init /\ [][Next]_vars /\ Fairness

=============================================================================
