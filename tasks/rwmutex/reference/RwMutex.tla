------------------------------ MODULE RwMutex ------------------------------
(***************************************************************************)
(* Expert reference spec of parking_lot::RwLock (parking_lot 0.12.1,       *)
(* src/raw_rwlock.rs; lock_api 0.4.9 guards; parking_lot_core 0.9.3).      *)
(*                                                                         *)
(* The state word: a reader count (ONE_READER units), WRITER_BIT,          *)
(* UPGRADABLE_BIT and two parked bits.  The parked bits only decide whom   *)
(* an unlock wakes; they are abstracted away, and with them the difference *)
(* between a spinning and a parked waiter.                                 *)
(*                                                                         *)
(*  read():      CAS adds a reader while WRITER_BIT is clear (a claimed    *)
(*               writer keeps new readers out).                            *)
(*  upgradable_read(): adds a reader and sets UPGRADABLE_BIT while neither *)
(*               WRITER_BIT nor UPGRADABLE_BIT is set.                     *)
(*  write():     lock_exclusive_slow sets WRITER_BIT while neither bit is  *)
(*               set (Claim), then wait_for_readers until the count is 0.  *)
(*  upgrade():   one fetch_sub turns the upgradable reader's ONE_READER |  *)
(*               UPGRADABLE_BIT into WRITER_BIT, then wait_for_readers.    *)
(*  try_upgrade(): CAS that succeeds only when it is the only reader.      *)
(*  try_write(): CAS from 0 (a free lock).  try_read(): fails only while   *)
(*               WRITER_BIT is set.  try_upgradable_read(): like the       *)
(*               blocking call's condition.                                *)
(*  downgrade(): fetch_add(ONE_READER - WRITER_BIT).                       *)
(*  drop:        removes the guard's share of the word.  A hand-off by an  *)
(*               unlock (eventual fairness) is a release directly followed *)
(*               by the woken threads' acquisitions.                       *)
(*                                                                         *)
(* The names differ from the task's canonical vocabulary on purpose; see   *)
(* mapping.yaml.                                                           *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANT Threads

VARIABLES
    rc,      \* reader count of the state word (read guards + the upgradable guard)
    wbit,    \* WRITER_BIT
    ubit,    \* UPGRADABLE_BIT
    at,      \* at[t] \in {"out", "wait", "shared", "upgr", "drain", "excl"}
    want     \* want[t] \in {"-", "R", "U", "W"}: the guard t asks for or holds

vars == <<rc, wbit, ubit, at, want>>

TypeOK ==
    /\ rc \in 0..Cardinality(Threads)
    /\ wbit \in BOOLEAN
    /\ ubit \in BOOLEAN
    /\ at \in [Threads -> {"out", "wait", "shared", "upgr", "drain", "excl"}]
    /\ want \in [Threads -> {"-", "R", "U", "W"}]

Init ==
    /\ rc = 0
    /\ wbit = FALSE
    /\ ubit = FALSE
    /\ at = [t \in Threads |-> "out"]
    /\ want = [t \in Threads |-> "-"]

Go(t, where, kind) ==
    /\ at' = [at EXCEPT ![t] = where]
    /\ want' = [want EXCEPT ![t] = kind]

\* Calls that may wait: the thread is inside read(), upgradable_read() or write().
Call(t, kind) ==
    /\ at[t] = "out"
    /\ Go(t, "wait", kind)
    /\ UNCHANGED <<rc, wbit, ubit>>

Read(t) == Call(t, "R")
UpRead(t) == Call(t, "U")
Write(t) == Call(t, "W")

\* lock_shared: the reader's CAS succeeds while WRITER_BIT is clear.
AcquireReadLock(t) ==
    /\ at[t] = "wait" /\ want[t] = "R"
    /\ ~wbit
    /\ rc' = rc + 1
    /\ at' = [at EXCEPT ![t] = "shared"]
    /\ UNCHANGED <<wbit, ubit, want>>

\* lock_upgradable: adds ONE_READER | UPGRADABLE_BIT while neither bit is set.
AcquireUpReadLock(t) ==
    /\ at[t] = "wait" /\ want[t] = "U"
    /\ ~wbit /\ ~ubit
    /\ rc' = rc + 1
    /\ ubit' = TRUE
    /\ at' = [at EXCEPT ![t] = "upgr"]
    /\ UNCHANGED <<wbit, want>>

\* lock_exclusive_slow, step 1: grab WRITER_BIT even though readers may remain.
ClaimWrite(t) ==
    /\ at[t] = "wait" /\ want[t] = "W"
    /\ ~wbit /\ ~ubit
    /\ wbit' = TRUE
    /\ at' = [at EXCEPT ![t] = "drain"]
    /\ UNCHANGED <<rc, ubit, want>>

\* wait_for_readers returns: the readers inside have left.
AcquireWriteLock(t) ==
    /\ at[t] = "drain"
    /\ rc = 0
    /\ at' = [at EXCEPT ![t] = "excl"]
    /\ UNCHANGED <<rc, wbit, ubit, want>>

TryRead(t) ==
    /\ at[t] = "out"
    /\ ~wbit
    /\ rc' = rc + 1
    /\ Go(t, "shared", "R")
    /\ UNCHANGED <<wbit, ubit>>

TryReadFail(t) ==
    /\ at[t] = "out"
    /\ wbit
    /\ UNCHANGED vars

TryUpRead(t) ==
    /\ at[t] = "out"
    /\ ~wbit /\ ~ubit
    /\ rc' = rc + 1
    /\ ubit' = TRUE
    /\ Go(t, "upgr", "U")
    /\ UNCHANGED wbit

TryWrite(t) ==
    /\ at[t] = "out"
    /\ rc = 0 /\ ~wbit /\ ~ubit
    /\ wbit' = TRUE
    /\ Go(t, "excl", "W")
    /\ UNCHANGED <<rc, ubit>>

\* upgrade(): fetch_sub((ONE_READER | UPGRADABLE_BIT) - WRITER_BIT), then wait for readers.
Upgrade(t) ==
    /\ at[t] = "upgr"
    /\ rc' = rc - 1
    /\ ubit' = FALSE
    /\ wbit' = TRUE
    /\ Go(t, "drain", "W")

\* try_upgrade(): succeeds only if the upgradable reader is the only reader.
TryUpgrade(t) ==
    /\ at[t] = "upgr"
    /\ rc = 1
    /\ rc' = 0
    /\ ubit' = FALSE
    /\ wbit' = TRUE
    /\ Go(t, "excl", "W")

\* RwLockWriteGuard::downgrade: fetch_add(ONE_READER - WRITER_BIT).
Downgrade(t) ==
    /\ at[t] = "excl"
    /\ rc' = rc + 1
    /\ wbit' = FALSE
    /\ Go(t, "shared", "R")
    /\ UNCHANGED ubit

\* Dropping a guard removes its share of the state word.
ReleaseLock(t) ==
    /\ at[t] \in {"shared", "upgr", "excl"}
    /\ rc' = IF at[t] \in {"shared", "upgr"} THEN rc - 1 ELSE rc
    /\ ubit' = IF at[t] = "upgr" THEN FALSE ELSE ubit
    /\ wbit' = IF at[t] = "excl" THEN FALSE ELSE wbit
    /\ Go(t, "out", "-")

Next ==
    \E t \in Threads :
        \/ Read(t) \/ Write(t) \/ UpRead(t)
        \/ AcquireReadLock(t) \/ AcquireUpReadLock(t)
        \/ ClaimWrite(t) \/ AcquireWriteLock(t)
        \/ TryRead(t) \/ TryReadFail(t) \/ TryUpRead(t) \/ TryWrite(t)
        \/ Upgrade(t) \/ TryUpgrade(t) \/ Downgrade(t)
        \/ ReleaseLock(t)

\* Guards are eventually dropped, and a thread that is inside a call keeps trying while it
\* can proceed (a parked thread is woken by the unlock that makes it possible). A waiting
\* reader, upgradable reader or writer can be overtaken forever, so this is progress of the
\* lock, not starvation freedom of each thread; a claimed writer, though, is never overtaken:
\* WRITER_BIT keeps new readers out, so the count only falls.
Fairness ==
    \A t \in Threads :
        /\ WF_vars(ReleaseLock(t))
        /\ WF_vars(AcquireWriteLock(t))
        /\ WF_vars(AcquireReadLock(t))
        /\ WF_vars(AcquireUpReadLock(t))
        /\ WF_vars(ClaimWrite(t))

Spec == Init /\ [][Next]_vars /\ Fairness

=============================================================================
