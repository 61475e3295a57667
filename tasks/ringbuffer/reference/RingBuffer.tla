----------------------------- MODULE RingBuffer -----------------------------
(***************************************************************************)
(* Expert reference spec of Concurrency Kit's ck_ring in SPSC mode         *)
(* (ck_ring.h of libck-dev 0.7.1: _ck_ring_enqueue_sp, _ck_ring_dequeue_sc)*)
(* with one producer that enqueues the items 1..N and one consumer.        *)
(*                                                                         *)
(*  enqueue: consumer = load(c_head); producer = p_tail;                   *)
(*           if ((producer + 1) & mask) == (consumer & mask) return false; *)
(*           buffer[producer & mask] = entry; fence; store(p_tail, +1).    *)
(*  dequeue: consumer = c_head; producer = load(p_tail);                   *)
(*           if (consumer == producer) return false;                      *)
(*           entry = buffer[consumer & mask]; fence; store(c_head, +1).    *)
(*                                                                         *)
(* Each call is one atomic step here: its store (success) or its load of   *)
(* the other side's counter (failure) is the moment it takes effect, and   *)
(* the other side can only make a full ring less full, or an empty ring    *)
(* less empty, in between.  The counters are kept masked to a slot, as the *)
(* code uses them; the slots keep what was last written (stale entries     *)
(* are never read).                                                        *)
(*                                                                         *)
(* The names differ from the task's canonical vocabulary on purpose; see   *)
(* mapping.yaml.                                                           *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Size, N

VARIABLES
    cHead,   \* c_head & mask
    pTail,   \* p_tail & mask
    slot,    \* the ring's slots; 0 = never written
    sent,    \* items enqueued so far (the next one is sent + 1)
    recv     \* items dequeued so far

vars == <<cHead, pTail, slot, sent, recv>>

Mask(x) == x % Size

TypeOK ==
    /\ cHead \in 0..(Size - 1)
    /\ pTail \in 0..(Size - 1)
    /\ slot \in [0..(Size - 1) -> 0..N]
    /\ sent \in 0..N
    /\ recv \in 0..N

Init ==
    /\ cHead = 0
    /\ pTail = 0
    /\ slot = [k \in 0..(Size - 1) |-> 0]
    /\ sent = 0
    /\ recv = 0

Full == Mask(pTail + 1) = cHead
Empty == cHead = pTail

\* ck_ring_enqueue_spsc succeeds: the entry goes into the tail slot, then p_tail advances.
Push ==
    /\ sent < N
    /\ ~Full
    /\ slot' = [slot EXCEPT ![pTail] = sent + 1]
    /\ pTail' = Mask(pTail + 1)
    /\ sent' = sent + 1
    /\ UNCHANGED <<cHead, recv>>

\* ck_ring_enqueue_spsc returns false: the slot after the tail is the head's.
PushFull ==
    /\ sent < N
    /\ Full
    /\ UNCHANGED vars

\* ck_ring_dequeue_spsc succeeds: the head slot's entry is taken, then c_head advances.
Pop ==
    /\ recv < N
    /\ ~Empty
    /\ cHead' = Mask(cHead + 1)
    /\ recv' = recv + 1
    /\ UNCHANGED <<pTail, slot, sent>>

\* ck_ring_dequeue_spsc returns false: head = tail.
PopEmpty ==
    /\ recv < N
    /\ Empty
    /\ UNCHANGED vars

Next == Push \/ PushFull \/ Pop \/ PopEmpty

\* Both threads keep calling until they are done; a call that can succeed eventually does.
Spec == Init /\ [][Next]_vars /\ WF_vars(Push) /\ WF_vars(Pop)

=============================================================================
