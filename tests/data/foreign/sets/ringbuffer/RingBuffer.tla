----------------------------- MODULE RingBuffer -----------------------------
(* ck_ring as an abstract bounded queue: the items in flight as a sequence, the counters     *)
(* free-running as in the code (unsigned ints that only matter masked), and one step name    *)
(* per thread with the outcome as an argument.                                               *)
EXTENDS Naturals, Sequences

CONSTANTS Slots, Items

VARIABLES ring, produced, consumed

vars == <<ring, produced, consumed>>

Cap == Slots - 1

Init == ring = <<>> /\ produced = 0 /\ consumed = 0

Produce(ok) ==
    /\ produced < Items
    /\ IF ok
       THEN /\ Len(ring) < Cap
            /\ ring' = Append(ring, produced + 1)
            /\ produced' = produced + 1
            /\ UNCHANGED consumed
       ELSE /\ Len(ring) = Cap
            /\ UNCHANGED vars

Consume(ok) ==
    /\ consumed < Items
    /\ IF ok
       THEN /\ ring /= <<>>
            /\ ring' = Tail(ring)
            /\ consumed' = consumed + 1
            /\ UNCHANGED produced
       ELSE /\ ring = <<>>
            /\ UNCHANGED vars

Next == \E ok \in BOOLEAN : Produce(ok) \/ Consume(ok)

Spec == Init /\ [][Next]_vars /\ WF_vars(Produce(TRUE)) /\ WF_vars(Consume(TRUE))
=============================================================================
