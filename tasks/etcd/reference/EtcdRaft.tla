------------------------------- MODULE EtcdRaft -------------------------------
(***************************************************************************)
(* Expert reference spec of the raft package of etcd 3.4.23                *)
(* (raft.go, log.go, tracker/progress.go, tracker/tracker.go), configured  *)
(* with PreVote on, CheckQuorum off, proposal forwarding off and no limit  *)
(* on the size of a MsgApp.                                                *)
(*                                                                         *)
(* One step of the spec is one input to one node (a tick that times out,   *)
(* a proposal, the delivery of one message) together with everything the   *)
(* node sends in answer, or the loss of one message.  The network is a set *)
(* of messages: sending a message identical to one in flight adds nothing, *)
(* and delivery consumes the message.                                      *)
(*                                                                         *)
(* Modelled: raft.Step's term checks, pre-vote and vote (canVote,          *)
(* isUpToDate, poll/TallyVotes), becomeFollower/PreCandidate/Candidate/    *)
(* Leader with reset(), handleAppendEntries with maybeAppend/findConflict/ *)
(* commitTo, handleHeartbeat, the leader's Progress.Match, maybeCommit     *)
(* (quorum index, current-term entries only), heartbeats carrying          *)
(* min(Match, committed).                                                  *)
(*                                                                         *)
(* Not modelled: the leader's flow control (Progress.Next, probe and       *)
(* replicate states, ProbeSent, inflights).  Where etcd sends a MsgApp,    *)
(* its prev index is Next - 1, which the spec does not track; the spec     *)
(* lets it be any index the flow control could have reached (see           *)
(* AppendChoices) and lets a paused progress send nothing.                 *)
(* Also not modelled: configuration changes, snapshots, read-index,        *)
(* leader transfer, CheckQuorum, proposal forwarding, storage.             *)
(***************************************************************************)
EXTENDS Naturals, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Servers,    \* the nodes of the cluster
    MaxTerm,    \* no node starts a campaign that would take it past this term
    MaxLogLen   \* a leader accepts no proposal that would make its log longer

VARIABLES
    currentTerm,    \* raft.Term
    state,          \* raft.state: "Follower", "PreCandidate", "Candidate", "Leader"
    votedFor,       \* raft.Vote ("none" = None)
    lead,           \* raft.lead ("none" = None)
    log,            \* the terms of the entries of raftLog, index 1 first
    commitIndex,    \* raftLog.committed
    votesGranted,   \* the voters recorded as granting in prs.Votes
    votesRejected,  \* the voters recorded as rejecting in prs.Votes
    matchIndex,     \* matchIndex[i][j]: leader i's Progress[j].Match (0 off a leader, 0 for j = i)
    messages        \* the messages in flight

vars == <<currentTerm, state, votedFor, lead, log, commitIndex,
          votesGranted, votesRejected, matchIndex, messages>>

Nil == "none"
MsgTypes == {"MsgPreVote", "MsgPreVoteResp", "MsgVote", "MsgVoteResp",
             "MsgApp", "MsgAppResp", "MsgHeartbeat", "MsgHeartbeatResp"}

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b

\* A majority of the voters (quorum.MajorityConfig).
Quorum == Cardinality(Servers) \div 2 + 1

LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)]

\* raftLog.term(i): 0 outside the log.
TermAt(l, n) == IF n >= 1 /\ n <= Len(l) THEN l[n] ELSE 0

\* raftLog.isUpToDate(lasti, term) of the log l.
UpToDate(lasti, term, l) ==
    \/ term > LastTerm(l)
    \/ term = LastTerm(l) /\ lasti >= Len(l)

ZeroMatch == [j \in Servers |-> 0]

\* The bootstrap of the traced cluster: three configuration entries of term 1,
\* committed on every node.
BootstrapLog == <<1, 1, 1>>
BootstrapCommit == Len(BootstrapLog)

\* A message with every field of the vocabulary; fields a type does not use are zero.
Message(type, from, to, term, logTerm, index, entries, commit, reject, hint) ==
    [type |-> type, from |-> from, to |-> to, term |-> term, logTerm |-> logTerm,
     index |-> index, entries |-> entries, commit |-> commit, reject |-> reject,
     rejectHint |-> hint]

Reply(type, m, term) == Message(type, m.to, m.from, term, 0, 0, <<>>, 0, FALSE, 0)

\* The MsgApp leader i of term t with log l and commit c sends to j when
\* Progress[j].Next = p + 1: everything after index p (MaxSizePerMsg is unlimited).
AppMsg(i, j, p, l, c, t) ==
    Message("MsgApp", i, j, t, TermAt(l, p), p, SubSeq(l, p + 1, Len(l)), c, FALSE, 0)

(***************************************************************************)
(* Where the prev index of a MsgApp can lie.  etcd keeps Match < Next <=   *)
(* lastIndex + 1, and Next never falls to the bootstrap commit index or    *)
(* below: it starts at lastIndex + 1, grows on acknowledgements, and       *)
(* falls only to Match + 1 or to min(rejected, rejectHint + 1) after a     *)
(* rejection, and a MsgApp is never rejected at or below the receiver's    *)
(* commit index (which is never below the bootstrap commit index).         *)
(***************************************************************************)
Prevs(match, hi) == (IF match > BootstrapCommit THEN match ELSE BootstrapCommit)..hi

(***************************************************************************)
(* The possible sets of MsgApps leader i sends to the peers in `targets`   *)
(* (sendAppend / bcastAppend / maybeSendAppend): to each target j either   *)
(* nothing (its progress is paused) or one MsgApp whose prev index lies in *)
(* Prevs(lo[j], hi), hi being what etcd's flow control allows at that      *)
(* point.                                                                  *)
(***************************************************************************)
AppendChoices(i, targets, lo, hi, l, c, t) ==
    { {AppMsg(i, j, f[j], l, c, t) : j \in {k \in targets : f[k] >= 0}} :
        f \in {g \in [targets -> {-1} \cup (BootstrapCommit..hi)] :
                  \A j \in targets : g[j] = -1 \/ g[j] \in Prevs(lo[j], hi)} }

(***************************************************************************)
(* raft.maybeCommit: the quorum index of the Matches (the leader's own     *)
(* Match is its last index), committed only if that entry is of the       *)
(* leader's term; the commit index never decreases.                       *)
(***************************************************************************)
QuorumIndex(i, l, match) ==
    LET M(k) == IF k = i THEN Len(l) ELSE match[k]
        ok == {n \in 0..Len(l) : Cardinality({k \in Servers : M(k) >= n}) >= Quorum}
    IN CHOOSE n \in ok : \A n2 \in ok : n2 <= n

MaybeCommit(i, l, match, c, t) ==
    LET q == QuorumIndex(i, l, match)
    IN IF q > c /\ l[q] = t THEN q ELSE c

TypeOK ==
    /\ currentTerm \in [Servers -> Nat]
    /\ state \in [Servers -> {"Follower", "PreCandidate", "Candidate", "Leader"}]
    /\ votedFor \in [Servers -> Servers \cup {Nil}]
    /\ lead \in [Servers -> Servers \cup {Nil}]
    /\ log \in [Servers -> Seq(Nat)]
    /\ commitIndex \in [Servers -> Nat]
    /\ votesGranted \in [Servers -> SUBSET Servers]
    /\ votesRejected \in [Servers -> SUBSET Servers]
    /\ matchIndex \in [Servers -> [Servers -> Nat]]
    /\ \A m \in messages :
          /\ m.type \in MsgTypes
          /\ m.from \in Servers /\ m.to \in Servers
          /\ m.term \in Nat /\ m.logTerm \in Nat /\ m.index \in Nat
          /\ m.entries \in Seq(Nat) /\ m.commit \in Nat
          /\ m.reject \in BOOLEAN /\ m.rejectHint \in Nat

\* etcd's bootstrap: three configuration entries of term 1, committed; every
\* node a follower of term 1 without a leader.
Init ==
    /\ currentTerm = [i \in Servers |-> 1]
    /\ state = [i \in Servers |-> "Follower"]
    /\ votedFor = [i \in Servers |-> Nil]
    /\ lead = [i \in Servers |-> Nil]
    /\ log = [i \in Servers |-> BootstrapLog]
    /\ commitIndex = [i \in Servers |-> BootstrapCommit]
    /\ votesGranted = [i \in Servers |-> {}]
    /\ votesRejected = [i \in Servers |-> {}]
    /\ matchIndex = [i \in Servers |-> ZeroMatch]
    /\ messages = {}

\* Receiving m consumes it and puts the node's answers on the network.
Answer(m, out) == messages' = (messages \ {m}) \cup out

\* becomeFollower(term, ld) as the whole effect of a step (the message is consumed).
StepDown(i, m, term, ld) ==
    /\ currentTerm' = [currentTerm EXCEPT ![i] = term]
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ votedFor' = [votedFor EXCEPT ![i] = IF term /= currentTerm[i] THEN Nil ELSE @]
    /\ lead' = [lead EXCEPT ![i] = ld]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ votesRejected' = [votesRejected EXCEPT ![i] = {}]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = ZeroMatch]
    /\ Answer(m, {})
    /\ UNCHANGED <<log, commitIndex>>

\* The message is consumed and nothing else happens (a stale or irrelevant message).
Ignore(m) ==
    /\ Answer(m, {})
    /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                   votesGranted, votesRejected, matchIndex>>

-----------------------------------------------------------------------------
(* Ticks and proposals *)

\* tickElection reaches the randomized election timeout: MsgHup, and with
\* PreVote on, campaign(campaignPreElection) -> becomePreCandidate.  Term and
\* vote stay; the node polls itself and asks every peer for a pre-vote for
\* term + 1.
ElectionTimeout(i) ==
    /\ state[i] /= "Leader"
    /\ currentTerm[i] + 1 <= MaxTerm
    /\ state' = [state EXCEPT ![i] = "PreCandidate"]
    /\ lead' = [lead EXCEPT ![i] = Nil]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {i}]
    /\ votesRejected' = [votesRejected EXCEPT ![i] = {}]
    /\ messages' = messages \cup
          {Message("MsgPreVote", i, j, currentTerm[i] + 1, LastTerm(log[i]), Len(log[i]),
                   <<>>, 0, FALSE, 0) : j \in Servers \ {i}}
    /\ UNCHANGED <<currentTerm, votedFor, log, commitIndex, matchIndex>>

\* tickHeartbeat reaches the heartbeat timeout: MsgBeat -> bcastHeartbeat.
Heartbeat(i) ==
    /\ state[i] = "Leader"
    /\ messages' = messages \cup
          {Message("MsgHeartbeat", i, j, currentTerm[i], 0, 0, <<>>,
                   Min(matchIndex[i][j], commitIndex[i]), FALSE, 0) : j \in Servers \ {i}}
    /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                   votesGranted, votesRejected, matchIndex>>

\* MsgProp at the leader: appendEntry (one entry of the current term,
\* maybeCommit) and bcastAppend.  Before the append Next <= lastIndex + 1, so
\* every MsgApp sent carries at least the new entry.
ClientProposal(i) ==
    /\ state[i] = "Leader"
    /\ Len(log[i]) < MaxLogLen
    /\ LET l == Append(log[i], currentTerm[i])
           c == MaybeCommit(i, l, matchIndex[i], commitIndex[i], currentTerm[i])
       IN /\ log' = [log EXCEPT ![i] = l]
          /\ commitIndex' = [commitIndex EXCEPT ![i] = c]
          /\ \E out \in AppendChoices(i, Servers \ {i}, matchIndex[i], Len(l) - 1, l, c, currentTerm[i]) :
                messages' = messages \cup out
    /\ UNCHANGED <<currentTerm, state, votedFor, lead, votesGranted, votesRejected, matchIndex>>

-----------------------------------------------------------------------------
(* Elections *)

\* Step(MsgPreVote).  A pre-vote never changes the receiver's state.
HandlePreVoteRequest(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgPreVote"
    /\ IF m.term < currentTerm[i]
       THEN Answer(m, {[Reply("MsgPreVoteResp", m, currentTerm[i]) EXCEPT !.reject = TRUE]})
       ELSE LET canVote == \/ votedFor[i] = m.from
                           \/ votedFor[i] = Nil /\ lead[i] = Nil
                           \/ m.term > currentTerm[i]
                grant == canVote /\ UpToDate(m.index, m.logTerm, log[i])
            IN Answer(m, {IF grant
                          THEN Reply("MsgPreVoteResp", m, m.term)
                          ELSE [Reply("MsgPreVoteResp", m, currentTerm[i]) EXCEPT !.reject = TRUE]})
    /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                   votesGranted, votesRejected, matchIndex>>

\* Step(MsgVote): a higher term first makes the node a follower of that term
\* without a leader; then canVote and isUpToDate decide, and a granted vote is
\* recorded.
HandleVoteRequest(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgVote"
    /\ IF m.term < currentTerm[i]
       THEN Ignore(m)
       ELSE LET higher == m.term > currentTerm[i]
                vote == IF higher THEN Nil ELSE votedFor[i]
                ld == IF higher THEN Nil ELSE lead[i]
                canVote == vote = m.from \/ (vote = Nil /\ ld = Nil)
                grant == canVote /\ UpToDate(m.index, m.logTerm, log[i])
            IN /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
               /\ state' = [state EXCEPT ![i] = IF higher THEN "Follower" ELSE @]
               /\ votedFor' = [votedFor EXCEPT ![i] = IF grant THEN m.from ELSE vote]
               /\ lead' = [lead EXCEPT ![i] = ld]
               /\ votesGranted' = [votesGranted EXCEPT ![i] = IF higher THEN {} ELSE @]
               /\ votesRejected' = [votesRejected EXCEPT ![i] = IF higher THEN {} ELSE @]
               /\ matchIndex' = [matchIndex EXCEPT ![i] = IF higher THEN ZeroMatch ELSE @]
               /\ Answer(m, {IF grant
                             THEN Reply("MsgVoteResp", m, m.term)
                             ELSE [Reply("MsgVoteResp", m, m.term) EXCEPT !.reject = TRUE]})
               /\ UNCHANGED <<log, commitIndex>>

\* poll(): the first answer of each voter counts.  Won if a quorum granted,
\* lost if so many rejected that no quorum can grant.
Poll(i, m) ==
    LET new == m.from \notin votesGranted[i] \cup votesRejected[i]
        gr == IF new /\ ~m.reject THEN votesGranted[i] \cup {m.from} ELSE votesGranted[i]
        rj == IF new /\ m.reject THEN votesRejected[i] \cup {m.from} ELSE votesRejected[i]
    IN [granted |-> gr, rejected |-> rj,
        won |-> Cardinality(gr) >= Quorum,
        lost |-> Cardinality(rj) > Cardinality(Servers) - Quorum]

\* Step(MsgPreVoteResp).  A granted pre-vote of a higher term does not change
\* the term; a rejection of a higher term makes the node a follower of it.  A
\* PreCandidate polls; winning is campaign(campaignElection): becomeCandidate
\* (term + 1, vote for itself) and MsgVote to every peer.
HandlePreVoteResponse(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgPreVoteResp"
    /\ CASE m.term < currentTerm[i] -> Ignore(m)
         [] m.term > currentTerm[i] /\ m.reject -> StepDown(i, m, m.term, Nil)
         [] state[i] /= "PreCandidate" -> Ignore(m)
         [] OTHER ->
              LET p == Poll(i, m)
                  t == currentTerm[i] + 1
              IN IF p.won
                 THEN /\ currentTerm' = [currentTerm EXCEPT ![i] = t]
                      /\ state' = [state EXCEPT ![i] = "Candidate"]
                      /\ votedFor' = [votedFor EXCEPT ![i] = i]
                      /\ lead' = [lead EXCEPT ![i] = Nil]
                      /\ votesGranted' = [votesGranted EXCEPT ![i] = {i}]
                      /\ votesRejected' = [votesRejected EXCEPT ![i] = {}]
                      /\ Answer(m, {Message("MsgVote", i, j, t, LastTerm(log[i]), Len(log[i]),
                                            <<>>, 0, FALSE, 0) : j \in Servers \ {i}})
                      /\ UNCHANGED <<log, commitIndex, matchIndex>>
                 ELSE IF p.lost
                 THEN StepDown(i, m, currentTerm[i], Nil)
                 ELSE /\ votesGranted' = [votesGranted EXCEPT ![i] = p.granted]
                      /\ votesRejected' = [votesRejected EXCEPT ![i] = p.rejected]
                      /\ Answer(m, {})
                      /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex, matchIndex>>

\* Step(MsgVoteResp).  A Candidate polls; winning is becomeLeader (reset,
\* lead itself, append an empty entry of its term) and bcastAppend, where
\* every fresh Progress has Next = the old last index + 1.
HandleVoteResponse(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgVoteResp"
    /\ CASE m.term < currentTerm[i] -> Ignore(m)
         [] m.term > currentTerm[i] -> StepDown(i, m, m.term, Nil)
         [] state[i] /= "Candidate" -> Ignore(m)
         [] OTHER ->
              LET p == Poll(i, m)
              IN IF p.won
                 THEN LET l == Append(log[i], currentTerm[i])
                          c == MaybeCommit(i, l, ZeroMatch, commitIndex[i], currentTerm[i])
                      IN /\ state' = [state EXCEPT ![i] = "Leader"]
                         /\ lead' = [lead EXCEPT ![i] = i]
                         /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
                         /\ votesRejected' = [votesRejected EXCEPT ![i] = {}]
                         /\ matchIndex' = [matchIndex EXCEPT ![i] = ZeroMatch]
                         /\ log' = [log EXCEPT ![i] = l]
                         /\ commitIndex' = [commitIndex EXCEPT ![i] = c]
                         /\ Answer(m, {AppMsg(i, j, Len(log[i]), l, c, currentTerm[i]) :
                                          j \in Servers \ {i}})
                         /\ UNCHANGED <<currentTerm, votedFor>>
                 ELSE IF p.lost
                 THEN StepDown(i, m, currentTerm[i], Nil)
                 ELSE /\ votesGranted' = [votesGranted EXCEPT ![i] = p.granted]
                      /\ votesRejected' = [votesRejected EXCEPT ![i] = p.rejected]
                      /\ Answer(m, {})
                      /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex, matchIndex>>

-----------------------------------------------------------------------------
(* Log replication *)

\* raftLog.maybeAppend after a successful matchTerm(index, logTerm): if every
\* carried entry is already there the log stays as it is (findConflict = 0);
\* otherwise it is cut after the first conflict (or its end) and the rest of
\* the entries appended, which equals the log up to index followed by them.
MergedLog(l, index, entries) ==
    IF \A k \in 1..Len(entries) : TermAt(l, index + k) = entries[k]
    THEN l
    ELSE SubSeq(l, 1, index) \o entries

\* The receiver of a MsgApp or MsgHeartbeat of term >= its own: a higher term
\* makes it a follower of that term (vote cleared); a (pre-)candidate of the
\* same term becomes a follower (vote kept); a follower only learns the leader.
FollowLeader(i, m) ==
    /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ votedFor' = [votedFor EXCEPT ![i] = IF m.term > currentTerm[i] THEN Nil ELSE @]
    /\ lead' = [lead EXCEPT ![i] = m.from]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ votesRejected' = [votesRejected EXCEPT ![i] = {}]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = ZeroMatch]

\* Step(MsgApp) and handleAppendEntries.  A MsgApp of a lower term is answered
\* with an empty MsgAppResp of the receiver's term (PreVote is on); a leader
\* ignores a MsgApp of its own term.
HandleAppendEntries(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgApp"
    /\ CASE m.term < currentTerm[i] ->
              /\ Answer(m, {Reply("MsgAppResp", m, currentTerm[i])})
              /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                             votesGranted, votesRejected, matchIndex>>
         [] m.term = currentTerm[i] /\ state[i] = "Leader" -> Ignore(m)
         [] OTHER ->
              /\ FollowLeader(i, m)
              /\ IF m.index < commitIndex[i]
                 THEN /\ Answer(m, {[Reply("MsgAppResp", m, m.term) EXCEPT !.index = commitIndex[i]]})
                      /\ UNCHANGED <<log, commitIndex>>
                 ELSE IF TermAt(log[i], m.index) = m.logTerm
                 THEN LET lastNew == m.index + Len(m.entries)
                      IN /\ log' = [log EXCEPT ![i] = MergedLog(log[i], m.index, m.entries)]
                         /\ commitIndex' = [commitIndex EXCEPT ![i] = Max(@, Min(m.commit, lastNew))]
                         /\ Answer(m, {[Reply("MsgAppResp", m, m.term) EXCEPT !.index = lastNew]})
                 ELSE /\ Answer(m, {[Reply("MsgAppResp", m, m.term) EXCEPT
                                       !.index = m.index, !.reject = TRUE,
                                       !.rejectHint = Len(log[i])]})
                      /\ UNCHANGED <<log, commitIndex>>

\* Step(MsgAppResp) at the leader (stepLeader).  Success: Match = m.index if
\* that is more (else nothing at all happens); maybeCommit; if the commit
\* advanced, bcastAppend to every peer, else possibly one MsgApp to the sender
\* (sendAppend when it was paused, or maybeSendAppend).  Rejection: if
\* MaybeDecrTo lowers Next (to Match + 1 in replicate state, to
\* min(m.index, rejectHint + 1) in probe state), one MsgApp to the sender.
HandleAppendEntriesResponse(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgAppResp"
    /\ CASE m.term < currentTerm[i] -> Ignore(m)
         [] m.term > currentTerm[i] -> StepDown(i, m, m.term, Nil)
         [] state[i] /= "Leader" -> Ignore(m)
         [] ~m.reject /\ m.index <= matchIndex[i][m.from] -> Ignore(m)
         [] ~m.reject ->
              LET match == [matchIndex[i] EXCEPT ![m.from] = m.index]
                  c == MaybeCommit(i, log[i], match, commitIndex[i], currentTerm[i])
                  targets == IF c > commitIndex[i] THEN Servers \ {i} ELSE {m.from}
              IN /\ matchIndex' = [matchIndex EXCEPT ![i] = match]
                 /\ commitIndex' = [commitIndex EXCEPT ![i] = c]
                 /\ \E out \in AppendChoices(i, targets, match, Len(log[i]), log[i], c, currentTerm[i]) :
                       Answer(m, out)
                 /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, votesGranted, votesRejected>>
         [] OTHER ->
              LET match == matchIndex[i][m.from]
                  probe == Max(0, Min(m.index - 1, m.rejectHint))
                  prevs == ((IF m.index > match THEN {match} ELSE {})
                             \cup (IF m.index >= match THEN {probe} ELSE {}))
                           \cap Prevs(match, Len(log[i]))
              IN /\ \/ Answer(m, {})
                    \/ \E p \in prevs :
                          Answer(m, {AppMsg(i, m.from, p, log[i], commitIndex[i], currentTerm[i])})
                 /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                                votesGranted, votesRejected, matchIndex>>

\* Step(MsgHeartbeat) and handleHeartbeat: commitTo(m.commit), MsgHeartbeatResp.
\* A lower term is answered like a stale MsgApp.
HandleHeartbeat(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgHeartbeat"
    /\ CASE m.term < currentTerm[i] ->
              /\ Answer(m, {Reply("MsgAppResp", m, currentTerm[i])})
              /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                             votesGranted, votesRejected, matchIndex>>
         [] m.term = currentTerm[i] /\ state[i] = "Leader" -> Ignore(m)
         [] OTHER ->
              /\ FollowLeader(i, m)
              /\ commitIndex' = [commitIndex EXCEPT ![i] = Max(@, m.commit)]
              /\ Answer(m, {Reply("MsgHeartbeatResp", m, m.term)})
              /\ UNCHANGED log

\* Step(MsgHeartbeatResp) at the leader: ProbeSent is cleared and a full
\* inflights window frees a slot, so if the peer lags (Match < lastIndex)
\* sendAppend sends it exactly one MsgApp.
HandleHeartbeatResponse(i, m) ==
    /\ m \in messages /\ m.to = i /\ m.type = "MsgHeartbeatResp"
    /\ CASE m.term < currentTerm[i] -> Ignore(m)
         [] m.term > currentTerm[i] -> StepDown(i, m, m.term, Nil)
         [] state[i] /= "Leader" -> Ignore(m)
         [] matchIndex[i][m.from] >= Len(log[i]) -> Ignore(m)
         [] OTHER ->
              /\ \E p \in Prevs(matchIndex[i][m.from], Len(log[i])) :
                    Answer(m, {AppMsg(i, m.from, p, log[i], commitIndex[i], currentTerm[i])})
              /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                             votesGranted, votesRejected, matchIndex>>

\* The network loses m.
DropMessage(m) ==
    /\ m \in messages
    /\ messages' = messages \ {m}
    /\ UNCHANGED <<currentTerm, state, votedFor, lead, log, commitIndex,
                   votesGranted, votesRejected, matchIndex>>

-----------------------------------------------------------------------------

\* Node i receives some message in flight (one operator per kind, so that TLC
\* reports each kind on its own).
RecvPreVoteRequest(i) == \E m \in messages : HandlePreVoteRequest(i, m)
RecvPreVoteResponse(i) == \E m \in messages : HandlePreVoteResponse(i, m)
RecvVoteRequest(i) == \E m \in messages : HandleVoteRequest(i, m)
RecvVoteResponse(i) == \E m \in messages : HandleVoteResponse(i, m)
RecvAppendEntries(i) == \E m \in messages : HandleAppendEntries(i, m)
RecvAppendEntriesResponse(i) == \E m \in messages : HandleAppendEntriesResponse(i, m)
RecvHeartbeat(i) == \E m \in messages : HandleHeartbeat(i, m)
RecvHeartbeatResponse(i) == \E m \in messages : HandleHeartbeatResponse(i, m)

\* The network loses some message in flight.
LoseMessage == \E m \in messages : DropMessage(m)

Next ==
    \/ \E i \in Servers :
          \/ ElectionTimeout(i)
          \/ Heartbeat(i)
          \/ ClientProposal(i)
          \/ RecvPreVoteRequest(i)
          \/ RecvPreVoteResponse(i)
          \/ RecvVoteRequest(i)
          \/ RecvVoteResponse(i)
          \/ RecvAppendEntries(i)
          \/ RecvAppendEntriesResponse(i)
          \/ RecvHeartbeat(i)
          \/ RecvHeartbeatResponse(i)
    \/ LoseMessage

(***************************************************************************)
(* Fairness.  A node that can time out eventually does.  The network may   *)
(* lose any message, but it is fair-lossy for elections: a node to which   *)
(* (pre-)vote requests can be delivered again and again eventually         *)
(* receives one, and so for (pre-)vote responses.  Proposals, heartbeats,  *)
(* replication and losses need no fairness.                                *)
(***************************************************************************)
Fairness ==
    \A i \in Servers :
        /\ WF_vars(ElectionTimeout(i))
        /\ SF_vars(RecvPreVoteRequest(i) \/ RecvVoteRequest(i))
        /\ SF_vars(RecvPreVoteResponse(i) \/ RecvVoteResponse(i))

Spec == Init /\ [][Next]_vars /\ Fairness

=============================================================================
