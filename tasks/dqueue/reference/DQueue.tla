------------------------------- MODULE DQueue -------------------------------
(***************************************************************************)
(* Expert reference spec of a bounded queue.Queue served to consumer       *)
(* processes by Python's multiprocessing.managers (BaseManager server over *)
(* TCP, one server thread per connection).                                 *)
(*                                                                         *)
(*  producer: put(item) waits on not_full, then _put appends the item.      *)
(*  consumer: request(c) is a remote call: the request reaches the server   *)
(*            thread of c's connection, which calls get(): it waits on      *)
(*            not_empty, then _get takes the oldest item; the result goes   *)
(*            back over the connection and the call returns.                *)
(*                                                                         *)
(* The names differ from the task's canonical vocabulary on purpose; see   *)
(* mapping.yaml.                                                           *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS Cs, Rounds, N, Cap

VARIABLES buf, made, where, inflight, got

vars == <<buf, made, where, inflight, got>>

Init ==
    /\ buf = <<>>
    /\ made = 0
    /\ where = [c \in Cs |-> "free"]
    /\ inflight = [c \in Cs |-> 0]
    /\ got = [c \in Cs |-> <<>>]

\* put(): _put runs once the queue has room.
Produce ==
    /\ made < N
    /\ Len(buf) < Cap
    /\ buf' = Append(buf, made + 1)
    /\ made' = made + 1
    /\ UNCHANGED <<where, inflight, got>>

\* c's request(c) reaches its server thread; c makes Rounds requests in all.
Request(c) ==
    /\ where[c] = "free"
    /\ Len(got[c]) < Rounds
    /\ where' = [where EXCEPT ![c] = "asked"]
    /\ UNCHANGED <<buf, made, inflight, got>>

\* get() in c's server thread: _get takes the oldest item for c's reply.
Deliver(c) ==
    /\ where[c] = "asked"
    /\ buf /= <<>>
    /\ inflight' = [inflight EXCEPT ![c] = Head(buf)]
    /\ buf' = Tail(buf)
    /\ where' = [where EXCEPT ![c] = "sent"]
    /\ UNCHANGED <<made, got>>

\* The reply arrives and the remote call returns the item.
Receive(c) ==
    /\ where[c] = "sent"
    /\ got' = [got EXCEPT ![c] = Append(@, inflight[c])]
    /\ inflight' = [inflight EXCEPT ![c] = 0]
    /\ where' = [where EXCEPT ![c] = "free"]
    /\ UNCHANGED <<buf, made>>

Next == Produce \/ \E c \in Cs : Request(c) \/ Deliver(c) \/ Receive(c)

\* Every process keeps going until it is done: a step that can be taken eventually is.
Spec == Init /\ [][Next]_vars /\ WF_vars(Produce)
        /\ \A c \in Cs : WF_vars(Request(c)) /\ WF_vars(Deliver(c)) /\ WF_vars(Receive(c))

=============================================================================
