---------------------------- MODULE LockService ----------------------------
(***************************************************************************)
(* Expert reference spec of etcd 3.4's lock (clientv3/concurrency.Mutex)   *)
(* on one etcd server.                                                     *)
(*                                                                         *)
(* The server keeps the waiters' keys under the lock's prefix; their       *)
(* create revisions order them, and the oldest key owns the lock.  Lock()  *)
(* puts the client's key (one transaction), then waits until no older key  *)
(* is left (waitDeletes); a cancelled wait deletes the key.  Unlock()      *)
(* deletes the key.  The revisions themselves are not modelled: only the   *)
(* order they give.                                                        *)
(*                                                                         *)
(* The names differ from the task's canonical vocabulary on purpose; see   *)
(* mapping.yaml.                                                           *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANT Procs

VARIABLES
    keys,    \* the waiters' keys in create-revision order: a sequence of clients
    mode     \* mode[p] \in {"free", "queued", "owner"}

vars == <<keys, mode>>

InKeys(p) == \E i \in 1..Len(keys) : keys[i] = p

Remove(p) == SelectSeq(keys, LAMBDA q : q /= p)

TypeOK ==
    /\ keys \in Seq(Procs)
    /\ mode \in [Procs -> {"free", "queued", "owner"}]

Init ==
    /\ keys = <<>>
    /\ mode = [p \in Procs |-> "free"]

\* The transaction of Lock(): put the client's key (create revision = the next revision).
Request(p) ==
    /\ mode[p] = "free"
    /\ keys' = Append(keys, p)
    /\ mode' = [mode EXCEPT ![p] = "queued"]

\* waitDeletes returns: no key older than p's is left, so p's key is the head.
Enter(p) ==
    /\ mode[p] = "queued"
    /\ keys /= <<>> /\ Head(keys) = p
    /\ mode' = [mode EXCEPT ![p] = "owner"]
    /\ UNCHANGED keys

\* Unlock(): delete the owner's own key; the next key becomes the oldest.
Release(p) ==
    /\ mode[p] = "owner"
    /\ keys' = Remove(p)
    /\ mode' = [mode EXCEPT ![p] = "free"]

\* Lock()'s context ends while it waits: it deletes its own key, wherever it is.
Abandon(p) ==
    /\ mode[p] = "queued"
    /\ keys' = Remove(p)
    /\ mode' = [mode EXCEPT ![p] = "free"]

Next == \E p \in Procs : Request(p) \/ Enter(p) \/ Release(p) \/ Abandon(p)

\* The owner eventually unlocks, and a waiter whose key is the oldest eventually sees it (its
\* watch fires). Giving up is a client's choice, never forced.
Fairness == \A p \in Procs : WF_vars(Release(p)) /\ WF_vars(Enter(p))

Spec == Init /\ [][Next]_vars /\ Fairness

=============================================================================
