---------------------------- MODULE RingBuffer ----------------------------
(* A single-producer single-consumer ring in the LMAX Disruptor's grain: the
   producer claims the next sequence number and publishes an item into its
   slot, waiting while the ring is full; the consumer reads the slot of the
   next sequence it has not read, waiting while there is none.  Sequences run
   free; a slot is a sequence modulo the ring's size.  One slot is always
   left free, as in ck_ring: Slots - 1 items at most. *)
EXTENDS Naturals

CONSTANTS Slots, Count

VARIABLES ring, writeSeq, readSeq

vars == <<ring, writeSeq, readSeq>>

Full == writeSeq - readSeq = Slots - 1
Empty == readSeq = writeSeq

Init ==
    /\ ring = [k \in 0..Slots-1 |-> 0]
    /\ writeSeq = 0
    /\ readSeq = 0

\* The producer publishes item writeSeq + 1 once a slot is free.
Publish ==
    /\ writeSeq < Count
    /\ ~Full
    /\ ring' = [ring EXCEPT ![writeSeq % Slots] = writeSeq + 1]
    /\ writeSeq' = writeSeq + 1
    /\ UNCHANGED readSeq

\* The consumer takes the item of the next sequence once it is published.
Take ==
    /\ ~Empty
    /\ readSeq' = readSeq + 1
    /\ UNCHANGED <<ring, writeSeq>>

Next == Publish \/ Take

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

TypeOK ==
    /\ ring \in [0..Slots-1 -> 0..Count]
    /\ writeSeq \in 0..Count
    /\ readSeq \in 0..writeSeq
=============================================================================
