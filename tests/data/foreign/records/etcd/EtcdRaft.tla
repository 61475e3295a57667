------------------------------- MODULE EtcdRaft -------------------------------
(* The raft package of etcd 3.4 in a vocabulary of its own: logs of entry  *)
(* records, the network as a bag, messages with their own field and kind   *)
(* names, one Receive action for every message, and the wire format in a  *)
(* module of its own (RaftWire).                                           *)
EXTENDS RaftWire, Integers, Sequences, FiniteSets, Bags, BagsExt, TLC, TLAPS

CONSTANTS
    Nodes,
    TermCap,
    LogCap

VARIABLES
    curTerm,
    role,
    ballot,
    leader,
    journal,
    committed,
    granted,
    rejected,
    match,
    net

vars == <<curTerm, role, ballot, leader, journal, committed,
          granted, rejected, match, net>>

Recs(ts) == [k \in 1..Len(ts) |-> [term |-> ts[k]]]
TermsOf == [i \in Nodes |-> [k \in 1..Len(journal[i]) |-> journal[i][k].term]]
Msgs == BagToSet(net)
Put(bag, out) == bag (+) SetToBag(out \ BagToSet(bag))

Quorum == Cardinality(Nodes) \div 2 + 1

LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)]

TermAt(l, n) == IF n >= 1 /\ n <= Len(l) THEN l[n] ELSE 0

UpToDate(lasti, term, l) ==
    \/ term > LastTerm(l)
    \/ term = LastTerm(l) /\ lasti >= Len(l)

ZeroMatch == [j \in Nodes |-> 0]

BootstrapLog == <<1, 1, 1>>
BootstrapCommit == Len(BootstrapLog)

AppMsg(i, j, p, l, c, t) ==
    Message("App", i, j, t, TermAt(l, p), p, SubSeq(l, p + 1, Len(l)), c, FALSE, 0)

Prevs(lo, hi) == (IF lo > BootstrapCommit THEN lo ELSE BootstrapCommit)..hi

AppendChoices(i, targets, lo, hi, l, c, t) ==
    { {AppMsg(i, j, f[j], l, c, t) : j \in {k \in targets : f[k] >= 0}} :
        f \in {g \in [targets -> {-1} \cup (BootstrapCommit..hi)] :
                  \A j \in targets : g[j] = -1 \/ g[j] \in Prevs(lo[j], hi)} }

QuorumIndex(i, l, mt) ==
    LET M(k) == IF k = i THEN Len(l) ELSE mt[k]
        ok == {n \in 0..Len(l) : Cardinality({k \in Nodes : M(k) >= n}) >= Quorum}
    IN CHOOSE n \in ok : \A n2 \in ok : n2 <= n

MaybeCommit(i, l, mt, c, t) ==
    LET q == QuorumIndex(i, l, mt)
    IN IF q > c /\ l[q] = t THEN q ELSE c

TypeOK ==
    /\ curTerm \in [Nodes -> Nat]
    /\ role \in [Nodes -> {"follower", "precandidate", "candidate", "leader"}]
    /\ ballot \in [Nodes -> Nodes \cup {Nil}]
    /\ leader \in [Nodes -> Nodes \cup {Nil}]
    /\ \A i \in Nodes : \A k \in DOMAIN journal[i] : journal[i][k].term \in Nat
    /\ committed \in [Nodes -> Nat]
    /\ granted \in [Nodes -> SUBSET Nodes]
    /\ rejected \in [Nodes -> SUBSET Nodes]
    /\ match \in [Nodes -> [Nodes -> Nat]]
    /\ \A m \in Msgs :
          /\ m.kind \in MsgTypes
          /\ m.src \in Nodes /\ m.dst \in Nodes
          /\ m.term \in Nat /\ m.prevTerm \in Nat /\ m.prev \in Nat
          /\ m.ents \in Seq(Nat) /\ m.commit \in Nat
          /\ m.rej \in BOOLEAN /\ m.hint \in Nat

Init ==
    /\ curTerm = [i \in Nodes |-> 1]
    /\ role = [i \in Nodes |-> "follower"]
    /\ ballot = [i \in Nodes |-> Nil]
    /\ leader = [i \in Nodes |-> Nil]
    /\ journal = [i \in Nodes |-> Recs(BootstrapLog)]
    /\ committed = [i \in Nodes |-> BootstrapCommit]
    /\ granted = [i \in Nodes |-> {}]
    /\ rejected = [i \in Nodes |-> {}]
    /\ match = [i \in Nodes |-> ZeroMatch]
    /\ net = EmptyBag

Answer(m, out) == net' = Put(BagRemoveAll(net, m), out)

StepDown(i, m, term, ld) ==
    /\ curTerm' = [curTerm EXCEPT ![i] = term]
    /\ role' = [role EXCEPT ![i] = "follower"]
    /\ ballot' = [ballot EXCEPT ![i] = IF term /= curTerm[i] THEN Nil ELSE @]
    /\ leader' = [leader EXCEPT ![i] = ld]
    /\ granted' = [granted EXCEPT ![i] = {}]
    /\ rejected' = [rejected EXCEPT ![i] = {}]
    /\ match' = [match EXCEPT ![i] = ZeroMatch]
    /\ Answer(m, {})
    /\ UNCHANGED <<journal, committed>>

Ignore(m) ==
    /\ Answer(m, {})
    /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                   granted, rejected, match>>

-----------------------------------------------------------------------------

Timeout(i) ==
    /\ role[i] /= "leader"
    /\ curTerm[i] + 1 <= TermCap
    /\ role' = [role EXCEPT ![i] = "precandidate"]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ granted' = [granted EXCEPT ![i] = {i}]
    /\ rejected' = [rejected EXCEPT ![i] = {}]
    /\ net' = Put(net,
          {Message("PreVote", i, j, curTerm[i] + 1, LastTerm(TermsOf[i]), Len(TermsOf[i]),
                   <<>>, 0, FALSE, 0) : j \in Nodes \ {i}})
    /\ UNCHANGED <<curTerm, ballot, journal, committed, match>>

Beat(i) ==
    /\ role[i] = "leader"
    /\ net' = Put(net,
          {Message("Heartbeat", i, j, curTerm[i], 0, 0, <<>>,
                   Min(match[i][j], committed[i]), FALSE, 0) : j \in Nodes \ {i}})
    /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                   granted, rejected, match>>

Propose(i) ==
    /\ role[i] = "leader"
    /\ Len(TermsOf[i]) < LogCap
    /\ LET l == Append(TermsOf[i], curTerm[i])
           c == MaybeCommit(i, l, match[i], committed[i], curTerm[i])
       IN /\ journal' = [journal EXCEPT ![i] = Recs(l)]
          /\ committed' = [committed EXCEPT ![i] = c]
          /\ \E out \in AppendChoices(i, Nodes \ {i}, match[i], Len(l) - 1, l, c, curTerm[i]) :
                net' = Put(net, out)
    /\ UNCHANGED <<curTerm, role, ballot, leader, granted, rejected, match>>

-----------------------------------------------------------------------------

OnPreVote(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "PreVote"
    /\ IF m.term < curTerm[i]
       THEN Answer(m, {[Reply("PreVoteResp", m, curTerm[i]) EXCEPT !.rej = TRUE]})
       ELSE LET canVote == \/ ballot[i] = m.src
                           \/ ballot[i] = Nil /\ leader[i] = Nil
                           \/ m.term > curTerm[i]
                grant == canVote /\ UpToDate(m.prev, m.prevTerm, TermsOf[i])
            IN Answer(m, {IF grant
                          THEN Reply("PreVoteResp", m, m.term)
                          ELSE [Reply("PreVoteResp", m, curTerm[i]) EXCEPT !.rej = TRUE]})
    /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                   granted, rejected, match>>

OnVote(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "Vote"
    /\ IF m.term < curTerm[i]
       THEN Ignore(m)
       ELSE LET higher == m.term > curTerm[i]
                vote == IF higher THEN Nil ELSE ballot[i]
                ld == IF higher THEN Nil ELSE leader[i]
                canVote == vote = m.src \/ (vote = Nil /\ ld = Nil)
                grant == canVote /\ UpToDate(m.prev, m.prevTerm, TermsOf[i])
            IN /\ curTerm' = [curTerm EXCEPT ![i] = m.term]
               /\ role' = [role EXCEPT ![i] = IF higher THEN "follower" ELSE @]
               /\ ballot' = [ballot EXCEPT ![i] = IF grant THEN m.src ELSE vote]
               /\ leader' = [leader EXCEPT ![i] = ld]
               /\ granted' = [granted EXCEPT ![i] = IF higher THEN {} ELSE @]
               /\ rejected' = [rejected EXCEPT ![i] = IF higher THEN {} ELSE @]
               /\ match' = [match EXCEPT ![i] = IF higher THEN ZeroMatch ELSE @]
               /\ Answer(m, {IF grant
                             THEN Reply("VoteResp", m, m.term)
                             ELSE [Reply("VoteResp", m, m.term) EXCEPT !.rej = TRUE]})
               /\ UNCHANGED <<journal, committed>>

Poll(i, m) ==
    LET new == m.src \notin granted[i] \cup rejected[i]
        gr == IF new /\ ~m.rej THEN granted[i] \cup {m.src} ELSE granted[i]
        rj == IF new /\ m.rej THEN rejected[i] \cup {m.src} ELSE rejected[i]
    IN [granted |-> gr, rejected |-> rj,
        won |-> Cardinality(gr) >= Quorum,
        lost |-> Cardinality(rj) > Cardinality(Nodes) - Quorum]

OnPreVoteResp(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "PreVoteResp"
    /\ CASE m.term < curTerm[i] -> Ignore(m)
         [] m.term > curTerm[i] /\ m.rej -> StepDown(i, m, m.term, Nil)
         [] role[i] /= "precandidate" -> Ignore(m)
         [] OTHER ->
              LET p == Poll(i, m)
                  t == curTerm[i] + 1
              IN IF p.won
                 THEN /\ curTerm' = [curTerm EXCEPT ![i] = t]
                      /\ role' = [role EXCEPT ![i] = "candidate"]
                      /\ ballot' = [ballot EXCEPT ![i] = i]
                      /\ leader' = [leader EXCEPT ![i] = Nil]
                      /\ granted' = [granted EXCEPT ![i] = {i}]
                      /\ rejected' = [rejected EXCEPT ![i] = {}]
                      /\ Answer(m, {Message("Vote", i, j, t, LastTerm(TermsOf[i]), Len(TermsOf[i]),
                                            <<>>, 0, FALSE, 0) : j \in Nodes \ {i}})
                      /\ UNCHANGED <<journal, committed, match>>
                 ELSE IF p.lost
                 THEN StepDown(i, m, curTerm[i], Nil)
                 ELSE /\ granted' = [granted EXCEPT ![i] = p.granted]
                      /\ rejected' = [rejected EXCEPT ![i] = p.rejected]
                      /\ Answer(m, {})
                      /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed, match>>

OnVoteResp(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "VoteResp"
    /\ CASE m.term < curTerm[i] -> Ignore(m)
         [] m.term > curTerm[i] -> StepDown(i, m, m.term, Nil)
         [] role[i] /= "candidate" -> Ignore(m)
         [] OTHER ->
              LET p == Poll(i, m)
              IN IF p.won
                 THEN LET l == Append(TermsOf[i], curTerm[i])
                          c == MaybeCommit(i, l, ZeroMatch, committed[i], curTerm[i])
                      IN /\ role' = [role EXCEPT ![i] = "leader"]
                         /\ leader' = [leader EXCEPT ![i] = i]
                         /\ granted' = [granted EXCEPT ![i] = {}]
                         /\ rejected' = [rejected EXCEPT ![i] = {}]
                         /\ match' = [match EXCEPT ![i] = ZeroMatch]
                         /\ journal' = [journal EXCEPT ![i] = Recs(l)]
                         /\ committed' = [committed EXCEPT ![i] = c]
                         /\ Answer(m, {AppMsg(i, j, Len(TermsOf[i]), l, c, curTerm[i]) :
                                          j \in Nodes \ {i}})
                         /\ UNCHANGED <<curTerm, ballot>>
                 ELSE IF p.lost
                 THEN StepDown(i, m, curTerm[i], Nil)
                 ELSE /\ granted' = [granted EXCEPT ![i] = p.granted]
                      /\ rejected' = [rejected EXCEPT ![i] = p.rejected]
                      /\ Answer(m, {})
                      /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed, match>>

-----------------------------------------------------------------------------

MergedLog(l, index, entries) ==
    IF \A k \in 1..Len(entries) : TermAt(l, index + k) = entries[k]
    THEN l
    ELSE SubSeq(l, 1, index) \o entries

FollowLeader(i, m) ==
    /\ curTerm' = [curTerm EXCEPT ![i] = m.term]
    /\ role' = [role EXCEPT ![i] = "follower"]
    /\ ballot' = [ballot EXCEPT ![i] = IF m.term > curTerm[i] THEN Nil ELSE @]
    /\ leader' = [leader EXCEPT ![i] = m.src]
    /\ granted' = [granted EXCEPT ![i] = {}]
    /\ rejected' = [rejected EXCEPT ![i] = {}]
    /\ match' = [match EXCEPT ![i] = ZeroMatch]

OnApp(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "App"
    /\ CASE m.term < curTerm[i] ->
              /\ Answer(m, {Reply("AppResp", m, curTerm[i])})
              /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                             granted, rejected, match>>
         [] m.term = curTerm[i] /\ role[i] = "leader" -> Ignore(m)
         [] OTHER ->
              /\ FollowLeader(i, m)
              /\ IF m.prev < committed[i]
                 THEN /\ Answer(m, {[Reply("AppResp", m, m.term) EXCEPT !.prev = committed[i]]})
                      /\ UNCHANGED <<journal, committed>>
                 ELSE IF TermAt(TermsOf[i], m.prev) = m.prevTerm
                 THEN LET lastNew == m.prev + Len(m.ents)
                      IN /\ journal' = [journal EXCEPT ![i] = Recs(MergedLog(TermsOf[i], m.prev, m.ents))]
                         /\ committed' = [committed EXCEPT ![i] = Max(@, Min(m.commit, lastNew))]
                         /\ Answer(m, {[Reply("AppResp", m, m.term) EXCEPT !.prev = lastNew]})
                 ELSE /\ Answer(m, {[Reply("AppResp", m, m.term) EXCEPT
                                       !.prev = m.prev, !.rej = TRUE,
                                       !.hint = Len(TermsOf[i])]})
                      /\ UNCHANGED <<journal, committed>>

OnAppResp(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "AppResp"
    /\ CASE m.term < curTerm[i] -> Ignore(m)
         [] m.term > curTerm[i] -> StepDown(i, m, m.term, Nil)
         [] role[i] /= "leader" -> Ignore(m)
         [] ~m.rej /\ m.prev <= match[i][m.src] -> Ignore(m)
         [] ~m.rej ->
              LET nm == [match[i] EXCEPT ![m.src] = m.prev]
                  c == MaybeCommit(i, TermsOf[i], nm, committed[i], curTerm[i])
                  targets == IF c > committed[i] THEN Nodes \ {i} ELSE {m.src}
              IN /\ match' = [match EXCEPT ![i] = nm]
                 /\ committed' = [committed EXCEPT ![i] = c]
                 /\ \E out \in AppendChoices(i, targets, nm, Len(TermsOf[i]), TermsOf[i], c, curTerm[i]) :
                       Answer(m, out)
                 /\ UNCHANGED <<curTerm, role, ballot, leader, journal, granted, rejected>>
         [] OTHER ->
              LET mi == match[i][m.src]
                  probe == Max(0, Min(m.prev - 1, m.hint))
                  prevs == ((IF m.prev > mi THEN {mi} ELSE {})
                             \cup (IF m.prev >= mi THEN {probe} ELSE {}))
                           \cap Prevs(mi, Len(TermsOf[i]))
              IN /\ \/ Answer(m, {})
                    \/ \E p \in prevs :
                          Answer(m, {AppMsg(i, m.src, p, TermsOf[i], committed[i], curTerm[i])})
                 /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                                granted, rejected, match>>

OnBeat(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "Heartbeat"
    /\ CASE m.term < curTerm[i] ->
              /\ Answer(m, {Reply("AppResp", m, curTerm[i])})
              /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                             granted, rejected, match>>
         [] m.term = curTerm[i] /\ role[i] = "leader" -> Ignore(m)
         [] OTHER ->
              /\ FollowLeader(i, m)
              /\ committed' = [committed EXCEPT ![i] = Max(@, m.commit)]
              /\ Answer(m, {Reply("HeartbeatResp", m, m.term)})
              /\ UNCHANGED journal

OnBeatResp(i, m) ==
    /\ m \in Msgs /\ m.dst = i /\ m.kind = "HeartbeatResp"
    /\ CASE m.term < curTerm[i] -> Ignore(m)
         [] m.term > curTerm[i] -> StepDown(i, m, m.term, Nil)
         [] role[i] /= "leader" -> Ignore(m)
         [] match[i][m.src] >= Len(TermsOf[i]) -> Ignore(m)
         [] OTHER ->
              /\ \E p \in Prevs(match[i][m.src], Len(TermsOf[i])) :
                    Answer(m, {AppMsg(i, m.src, p, TermsOf[i], committed[i], curTerm[i])})
              /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                             granted, rejected, match>>

Lose(m) ==
    /\ m \in Msgs
    /\ net' = BagRemoveAll(net, m)
    /\ UNCHANGED <<curTerm, role, ballot, leader, journal, committed,
                   granted, rejected, match>>

-----------------------------------------------------------------------------

Receive(m) ==
    \/ OnPreVote(m.dst, m)
    \/ OnPreVoteResp(m.dst, m)
    \/ OnVote(m.dst, m)
    \/ OnVoteResp(m.dst, m)
    \/ OnApp(m.dst, m)
    \/ OnAppResp(m.dst, m)
    \/ OnBeat(m.dst, m)
    \/ OnBeatResp(m.dst, m)

Next ==
    \/ \E i \in Nodes : Timeout(i) \/ Beat(i) \/ Propose(i)
    \/ \E m \in Msgs : Receive(m)
    \/ \E m \in Msgs : Lose(m)

Requests(i) == {m \in Msgs : m.dst = i /\ m.kind \in {"PreVote", "Vote"}}
Responses(i) == {m \in Msgs : m.dst = i /\ m.kind \in {"PreVoteResp", "VoteResp"}}

Spec ==
    /\ Init /\ [][Next]_vars
    /\ \A i \in Nodes :
          /\ WF_vars(Timeout(i))
          /\ SF_vars(\E m \in Requests(i) : Receive(m))
          /\ SF_vars(\E m \in Responses(i) : Receive(m))

THEOREM Spec => []TypeOK
    OMITTED
=============================================================================
