------------------------------- MODULE OvsdbRaft -------------------------------
(* OVSDB's clustered Raft (ovsdb/raft.c, Open vSwitch 3.1.0) written the way *)
(* its C code keeps it: one record per server (role, term, vote, leader_sid,  *)
(* commit_index), its log of [t, data] entries, for each server the leader's *)
(* view of the others (next_index, match_index) and the votes a candidate    *)
(* has seen (s->vote), the crashed servers as a set, and requests and        *)
(* replies in two sets. Every message a server handles goes through Recv.    *)
EXTENDS Naturals, Sequences, FiniteSets, RaftRpc

CONSTANTS Server, Data, TermLimit, LogLimit

VARIABLES raft, entries, peer, crashed, requests, replies

vars == <<raft, entries, peer, crashed, requests, replies>>

Majority(S) == 2 * Cardinality(S) > Cardinality(Server)
NoPeers == [j \in Server |-> [next |-> 0, match |-> 0, vote |-> Zero]]

\* Just formed: the creator of the cluster leads in term 2, the others follow.
Init ==
    \E c \in Server :
        /\ raft = [i \in Server |-> [role |-> IF i = c THEN "leader" ELSE "follower", term |-> 2,
                                     vote |-> IF i = c THEN c ELSE Zero, leader_sid |-> c, commit_index |-> 1]]
        /\ entries = [i \in Server |-> <<[t |-> 2, data |-> "config"]>>]
        /\ peer = [i \in Server |-> IF i = c THEN [j \in Server |-> [next |-> IF j = c THEN 0 ELSE 2,
                                                                     match |-> IF j = c THEN 0 ELSE 1,
                                                                     vote |-> Zero]]
                                    ELSE NoPeers]
        /\ crashed = {}
        /\ requests = {}
        /\ replies = {}

TypeOK ==
    /\ \A i \in Server : raft[i].role \in {"follower", "candidate", "leader"}
    /\ crashed \subseteq Server

Live(i) == i \notin crashed
Tally(i) == {j \in Server : peer[i][j].vote = i}

\* raft_start_election (also a leader that has not heard from a quorum).
StartElection(i) ==
    /\ Live(i) /\ raft[i].term < TermLimit
    /\ raft' = [raft EXCEPT ![i] = [@ EXCEPT !.role = "candidate", !.term = @ + 1, !.vote = i,
                                               !.leader_sid = Zero]]
    /\ peer' = [peer EXCEPT ![i] = [j \in Server |-> [next |-> 0, match |-> 0,
                                                       vote |-> IF j = i THEN i ELSE Zero]]]
    /\ \E reached \in SUBSET (Server \ {i}) :
         requests' = requests \cup
           {[Rq("vote", i, j, raft[i].term + 1) EXCEPT !.lli = Len(entries[i]),
                                                     !.llt = TermOf(entries[i], Len(entries[i]))] : j \in reached}
    /\ UNCHANGED <<entries, crashed, replies>>

\* raft_receive_term__: a newer term makes a follower with no vote and no leader.
Adopt(r, t) == [r EXCEPT !.role = "follower", !.term = t, !.vote = Zero, !.leader_sid = Zero]

RecvVoteRequest(i, q) ==
    LET r == raft[i]
        suppressed == r.role = "leader" \/ r.role = "follower"
        newer == q.term > r.term
        lastT == TermOf(entries[i], Len(entries[i]))
        fresher == lastT > q.llt \/ (lastT = q.llt /\ Len(entries[i]) > q.lli)
        Answer(r2) ==
            LET v == IF r2.vote # Zero THEN r2.vote ELSE IF fresher THEN Zero ELSE q.src IN
            /\ raft' = [raft EXCEPT ![i] = [r2 EXCEPT !.vote = v]]
            /\ replies' = IF v = Zero THEN replies ELSE replies \cup {Rpy("vote", i, q.src, r2.term, v = q.src)}
    IN
    \/ /\ suppressed
       /\ Answer(r)
       /\ UNCHANGED peer
    \/ /\ r.role # "leader"
       /\ \/ /\ q.term < r.term
             /\ UNCHANGED <<raft, replies, peer>>
          \/ /\ ~newer /\ q.term = r.term
             /\ Answer(r)
             /\ UNCHANGED peer
          \/ /\ newer
             /\ Answer(Adopt(r, q.term))
             /\ peer' = [peer EXCEPT ![i] = NoPeers]

RecvVoteReply(i, p) ==
    LET r == raft[i] IN
    \/ /\ p.term > r.term
       /\ raft' = [raft EXCEPT ![i] = Adopt(r, p.term)]
       /\ peer' = [peer EXCEPT ![i] = NoPeers]
       /\ UNCHANGED <<entries, requests>>
    \/ /\ p.term < r.term \/ r.role # "candidate" \/ ~p.yes \/ peer[i][p.src].vote = i
       /\ p.term <= r.term
       /\ UNCHANGED <<raft, peer, entries, requests>>
    \/ /\ p.term = r.term /\ r.role = "candidate" /\ p.yes /\ peer[i][p.src].vote # i
       /\ LET tally == Tally(i) \cup {p.src}
              idx == Len(entries[i]) + 1
              noop == [t |-> r.term, data |-> "noop"]
          IN IF Majority(tally)
             THEN /\ raft' = [raft EXCEPT ![i] = [@ EXCEPT !.role = "leader", !.leader_sid = i]]
                  /\ entries' = [entries EXCEPT ![i] = Append(@, noop)]
                  /\ peer' = [peer EXCEPT ![i] = [j \in Server |-> [next |-> IF j = i THEN 0 ELSE idx + 1,
                                                                     match |-> 0, vote |-> Zero]]]
                  /\ \E reached \in SUBSET (Server \ {i}) :
                       requests' = requests \cup
                         {[Rq("append", i, j, r.term) EXCEPT !.pli = idx - 1,
                             !.plt = TermOf(entries[i], idx - 1), !.ents = <<noop>>, !.lc = r.commit_index]
                            : j \in reached}
             ELSE /\ peer' = [peer EXCEPT ![i][p.src].vote = i]
                  /\ UNCHANGED <<raft, entries, requests>>

\* raft_handle_append_entries: skip what the log holds, cut at the first conflict, append.
Merge(lg, q) ==
    LET new == {k \in 1..Len(q.ents) : q.pli + k > Len(lg) \/ lg[q.pli + k].t # q.ents[k].t} IN
    IF new = {} THEN lg
    ELSE LET k == CHOOSE k \in new : \A k2 \in new : k <= k2 IN
         SubSeq(lg, 1, q.pli + k - 1) \o SubSeq(q.ents, k, Len(q.ents))

AppendReply(i, q, term, ok, lg) ==
    [Rpy("append", i, q.src, term, ok) EXCEPT !.pli = q.pli, !.plt = q.plt, !.n = Len(q.ents),
                                             !.logEnd = Len(lg) + 1]

RecvAppendRequest(i, q) ==
    LET r == raft[i] IN
    \/ /\ q.term < r.term \/ (q.term = r.term /\ r.role = "leader")
       /\ replies' = replies \cup {AppendReply(i, q, r.term, FALSE, entries[i])}
       /\ UNCHANGED <<raft, entries, peer>>
    \/ /\ q.term >= r.term /\ ~(q.term = r.term /\ r.role = "leader")
       /\ LET ok == q.pli <= Len(entries[i]) /\ TermOf(entries[i], q.pli) = q.plt
              lg == IF ok THEN Merge(entries[i], q) ELSE entries[i]
              base == IF q.term > r.term THEN Adopt(r, q.term) ELSE [r EXCEPT !.role = "follower"]
          IN /\ entries' = [entries EXCEPT ![i] = lg]
             /\ raft' = [raft EXCEPT ![i] = [base EXCEPT !.leader_sid = q.src,
                           !.commit_index = IF ok THEN Max(@, Min(q.lc, q.pli + Len(q.ents))) ELSE @]]
             /\ peer' = [peer EXCEPT ![i] = NoPeers]
             /\ replies' = replies \cup {AppendReply(i, q, q.term, ok, lg)}

\* raft_consider_updating_commit_index: the leader's own log counts in full.
NewCommit(i, pr) ==
    LET ok == {k \in raft[i].commit_index + 1 .. Len(entries[i]) :
                 entries[i][k].t = raft[i].term /\ Majority({i} \cup {j \in Server \ {i} : pr[j].match >= k})} IN
    IF ok = {} THEN raft[i].commit_index ELSE CHOOSE k \in ok : \A k2 \in ok : k2 <= k

RecvAppendReply(i, p) ==
    LET r == raft[i] IN
    \/ /\ p.term > r.term
       /\ raft' = [raft EXCEPT ![i] = Adopt(r, p.term)]
       /\ peer' = [peer EXCEPT ![i] = NoPeers]
       /\ UNCHANGED <<entries, requests>>
    \/ /\ p.term <= r.term /\ ~(p.term = r.term /\ r.role = "leader")
       /\ UNCHANGED <<raft, peer, entries, requests>>
    \/ /\ p.term = r.term /\ r.role = "leader"
       /\ LET j == p.src
              s == peer[i][j]
              top == p.pli + p.n
              next == IF p.yes THEN Max(s.next, top + 1) ELSE IF s.next > 0 THEN Min(s.next - 1, p.logEnd) ELSE 0
              pr == [peer[i] EXCEPT ![j] = [s EXCEPT !.next = next, !.match = IF p.yes THEN Max(@, top) ELSE @]]
              commit == NewCommit(i, pr)
          IN /\ peer' = [peer EXCEPT ![i] = pr]
             /\ raft' = [raft EXCEPT ![i].commit_index = commit]
             /\ \/ requests' = requests
                \/ /\ next <= Len(entries[i])
                   /\ requests' = requests \cup
                        {[Rq("append", i, j, r.term) EXCEPT !.pli = next - 1, !.plt = TermOf(entries[i], next - 1),
                            !.ents = SubSeq(entries[i], next, Len(entries[i])), !.lc = commit]}
       /\ UNCHANGED entries

\* Every message a live server handles.
Recv(i, m) ==
    /\ Live(i) /\ m.dst = i
    /\ \/ /\ m \in requests /\ m.kind = "vote" /\ RecvVoteRequest(i, m)
          /\ requests' = requests \ {m} /\ UNCHANGED entries
       \/ /\ m \in replies /\ m.kind = "vote" /\ RecvVoteReply(i, m)
          /\ replies' = replies \ {m}
       \/ /\ m \in requests /\ m.kind = "append" /\ RecvAppendRequest(i, m)
          /\ requests' = requests \ {m}
       \/ /\ m \in replies /\ m.kind = "append" /\ RecvAppendReply(i, m)
          /\ replies' = replies \ {m}
    /\ UNCHANGED crashed

SendHeartbeat(i, j) ==
    /\ Live(i) /\ raft[i].role = "leader" /\ j # i
    /\ requests' = requests \cup
         {[Rq("append", i, j, raft[i].term) EXCEPT !.pli = peer[i][j].next - 1,
             !.plt = TermOf(entries[i], peer[i][j].next - 1), !.lc = raft[i].commit_index]}
    /\ UNCHANGED <<raft, entries, peer, crashed, replies>>

\* raft_command_initiate.
Execute(i, d) ==
    LET idx == Len(entries[i]) + 1
        e == [t |-> raft[i].term, data |-> d]
        caught == {j \in Server \ {i} : peer[i][j].next = idx} IN
    /\ Live(i) /\ raft[i].role = "leader" /\ Len(entries[i]) < LogLimit
    /\ entries' = [entries EXCEPT ![i] = Append(@, e)]
    /\ peer' = [peer EXCEPT ![i] = [j \in Server |-> IF j \in caught THEN [@[j] EXCEPT !.next = idx + 1] ELSE @[j]]]
    /\ \E reached \in SUBSET caught :
         requests' = requests \cup
           {[Rq("append", i, j, raft[i].term) EXCEPT !.pli = idx - 1, !.plt = TermOf(entries[i], idx - 1),
               !.ents = <<e>>, !.lc = raft[i].commit_index] : j \in reached}
    /\ UNCHANGED <<raft, crashed, replies>>

Kill(i) ==
    /\ Live(i)
    /\ crashed' = crashed \cup {i}
    /\ raft' = [raft EXCEPT ![i] = [@ EXCEPT !.role = "follower", !.leader_sid = Zero]]
    /\ peer' = [peer EXCEPT ![i] = NoPeers]
    /\ requests' = {m \in requests : m.src # i /\ m.dst # i}
    /\ replies' = {m \in replies : m.src # i /\ m.dst # i}
    /\ UNCHANGED entries

Revive(i) ==
    /\ i \in crashed
    /\ crashed' = crashed \ {i}
    /\ UNCHANGED <<raft, entries, peer, requests, replies>>

LoseRequest(m) ==
    /\ m \in requests /\ requests' = requests \ {m}
    /\ UNCHANGED <<raft, entries, peer, crashed, replies>>

LoseReply(m) ==
    /\ m \in replies /\ replies' = replies \ {m}
    /\ UNCHANGED <<raft, entries, peer, crashed, requests>>

Next ==
    \/ \E i \in Server : StartElection(i)
    \/ \E i \in Server, m \in requests \cup replies : Recv(i, m)
    \/ \E i, j \in Server : SendHeartbeat(i, j)
    \/ \E i \in Server, d \in Data : Execute(i, d)
    \/ \E i \in Server : Kill(i) \/ Revive(i)
    \/ \E m \in requests : LoseRequest(m)
    \/ \E m \in replies : LoseReply(m)

Spec == Init /\ [][Next]_vars /\ \A i \in Server : WF_vars(StartElection(i))
=============================================================================
