------------------------------- MODULE RaftKVS -------------------------------
(***************************************************************************)
(* hashicorp/raft 1.1.2 (raft.go, replication.go, commitment.go) with a     *)
(* key-value state machine: three servers, RPCs that are calls with an      *)
(* answer, a network that may lose either, servers that crash and restart   *)
(* with their persisted term, vote and log.                                 *)
(*                                                                          *)
(* What the library does differently from the Raft paper, and this spec     *)
(* with it: a server that knows a leader other than the candidate refuses   *)
(* its vote without looking at its term; a leader steps down, without       *)
(* taking the newer term, when a follower answers its replication with one, *)
(* and when its lease runs out; heartbeats come from a goroutine of their   *)
(* own and their answers change nothing; a leader starts its term with a    *)
(* no-op entry and commits only entries of its own term; a follower's      *)
(* commit index follows the leader's up to the end of its own log.          *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Servers, Values, MaxTerm, MaxLogLen

VARIABLES currentTerm, state, votedFor, leader, log, commitIndex,
          votesGranted, nextIndex, matchIndex, messages

vars == <<currentTerm, state, votedFor, leader, log, commitIndex,
          votesGranted, nextIndex, matchIndex, messages>>

Nil == "none"
Entry(t, v) == [term |-> t, value |-> v]
LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)].term
Quorum(S) == 2 * Cardinality(S) > Cardinality(Servers)
Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b
Zeros == [j \in Servers |-> 0]

\* Every message has every field; those its type does not use are zero.
Msg(type, from, to, term) ==
    [type |-> type, from |-> from, to |-> to, term |-> term,
     lastLogIndex |-> 0, lastLogTerm |-> 0, granted |-> FALSE,
     prevLogIndex |-> 0, prevLogTerm |-> 0, entries |-> <<>>, leaderCommit |-> 0,
     heartbeat |-> FALSE, success |-> FALSE, lastLog |-> 0, matchIndex |-> 0,
     reqTerm |-> 0]

Init ==
    /\ currentTerm = [i \in Servers |-> 1]
    /\ state = [i \in Servers |-> "Follower"]
    /\ votedFor = [i \in Servers |-> Nil]
    /\ leader = [i \in Servers |-> Nil]
    /\ log = [i \in Servers |-> <<Entry(1, "config")>>]
    /\ commitIndex = [i \in Servers |-> 0]
    /\ votesGranted = [i \in Servers |-> {}]
    /\ nextIndex = [i \in Servers |-> Zeros]
    /\ matchIndex = [i \in Servers |-> Zeros]
    /\ messages = {}

Message ==
    [type : {"RequestVoteRequest", "RequestVoteResponse", "AppendEntriesRequest",
             "AppendEntriesResponse"},
     from : Servers, to : Servers, term : Nat, lastLogIndex : Nat, lastLogTerm : Nat,
     granted : BOOLEAN, prevLogIndex : Nat, prevLogTerm : Nat,
     entries : Seq([term : Nat, value : STRING]), leaderCommit : Nat, heartbeat : BOOLEAN,
     success : BOOLEAN, lastLog : Nat, matchIndex : Nat, reqTerm : Nat]

TypeOK ==
    /\ currentTerm \in [Servers -> Nat]
    /\ state \in [Servers -> {"Follower", "Candidate", "Leader", "Down"}]
    /\ votedFor \in [Servers -> Servers \cup {Nil}]
    /\ leader \in [Servers -> Servers \cup {Nil}]
    /\ log \in [Servers -> Seq([term : Nat, value : STRING])]
    /\ commitIndex \in [Servers -> Nat]
    /\ votesGranted \in [Servers -> SUBSET Servers]
    /\ nextIndex \in [Servers -> [Servers -> Nat]]
    /\ matchIndex \in [Servers -> [Servers -> Nat]]
    /\ messages \subseteq Message

\* Leaving the Leader role drops the replication state (only a leader has one).
NotLeader(i) ==
    /\ nextIndex' = [nextIndex EXCEPT ![i] = Zeros]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = Zeros]

(* runFollower / runCandidate: the heartbeat or election timer fires; electSelf *)
ElectionTimeout(i) ==
    /\ state[i] \in {"Follower", "Candidate"}
    /\ currentTerm[i] < MaxTerm
    /\ state' = [state EXCEPT ![i] = "Candidate"]
    /\ currentTerm' = [currentTerm EXCEPT ![i] = currentTerm[i] + 1]
    /\ votedFor' = [votedFor EXCEPT ![i] = i]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {i}]
    /\ messages' = messages \cup
         {[Msg("RequestVoteRequest", i, j, currentTerm[i] + 1) EXCEPT
              !.lastLogIndex = Len(log[i]), !.lastLogTerm = LastTerm(log[i])] : j \in Servers \ {i}}
    /\ UNCHANGED <<log, commitIndex, nextIndex, matchIndex>>

(* requestVote *)
HandleRequestVoteRequest(i, m) ==
    /\ m \in messages
    /\ m.type = "RequestVoteRequest" /\ m.to = i
    /\ state[i] /= "Down"
    /\ LET refuse == (leader[i] /= Nil /\ leader[i] /= m.from) \/ m.term < currentTerm[i]
           newer == ~refuse /\ m.term > currentTerm[i]
           term == IF newer THEN m.term ELSE currentTerm[i]
           voted == IF newer THEN Nil ELSE votedFor[i]
           logOk == \/ m.lastLogTerm > LastTerm(log[i])
                    \/ m.lastLogTerm = LastTerm(log[i]) /\ m.lastLogIndex >= Len(log[i])
           grant == ~refuse /\ IF voted /= Nil THEN voted = m.from ELSE logOk
           answer == [Msg("RequestVoteResponse", i, m.from, term) EXCEPT
                          !.granted = grant, !.reqTerm = m.term]
       IN /\ currentTerm' = [currentTerm EXCEPT ![i] = term]
          /\ votedFor' = [votedFor EXCEPT ![i] = IF grant THEN m.from ELSE voted]
          /\ IF newer
               THEN /\ state' = [state EXCEPT ![i] = "Follower"]
                    /\ leader' = [leader EXCEPT ![i] = Nil]
                    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
                    /\ NotLeader(i)
               ELSE UNCHANGED <<state, leader, votesGranted, nextIndex, matchIndex>>
          /\ messages' = (messages \ {m}) \cup {answer}
    /\ UNCHANGED <<log, commitIndex>>

(* runCandidate: a vote comes back; with a quorum, runLeader: the no-op entry *)
BecomeLeader(i) ==
    /\ state' = [state EXCEPT ![i] = "Leader"]
    /\ leader' = [leader EXCEPT ![i] = i]
    /\ log' = [log EXCEPT ![i] = Append(log[i], Entry(currentTerm[i], "noop"))]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = [j \in Servers |-> IF j = i THEN 0 ELSE Len(log[i]) + 1]]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = [j \in Servers |-> IF j = i THEN Len(log[i]) + 1 ELSE 0]]

HandleRequestVoteResponse(i, m) ==
    /\ m \in messages
    /\ m.type = "RequestVoteResponse" /\ m.to = i
    /\ state[i] /= "Down"
    /\ messages' = messages \ {m}
    /\ IF state[i] = "Candidate" /\ m.reqTerm = currentTerm[i]
         THEN IF m.term > currentTerm[i]
                THEN /\ state' = [state EXCEPT ![i] = "Follower"]
                     /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
                     /\ votedFor' = [votedFor EXCEPT ![i] = Nil]
                     /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
                     /\ UNCHANGED <<leader, log, nextIndex, matchIndex>>
                ELSE /\ UNCHANGED <<currentTerm, votedFor>>
                     /\ IF m.granted /\ Quorum(votesGranted[i] \cup {m.from})
                          THEN BecomeLeader(i)
                          ELSE /\ votesGranted' = [votesGranted EXCEPT ![i] =
                                       IF m.granted THEN @ \cup {m.from} ELSE @]
                               /\ UNCHANGED <<state, leader, log, nextIndex, matchIndex>>
         ELSE UNCHANGED <<currentTerm, state, votedFor, leader, log, votesGranted, nextIndex, matchIndex>>
    /\ UNCHANGED commitIndex

(* replicate / replicateTo: entries from nextIndex up to the last index the *)
(* replication goroutine read when it was woken, and the commit index it    *)
(* read when it built the request; both may have grown since.              *)
AppendEntries(i, j) ==
    /\ state[i] = "Leader"
    /\ j \in Servers \ {i}
    /\ LET prev == nextIndex[i][j] - 1
       IN \E last \in prev..Len(log[i]), lc \in 0..commitIndex[i] :
            messages' = messages \cup
              {[Msg("AppendEntriesRequest", i, j, currentTerm[i]) EXCEPT
                   !.prevLogIndex = prev,
                   !.prevLogTerm = IF prev = 0 THEN 0 ELSE log[i][prev].term,
                   !.entries = SubSeq(log[i], prev + 1, last),
                   !.leaderCommit = lc]}
    /\ UNCHANGED <<currentTerm, state, votedFor, leader, log, commitIndex,
                   votesGranted, nextIndex, matchIndex>>

(* heartbeat: the leader's term and nothing else *)
Heartbeat(i, j) ==
    /\ state[i] = "Leader"
    /\ j \in Servers \ {i}
    /\ messages' = messages \cup
         {[Msg("AppendEntriesRequest", i, j, currentTerm[i]) EXCEPT !.heartbeat = TRUE]}
    /\ UNCHANGED <<currentTerm, state, votedFor, leader, log, commitIndex,
                   votesGranted, nextIndex, matchIndex>>

\* The log after taking the entries of m: skip those it has, cut at the first conflict.
Merged(l, m) ==
    LET p == m.prevLogIndex
        n == Len(m.entries)
        fresh == {k \in 1..n : p + k > Len(l) \/ l[p + k].term /= m.entries[k].term}
    IN IF fresh = {} THEN l
       ELSE LET k == CHOOSE k \in fresh : \A q \in fresh : k <= q
            IN SubSeq(l, 1, p + k - 1) \o SubSeq(m.entries, k, n)

(* appendEntries *)
HandleAppendEntriesRequest(i, m) ==
    /\ m \in messages
    /\ m.type = "AppendEntriesRequest" /\ m.to = i
    /\ state[i] /= "Down"
    /\ LET answer(term, ok) ==
               [Msg("AppendEntriesResponse", i, m.from, term) EXCEPT
                    !.success = ok, !.lastLog = Len(log[i]), !.heartbeat = m.heartbeat,
                    !.reqTerm = m.term,
                    !.matchIndex = IF m.entries = <<>> THEN 0 ELSE m.prevLogIndex + Len(m.entries)]
       IN IF m.term < currentTerm[i]
            THEN /\ messages' = (messages \ {m}) \cup {answer(currentTerm[i], FALSE)}
                 /\ UNCHANGED <<currentTerm, state, votedFor, leader, log, commitIndex,
                                votesGranted, nextIndex, matchIndex>>
            ELSE LET prevOk == \/ m.prevLogIndex = 0
                               \/ /\ m.prevLogIndex <= Len(log[i])
                                  /\ log[i][m.prevLogIndex].term = m.prevLogTerm
                     newLog == IF prevOk THEN Merged(log[i], m) ELSE log[i]
                 IN /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
                    /\ votedFor' = [votedFor EXCEPT ![i] = IF m.term > currentTerm[i] THEN Nil ELSE @]
                    /\ state' = [state EXCEPT ![i] = "Follower"]
                    /\ leader' = [leader EXCEPT ![i] = m.from]
                    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
                    /\ NotLeader(i)
                    /\ log' = [log EXCEPT ![i] = newLog]
                    /\ commitIndex' = [commitIndex EXCEPT ![i] =
                          IF prevOk /\ m.leaderCommit > @ THEN Min(m.leaderCommit, Len(newLog)) ELSE @]
                    /\ messages' = (messages \ {m}) \cup {answer(m.term, prevOk)}

\* The highest index a quorum of the leader's match indexes reaches.
QuorumMatch(match) ==
    CHOOSE n \in 0..MaxLogLen + MaxTerm :
        /\ Quorum({k \in Servers : match[k] >= n})
        /\ \A q \in 0..MaxLogLen + MaxTerm : Quorum({k \in Servers : match[k] >= q}) => q <= n

(* replicateTo's answer handling, and the leader loop taking up the commitment's index *)
HandleAppendEntriesResponse(i, m) ==
    /\ m \in messages
    /\ m.type = "AppendEntriesResponse" /\ m.to = i
    /\ state[i] /= "Down"
    /\ messages' = messages \ {m}
    /\ LET j == m.from
       IN IF ~m.heartbeat /\ state[i] = "Leader" /\ m.reqTerm = currentTerm[i]
            THEN IF m.term > m.reqTerm
                   THEN /\ state' = [state EXCEPT ![i] = "Follower"]
                        /\ leader' = [leader EXCEPT ![i] = Nil]
                        /\ NotLeader(i)
                        /\ UNCHANGED commitIndex
                   ELSE IF m.success /\ m.matchIndex > 0
                   THEN LET match == [matchIndex[i] EXCEPT ![j] = Max(@, m.matchIndex)]
                            q == QuorumMatch(match)
                        IN /\ nextIndex' = [nextIndex EXCEPT ![i][j] = m.matchIndex + 1]
                           /\ matchIndex' = [matchIndex EXCEPT ![i] = match]
                           /\ commitIndex' = [commitIndex EXCEPT ![i] =
                                 IF q > @ /\ log[i][q].term = currentTerm[i] THEN q ELSE @]
                           /\ UNCHANGED <<state, leader>>
                   ELSE IF m.success
                   THEN UNCHANGED <<state, leader, nextIndex, matchIndex, commitIndex>>
                   ELSE /\ nextIndex' = [nextIndex EXCEPT ![i][j] = Max(Min(@ - 1, m.lastLog + 1), 1)]
                        /\ UNCHANGED <<state, leader, matchIndex, commitIndex>>
            ELSE UNCHANGED <<state, leader, nextIndex, matchIndex, commitIndex>>
    /\ UNCHANGED <<currentTerm, votedFor, log, votesGranted>>

(* dispatchLogs: a client's Put on the leader *)
ClientRequest(i, v) ==
    /\ state[i] = "Leader"
    /\ v \in Values
    /\ Len(log[i]) < MaxLogLen
    /\ log' = [log EXCEPT ![i] = Append(@, Entry(currentTerm[i], v))]
    /\ matchIndex' = [matchIndex EXCEPT ![i][i] = Len(log[i]) + 1]
    /\ UNCHANGED <<currentTerm, state, votedFor, leader, commitIndex, votesGranted,
                   nextIndex, messages>>

(* checkLeaderLease: a leader that has not heard from a quorum in time *)
LeaderLeaseTimeout(i) ==
    /\ state[i] = "Leader"
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ NotLeader(i)
    /\ UNCHANGED <<currentTerm, votedFor, log, commitIndex, votesGranted, messages>>

(* A crash loses what is in flight to the server and its own calls; the *)
(* answers it sent stay on the network.                                 *)
Crash(i) ==
    /\ state[i] /= "Down"
    /\ state' = [state EXCEPT ![i] = "Down"]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ commitIndex' = [commitIndex EXCEPT ![i] = 0]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ NotLeader(i)
    /\ messages' = {m \in messages :
                      IF m.type \in {"RequestVoteRequest", "AppendEntriesRequest"}
                        THEN m.from /= i /\ m.to /= i
                        ELSE m.to /= i}
    /\ UNCHANGED <<currentTerm, votedFor, log>>

(* NewRaft on the persisted stores *)
Restart(i) ==
    /\ state[i] = "Down"
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ UNCHANGED <<currentTerm, votedFor, leader, log, commitIndex, votesGranted,
                   nextIndex, matchIndex, messages>>

DropMessage(m) ==
    /\ m \in messages
    /\ messages' = messages \ {m}
    /\ UNCHANGED <<currentTerm, state, votedFor, leader, log, commitIndex,
                   votesGranted, nextIndex, matchIndex>>

Next ==
    \/ \E i \in Servers : ElectionTimeout(i)
    \/ \E i \in Servers, m \in messages : HandleRequestVoteRequest(i, m)
    \/ \E i \in Servers, m \in messages : HandleRequestVoteResponse(i, m)
    \/ \E i, j \in Servers : AppendEntries(i, j)
    \/ \E i, j \in Servers : Heartbeat(i, j)
    \/ \E i \in Servers, m \in messages : HandleAppendEntriesRequest(i, m)
    \/ \E i \in Servers, m \in messages : HandleAppendEntriesResponse(i, m)
    \/ \E i \in Servers, v \in Values : ClientRequest(i, v)
    \/ \E i \in Servers : LeaderLeaseTimeout(i)
    \/ \E i \in Servers : Crash(i)
    \/ \E i \in Servers : Restart(i)
    \/ \E m \in messages : DropMessage(m)

\* Timers keep firing and crashed servers come back; losses, crashes and writes need no fairness.
Fairness ==
    /\ \A i \in Servers : WF_vars(ElectionTimeout(i))
    /\ \A i \in Servers : WF_vars(Restart(i))

Spec == Init /\ [][Next]_vars /\ Fairness

=============================================================================
