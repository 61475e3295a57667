------------------------------- MODULE Mutex -------------------------------
(***************************************************************************)
(* Expert reference spec of parking_lot::Mutex (parking_lot 0.12.1,        *)
(* src/raw_mutex.rs; lock_api 0.4.9 guards; parking_lot_core 0.9.3).       *)
(*                                                                         *)
(*  lock():       CAS 0 -> LOCKED_BIT, else lock_slow: retry the CAS while *)
(*                LOCKED_BIT is clear, spin a little (SpinWait), then set  *)
(*                PARKED_BIT and park until an unlock wakes it.  Calling   *)
(*                lock() is Lock(t); the thread then waits ("wait") until  *)
(*                its own CAS wins (Acquire(t)) or an unlock_fair hands    *)
(*                the lock to it (UnlockFair of the holder).  Spinning and *)
(*                being parked are both "wait": the difference is not      *)
(*                observable without instrumenting parking_lot_core.       *)
(*  try_lock():   CAS loop that gives up as soon as it sees LOCKED_BIT.    *)
(*                It ignores PARKED_BIT, so it may barge past waiters.     *)
(*                Success is TryLock(t); failure is TryLockFail(t).        *)
(*  drop(guard):  unlock(): clears LOCKED_BIT (waking one parked thread,   *)
(*                which then retries its CAS).  This is Unlock(t).  The    *)
(*                timer-driven "eventual fairness" (be_fair) that makes a  *)
(*                plain unlock hand the lock over now and then is left out *)
(*                (it is indistinguishable from a release directly followed*)
(*                by the waiter's Acquire).                                *)
(*  MutexGuard::unlock_fair: if a thread is parked, the lock is handed to  *)
(*                it directly (LOCKED_BIT stays set, TOKEN_HANDOFF);       *)
(*                otherwise (nobody waits, or the waiters are still        *)
(*                spinning) it is released like unlock().  Because a       *)
(*                waiter's being parked is abstracted away, UnlockFair(t)  *)
(*                is a nondeterministic choice: hand off to some waiting   *)
(*                thread, or release.                                      *)
(*                                                                         *)
(* The names differ from the task's canonical vocabulary on purpose; see   *)
(* mapping.yaml.                                                           *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANT Threads             \* the threads that use the mutex

VARIABLES
    lockBit,    \* LOCKED_BIT of RawMutex.state
    st,         \* st[t] \in {"out", "wait", "cs"}: idle, inside lock(), holding the guard
    mode        \* mode[t] \in {"-", "blocking", "nonblocking"}: lock(), try_lock() or no call

vars == <<lockBit, st, mode>>

TypeOK ==
    /\ lockBit \in BOOLEAN
    /\ st \in [Threads -> {"out", "wait", "cs"}]
    /\ mode \in [Threads -> {"-", "blocking", "nonblocking"}]

Init ==
    /\ lockBit = FALSE
    /\ st = [t \in Threads |-> "out"]
    /\ mode = [t \in Threads |-> "-"]

\* t calls lock(): it will wait (spin, then park) until it owns the lock.
Lock(t) ==
    /\ st[t] = "out"
    /\ st' = [st EXCEPT ![t] = "wait"]
    /\ mode' = [mode EXCEPT ![t] = "blocking"]
    /\ UNCHANGED lockBit

\* A CAS of waiting thread t (fast path or lock_slow) sets LOCKED_BIT.
Acquire(t) ==
    /\ st[t] = "wait"
    /\ ~lockBit
    /\ lockBit' = TRUE
    /\ st' = [st EXCEPT ![t] = "cs"]
    /\ UNCHANGED mode

\* try_lock() while LOCKED_BIT is clear: its CAS wins, even if threads are parked.
TryLock(t) ==
    /\ st[t] = "out"
    /\ ~lockBit
    /\ lockBit' = TRUE
    /\ st' = [st EXCEPT ![t] = "cs"]
    /\ mode' = [mode EXCEPT ![t] = "nonblocking"]

\* try_lock() sees LOCKED_BIT set and returns None: nothing changes.
TryLockFail(t) ==
    /\ st[t] = "out"
    /\ lockBit
    /\ UNCHANGED vars

\* The holder t gives the lock up: LOCKED_BIT cleared, t idle again.
Release(t) ==
    /\ lockBit' = FALSE
    /\ st' = [st EXCEPT ![t] = "out"]
    /\ mode' = [mode EXCEPT ![t] = "-"]

\* The holder t passes the lock to the waiting thread w (TOKEN_HANDOFF): LOCKED_BIT stays set.
HandOff(t, w) ==
    /\ st[w] = "wait"
    /\ st' = [st EXCEPT ![t] = "out", ![w] = "cs"]
    /\ mode' = [mode EXCEPT ![t] = "-"]
    /\ UNCHANGED lockBit

\* t drops its guard: unlock().
Unlock(t) ==
    /\ st[t] = "cs"
    /\ Release(t)

\* t calls MutexGuard::unlock_fair: hand-off to a (parked) waiter, or a plain release.
UnlockFair(t) ==
    /\ st[t] = "cs"
    /\ \/ Release(t)
       \/ \E w \in Threads \ {t} : HandOff(t, w)

Next ==
    \E t \in Threads :
        \/ Lock(t)
        \/ Acquire(t)
        \/ TryLock(t)
        \/ TryLockFail(t)
        \/ Unlock(t)
        \/ UnlockFair(t)

\* A guard is eventually released (one way or the other), and a waiting thread
\* keeps trying while the lock is free (a parked thread is woken by the unlock).
\* This gives progress, not starvation freedom: try_lock() and newcomers barge,
\* and parking_lot's eventual fairness is timer-driven, beyond this model.
Fairness ==
    \A t \in Threads :
        /\ WF_vars(Acquire(t))
        /\ WF_vars(Unlock(t) \/ UnlockFair(t))

Spec == Init /\ [][Next]_vars /\ Fairness

=============================================================================
