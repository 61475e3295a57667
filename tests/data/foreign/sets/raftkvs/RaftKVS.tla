------------------------------- MODULE RaftKVS -------------------------------
(***************************************************************************)
(* hashicorp/raft 1.1.2 under a key-value store, written with sets and     *)
(* relations instead of per-server records:                                *)
(*   - the roles are three disjoint sets of servers (leaders, candidates,  *)
(*     down); every other server is a follower;                            *)
(*   - votes cast, votes counted and known leaders are relations, sets of  *)
(*     pairs <<who, whom>>;                                                 *)
(*   - a log is two parallel sequences, the entries' terms and values;     *)
(*   - replication progress is indexed by the pair <<leader, follower>>;   *)
(*   - the network is one channel per ordered pair of servers, a set of    *)
(*     packets that name neither end (the channel does).                   *)
(* RPCs are calls with an answer; the network loses either; a crashed      *)
(* server keeps its term, its vote and its log.  As in the library: a      *)
(* server that follows a leader refuses every other candidate, a new       *)
(* leader appends a no-op entry, a leader commits only entries of its own  *)
(* term, steps down (keeping its term) on an answer with a newer term or    *)
(* when its lease runs out, and a follower commits up to                    *)
(* min(leaderCommit, its last index).                                       *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Node,      \* the servers
          Val,       \* the values clients put
          TopTerm,   \* no server campaigns past this term
          LogBound   \* a leader takes no put that makes its log longer

VARIABLES
    term,        \* [Node -> Nat], persisted
    leaders,     \* SUBSET Node
    candidates,  \* SUBSET Node
    down,        \* SUBSET Node: crashed servers
    ballots,     \* SUBSET (Node \X Node): <<voter, chosen>>, persisted, one per voter
    follows,     \* SUBSET (Node \X Node): <<i, l>>, i knows l as its leader
    counted,     \* SUBSET (Node \X Node): <<candidate, voter>>, votes a candidate holds
    eterms,      \* [Node -> Seq(Nat)]: the terms of the log's entries, persisted
    evals,       \* [Node -> Seq(STRING)]: their values, persisted
    committed,   \* [Node -> Nat]
    nxt,         \* [Node \X Node -> Nat]: <<leader, follower>> -> next index to send
    mat,         \* [Node \X Node -> Nat]: <<leader, server>> -> highest index known stored
    wire         \* [Node \X Node -> SUBSET Packet]: what travels from p[1] to p[2]

vars == <<term, leaders, candidates, down, ballots, follows, counted, eterms, evals,
          committed, nxt, mat, wire>>

Pairs == Node \X Node
Others(i) == Node \ {i}
Majority(S) == 2 * Cardinality(S) > Cardinality(Node)
Lesser(a, b) == IF a <= b THEN a ELSE b
Greater(a, b) == IF a >= b THEN a ELSE b

Last(i) == Len(eterms[i])
LastTerm(i) == IF Last(i) = 0 THEN 0 ELSE eterms[i][Last(i)]
Image(R, x) == {p[2] : p \in {q \in R : q[1] = x}}
Without(R, x) == {q \in R : q[1] /= x}

(***************************************************************************)
(* Packets.  kind: "ask" (vote request), "vote" (its answer), "push"       *)
(* (append or heartbeat request), "ack" (its answer).  a and b: the last   *)
(* index and term of an ask, the previous index and term of a push, the    *)
(* follower's last index and the request's last entry index of an ack.     *)
(* et and ev: a push's entries, as two parallel sequences.  Unused fields  *)
(* are zero.                                                                *)
(***************************************************************************)
Blank == [kind |-> "ask", t |-> 0, a |-> 0, b |-> 0, et |-> <<>>, ev |-> <<>>, lc |-> 0,
          ok |-> FALSE, hb |-> FALSE, rt |-> 0]
Ask(t, li, lt) == [Blank EXCEPT !.t = t, !.a = li, !.b = lt]
VoteBack(t, yes, rt) == [Blank EXCEPT !.kind = "vote", !.t = t, !.ok = yes, !.rt = rt]
Push(t, pi, pt, ts, vs, lc, hb) ==
    [Blank EXCEPT !.kind = "push", !.t = t, !.a = pi, !.b = pt, !.et = ts, !.ev = vs, !.lc = lc, !.hb = hb]
AckBack(t, ok, last, upto, hb, rt) ==
    [Blank EXCEPT !.kind = "ack", !.t = t, !.ok = ok, !.a = last, !.b = upto, !.hb = hb, !.rt = rt]

\* Put packet p on the channel from s to r.
Send(w, s, r, p) == [w EXCEPT ![<<s, r>>] = @ \cup {p}]
\* Take packet p off the channel from s to r.
Take(w, s, r, p) == [w EXCEPT ![<<s, r>>] = @ \ {p}]

NoProgress(i) ==
    /\ nxt' = [p \in Pairs |-> IF p[1] = i THEN 0 ELSE nxt[p]]
    /\ mat' = [p \in Pairs |-> IF p[1] = i THEN 0 ELSE mat[p]]

Init ==
    /\ term = [i \in Node |-> 1]
    /\ leaders = {} /\ candidates = {} /\ down = {}
    /\ ballots = {} /\ follows = {} /\ counted = {}
    /\ eterms = [i \in Node |-> <<1>>]
    /\ evals = [i \in Node |-> <<"config">>]
    /\ committed = [i \in Node |-> 0]
    /\ nxt = [p \in Pairs |-> 0]
    /\ mat = [p \in Pairs |-> 0]
    /\ wire = [p \in Pairs |-> {}]

Packet ==
    [kind : {"ask", "vote", "push", "ack"}, t : Nat, a : Nat, b : Nat, et : Seq(Nat),
     ev : Seq(STRING), lc : Nat, ok : BOOLEAN, hb : BOOLEAN, rt : Nat]

TypeOK ==
    /\ term \in [Node -> Nat]
    /\ leaders \cup candidates \cup down \subseteq Node
    /\ leaders \cap candidates = {} /\ leaders \cap down = {} /\ candidates \cap down = {}
    /\ ballots \subseteq Pairs /\ follows \subseteq Pairs /\ counted \subseteq Pairs
    /\ \A i \in Node : Cardinality(Image(ballots, i)) <= 1 /\ Cardinality(Image(follows, i)) <= 1
    /\ eterms \in [Node -> Seq(Nat)] /\ evals \in [Node -> Seq(STRING)]
    /\ \A i \in Node : Len(eterms[i]) = Len(evals[i])
    /\ committed \in [Node -> Nat]
    /\ nxt \in [Pairs -> Nat] /\ mat \in [Pairs -> Nat]
    /\ wire \in [Pairs -> SUBSET Packet]

(* The election timer of a follower or candidate fires: electSelf. *)
Campaign(i) ==
    /\ i \notin leaders \cup down
    /\ term[i] < TopTerm
    /\ candidates' = candidates \cup {i}
    /\ term' = [term EXCEPT ![i] = @ + 1]
    /\ ballots' = Without(ballots, i) \cup {<<i, i>>}
    /\ follows' = Without(follows, i)
    /\ counted' = Without(counted, i) \cup {<<i, i>>}
    /\ wire' = [p \in Pairs |-> IF p[1] = i /\ p[2] /= i
                                  THEN wire[p] \cup {Ask(term[i] + 1, Last(i), LastTerm(i))}
                                  ELSE wire[p]]
    /\ UNCHANGED <<leaders, down, eterms, evals, committed, nxt, mat>>

(* requestVote: server i answers the ask p that s sent. *)
Poll(i, s, p) ==
    /\ p \in wire[<<s, i>>]
    /\ p.kind = "ask"
    /\ i \notin down
    /\ LET busy == Image(follows, i) \ {s} /= {}
           refuse == busy \/ p.t < term[i]
           newer == ~refuse /\ p.t > term[i]
           t == IF newer THEN p.t ELSE term[i]
           held == IF newer THEN {} ELSE Image(ballots, i)
           upToDate == p.b > LastTerm(i) \/ (p.b = LastTerm(i) /\ p.a >= Last(i))
           yes == ~refuse /\ IF held = {} THEN upToDate ELSE held = {s}
       IN /\ term' = [term EXCEPT ![i] = t]
          /\ ballots' = Without(ballots, i) \cup {<<i, c>> : c \in IF yes THEN {s} ELSE held}
          /\ IF newer
               THEN /\ leaders' = leaders \ {i}
                    /\ candidates' = candidates \ {i}
                    /\ follows' = Without(follows, i)
                    /\ counted' = Without(counted, i)
                    /\ NoProgress(i)
               ELSE UNCHANGED <<leaders, candidates, follows, counted, nxt, mat>>
          /\ wire' = Send(Take(wire, s, i, p), i, s, VoteBack(t, yes, p.t))
    /\ UNCHANGED <<down, eterms, evals, committed>>

(* runLeader: the new leader's no-op entry and its replication state. *)
Elected(i) ==
    /\ candidates' = candidates \ {i}
    /\ leaders' = leaders \cup {i}
    /\ follows' = Without(follows, i) \cup {<<i, i>>}
    /\ counted' = Without(counted, i)
    /\ eterms' = [eterms EXCEPT ![i] = Append(@, term[i])]
    /\ evals' = [evals EXCEPT ![i] = Append(@, "noop")]
    /\ nxt' = [p \in Pairs |-> IF p[1] /= i THEN nxt[p]
                               ELSE IF p[2] = i THEN 0 ELSE Last(i) + 1]
    /\ mat' = [p \in Pairs |-> IF p[1] /= i THEN mat[p]
                               ELSE IF p[2] = i THEN Last(i) + 1 ELSE 0]

(* runCandidate: the answer p to i's ask comes back from s. *)
Count(i, s, p) ==
    /\ p \in wire[<<s, i>>]
    /\ p.kind = "vote"
    /\ i \notin down
    /\ wire' = Take(wire, s, i, p)
    /\ IF i \notin candidates \/ p.rt /= term[i]
         THEN UNCHANGED <<term, leaders, candidates, ballots, follows, counted, eterms, evals, nxt, mat>>
       ELSE IF p.t > term[i]
         THEN /\ candidates' = candidates \ {i}
              /\ term' = [term EXCEPT ![i] = p.t]
              /\ ballots' = Without(ballots, i)
              /\ counted' = Without(counted, i)
              /\ UNCHANGED <<leaders, follows, eterms, evals, nxt, mat>>
       ELSE IF p.ok /\ Majority(Image(counted, i) \cup {s})
         THEN /\ Elected(i)
              /\ UNCHANGED <<term, ballots>>
       ELSE /\ counted' = IF p.ok THEN counted \cup {<<i, s>>} ELSE counted
            /\ UNCHANGED <<term, leaders, candidates, ballots, follows, eterms, evals, nxt, mat>>
    /\ UNCHANGED <<down, committed>>

(* replicateTo: entries from the next index up to the last index the      *)
(* replication goroutine read, and a commit index it read; the leader may *)
(* have appended and committed more since.                                *)
Ship(i, j) ==
    /\ i \in leaders
    /\ j \in Others(i)
    /\ LET from == nxt[<<i, j>>]
           prevTerm == IF from <= 1 THEN 0 ELSE eterms[i][from - 1]
       IN \E upto \in (from - 1)..Last(i), lc \in 0..committed[i] :
            wire' = Send(wire, i, j, Push(term[i], from - 1, prevTerm,
                                          SubSeq(eterms[i], from, upto),
                                          SubSeq(evals[i], from, upto), lc, FALSE))
    /\ UNCHANGED <<term, leaders, candidates, down, ballots, follows, counted, eterms, evals,
                   committed, nxt, mat>>

(* heartbeat: the term and nothing else. *)
Beat(i, j) ==
    /\ i \in leaders
    /\ j \in Others(i)
    /\ wire' = Send(wire, i, j, Push(term[i], 0, 0, <<>>, <<>>, 0, TRUE))
    /\ UNCHANGED <<term, leaders, candidates, down, ballots, follows, counted, eterms, evals,
                   committed, nxt, mat>>

(* appendEntries: server i takes the push p from s and answers it. *)
Accept(i, s, p) ==
    /\ p \in wire[<<s, i>>]
    /\ p.kind = "push"
    /\ i \notin down
    /\ LET n == Len(p.et)
           answer(t, ok) == AckBack(t, ok, Last(i), IF n = 0 THEN 0 ELSE p.a + n, p.hb, p.t)
       IN IF p.t < term[i]
            THEN /\ wire' = Send(Take(wire, s, i, p), i, s, answer(term[i], FALSE))
                 /\ UNCHANGED <<term, leaders, candidates, ballots, follows, counted, eterms,
                                evals, committed, nxt, mat>>
            ELSE LET fits == p.a = 0 \/ (p.a <= Last(i) /\ eterms[i][p.a] = p.b)
                     \* the offsets of the entries i lacks or holds with another term
                     clash == {k \in 1..n : p.a + k > Last(i) \/ eterms[i][p.a + k] /= p.et[k]}
                     cut == IF clash = {} THEN 0 ELSE CHOOSE k \in clash : \A q \in clash : k <= q
                     keep == fits /\ cut /= 0
                     len == IF keep THEN p.a + n ELSE Last(i)
                     ts == IF keep THEN [x \in 1..len |-> IF x < p.a + cut THEN eterms[i][x] ELSE p.et[x - p.a]]
                                   ELSE eterms[i]
                     vs == IF keep THEN [x \in 1..len |-> IF x < p.a + cut THEN evals[i][x] ELSE p.ev[x - p.a]]
                                   ELSE evals[i]
                 IN /\ term' = [term EXCEPT ![i] = p.t]
                    /\ ballots' = IF p.t > term[i] THEN Without(ballots, i) ELSE ballots
                    /\ leaders' = leaders \ {i}
                    /\ candidates' = candidates \ {i}
                    /\ follows' = Without(follows, i) \cup {<<i, s>>}
                    /\ counted' = Without(counted, i)
                    /\ NoProgress(i)
                    /\ eterms' = [eterms EXCEPT ![i] = ts]
                    /\ evals' = [evals EXCEPT ![i] = vs]
                    /\ committed' = [committed EXCEPT ![i] =
                                       IF fits /\ p.lc > @ THEN Lesser(p.lc, len) ELSE @]
                    /\ wire' = Send(Take(wire, s, i, p), i, s, answer(p.t, fits))
    /\ UNCHANGED down

\* The highest index a majority of the match indexes m reaches: one of them, or 0.
MajorityIndex(m) ==
    LET cands == {0} \cup {m[k] : k \in Node}
        reached == {x \in cands : Majority({k \in Node : m[k] >= x})}
    IN CHOOSE x \in reached : \A y \in reached : y <= x

(* replicateTo's answer handling and the leader loop's commitment: the ack *)
(* p comes back to i from s.                                                *)
Settle(i, s, p) ==
    /\ p \in wire[<<s, i>>]
    /\ p.kind = "ack"
    /\ i \notin down
    /\ wire' = Take(wire, s, i, p)
    /\ IF p.hb \/ i \notin leaders \/ p.rt /= term[i]
         THEN UNCHANGED <<leaders, follows, committed, nxt, mat>>
       ELSE IF p.t > p.rt
         THEN /\ leaders' = leaders \ {i}
              /\ follows' = Without(follows, i)
              /\ NoProgress(i)
              /\ UNCHANGED committed
       ELSE IF p.ok /\ p.b > 0
         THEN LET m == [k \in Node |-> IF k = s THEN Greater(mat[<<i, s>>], p.b) ELSE mat[<<i, k>>]]
                  c == MajorityIndex(m)
              IN /\ nxt' = [nxt EXCEPT ![<<i, s>>] = p.b + 1]
                 /\ mat' = [mat EXCEPT ![<<i, s>>] = m[s]]
                 /\ committed' = [committed EXCEPT ![i] =
                                    IF c > @ /\ eterms[i][c] = term[i] THEN c ELSE @]
                 /\ UNCHANGED <<leaders, follows>>
       ELSE IF p.ok
         THEN UNCHANGED <<leaders, follows, committed, nxt, mat>>
       ELSE /\ nxt' = [nxt EXCEPT ![<<i, s>>] = Greater(Lesser(@ - 1, p.a + 1), 1)]
            /\ UNCHANGED <<leaders, follows, committed, mat>>
    /\ UNCHANGED <<term, candidates, down, ballots, counted, eterms, evals>>

(* dispatchLogs: a client's put of v on leader i. *)
Put(i, v) ==
    /\ i \in leaders
    /\ v \in Val
    /\ Last(i) < LogBound
    /\ eterms' = [eterms EXCEPT ![i] = Append(@, term[i])]
    /\ evals' = [evals EXCEPT ![i] = Append(@, v)]
    /\ mat' = [mat EXCEPT ![<<i, i>>] = Last(i) + 1]
    /\ UNCHANGED <<term, leaders, candidates, down, ballots, follows, counted, committed, nxt, wire>>

(* checkLeaderLease: no quorum heard from in time. *)
Lapse(i) ==
    /\ i \in leaders
    /\ leaders' = leaders \ {i}
    /\ follows' = Without(follows, i)
    /\ NoProgress(i)
    /\ UNCHANGED <<term, candidates, down, ballots, counted, eterms, evals, committed, wire>>

(* A crash: what travels to i is lost, and so are i's own calls; the *)
(* answers i gave stay on the network.                                *)
Halt(i) ==
    /\ i \notin down
    /\ down' = down \cup {i}
    /\ leaders' = leaders \ {i}
    /\ candidates' = candidates \ {i}
    /\ follows' = Without(follows, i)
    /\ counted' = Without(counted, i)
    /\ committed' = [committed EXCEPT ![i] = 0]
    /\ NoProgress(i)
    /\ wire' = [p \in Pairs |-> IF p[2] = i THEN {}
                               ELSE IF p[1] = i THEN {x \in wire[p] : x.kind \in {"vote", "ack"}}
                               ELSE wire[p]]
    /\ UNCHANGED <<term, ballots, eterms, evals>>

(* NewRaft on the persisted stores. *)
Boot(i) ==
    /\ i \in down
    /\ down' = down \ {i}
    /\ UNCHANGED <<term, leaders, candidates, ballots, follows, counted, eterms, evals,
                   committed, nxt, mat, wire>>

Lose(s, r, p) ==
    /\ p \in wire[<<s, r>>]
    /\ wire' = Take(wire, s, r, p)
    /\ UNCHANGED <<term, leaders, candidates, down, ballots, follows, counted, eterms, evals,
                   committed, nxt, mat>>

Next ==
    \/ \E i \in Node : Campaign(i) \/ Lapse(i) \/ Halt(i) \/ Boot(i)
    \/ \E i \in Node, v \in Val : Put(i, v)
    \/ \E c \in Pairs : Ship(c[1], c[2]) \/ Beat(c[1], c[2])
    \/ \E c \in Pairs : \E p \in wire[c] : Poll(c[2], c[1], p)
    \/ \E c \in Pairs : \E p \in wire[c] : Count(c[2], c[1], p)
    \/ \E c \in Pairs : \E p \in wire[c] : Accept(c[2], c[1], p)
    \/ \E c \in Pairs : \E p \in wire[c] : Settle(c[2], c[1], p)
    \/ \E c \in Pairs : \E p \in wire[c] : Lose(c[1], c[2], p)

Spec == Init /\ [][Next]_vars /\ \A i \in Node : WF_vars(Campaign(i)) /\ WF_vars(Boot(i))

(***************************************************************************)
(* The task's vocabulary read from this spec, and this spec's packets    *)
(* read from it (mapping.yaml uses both).                                 *)
(***************************************************************************)
None == "none"
Role(i) == IF i \in down THEN "Down"
           ELSE IF i \in leaders THEN "Leader"
           ELSE IF i \in candidates THEN "Candidate"
           ELSE "Follower"
OneOf(S) == IF S = {} THEN None ELSE CHOOSE x \in S : TRUE
TypeName(k) == CASE k = "ask" -> "RequestVoteRequest" [] k = "vote" -> "RequestVoteResponse"
                 [] k = "push" -> "AppendEntriesRequest" [] OTHER -> "AppendEntriesResponse"

\* The canonical message for packet p on the channel from s to r.
AsMessage(s, r, p) ==
    [type |-> TypeName(p.kind), from |-> s, to |-> r, term |-> p.t,
     lastLogIndex |-> IF p.kind = "ask" THEN p.a ELSE 0,
     lastLogTerm |-> IF p.kind = "ask" THEN p.b ELSE 0,
     granted |-> p.kind = "vote" /\ p.ok,
     prevLogIndex |-> IF p.kind = "push" THEN p.a ELSE 0,
     prevLogTerm |-> IF p.kind = "push" THEN p.b ELSE 0,
     entries |-> [k \in 1..Len(p.et) |-> [term |-> p.et[k], value |-> p.ev[k]]],
     leaderCommit |-> p.lc, heartbeat |-> p.hb,
     success |-> p.kind = "ack" /\ p.ok,
     lastLog |-> IF p.kind = "ack" THEN p.a ELSE 0,
     matchIndex |-> IF p.kind = "ack" THEN p.b ELSE 0,
     reqTerm |-> p.rt]

\* The packet a canonical message m travels as.
AsPacket(m) ==
    [kind |-> CASE m.type = "RequestVoteRequest" -> "ask" [] m.type = "RequestVoteResponse" -> "vote"
                [] m.type = "AppendEntriesRequest" -> "push" [] OTHER -> "ack",
     t |-> m.term,
     a |-> CASE m.type = "RequestVoteRequest" -> m.lastLogIndex
             [] m.type = "AppendEntriesRequest" -> m.prevLogIndex
             [] m.type = "AppendEntriesResponse" -> m.lastLog
             [] OTHER -> 0,
     b |-> CASE m.type = "RequestVoteRequest" -> m.lastLogTerm
             [] m.type = "AppendEntriesRequest" -> m.prevLogTerm
             [] m.type = "AppendEntriesResponse" -> m.matchIndex
             [] OTHER -> 0,
     et |-> [k \in 1..Len(m.entries) |-> m.entries[k].term],
     ev |-> [k \in 1..Len(m.entries) |-> m.entries[k].value],
     lc |-> m.leaderCommit, ok |-> m.granted \/ m.success, hb |-> m.heartbeat, rt |-> m.reqTerm]

InFlight == UNION {{AsMessage(c[1], c[2], p) : p \in wire[c]} : c \in Pairs}
=============================================================================
