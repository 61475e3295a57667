---------------------------- MODULE ZooKeeperFLE ----------------------------
(***************************************************************************)
(* ZooKeeper 3.8's Fast Leader Election (FastLeaderElection.lookForLeader  *)
(* and its receiver thread) for a fixed ensemble of voters.                *)
(*                                                                         *)
(* A server that starts an election bumps its logical clock, proposes      *)
(* itself (its last zxid and current epoch) and sends the proposal to      *)
(* every voter. On a notification of a LOOKING server it moves to a newer  *)
(* round, adopts a better proposal (epoch, then zxid, then id) and sends   *)
(* it again, and records the sender's vote. When a quorum of the recorded  *)
(* votes equals its proposal it may decide (after the finalize wait):      *)
(* LEADING if it proposed itself, else FOLLOWING. Notifications of         *)
(* FOLLOWING or LEADING servers let it join an established leader. A       *)
(* server that is not LOOKING answers a LOOKING one with its current vote; *)
(* a LOOKING one answers a notification of an older round with its        *)
(* proposal.                                                               *)
(*                                                                         *)
(* The network keeps every notification ever sent: ZooKeeper's connection  *)
(* manager may deliver a notification late, again (it re-sends the last   *)
(* one on a new connection), or never. The synchronisation with a leader   *)
(* after an election (ZAB) is out of scope: Sync changes a server's epoch, *)
(* last zxid and current vote's epoch as that phase may.                   *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS Servers, MaxEpoch, MaxRound

VARIABLES state, logicalclock, proposal, recvset, outofelection,
          currentVote, currentEpoch, lastZxid, messages

vars == <<state, logicalclock, proposal, recvset, outofelection,
          currentVote, currentEpoch, lastZxid, messages>>

NoProposal == [leader |-> -1, zxid |-> <<-1, -1>>, epoch |-> 0]

ZxidGreater(a, b) == a[1] > b[1] \/ (a[1] = b[1] /\ a[2] > b[2])

\* FastLeaderElection.totalOrderPredicate: epoch, then zxid, then server id.
Better(newId, newZxid, newEpoch, curId, curZxid, curEpoch) ==
    \/ newEpoch > curEpoch
    \/ /\ newEpoch = curEpoch
       /\ \/ ZxidGreater(newZxid, curZxid)
          \/ newZxid = curZxid /\ newId > curId

IsQuorum(S) == 2 * Cardinality(S) > Cardinality(Servers)

\* Vote.equals: votes of servers out of the election compare by leader and epoch.
SameVote(x, y) ==
    IF x.state = "LOOKING" \/ y.state = "LOOKING"
    THEN x.leader = y.leader /\ x.zxid = y.zxid /\ x.round = y.round /\ x.epoch = y.epoch
    ELSE x.leader = y.leader /\ x.epoch = y.epoch

Agreeing(votes, v) == {x.from : x \in {y \in votes : SameVote(y, v)}}

\* receivedFollowingNotification puts the vote into recvset without the sender's protocol
\* version (Vote's five-argument constructor) and compares it with one that has it: for two
\* votes of servers out of the election, Vote.equals then compares the leader alone
\* (ZOOKEEPER-1732's rule for mixed versions), not the epoch.
SameAsRecorded(x, y) ==
    IF x.state = "LOOKING" \/ y.state = "LOOKING" THEN SameVote(x, y) ELSE x.leader = y.leader

AgreeingRecorded(votes, v) == {x.from : x \in {y \in votes : SameAsRecorded(y, v)}}

\* recvset.put / outofelection.put: one vote per sender.
Put(votes, v) == {x \in votes : x.from # v.from} \cup {v}

VoteOf(m) == [from |-> m.from, leader |-> m.leader, zxid |-> m.zxid,
              round |-> m.round, epoch |-> m.epoch, state |-> m.state]

Notify(s, t, v, round, st) ==
    [from |-> s, to |-> t, leader |-> v.leader, zxid |-> v.zxid,
     round |-> round, epoch |-> v.epoch, state |-> st]

Broadcast(s, v, round) == {Notify(s, t, v, round, "LOOKING") : t \in Servers}

\* FastLeaderElection.setPeerState(proposedLeader, ...)
Outcome(s, leader) == IF leader = s THEN "LEADING" ELSE "FOLLOWING"

TypeOK ==
    /\ state \in [Servers -> {"DOWN", "LOOKING", "FOLLOWING", "LEADING"}]
    /\ logicalclock \in [Servers -> 0..MaxRound]
    /\ \A s \in Servers : proposal[s] = NoProposal \/ proposal[s].leader \in Servers
    /\ \A s \in Servers : \A v \in recvset[s] \cup outofelection[s] : v.from \in Servers
    /\ currentEpoch \in [Servers -> 0..MaxEpoch]
    /\ \A m \in messages : m.from \in Servers /\ m.to \in Servers

Init ==
    /\ state = [s \in Servers |-> "DOWN"]
    /\ logicalclock = [s \in Servers |-> 0]
    /\ proposal = [s \in Servers |-> NoProposal]
    /\ recvset = [s \in Servers |-> {}]
    /\ outofelection = [s \in Servers |-> {}]
    /\ currentVote = [s \in Servers |-> [leader |-> s, zxid |-> <<0, 0>>, round |-> -1, epoch |-> 0]]
    /\ currentEpoch = [s \in Servers |-> 0]
    /\ lastZxid = [s \in Servers |-> <<0, 0>>]
    /\ messages = {}

(* lookForLeader begins: a server boots, or loses its leader. *)
StartElection(s) ==
    /\ state[s] # "LOOKING"
    /\ logicalclock[s] < MaxRound
    /\ LET own == [leader |-> s, zxid |-> lastZxid[s], epoch |-> currentEpoch[s]]
       IN /\ state' = [state EXCEPT ![s] = "LOOKING"]
          /\ logicalclock' = [logicalclock EXCEPT ![s] = @ + 1]
          /\ proposal' = [proposal EXCEPT ![s] = own]
          /\ recvset' = [recvset EXCEPT ![s] = {}]
          /\ outofelection' = [outofelection EXCEPT ![s] = {}]
          \* QuorumPeer.startLeaderElection, when the process starts
          /\ currentVote' = IF state[s] = "DOWN"
                            THEN [currentVote EXCEPT ![s] = [leader |-> s, zxid |-> lastZxid[s],
                                                             round |-> -1, epoch |-> currentEpoch[s]]]
                            ELSE currentVote
          /\ messages' = messages \cup Broadcast(s, own, logicalclock[s] + 1)
          /\ UNCHANGED <<currentEpoch, lastZxid>>

(* A notification from a LOOKING server. *)
HandleLooking(s, m) ==
    /\ m.zxid # <<-1, -1>>
    /\ m.round >= logicalclock[s]
    /\ LET newer == m.round > logicalclock[s]
           own == [leader |-> s, zxid |-> lastZxid[s], epoch |-> currentEpoch[s]]
           base == IF newer THEN own ELSE proposal[s]
           adopt == Better(m.leader, m.zxid, m.epoch, base.leader, base.zxid, base.epoch)
           next == IF adopt THEN [leader |-> m.leader, zxid |-> m.zxid, epoch |-> m.epoch] ELSE base
       IN /\ logicalclock' = [logicalclock EXCEPT ![s] = m.round]
          /\ proposal' = [proposal EXCEPT ![s] = next]
          /\ recvset' = [recvset EXCEPT ![s] = Put(IF newer THEN {} ELSE @, VoteOf(m))]
          /\ messages' = IF newer \/ adopt THEN messages \cup Broadcast(s, next, m.round) ELSE messages
          /\ UNCHANGED <<state, outofelection, currentVote>>

\* FastLeaderElection.checkLeader
LeaderKnown(s, votes, leader, round) ==
    IF leader # s
    THEN \E x \in votes : x.from = leader /\ x.state = "LEADING"
    ELSE logicalclock[s] = round

Join(s, m, round) ==
    /\ state' = [state EXCEPT ![s] = Outcome(s, m.leader)]
    /\ logicalclock' = [logicalclock EXCEPT ![s] = round]
    /\ recvset' = [recvset EXCEPT ![s] = {}]
    /\ outofelection' = [outofelection EXCEPT ![s] = {}]
    /\ currentVote' = [currentVote EXCEPT ![s] = [leader |-> m.leader, zxid |-> m.zxid, round |-> m.round, epoch |-> m.epoch]]
    /\ UNCHANGED <<proposal, messages>>

(* A notification from a FOLLOWING or LEADING server: receivedFollowingNotification. *)
HandleEstablished(s, m) ==
    LET v == VoteOf(m)
        inRound == m.round = logicalclock[s]
        rs == IF inRound THEN Put(recvset[s], v) ELSE recvset[s]
        ooe == Put(outofelection[s], v)
    IN IF inRound /\ IsQuorum(AgreeingRecorded(rs, v)) /\ LeaderKnown(s, rs, m.leader, m.round)
       THEN Join(s, m, logicalclock[s])
       ELSE IF IsQuorum(Agreeing(ooe, v)) /\ LeaderKnown(s, ooe, m.leader, m.round)
       THEN Join(s, m, m.round)
       ELSE /\ recvset' = [recvset EXCEPT ![s] = rs]
            /\ outofelection' = [outofelection EXCEPT ![s] = ooe]
            /\ UNCHANGED <<state, logicalclock, proposal, currentVote, messages>>

HandleNotification(s, m) ==
    /\ state[s] = "LOOKING"
    /\ m \in messages
    /\ m.to = s
    /\ IF m.state = "LOOKING" THEN HandleLooking(s, m) ELSE HandleEstablished(s, m)
    /\ UNCHANGED <<currentEpoch, lastZxid>>

(* The finalize wait ends with no better notification: the election is over. *)
Decide(s) ==
    /\ state[s] = "LOOKING"
    /\ LET p == proposal[s]
           mine == [from |-> s, leader |-> p.leader, zxid |-> p.zxid, round |-> logicalclock[s],
                    epoch |-> p.epoch, state |-> "LOOKING"]
       IN /\ IsQuorum(Agreeing(recvset[s], mine))
          /\ state' = [state EXCEPT ![s] = Outcome(s, p.leader)]
          /\ currentVote' = [currentVote EXCEPT ![s] = [leader |-> p.leader, zxid |-> p.zxid,
                                                        round |-> logicalclock[s], epoch |-> p.epoch]]
    /\ recvset' = [recvset EXCEPT ![s] = {}]
    /\ outofelection' = [outofelection EXCEPT ![s] = {}]
    /\ UNCHANGED <<logicalclock, proposal, currentEpoch, lastZxid, messages>>

(* The receiver thread answers a LOOKING server's notification. *)
ReplyNotification(s, m) ==
    /\ m \in messages
    /\ m.to = s
    /\ m.state = "LOOKING"
    /\ \/ /\ state[s] = "LOOKING"
          /\ m.round < logicalclock[s]
          /\ messages' = messages \cup {Notify(s, m.from, proposal[s], logicalclock[s], "LOOKING")}
       \/ /\ state[s] \in {"FOLLOWING", "LEADING"}
          /\ messages' = messages \cup {Notify(s, m.from, currentVote[s], currentVote[s].round, state[s])}
    /\ UNCHANGED <<state, logicalclock, proposal, recvset, outofelection, currentVote, currentEpoch, lastZxid>>

(* Out of scope: the synchronisation with the leader sets the epoch and the last zxid. *)
Sync(s) ==
    /\ state[s] \in {"FOLLOWING", "LEADING"}
    /\ \E e \in currentEpoch[s]..MaxEpoch, z \in {lastZxid[s]} \cup {<<x, 0>> : x \in lastZxid[s][1]..MaxEpoch},
          ve \in currentVote[s].epoch..MaxEpoch :
          /\ currentEpoch' = [currentEpoch EXCEPT ![s] = e]
          /\ lastZxid' = [lastZxid EXCEPT ![s] = z]
          /\ currentVote' = [currentVote EXCEPT ![s].epoch = ve]
    /\ UNCHANGED <<state, logicalclock, proposal, recvset, outofelection, messages>>

(* The process is killed; its epoch and log are on disk. *)
Crash(s) ==
    /\ state[s] # "DOWN"
    /\ state' = [state EXCEPT ![s] = "DOWN"]
    /\ logicalclock' = [logicalclock EXCEPT ![s] = 0]
    /\ proposal' = [proposal EXCEPT ![s] = NoProposal]
    /\ recvset' = [recvset EXCEPT ![s] = {}]
    /\ outofelection' = [outofelection EXCEPT ![s] = {}]
    /\ UNCHANGED <<currentVote, currentEpoch, lastZxid, messages>>

\* One operator per kind of step, so that TLC reports each on its own.
Receive(s) == \E m \in messages : HandleNotification(s, m)
Answer(s) == \E m \in messages : ReplyNotification(s, m)

Next ==
    \E s \in Servers :
        \/ StartElection(s)
        \/ Receive(s)
        \/ Decide(s)
        \/ Answer(s)
        \/ Sync(s)
        \/ Crash(s)

Spec == Init /\ [][Next]_vars

=============================================================================
