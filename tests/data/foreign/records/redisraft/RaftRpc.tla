------------------------------- MODULE RaftRpc -------------------------------
(* The four Raft RPCs of ovsdb/raft.c as records named after raft-rpc.h:   *)
(* requests and replies kept in two sets, each with the fields of its kind. *)
EXTENDS Naturals, Sequences

Zero == "zero"   \* an all-zero server id: no vote, no leader

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b

\* kind: "vote" or "append"; a vote request uses lli/llt, an append request pli/plt/ents/lc.
Rq(kind, src, dst, term) ==
    [kind |-> kind, src |-> src, dst |-> dst, term |-> term,
     lli |-> 0, llt |-> 0, pli |-> 0, plt |-> 0, ents |-> <<>>, lc |-> 0]

\* A vote reply says whether the vote is for the requester (yes); an append reply carries the
\* request's pli/plt and entry count, the replier's log end, and whether it was accepted (yes).
Rpy(kind, src, dst, term, yes) ==
    [kind |-> kind, src |-> src, dst |-> dst, term |-> term, yes |-> yes,
     pli |-> 0, plt |-> 0, n |-> 0, logEnd |-> 0]

\* Index 0: the formation's entry before the configuration, written in term 2.
TermOf(lg, k) == IF k = 0 THEN 2 ELSE IF k > Len(lg) THEN 0 ELSE lg[k].t
=============================================================================
