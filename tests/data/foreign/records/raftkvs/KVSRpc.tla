------------------------------- MODULE KVSRpc -------------------------------
(* Calls and answers of the key-value store's Raft, as two kinds of record. *)
(* A call names its caller and callee; its answer keeps both, so the       *)
(* answer goes back to the caller.                                          *)
EXTENDS Naturals, Sequences

Nobody == "nobody"

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b

\* kind: "vote" or "append"; a heartbeat is an append with beat = TRUE.
Call(kind, caller, callee, term) ==
    [kind |-> kind, caller |-> caller, callee |-> callee, term |-> term,
     lli |-> 0, llt |-> 0, pli |-> 0, plt |-> 0, ents |-> <<>>, lc |-> 0, beat |-> FALSE]

\* ok: the vote granted, or the append accepted; last: the callee's last index when the call
\* arrived; upto: the index of the call's last entry (0 without entries); forTerm: the call's term.
Answer(c, term, ok) ==
    [kind |-> c.kind, caller |-> c.caller, callee |-> c.callee, term |-> term, ok |-> ok,
     last |-> 0, upto |-> 0, forTerm |-> c.term, beat |-> c.beat]

LastT(j) == IF j = <<>> THEN 0 ELSE j[Len(j)].t
=============================================================================
