------------------------------- MODULE DQueue -------------------------------
(* The queue service as PGo's dqueue would put it: consumers' states as records, the replies   *)
(* as messages in a network (a set of records), the producer's stream as a counter.            *)
EXTENDS Naturals, Sequences

CONSTANTS Cons, Rounds, N, Cap

VARIABLES items, next, cons, net

vars == <<items, next, cons, net>>

Init ==
    /\ items = <<>>
    /\ next = 1
    /\ cons = [c \in Cons |-> [asking |-> FALSE, got |-> <<>>]]
    /\ net = {}

Stream ==
    /\ next <= N
    /\ Len(items) < Cap
    /\ items' = Append(items, next)
    /\ next' = next + 1
    /\ UNCHANGED <<cons, net>>

Ask(c) ==
    /\ ~cons[c].asking
    /\ Len(cons[c].got) < Rounds
    /\ cons' = [cons EXCEPT ![c].asking = TRUE]
    /\ UNCHANGED <<items, next, net>>

\* The server thread answers the request: a reply message with the oldest item.
Answer(c) ==
    /\ cons[c].asking
    /\ ~\E m \in net : m.to = c
    /\ items /= <<>>
    /\ net' = net \cup {[to |-> c, val |-> Head(items)]}
    /\ items' = Tail(items)
    /\ UNCHANGED <<next, cons>>

Take(c) ==
    /\ \E m \in net :
        /\ m.to = c
        /\ net' = net \ {m}
        /\ cons' = [cons EXCEPT ![c] = [asking |-> FALSE, got |-> Append(@.got, m.val)]]
    /\ UNCHANGED <<items, next>>

Next == Stream \/ \E c \in Cons : Ask(c) \/ Answer(c) \/ Take(c)

Spec == Init /\ [][Next]_vars /\ WF_vars(Stream)
        /\ \A c \in Cons : WF_vars(Ask(c)) /\ WF_vars(Answer(c)) /\ WF_vars(Take(c))
=============================================================================
