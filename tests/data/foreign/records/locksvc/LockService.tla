---------------------------- MODULE LockService ----------------------------
(* The lock service the way PGo's locksvc describes it: a server with a FIFO queue of lock     *)
(* requests that sends an explicit grant to the client at the head, and clients that wait for  *)
(* the grant. Client records hold the state; the grant is a message the traces never show.     *)
EXTENDS Naturals, Sequences

CONSTANT P

VARIABLES q, cl

vars == <<q, cl>>

Queued(c) == \E i \in 1..Len(q) : q[i] = c

Init ==
    /\ q = <<>>
    /\ cl = [c \in P |-> [has |-> FALSE, grant |-> FALSE, asked |-> FALSE]]

\* LockMsg: the server appends the sender to its queue.
Ask(c) ==
    /\ ~cl[c].asked
    /\ q' = Append(q, c)
    /\ cl' = [cl EXCEPT ![c].asked = TRUE]

\* The server sends GrantMsg to the head of its queue (once).
ServerGrant(c) ==
    /\ q /= <<>> /\ Head(q) = c
    /\ ~cl[c].grant
    /\ cl' = [cl EXCEPT ![c].grant = TRUE]
    /\ UNCHANGED q

\* The client receives its grant and enters the critical section.
Enter(c) ==
    /\ cl[c].asked /\ cl[c].grant /\ ~cl[c].has
    /\ cl' = [cl EXCEPT ![c].has = TRUE]
    /\ UNCHANGED q

\* UnlockMsg: the server drops the holder from the queue.
Leave(c) ==
    /\ cl[c].has
    /\ q' = SelectSeq(q, LAMBDA x : x /= c)
    /\ cl' = [cl EXCEPT ![c] = [has |-> FALSE, grant |-> FALSE, asked |-> FALSE]]

\* A waiting client withdraws its request (a grant on its way is void).
Withdraw(c) ==
    /\ cl[c].asked /\ ~cl[c].has
    /\ q' = SelectSeq(q, LAMBDA x : x /= c)
    /\ cl' = [cl EXCEPT ![c] = [has |-> FALSE, grant |-> FALSE, asked |-> FALSE]]

Next == \E c \in P : Ask(c) \/ ServerGrant(c) \/ Enter(c) \/ Leave(c) \/ Withdraw(c)

Spec == Init /\ [][Next]_vars
        /\ \A c \in P : WF_vars(ServerGrant(c)) /\ WF_vars(Enter(c)) /\ WF_vars(Leave(c))
=============================================================================
