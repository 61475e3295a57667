------------------------------- MODULE EtcdRaft -------------------------------
(* The raft package of etcd 3.4 with other names and another network: one  *)
(* inbox per node, deliveries that name sender and receiver, and an        *)
(* election timeout that is two steps (the timer expires, then the node    *)
(* campaigns).  The inbox helpers live in the module EtcdNet.              *)
EXTENDS Naturals, Integers, Sequences, FiniteSets, TLC, EtcdNet

CONSTANTS
    Peer,
    TermBound,
    LenBound

VARIABLES
    terms,
    mode,
    votes,
    known,
    logs,
    commits,
    yes,
    no,
    acked,
    inbox,
    expired

vars == <<terms, mode, votes, known, logs, commits,
          yes, no, acked, inbox, expired>>

Nil == "none"
MsgTypes == {"MsgPreVote", "MsgPreVoteResp", "MsgVote", "MsgVoteResp",
             "MsgApp", "MsgAppResp", "MsgHeartbeat", "MsgHeartbeatResp"}

InFlight == InFlightIn(inbox)

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b

Quorum == Cardinality(Peer) \div 2 + 1

LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)]

TermAt(l, n) == IF n >= 1 /\ n <= Len(l) THEN l[n] ELSE 0

UpToDate(lasti, term, l) ==
    \/ term > LastTerm(l)
    \/ term = LastTerm(l) /\ lasti >= Len(l)

ZeroMatch == [j \in Peer |-> 0]

BootstrapLog == <<1, 1, 1>>
BootstrapCommit == Len(BootstrapLog)

Message(type, from, to, term, logTerm, index, entries, commit, reject, hint) ==
    [type |-> type, from |-> from, to |-> to, term |-> term, logTerm |-> logTerm,
     index |-> index, entries |-> entries, commit |-> commit, reject |-> reject,
     rejectHint |-> hint]

Reply(type, m, term) == Message(type, m.to, m.from, term, 0, 0, <<>>, 0, FALSE, 0)

AppMsg(i, j, p, l, c, t) ==
    Message("MsgApp", i, j, t, TermAt(l, p), p, SubSeq(l, p + 1, Len(l)), c, FALSE, 0)

Prevs(match, hi) == (IF match > BootstrapCommit THEN match ELSE BootstrapCommit)..hi

AppendChoices(i, targets, lo, hi, l, c, t) ==
    { {AppMsg(i, j, f[j], l, c, t) : j \in {k \in targets : f[k] >= 0}} :
        f \in {g \in [targets -> {-1} \cup (BootstrapCommit..hi)] :
                  \A j \in targets : g[j] = -1 \/ g[j] \in Prevs(lo[j], hi)} }

QuorumIndex(i, l, match) ==
    LET M(k) == IF k = i THEN Len(l) ELSE match[k]
        ok == {n \in 0..Len(l) : Cardinality({k \in Peer : M(k) >= n}) >= Quorum}
    IN CHOOSE n \in ok : \A n2 \in ok : n2 <= n

MaybeCommit(i, l, match, c, t) ==
    LET q == QuorumIndex(i, l, match)
    IN IF q > c /\ l[q] = t THEN q ELSE c

TypeOK ==
    /\ terms \in [Peer -> Nat]
    /\ mode \in [Peer -> {"Follower", "PreCandidate", "Candidate", "Leader"}]
    /\ votes \in [Peer -> Peer \cup {Nil}]
    /\ known \in [Peer -> Peer \cup {Nil}]
    /\ logs \in [Peer -> Seq(Nat)]
    /\ commits \in [Peer -> Nat]
    /\ yes \in [Peer -> SUBSET Peer]
    /\ no \in [Peer -> SUBSET Peer]
    /\ acked \in [Peer -> [Peer -> Nat]]
    /\ \A m \in InFlight :
          /\ m.type \in MsgTypes
          /\ m.from \in Peer /\ m.to \in Peer
          /\ m.term \in Nat /\ m.logTerm \in Nat /\ m.index \in Nat
          /\ m.entries \in Seq(Nat) /\ m.commit \in Nat
          /\ m.reject \in BOOLEAN /\ m.rejectHint \in Nat

Init ==
    /\ terms = [i \in Peer |-> 1]
    /\ mode = [i \in Peer |-> "Follower"]
    /\ votes = [i \in Peer |-> Nil]
    /\ known = [i \in Peer |-> Nil]
    /\ logs = [i \in Peer |-> BootstrapLog]
    /\ commits = [i \in Peer |-> BootstrapCommit]
    /\ yes = [i \in Peer |-> {}]
    /\ no = [i \in Peer |-> {}]
    /\ acked = [i \in Peer |-> ZeroMatch]
    /\ inbox = [j \in Peer |-> {}]
    /\ expired = [j \in Peer |-> FALSE]

Answer(m, out) == inbox' = Post([inbox EXCEPT ![m.to] = @ \ {m}], out)

StepDown(i, m, term, ld) ==
    /\ terms' = [terms EXCEPT ![i] = term]
    /\ mode' = [mode EXCEPT ![i] = "Follower"]
    /\ votes' = [votes EXCEPT ![i] = IF term /= terms[i] THEN Nil ELSE @]
    /\ known' = [known EXCEPT ![i] = ld]
    /\ yes' = [yes EXCEPT ![i] = {}]
    /\ no' = [no EXCEPT ![i] = {}]
    /\ acked' = [acked EXCEPT ![i] = ZeroMatch]
    /\ Answer(m, {})
    /\ UNCHANGED <<logs, commits>>

Ignore(m) ==
    /\ Answer(m, {})
    /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                   yes, no, acked>>

-----------------------------------------------------------------------------

Campaign(i) ==
    /\ expired[i]
    /\ expired' = [expired EXCEPT ![i] = FALSE]
    /\ mode[i] /= "Leader"
    /\ terms[i] + 1 <= TermBound
    /\ mode' = [mode EXCEPT ![i] = "PreCandidate"]
    /\ known' = [known EXCEPT ![i] = Nil]
    /\ yes' = [yes EXCEPT ![i] = {i}]
    /\ no' = [no EXCEPT ![i] = {}]
    /\ inbox' = Post(inbox,
          {Message("MsgPreVote", i, j, terms[i] + 1, LastTerm(logs[i]), Len(logs[i]),
                   <<>>, 0, FALSE, 0) : j \in Peer \ {i}})
    /\ UNCHANGED <<terms, votes, logs, commits, acked>>

HeartbeatCore(i) ==
    /\ mode[i] = "Leader"
    /\ inbox' = Post(inbox,
          {Message("MsgHeartbeat", i, j, terms[i], 0, 0, <<>>,
                   Min(acked[i][j], commits[i]), FALSE, 0) : j \in Peer \ {i}})
    /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                   yes, no, acked>>

ClientProposalCore(i) ==
    /\ mode[i] = "Leader"
    /\ Len(logs[i]) < LenBound
    /\ LET l == Append(logs[i], terms[i])
           c == MaybeCommit(i, l, acked[i], commits[i], terms[i])
       IN /\ logs' = [logs EXCEPT ![i] = l]
          /\ commits' = [commits EXCEPT ![i] = c]
          /\ \E out \in AppendChoices(i, Peer \ {i}, acked[i], Len(l) - 1, l, c, terms[i]) :
                inbox' = Post(inbox, out)
    /\ UNCHANGED <<terms, mode, votes, known, yes, no, acked>>

-----------------------------------------------------------------------------

PreVoteRequestCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgPreVote"
    /\ IF m.term < terms[i]
       THEN Answer(m, {[Reply("MsgPreVoteResp", m, terms[i]) EXCEPT !.reject = TRUE]})
       ELSE LET canVote == \/ votes[i] = m.from
                           \/ votes[i] = Nil /\ known[i] = Nil
                           \/ m.term > terms[i]
                grant == canVote /\ UpToDate(m.index, m.logTerm, logs[i])
            IN Answer(m, {IF grant
                          THEN Reply("MsgPreVoteResp", m, m.term)
                          ELSE [Reply("MsgPreVoteResp", m, terms[i]) EXCEPT !.reject = TRUE]})
    /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                   yes, no, acked>>

VoteRequestCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgVote"
    /\ IF m.term < terms[i]
       THEN Ignore(m)
       ELSE LET higher == m.term > terms[i]
                vote == IF higher THEN Nil ELSE votes[i]
                ld == IF higher THEN Nil ELSE known[i]
                canVote == vote = m.from \/ (vote = Nil /\ ld = Nil)
                grant == canVote /\ UpToDate(m.index, m.logTerm, logs[i])
            IN /\ terms' = [terms EXCEPT ![i] = m.term]
               /\ mode' = [mode EXCEPT ![i] = IF higher THEN "Follower" ELSE @]
               /\ votes' = [votes EXCEPT ![i] = IF grant THEN m.from ELSE vote]
               /\ known' = [known EXCEPT ![i] = ld]
               /\ yes' = [yes EXCEPT ![i] = IF higher THEN {} ELSE @]
               /\ no' = [no EXCEPT ![i] = IF higher THEN {} ELSE @]
               /\ acked' = [acked EXCEPT ![i] = IF higher THEN ZeroMatch ELSE @]
               /\ Answer(m, {IF grant
                             THEN Reply("MsgVoteResp", m, m.term)
                             ELSE [Reply("MsgVoteResp", m, m.term) EXCEPT !.reject = TRUE]})
               /\ UNCHANGED <<logs, commits>>

Poll(i, m) ==
    LET new == m.from \notin yes[i] \cup no[i]
        gr == IF new /\ ~m.reject THEN yes[i] \cup {m.from} ELSE yes[i]
        rj == IF new /\ m.reject THEN no[i] \cup {m.from} ELSE no[i]
    IN [granted |-> gr, rejected |-> rj,
        won |-> Cardinality(gr) >= Quorum,
        lost |-> Cardinality(rj) > Cardinality(Peer) - Quorum]

PreVoteResponseCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgPreVoteResp"
    /\ CASE m.term < terms[i] -> Ignore(m)
         [] m.term > terms[i] /\ m.reject -> StepDown(i, m, m.term, Nil)
         [] mode[i] /= "PreCandidate" -> Ignore(m)
         [] OTHER ->
              LET p == Poll(i, m)
                  t == terms[i] + 1
              IN IF p.won
                 THEN /\ terms' = [terms EXCEPT ![i] = t]
                      /\ mode' = [mode EXCEPT ![i] = "Candidate"]
                      /\ votes' = [votes EXCEPT ![i] = i]
                      /\ known' = [known EXCEPT ![i] = Nil]
                      /\ yes' = [yes EXCEPT ![i] = {i}]
                      /\ no' = [no EXCEPT ![i] = {}]
                      /\ Answer(m, {Message("MsgVote", i, j, t, LastTerm(logs[i]), Len(logs[i]),
                                            <<>>, 0, FALSE, 0) : j \in Peer \ {i}})
                      /\ UNCHANGED <<logs, commits, acked>>
                 ELSE IF p.lost
                 THEN StepDown(i, m, terms[i], Nil)
                 ELSE /\ yes' = [yes EXCEPT ![i] = p.granted]
                      /\ no' = [no EXCEPT ![i] = p.rejected]
                      /\ Answer(m, {})
                      /\ UNCHANGED <<terms, mode, votes, known, logs, commits, acked>>

VoteResponseCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgVoteResp"
    /\ CASE m.term < terms[i] -> Ignore(m)
         [] m.term > terms[i] -> StepDown(i, m, m.term, Nil)
         [] mode[i] /= "Candidate" -> Ignore(m)
         [] OTHER ->
              LET p == Poll(i, m)
              IN IF p.won
                 THEN LET l == Append(logs[i], terms[i])
                          c == MaybeCommit(i, l, ZeroMatch, commits[i], terms[i])
                      IN /\ mode' = [mode EXCEPT ![i] = "Leader"]
                         /\ known' = [known EXCEPT ![i] = i]
                         /\ yes' = [yes EXCEPT ![i] = {}]
                         /\ no' = [no EXCEPT ![i] = {}]
                         /\ acked' = [acked EXCEPT ![i] = ZeroMatch]
                         /\ logs' = [logs EXCEPT ![i] = l]
                         /\ commits' = [commits EXCEPT ![i] = c]
                         /\ Answer(m, {AppMsg(i, j, Len(logs[i]), l, c, terms[i]) :
                                          j \in Peer \ {i}})
                         /\ UNCHANGED <<terms, votes>>
                 ELSE IF p.lost
                 THEN StepDown(i, m, terms[i], Nil)
                 ELSE /\ yes' = [yes EXCEPT ![i] = p.granted]
                      /\ no' = [no EXCEPT ![i] = p.rejected]
                      /\ Answer(m, {})
                      /\ UNCHANGED <<terms, mode, votes, known, logs, commits, acked>>

-----------------------------------------------------------------------------

MergedLog(l, index, entries) ==
    IF \A k \in 1..Len(entries) : TermAt(l, index + k) = entries[k]
    THEN l
    ELSE SubSeq(l, 1, index) \o entries

FollowLeader(i, m) ==
    /\ terms' = [terms EXCEPT ![i] = m.term]
    /\ mode' = [mode EXCEPT ![i] = "Follower"]
    /\ votes' = [votes EXCEPT ![i] = IF m.term > terms[i] THEN Nil ELSE @]
    /\ known' = [known EXCEPT ![i] = m.from]
    /\ yes' = [yes EXCEPT ![i] = {}]
    /\ no' = [no EXCEPT ![i] = {}]
    /\ acked' = [acked EXCEPT ![i] = ZeroMatch]

AppendRequestCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgApp"
    /\ CASE m.term < terms[i] ->
              /\ Answer(m, {Reply("MsgAppResp", m, terms[i])})
              /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                             yes, no, acked>>
         [] m.term = terms[i] /\ mode[i] = "Leader" -> Ignore(m)
         [] OTHER ->
              /\ FollowLeader(i, m)
              /\ IF m.index < commits[i]
                 THEN /\ Answer(m, {[Reply("MsgAppResp", m, m.term) EXCEPT !.index = commits[i]]})
                      /\ UNCHANGED <<logs, commits>>
                 ELSE IF TermAt(logs[i], m.index) = m.logTerm
                 THEN LET lastNew == m.index + Len(m.entries)
                      IN /\ logs' = [logs EXCEPT ![i] = MergedLog(logs[i], m.index, m.entries)]
                         /\ commits' = [commits EXCEPT ![i] = Max(@, Min(m.commit, lastNew))]
                         /\ Answer(m, {[Reply("MsgAppResp", m, m.term) EXCEPT !.index = lastNew]})
                 ELSE /\ Answer(m, {[Reply("MsgAppResp", m, m.term) EXCEPT
                                       !.index = m.index, !.reject = TRUE,
                                       !.rejectHint = Len(logs[i])]})
                      /\ UNCHANGED <<logs, commits>>

AppendResponseCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgAppResp"
    /\ CASE m.term < terms[i] -> Ignore(m)
         [] m.term > terms[i] -> StepDown(i, m, m.term, Nil)
         [] mode[i] /= "Leader" -> Ignore(m)
         [] ~m.reject /\ m.index <= acked[i][m.from] -> Ignore(m)
         [] ~m.reject ->
              LET match == [acked[i] EXCEPT ![m.from] = m.index]
                  c == MaybeCommit(i, logs[i], match, commits[i], terms[i])
                  targets == IF c > commits[i] THEN Peer \ {i} ELSE {m.from}
              IN /\ acked' = [acked EXCEPT ![i] = match]
                 /\ commits' = [commits EXCEPT ![i] = c]
                 /\ \E out \in AppendChoices(i, targets, match, Len(logs[i]), logs[i], c, terms[i]) :
                       Answer(m, out)
                 /\ UNCHANGED <<terms, mode, votes, known, logs, yes, no>>
         [] OTHER ->
              LET match == acked[i][m.from]
                  probe == Max(0, Min(m.index - 1, m.rejectHint))
                  prevs == ((IF m.index > match THEN {match} ELSE {})
                             \cup (IF m.index >= match THEN {probe} ELSE {}))
                           \cap Prevs(match, Len(logs[i]))
              IN /\ \/ Answer(m, {})
                    \/ \E p \in prevs :
                          Answer(m, {AppMsg(i, m.from, p, logs[i], commits[i], terms[i])})
                 /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                                yes, no, acked>>

BeatRequestCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgHeartbeat"
    /\ CASE m.term < terms[i] ->
              /\ Answer(m, {Reply("MsgAppResp", m, terms[i])})
              /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                             yes, no, acked>>
         [] m.term = terms[i] /\ mode[i] = "Leader" -> Ignore(m)
         [] OTHER ->
              /\ FollowLeader(i, m)
              /\ commits' = [commits EXCEPT ![i] = Max(@, m.commit)]
              /\ Answer(m, {Reply("MsgHeartbeatResp", m, m.term)})
              /\ UNCHANGED logs

BeatResponseCore(s, i, m) ==
    /\ m \in inbox[i] /\ m.from = s /\ m.type = "MsgHeartbeatResp"
    /\ CASE m.term < terms[i] -> Ignore(m)
         [] m.term > terms[i] -> StepDown(i, m, m.term, Nil)
         [] mode[i] /= "Leader" -> Ignore(m)
         [] acked[i][m.from] >= Len(logs[i]) -> Ignore(m)
         [] OTHER ->
              /\ \E p \in Prevs(acked[i][m.from], Len(logs[i])) :
                    Answer(m, {AppMsg(i, m.from, p, logs[i], commits[i], terms[i])})
              /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                             yes, no, acked>>

DropCore(m) ==
    /\ m \in InFlight
    /\ inbox' = [inbox EXCEPT ![m.to] = @ \ {m}]
    /\ UNCHANGED <<terms, mode, votes, known, logs, commits,
                   yes, no, acked>>

-----------------------------------------------------------------------------

PreVoteRequest(s, i, m) == PreVoteRequestCore(s, i, m) /\ UNCHANGED expired
PreVoteResponse(s, i, m) == PreVoteResponseCore(s, i, m) /\ UNCHANGED expired
VoteRequest(s, i, m) == VoteRequestCore(s, i, m) /\ UNCHANGED expired
VoteResponse(s, i, m) == VoteResponseCore(s, i, m) /\ UNCHANGED expired
AppendRequest(s, i, m) == AppendRequestCore(s, i, m) /\ UNCHANGED expired
AppendResponse(s, i, m) == AppendResponseCore(s, i, m) /\ UNCHANGED expired
BeatRequest(s, i, m) == BeatRequestCore(s, i, m) /\ UNCHANGED expired
BeatResponse(s, i, m) == BeatResponseCore(s, i, m) /\ UNCHANGED expired
Heartbeat(i) == HeartbeatCore(i) /\ UNCHANGED expired
ClientProposal(i) == ClientProposalCore(i) /\ UNCHANGED expired
Drop(m) == DropCore(m) /\ UNCHANGED expired

Tick(i) ==
    /\ ~expired[i]
    /\ mode[i] /= "Leader"
    /\ terms[i] + 1 <= TermBound
    /\ expired' = [expired EXCEPT ![i] = TRUE]
    /\ UNCHANGED <<terms, mode, votes, known, logs, commits, yes, no, acked, inbox>>

Deliveries(s, i, m) ==
    \/ PreVoteRequest(s, i, m) \/ PreVoteResponse(s, i, m)
    \/ VoteRequest(s, i, m) \/ VoteResponse(s, i, m)
    \/ AppendRequest(s, i, m) \/ AppendResponse(s, i, m)
    \/ BeatRequest(s, i, m) \/ BeatResponse(s, i, m)

Next ==
    \/ \E i \in Peer :
          \/ Tick(i) \/ Campaign(i) \/ Heartbeat(i) \/ ClientProposal(i)
          \/ \E s \in Peer : \E m \in inbox[i] : Deliveries(s, i, m)
    \/ \E m \in InFlight : Drop(m)

Votes(i) == \E s \in Peer : \E m \in inbox[i] : PreVoteRequest(s, i, m) \/ VoteRequest(s, i, m)
Ballots(i) == \E s \in Peer : \E m \in inbox[i] : PreVoteResponse(s, i, m) \/ VoteResponse(s, i, m)

Spec ==
    Init /\ [][Next]_vars
    /\ \A i \in Peer : WF_vars(Tick(i)) /\ WF_vars(Campaign(i)) /\ SF_vars(Votes(i)) /\ SF_vars(Ballots(i))
=============================================================================
