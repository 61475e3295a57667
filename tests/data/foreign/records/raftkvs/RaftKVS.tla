------------------------------- MODULE RaftKVS -------------------------------
(* A replicated key-value store on hashicorp/raft, written as one record    *)
(* per server, a journal of [t, op] entries, a replication table per        *)
(* leader, calls and their answers kept apart, and the set of live servers. *)
(* Every call is served by Serve and every answer returned by Return.      *)
EXTENDS Naturals, Sequences, FiniteSets, KVSRpc

CONSTANTS Nodes, Cmds, TermCap, LogCap

VARIABLES srv, journal, alive, repl, calls, answers

vars == <<srv, journal, alive, repl, calls, answers>>

Fresh == [role |-> "follower", term |-> 1, vote |-> Nobody, lead |-> Nobody, commit |-> 0, tally |-> {}]
NoRepl == [j \in Nodes |-> [next |-> 0, match |-> 0]]
Majority(S) == Cardinality(S) * 2 > Cardinality(Nodes)

Init ==
    /\ srv = [i \in Nodes |-> Fresh]
    /\ journal = [i \in Nodes |-> <<[t |-> 1, op |-> "config"]>>]
    /\ alive = Nodes
    /\ repl = [i \in Nodes |-> NoRepl]
    /\ calls = {}
    /\ answers = {}

TypeOK ==
    /\ \A i \in Nodes : srv[i].role \in {"follower", "candidate", "leader"}
    /\ alive \subseteq Nodes

Up(i) == i \in alive

Campaign(i) ==
    /\ Up(i) /\ srv[i].role /= "leader"
    /\ srv[i].term < TermCap
    /\ srv' = [srv EXCEPT ![i] = [@ EXCEPT !.role = "candidate", !.term = @ + 1, !.vote = i,
                                             !.lead = Nobody, !.tally = {i}]]
    /\ calls' = calls \cup {[Call("vote", i, j, srv[i].term + 1) EXCEPT
                              !.lli = Len(journal[i]), !.llt = LastT(journal[i])] : j \in Nodes \ {i}}
    /\ UNCHANGED <<journal, alive, repl, answers>>

\* The journal after the entries of c: the ones it holds are skipped, the first conflict cuts it.
Merge(j, c) ==
    LET clash == {k \in 1..Len(c.ents) : c.pli + k > Len(j) \/ j[c.pli + k].t /= c.ents[k].t}
    IN IF clash = {} THEN j
       ELSE LET k == CHOOSE x \in clash : \A y \in clash : x <= y
            IN SubSeq(j, 1, c.pli + k - 1) \o SubSeq(c.ents, k, Len(c.ents))

ServeVote(i, c) ==
    LET me == srv[i]
        no == (me.lead /= Nobody /\ me.lead /= c.caller) \/ c.term < me.term
        up == ~no /\ c.term > me.term
        v == IF up THEN Nobody ELSE me.vote
        fits == c.llt > LastT(journal[i]) \/ (c.llt = LastT(journal[i]) /\ c.lli >= Len(journal[i]))
        yes == ~no /\ (IF v = Nobody THEN fits ELSE v = c.caller)
        t == IF up THEN c.term ELSE me.term
    IN /\ srv' = [srv EXCEPT ![i] =
                    IF up THEN [me EXCEPT !.role = "follower", !.term = t, !.lead = Nobody, !.tally = {},
                                          !.vote = IF yes THEN c.caller ELSE Nobody]
                          ELSE [me EXCEPT !.vote = IF yes THEN c.caller ELSE @]]
       /\ repl' = IF up THEN [repl EXCEPT ![i] = NoRepl] ELSE repl
       /\ answers' = answers \cup {Answer(c, t, yes)}
       /\ UNCHANGED journal

ServeAppend(i, c) ==
    LET me == srv[i]
        reply(t, ok) == [Answer(c, t, ok) EXCEPT !.last = Len(journal[i]),
                                                 !.upto = IF c.ents = <<>> THEN 0 ELSE c.pli + Len(c.ents)]
    IN IF c.term < me.term
         THEN /\ answers' = answers \cup {reply(me.term, FALSE)}
              /\ UNCHANGED <<srv, journal, repl>>
         ELSE LET fits == c.pli = 0 \/ (c.pli <= Len(journal[i]) /\ journal[i][c.pli].t = c.plt)
                  j2 == IF fits THEN Merge(journal[i], c) ELSE journal[i]
              IN /\ journal' = [journal EXCEPT ![i] = j2]
                 /\ srv' = [srv EXCEPT ![i] =
                              [me EXCEPT !.role = "follower", !.term = c.term, !.lead = c.caller, !.tally = {},
                                         !.vote = IF c.term > me.term THEN Nobody ELSE @,
                                         !.commit = IF fits /\ c.lc > @ THEN Min(c.lc, Len(j2)) ELSE @]]
                 /\ repl' = [repl EXCEPT ![i] = NoRepl]
                 /\ answers' = answers \cup {reply(c.term, fits)}

\* Server i is handed the call c, and answers it.
Serve(i, c) ==
    /\ c \in calls /\ c.callee = i /\ Up(i)
    /\ calls' = calls \ {c}
    /\ IF c.kind = "vote" THEN ServeVote(i, c) ELSE ServeAppend(i, c)
    /\ UNCHANGED alive

Highest(m) ==
    CHOOSE n \in 0..LogCap + TermCap :
        /\ Majority({k \in Nodes : m[k] >= n})
        /\ \A q \in 0..LogCap + TermCap : Majority({k \in Nodes : m[k] >= q}) => q <= n

ReturnVote(i, a) ==
    LET me == srv[i]
    IN IF me.role /= "candidate" \/ a.forTerm /= me.term
         THEN UNCHANGED <<srv, journal, repl>>
       ELSE IF a.term > me.term
         THEN /\ srv' = [srv EXCEPT ![i] = [me EXCEPT !.role = "follower", !.term = a.term,
                                                       !.vote = Nobody, !.tally = {}]]
              /\ UNCHANGED <<journal, repl>>
       ELSE IF a.ok /\ Majority(me.tally \cup {a.callee})
         THEN /\ srv' = [srv EXCEPT ![i] = [me EXCEPT !.role = "leader", !.lead = i, !.tally = {}]]
              /\ journal' = [journal EXCEPT ![i] = Append(@, [t |-> me.term, op |-> "noop"])]
              /\ repl' = [repl EXCEPT ![i] =
                            [j \in Nodes |-> IF j = i THEN [next |-> 0, match |-> Len(journal[i]) + 1]
                                                      ELSE [next |-> Len(journal[i]) + 1, match |-> 0]]]
       ELSE /\ srv' = [srv EXCEPT ![i].tally = IF a.ok THEN @ \cup {a.callee} ELSE @]
            /\ UNCHANGED <<journal, repl>>

ReturnAppend(i, a) ==
    LET me == srv[i]
        j == a.callee
    IN IF a.beat \/ me.role /= "leader" \/ a.forTerm /= me.term
         THEN UNCHANGED <<srv, journal, repl>>
       ELSE IF a.term > a.forTerm
         THEN /\ srv' = [srv EXCEPT ![i] = [me EXCEPT !.role = "follower", !.lead = Nobody]]
              /\ repl' = [repl EXCEPT ![i] = NoRepl]
              /\ UNCHANGED journal
       ELSE IF a.ok /\ a.upto > 0
         THEN LET m == [k \in Nodes |-> IF k = j THEN Max(repl[i][j].match, a.upto) ELSE repl[i][k].match]
                  n == Highest(m)
              IN /\ repl' = [repl EXCEPT ![i] = [k \in Nodes |->
                                IF k = j THEN [next |-> a.upto + 1, match |-> m[k]] ELSE @[k]]]
                 /\ srv' = [srv EXCEPT ![i].commit =
                              IF n > @ /\ journal[i][n].t = me.term THEN n ELSE @]
                 /\ UNCHANGED journal
       ELSE IF a.ok
         THEN UNCHANGED <<srv, journal, repl>>
       ELSE /\ repl' = [repl EXCEPT ![i][j].next = Max(Min(@ - 1, a.last + 1), 1)]
            /\ UNCHANGED <<srv, journal>>

\* The answer a comes back to its caller i.
Return(i, a) ==
    /\ a \in answers /\ a.caller = i /\ Up(i)
    /\ answers' = answers \ {a}
    /\ IF a.kind = "vote" THEN ReturnVote(i, a) ELSE ReturnAppend(i, a)
    /\ UNCHANGED <<calls, alive>>

Replicate(i, j) ==
    /\ Up(i) /\ srv[i].role = "leader" /\ j /= i
    /\ LET p == repl[i][j].next - 1
       IN \E upto \in p..Len(journal[i]), lc \in 0..srv[i].commit :
            calls' = calls \cup {[Call("append", i, j, srv[i].term) EXCEPT
                                   !.pli = p, !.plt = IF p = 0 THEN 0 ELSE journal[i][p].t,
                                   !.ents = SubSeq(journal[i], p + 1, upto), !.lc = lc]}
    /\ UNCHANGED <<srv, journal, alive, repl, answers>>

Beat(i, j) ==
    /\ Up(i) /\ srv[i].role = "leader" /\ j /= i
    /\ calls' = calls \cup {[Call("append", i, j, srv[i].term) EXCEPT !.beat = TRUE]}
    /\ UNCHANGED <<srv, journal, alive, repl, answers>>

Put(i, v) ==
    /\ Up(i) /\ srv[i].role = "leader" /\ v \in Cmds
    /\ Len(journal[i]) < LogCap
    /\ journal' = [journal EXCEPT ![i] = Append(@, [t |-> srv[i].term, op |-> v])]
    /\ repl' = [repl EXCEPT ![i][i].match = Len(journal[i]) + 1]
    /\ UNCHANGED <<srv, alive, calls, answers>>

StepDown(i) ==
    /\ Up(i) /\ srv[i].role = "leader"
    /\ srv' = [srv EXCEPT ![i] = [@ EXCEPT !.role = "follower", !.lead = Nobody]]
    /\ repl' = [repl EXCEPT ![i] = NoRepl]
    /\ UNCHANGED <<journal, alive, calls, answers>>

\* A crash forgets all but the persisted term, vote and journal; what was sent to the server,
\* and its own calls, are lost; its answers are not.
Fail(i) ==
    /\ Up(i)
    /\ alive' = alive \ {i}
    /\ srv' = [srv EXCEPT ![i] = [@ EXCEPT !.role = "follower", !.lead = Nobody, !.commit = 0, !.tally = {}]]
    /\ repl' = [repl EXCEPT ![i] = NoRepl]
    /\ calls' = {c \in calls : c.caller /= i /\ c.callee /= i}
    /\ answers' = {a \in answers : a.caller /= i}
    /\ UNCHANGED journal

Recover(i) ==
    /\ ~Up(i)
    /\ alive' = alive \cup {i}
    /\ UNCHANGED <<srv, journal, repl, calls, answers>>

LoseCall(c) ==
    /\ c \in calls
    /\ calls' = calls \ {c}
    /\ UNCHANGED <<srv, journal, alive, repl, answers>>

LoseAnswer(a) ==
    /\ a \in answers
    /\ answers' = answers \ {a}
    /\ UNCHANGED <<srv, journal, alive, repl, calls>>

Next ==
    \/ \E i \in Nodes : Campaign(i) \/ StepDown(i) \/ Fail(i) \/ Recover(i)
    \/ \E i \in Nodes, c \in calls : Serve(i, c)
    \/ \E i \in Nodes, a \in answers : Return(i, a)
    \/ \E i, j \in Nodes : Replicate(i, j) \/ Beat(i, j)
    \/ \E i \in Nodes, v \in Cmds : Put(i, v)
    \/ \E c \in calls : LoseCall(c)
    \/ \E a \in answers : LoseAnswer(a)

Spec == Init /\ [][Next]_vars /\ \A i \in Nodes : WF_vars(Campaign(i)) /\ WF_vars(Recover(i))
=============================================================================
