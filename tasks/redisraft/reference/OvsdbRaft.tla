------------------------------ MODULE OvsdbRaft ------------------------------
(***************************************************************************)
(* The clustered Raft of Open vSwitch's database server, ovsdb/raft.c of    *)
(* Open vSwitch 3.1.0: three servers, one-way RPCs over a network that may  *)
(* lose them, servers that crash and restart with what their log file      *)
(* holds (term, vote, entries, the last commit index written).              *)
(*                                                                          *)
(* Where raft.c differs from the Raft paper, and this spec with it:         *)
(* - a leader ignores the term of a vote request, and so may a follower     *)
(*   that heard from its leader less than an election time ago (the         *)
(*   "disruptive server" rule); the request is then answered from the      *)
(*   current term and vote, and a server that has not voted in its current  *)
(*   term votes for the requester in that term;                             *)
(* - a server that already voted answers with its vote; one whose log is   *)
(*   more up to date does not answer;                                       *)
(* - a leader starts its term with a no-op entry, sends a new entry at once *)
(*   to every follower whose nextIndex is the new index and moves that      *)
(*   nextIndex past it (optimistically, sent or not), and after an append   *)
(*   answer sends what the follower still lacks;                            *)
(* - a refused append moves nextIndex to Min(nextIndex - 1, the follower's  *)
(*   log end);                                                              *)
(* - a leader that did not hear from a quorum within an election time      *)
(*   starts an election itself;                                             *)
(* - an RPC is sent only where a connection is up, so a server's sends in  *)
(*   one step may reach any subset of the servers it addresses.            *)
(* The behaviour starts when the cluster has formed; indexes count from    *)
(* the configuration entry every server then holds (entry 1).              *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Servers, Values, MaxTerm, MaxLogLen

VARIABLES state, currentTerm, votedFor, leader, log, commitIndex,
          nextIndex, matchIndex, votesGranted, messages

vars == <<state, currentTerm, votedFor, leader, log, commitIndex,
          nextIndex, matchIndex, votesGranted, messages>>

Nil == "none"
Entry(t, v) == [term |-> t, value |-> v]
\* Index 0 is the formation's last entry before the configuration, a membership entry of term 2:
\* a leader whose nextIndex has come down to 1 sends it as the previous entry.
PrefixTerm == 2
TermAt(l, k) == IF k = 0 THEN PrefixTerm ELSE IF k > Len(l) THEN 0 ELSE l[k].term
LastTerm(l) == TermAt(l, Len(l))
Quorum(S) == 2 * Cardinality(S) > Cardinality(Servers)
Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b
Zeros == [j \in Servers |-> 0]
Up(i) == state[i] # "Down"

\* Every message has every field; those its type does not use are zero.
Msg(type, from, to, term) ==
    [type |-> type, from |-> from, to |-> to, term |-> term,
     lastLogIndex |-> 0, lastLogTerm |-> 0, granted |-> FALSE,
     prevLogIndex |-> 0, prevLogTerm |-> 0, entries |-> <<>>, leaderCommit |-> 0,
     success |-> FALSE, logEnd |-> 0, nEntries |-> 0]

AppendRequest(i, j, prev, ents, commit) ==
    [Msg("AppendEntriesRequest", i, j, currentTerm[i]) EXCEPT
        !.prevLogIndex = prev, !.prevLogTerm = TermAt(log[i], prev),
        !.entries = ents, !.leaderCommit = commit]

Message ==
    [type : {"RequestVoteRequest", "RequestVoteResponse", "AppendEntriesRequest",
             "AppendEntriesResponse"},
     from : Servers, to : Servers, term : Nat, lastLogIndex : Nat, lastLogTerm : Nat,
     granted : BOOLEAN, prevLogIndex : Nat, prevLogTerm : Nat,
     entries : Seq([term : Nat, value : STRING]), leaderCommit : Nat,
     success : BOOLEAN, logEnd : Nat, nEntries : Nat]

TypeOK ==
    /\ state \in [Servers -> {"Follower", "Candidate", "Leader", "Down"}]
    /\ currentTerm \in [Servers -> Nat]
    /\ votedFor \in [Servers -> Servers \cup {Nil}]
    /\ leader \in [Servers -> Servers \cup {Nil}]
    /\ \A i \in Servers : log[i] \in Seq([term : Nat, value : STRING])
    /\ commitIndex \in [Servers -> Nat]
    /\ nextIndex \in [Servers -> [Servers -> Nat]]
    /\ matchIndex \in [Servers -> [Servers -> Nat]]
    /\ votesGranted \in [Servers -> SUBSET Servers]
    /\ messages \subseteq Message

\* The cluster has just formed: the server that created it leads in term 2 (its election as a
\* one-server cluster), the others joined and follow it, and every log ends with the
\* configuration of all servers, committed.
Init ==
    \E l \in Servers :
        /\ state = [i \in Servers |-> IF i = l THEN "Leader" ELSE "Follower"]
        /\ currentTerm = [i \in Servers |-> 2]
        /\ votedFor = [i \in Servers |-> IF i = l THEN l ELSE Nil]
        /\ leader = [i \in Servers |-> l]
        /\ log = [i \in Servers |-> <<Entry(2, "config")>>]
        /\ commitIndex = [i \in Servers |-> 1]
        /\ nextIndex = [i \in Servers |-> [j \in Servers |-> IF i = l /\ j # l THEN 2 ELSE 0]]
        /\ matchIndex = [i \in Servers |-> [j \in Servers |-> IF i = l /\ j # l THEN 1 ELSE 0]]
        /\ votesGranted = [i \in Servers |-> {}]
        /\ messages = {}

\* raft_start_election, also by a leader that did not hear from a quorum.
ElectionTimeout(i) ==
    /\ Up(i)
    /\ currentTerm[i] < MaxTerm
    /\ state' = [state EXCEPT ![i] = "Candidate"]
    /\ currentTerm' = [currentTerm EXCEPT ![i] = @ + 1]
    /\ votedFor' = [votedFor EXCEPT ![i] = i]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {i}]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = Zeros]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = Zeros]
    /\ \E to \in SUBSET (Servers \ {i}) :
         messages' = messages \cup
           {[Msg("RequestVoteRequest", i, j, currentTerm[i] + 1) EXCEPT
               !.lastLogIndex = Len(log[i]), !.lastLogTerm = LastTerm(log[i])] : j \in to}
    /\ UNCHANGED <<log, commitIndex>>

\* raft_receive_term__ with a newer term: the new term, no vote, a follower.
NewTerm(i, t) ==
    /\ currentTerm' = [currentTerm EXCEPT ![i] = t]
    /\ votedFor' = [votedFor EXCEPT ![i] = Nil]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = Zeros]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = Zeros]

\* raft_handle_vote_request__ in term t with vote v: the vote to answer with, or Nil for none.
VoteFor(i, m, v) ==
    IF v # Nil THEN v
    ELSE IF LastTerm(log[i]) > m.lastLogTerm
            \/ (LastTerm(log[i]) = m.lastLogTerm /\ Len(log[i]) > m.lastLogIndex)
         THEN Nil
         ELSE m.from

VoteAnswer(i, m, t, v) ==
    LET vote == VoteFor(i, m, v) IN
    /\ votedFor' = [votedFor EXCEPT ![i] = vote]
    /\ messages' = (messages \ {m}) \cup
         IF vote = Nil THEN {}
         ELSE {[Msg("RequestVoteResponse", i, m.from, t) EXCEPT !.granted = (vote = m.from)]}

HandleRequestVoteRequest(i, m) ==
    /\ m.type = "RequestVoteRequest" /\ m.to = i /\ Up(i)
    /\ \/ \* suppressed: always at a leader, at a follower within an election time of its leader
          /\ state[i] \in {"Leader", "Follower"}
          /\ VoteAnswer(i, m, currentTerm[i], votedFor[i])
          /\ UNCHANGED <<state, currentTerm, leader, votesGranted, nextIndex, matchIndex>>
       \/ /\ state[i] \in {"Follower", "Candidate"}
          /\ m.term < currentTerm[i]
          /\ messages' = messages \ {m}
          /\ UNCHANGED <<state, currentTerm, votedFor, leader, votesGranted, nextIndex, matchIndex>>
       \/ /\ state[i] \in {"Follower", "Candidate"}
          /\ m.term = currentTerm[i]
          /\ VoteAnswer(i, m, currentTerm[i], votedFor[i])
          /\ UNCHANGED <<state, currentTerm, leader, votesGranted, nextIndex, matchIndex>>
       \/ /\ m.term > currentTerm[i]
          /\ state[i] \in {"Follower", "Candidate"}
          /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
          /\ leader' = [leader EXCEPT ![i] = Nil]
          /\ state' = [state EXCEPT ![i] = "Follower"]
          /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
          /\ VoteAnswer(i, m, m.term, Nil)
          /\ UNCHANGED <<nextIndex, matchIndex>>
    /\ UNCHANGED <<log, commitIndex>>

\* raft_become_leader: the no-op entry, sent at once to every follower (nextIndex = its index).
BecomeLeader(i, rest) ==
    LET idx == Len(log[i]) + 1
        noop == Entry(currentTerm[i], "noop") IN
    /\ state' = [state EXCEPT ![i] = "Leader"]
    /\ leader' = [leader EXCEPT ![i] = i]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ log' = [log EXCEPT ![i] = Append(@, noop)]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = [j \in Servers |-> IF j = i THEN 0 ELSE idx + 1]]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = Zeros]
    /\ \E to \in SUBSET (Servers \ {i}) :
         messages' = rest \cup {AppendRequest(i, j, idx - 1, <<noop>>, commitIndex[i]) : j \in to}

HandleRequestVoteResponse(i, m) ==
    /\ m.type = "RequestVoteResponse" /\ m.to = i /\ Up(i)
    /\ \/ /\ m.term > currentTerm[i]
          /\ NewTerm(i, m.term)
          /\ messages' = messages \ {m}
          /\ UNCHANGED log
       \/ /\ m.term <= currentTerm[i]
          /\ ~(m.term = currentTerm[i] /\ state[i] = "Candidate" /\ m.granted)
          /\ messages' = messages \ {m}
          /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, votesGranted, nextIndex, matchIndex>>
       \/ /\ m.term = currentTerm[i] /\ state[i] = "Candidate" /\ m.granted
          /\ LET votes == votesGranted[i] \cup {m.from} IN
               IF Quorum(votes) /\ ~Quorum(votesGranted[i])
               THEN /\ BecomeLeader(i, messages \ {m})
                    /\ UNCHANGED <<currentTerm, votedFor>>
               ELSE /\ votesGranted' = [votesGranted EXCEPT ![i] = votes]
                    /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, nextIndex, matchIndex>>
                    /\ messages' = messages \ {m}
    /\ UNCHANGED commitIndex

Heartbeat(i, j) ==
    /\ state[i] = "Leader" /\ j # i
    /\ messages' = messages \cup
         {AppendRequest(i, j, nextIndex[i][j] - 1, <<>>, commitIndex[i])}
    /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, commitIndex, nextIndex, matchIndex,
                   votesGranted>>

\* raft_command_initiate: the entry goes at once to the followers whose nextIndex is its index.
ClientRequest(i, v) ==
    LET idx == Len(log[i]) + 1
        e == Entry(currentTerm[i], v)
        caught == {j \in Servers \ {i} : nextIndex[i][j] = idx} IN
    /\ state[i] = "Leader"
    /\ Len(log[i]) < MaxLogLen
    /\ log' = [log EXCEPT ![i] = Append(@, e)]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = [j \in Servers |-> IF j \in caught THEN idx + 1 ELSE @[j]]]
    /\ \E to \in SUBSET caught :
         messages' = messages \cup {AppendRequest(i, j, idx - 1, <<e>>, commitIndex[i]) : j \in to}
    /\ UNCHANGED <<state, currentTerm, votedFor, leader, commitIndex, matchIndex, votesGranted>>

\* raft_handle_append_entries: the first entry past the log or in conflict with it, if any.
NewLog(l, prev, ents) ==
    LET new == {k \in 1..Len(ents) : prev + k > Len(l) \/ l[prev + k].term # ents[k].term} IN
    IF new = {} THEN l
    ELSE LET k == CHOOSE k \in new : \A k2 \in new : k <= k2 IN
         SubSeq(l, 1, prev + k - 1) \o SubSeq(ents, k, Len(ents))

AppendReply(i, m, ok, t, lg) ==
    [Msg("AppendEntriesResponse", i, m.from, t) EXCEPT
        !.success = ok, !.logEnd = Len(lg) + 1, !.prevLogIndex = m.prevLogIndex,
        !.prevLogTerm = m.prevLogTerm, !.nEntries = Len(m.entries)]

HandleAppendEntriesRequest(i, m) ==
    /\ m.type = "AppendEntriesRequest" /\ m.to = i /\ Up(i)
    /\ \/ /\ m.term < currentTerm[i]
          /\ messages' = (messages \ {m}) \cup {AppendReply(i, m, FALSE, currentTerm[i], log[i])}
          /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, commitIndex, votesGranted,
                         nextIndex, matchIndex>>
       \/ /\ m.term = currentTerm[i] /\ state[i] = "Leader"
          /\ messages' = (messages \ {m}) \cup {AppendReply(i, m, FALSE, currentTerm[i], log[i])}
          /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, commitIndex, votesGranted,
                         nextIndex, matchIndex>>
       \/ /\ m.term >= currentTerm[i]
          /\ ~(m.term = currentTerm[i] /\ state[i] = "Leader")
          /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
          /\ votedFor' = IF m.term > currentTerm[i] THEN [votedFor EXCEPT ![i] = Nil] ELSE votedFor
          /\ leader' = [leader EXCEPT ![i] = m.from]
          /\ state' = [state EXCEPT ![i] = "Follower"]
          /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
          /\ nextIndex' = [nextIndex EXCEPT ![i] = Zeros]
          /\ matchIndex' = [matchIndex EXCEPT ![i] = Zeros]
          /\ LET ok == m.prevLogIndex <= Len(log[i]) /\ TermAt(log[i], m.prevLogIndex) = m.prevLogTerm
                 lg == IF ok THEN NewLog(log[i], m.prevLogIndex, m.entries) ELSE log[i] IN
             /\ log' = [log EXCEPT ![i] = lg]
             /\ commitIndex' = [commitIndex EXCEPT ![i] =
                  IF ok THEN Max(@, Min(m.leaderCommit, m.prevLogIndex + Len(m.entries))) ELSE @]
             /\ messages' = (messages \ {m}) \cup {AppendReply(i, m, ok, m.term, lg)}

\* raft_consider_updating_commit_index: the last entry of the leader's term a quorum stores
\* (the leader's own log counts in full).
CommitFor(i, match) ==
    LET stored(k) == {i} \cup {j \in Servers \ {i} : match[j] >= k}
        ok == {k \in commitIndex[i] + 1 .. Len(log[i]) :
                 log[i][k].term = currentTerm[i] /\ Quorum(stored(k))} IN
    IF ok = {} THEN commitIndex[i] ELSE CHOOSE k \in ok : \A k2 \in ok : k2 <= k

HandleAppendEntriesResponse(i, m) ==
    /\ m.type = "AppendEntriesResponse" /\ m.to = i /\ Up(i)
    /\ \/ /\ m.term > currentTerm[i]
          /\ NewTerm(i, m.term)
          /\ messages' = messages \ {m}
          /\ UNCHANGED <<log, commitIndex>>
       \/ /\ m.term <= currentTerm[i]
          /\ ~(m.term = currentTerm[i] /\ state[i] = "Leader")
          /\ messages' = messages \ {m}
          /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, commitIndex, votesGranted,
                         nextIndex, matchIndex>>
       \/ /\ m.term = currentTerm[i] /\ state[i] = "Leader"
          /\ LET j == m.from
                 top == m.prevLogIndex + m.nEntries
                 next == IF m.success THEN Max(nextIndex[i][j], top + 1)
                         ELSE IF nextIndex[i][j] > 0 THEN Min(nextIndex[i][j] - 1, m.logEnd) ELSE 0
                 match == IF m.success THEN [matchIndex[i] EXCEPT ![j] = Max(@, top)] ELSE matchIndex[i]
                 commit == CommitFor(i, match)
                 resend == {AppendRequest(i, j, next - 1, SubSeq(log[i], next, Len(log[i])), commit)}
             IN /\ nextIndex' = [nextIndex EXCEPT ![i][j] = next]
                /\ matchIndex' = [matchIndex EXCEPT ![i] = match]
                /\ commitIndex' = [commitIndex EXCEPT ![i] = commit]
                /\ \E sent \in IF next <= Len(log[i]) THEN {{}, resend} ELSE {{}} :
                     messages' = (messages \ {m}) \cup sent
          /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, votesGranted>>

Crash(i) ==
    /\ Up(i)
    /\ state' = [state EXCEPT ![i] = "Down"]
    /\ leader' = [leader EXCEPT ![i] = Nil]
    /\ votesGranted' = [votesGranted EXCEPT ![i] = {}]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = Zeros]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = Zeros]
    /\ messages' = {m \in messages : m.from # i /\ m.to # i}
    /\ UNCHANGED <<currentTerm, votedFor, log, commitIndex>>

Restart(i) ==
    /\ state[i] = "Down"
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ UNCHANGED <<currentTerm, votedFor, leader, log, commitIndex, nextIndex, matchIndex,
                   votesGranted, messages>>

DropMessage(m) ==
    /\ messages' = messages \ {m}
    /\ UNCHANGED <<state, currentTerm, votedFor, leader, log, commitIndex, nextIndex, matchIndex,
                   votesGranted>>

Next ==
    \/ \E i \in Servers : ElectionTimeout(i)
    \/ \E i \in Servers, m \in messages : HandleRequestVoteRequest(i, m)
    \/ \E i \in Servers, m \in messages : HandleRequestVoteResponse(i, m)
    \/ \E i \in Servers, m \in messages : HandleAppendEntriesRequest(i, m)
    \/ \E i \in Servers, m \in messages : HandleAppendEntriesResponse(i, m)
    \/ \E i, j \in Servers : Heartbeat(i, j)
    \/ \E i \in Servers, v \in Values : ClientRequest(i, v)
    \/ \E i \in Servers : Crash(i)
    \/ \E i \in Servers : Restart(i)
    \/ \E m \in messages : DropMessage(m)

\* Election timers keep firing; losses, crashes and writes need no fairness.
Fairness == \A i \in Servers : WF_vars(ElectionTimeout(i))

Spec == Init /\ [][Next]_vars /\ Fairness
=============================================================================
