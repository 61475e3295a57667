------------------------------- MODULE RaftWire -------------------------------
(* The messages of the spec: their kinds, fields and constructors.          *)
EXTENDS Naturals, Sequences

Nil == "nobody"
MsgTypes == {"PreVote", "PreVoteResp", "Vote", "VoteResp",
             "App", "AppResp", "Heartbeat", "HeartbeatResp"}

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b

Message(type, from, to, term, logTerm, index, entries, commit, reject, hint) ==
    [kind |-> type, src |-> from, dst |-> to, term |-> term, prevTerm |-> logTerm,
     prev |-> index, ents |-> entries, commit |-> commit, rej |-> reject,
     hint |-> hint]

Reply(type, m, term) == Message(type, m.dst, m.src, term, 0, 0, <<>>, 0, FALSE, 0)
=============================================================================
