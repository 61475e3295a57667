---------------------------- MODULE ZooKeeperFLE ----------------------------
(***************************************************************************)
(* A coarse model of ZooKeeper 3.8's Fast Leader Election.                 *)
(*                                                                         *)
(* Three simplifications set it apart from a line-by-line model:          *)
(*  - the network is a set of notes in flight, and receiving a note takes  *)
(*    it out: nothing remembers what has been delivered.  Like the         *)
(*    connection manager's send queues (SEND_CAPACITY = 1) it holds at     *)
(*    most one note per sender and addressee, a newer note replacing one   *)
(*    still on its way;                                                    *)
(*  - a server never writes to itself: when it starts an election or moves *)
(*    its vote it counts its own vote at once, which is what the code      *)
(*    arrives at when it polls the notification it queued for itself;     *)
(*  - a server has one vote: what it proposes while it is voting, and the  *)
(*    election's outcome once it follows or leads (or has been killed).    *)
(*                                                                         *)
(* The environment is the one these runs create: the leader of an         *)
(* ensemble that follows it is killed and restarted, a follower gives up   *)
(* on a leader that is down or follows someone else, and the               *)
(* synchronisation with the leader (ZAB, not modelled) opens a new epoch.  *)
(* Nothing is sent again on a timeout, so an election that lost a replaced *)
(* note may stall: this is a model of what the election may do, not of     *)
(* what it eventually does.                                                *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS Servers,   \* the voters' ids
          MaxEpoch,  \* no epoch grows past this
          MaxRound   \* no election starts past this round

VARIABLES
    role,     \* "off", "voting", "follower" or "leader"
    round,    \* the election round (logical clock); 0 in a fresh process
    vote,     \* [who, zx, ep, rnd]: the proposal while voting, else the outcome
    tally,    \* votes counted in the current round: a function from their senders
    settled,  \* votes of followers and leaders heard while voting, by sender
    store,    \* what survives a crash: [ep |-> current epoch, zx |-> last zxid]
    wire      \* notes in flight

vars == <<role, round, vote, tally, settled, store, wire>>

-----------------------------------------------------------------------------
(* Votes and ballots.  A zxid is <<epoch, counter>>.                       *)

Majority(Q) == 2 * Cardinality(Q) > Cardinality(Servers)

ZxAbove(a, b) == a[1] > b[1] \/ (a[1] = b[1] /\ a[2] > b[2])

\* v (fields who, zx, ep) wins over w: a newer epoch, a newer zxid, a larger id.
Beats(v, w) ==
    \/ v.ep > w.ep
    \/ v.ep = w.ep /\ ZxAbove(v.zx, w.zx)
    \/ v.ep = w.ep /\ v.zx = w.zx /\ v.who > w.who

Home(s) == [who |-> s, zx |-> store[s].zx, ep |-> store[s].ep]

InRound(v, r) == [who |-> v.who, zx |-> v.zx, ep |-> v.ep, rnd |-> r]

\* A counted vote: what a note says, without its addressee.
Ballot(v, r, st) == [who |-> v.who, zx |-> v.zx, ep |-> v.ep, rnd |-> r, st |-> st]

BallotOf(n) == Ballot(n, n.rnd, n.st)

\* Two ballots count as one vote (Vote.equals): a settled pair agrees on leader and epoch.
Alike(a, b) ==
    IF a.st = "voting" \/ b.st = "voting"
    THEN a.who = b.who /\ a.zx = b.zx /\ a.ep = b.ep /\ a.rnd = b.rnd
    ELSE a.who = b.who /\ a.ep = b.ep

Backers(t, b) == {q \in DOMAIN t : Alike(t[q], b)}

NoVotes == [q \in {} |-> Ballot([who |-> 0, zx |-> <<0, 0>>, ep |-> 0], 0, "voting")]

Count(t, q, b) == [x \in DOMAIN t \cup {q} |-> IF x = q THEN b ELSE t[x]]

\* Counting one's own vote in round r: what handling one's own notification amounts to.
WithSelf(t, s, v, r) == Count(t, s, Ballot(v, r, "voting"))

Note(from, to, v, r, st) ==
    [src |-> from, dst |-> to, who |-> v.who, zx |-> v.zx, ep |-> v.ep, rnd |-> r, st |-> st]

\* sendNotifications, to the others only.
Tell(s, v, r) == {Note(s, t, v, r, "voting") : t \in Servers \ {s}}

\* Queue notes from s: each replaces a note from s to the same addressee.
Post(w, s, notes) ==
    {n \in w : n.src # s \/ \A m \in notes : m.dst # n.dst} \cup notes

\* The vote a settled server answers with (QuorumPeer.getCurrentVote): the
\* election's outcome, in the epoch it has synchronised to since.
Answered(s) == [vote[s] EXCEPT !.ep = IF store[s].ep > @ THEN store[s].ep ELSE @]

Followers(s) == {t \in Servers : role[t] = "follower" /\ vote[t].who = s}

RoleFor(s, leader) == IF leader = s THEN "leader" ELSE "follower"

-----------------------------------------------------------------------------
TypeOK ==
    /\ role \in [Servers -> {"off", "voting", "follower", "leader"}]
    /\ round \in [Servers -> 0..MaxRound]
    /\ \A s \in Servers :
          /\ vote[s].who \in Servers
          /\ vote[s].ep \in 0..MaxEpoch
          /\ vote[s].rnd \in -1..MaxRound
          /\ DOMAIN tally[s] \subseteq Servers
          /\ DOMAIN settled[s] \subseteq Servers
          /\ store[s].ep \in 0..MaxEpoch
    /\ \A n \in wire : n.src \in Servers /\ n.dst \in Servers \ {n.src}

Init ==
    /\ role = [s \in Servers |-> "off"]
    /\ round = [s \in Servers |-> 0]
    /\ vote = [s \in Servers |-> [who |-> s, zx |-> <<0, 0>>, ep |-> 0, rnd |-> -1]]
    /\ tally = [s \in Servers |-> NoVotes]
    /\ settled = [s \in Servers |-> NoVotes]
    /\ store = [s \in Servers |-> [ep |-> 0, zx |-> <<0, 0>>]]
    /\ wire = {}

-----------------------------------------------------------------------------
(* A server enters the election: next round, its own vote, told to all.  A *)
(* process does so when it starts.  A follower does when its leader is down *)
(* or follows someone else, a leader when no majority follows it or still   *)
(* votes: the learners' and the leader's timeouts are long next to an       *)
(* election, so no one gives up on a leader that is still being elected.   *)
Start(s) ==
    /\ \/ role[s] = "off"
       \/ role[s] = "follower" /\ role[vote[s].who] \in {"off", "follower"}
       \/ role[s] = "leader"
          /\ ~Majority({s} \cup Followers(s) \cup {t \in Servers : role[t] = "voting"})
    /\ round[s] < MaxRound
    /\ LET r == round[s] + 1
       IN /\ role' = [role EXCEPT ![s] = "voting"]
          /\ round' = [round EXCEPT ![s] = r]
          /\ vote' = [vote EXCEPT ![s] = InRound(Home(s), r)]
          /\ tally' = [tally EXCEPT ![s] = WithSelf(NoVotes, s, Home(s), r)]
          /\ settled' = [settled EXCEPT ![s] = NoVotes]
          /\ wire' = Post(wire, s, Tell(s, Home(s), r))
    /\ UNCHANGED store

(* A voting server takes a note of a voting server of its round or a later *)
(* one: a later round starts over from its own vote, a better vote is      *)
(* adopted, and either is told to all.                                     *)
FromVoter(s, n) ==
    /\ n.rnd >= round[s]
    /\ LET later == n.rnd > round[s]
           mine == IF later THEN Home(s) ELSE vote[s]
           moved == Beats(n, mine)
           next == IF moved THEN [who |-> n.who, zx |-> n.zx, ep |-> n.ep] ELSE mine
           base == IF later THEN NoVotes ELSE tally[s]
           counted == IF later \/ moved THEN WithSelf(base, s, next, n.rnd) ELSE base
       IN /\ round' = [round EXCEPT ![s] = n.rnd]
          /\ vote' = [vote EXCEPT ![s] = InRound(next, n.rnd)]
          /\ tally' = [tally EXCEPT ![s] = Count(counted, n.src, BallotOf(n))]
          /\ wire' = Post(wire \ {n}, s, IF later \/ moved THEN Tell(s, next, n.rnd) ELSE {})
          /\ UNCHANGED <<role, settled>>

(* checkLeader: a leader other than me must have said it leads; if it is me, *)
(* the note must be of my round.                                            *)
Confirmed(s, t, leader, r) ==
    IF leader # s THEN leader \in DOMAIN t /\ t[leader].st = "leader"
                  ELSE round[s] = r

Follow(s, n, r) ==
    /\ role' = [role EXCEPT ![s] = RoleFor(s, n.who)]
    /\ round' = [round EXCEPT ![s] = r]
    /\ vote' = [vote EXCEPT ![s] = InRound(n, n.rnd)]
    /\ tally' = [tally EXCEPT ![s] = NoVotes]
    /\ settled' = [settled EXCEPT ![s] = NoVotes]
    /\ wire' = wire \ {n}

(* A voting server takes a note of a follower or a leader: counted in its   *)
(* round if it is of that round, and among the settled votes in any case;   *)
(* a majority behind a confirmed leader in either makes it join.            *)
FromSettled(s, n) ==
    LET b == BallotOf(n)
        same == n.rnd = round[s]
        t == IF same THEN Count(tally[s], n.src, b) ELSE tally[s]
        o == Count(settled[s], n.src, b)
    IN IF same /\ Majority(Backers(t, b)) /\ Confirmed(s, t, n.who, n.rnd)
       THEN Follow(s, n, round[s])
       ELSE IF Majority(Backers(o, b)) /\ Confirmed(s, o, n.who, n.rnd)
       THEN Follow(s, n, n.rnd)
       ELSE /\ tally' = [tally EXCEPT ![s] = t]
            /\ settled' = [settled EXCEPT ![s] = o]
            /\ wire' = wire \ {n}
            /\ UNCHANGED <<role, round, vote>>

Receive(s, n) ==
    /\ role[s] = "voting"
    /\ n \in wire
    /\ n.dst = s
    /\ IF n.st = "voting" THEN FromVoter(s, n) ELSE FromSettled(s, n)
    /\ UNCHANGED store

(* The finalize wait is over: a majority of the counted votes back mine. *)
Conclude(s) ==
    /\ role[s] = "voting"
    /\ Majority(Backers(tally[s], Ballot(vote[s], round[s], "voting")))
    /\ role' = [role EXCEPT ![s] = RoleFor(s, vote[s].who)]
    /\ tally' = [tally EXCEPT ![s] = NoVotes]
    /\ settled' = [settled EXCEPT ![s] = NoVotes]
    /\ UNCHANGED <<round, vote, store, wire>>

(* The receiver thread answers a voting server's note (and that is the end of *)
(* the note): with the outcome if it is settled, with its proposal if it      *)
(* votes in a later round.                                                     *)
Answer(s, n) ==
    /\ n \in wire
    /\ n.dst = s
    /\ n.st = "voting"
    /\ \/ /\ role[s] = "voting"
          /\ n.rnd < round[s]
          /\ wire' = Post(wire \ {n}, s, {Note(s, n.src, vote[s], round[s], "voting")})
       \/ /\ role[s] \in {"follower", "leader"}
          /\ wire' = Post(wire \ {n}, s, {Note(s, n.src, Answered(s), vote[s].rnd, role[s])})
    /\ UNCHANGED <<role, round, vote, tally, settled, store>>

(* Outside the election: synchronising with the leader (ZAB).  A leader     *)
(* opens the epoch after its election's; a follower takes on the epoch its   *)
(* leader opened, with a last zxid at its start.  From then on the server    *)
(* answers in that epoch (Answered).  A server with nothing to catch up on   *)
(* syncs without change.                                                     *)
Target(s) ==
    LET l == vote[s].who
    IN IF role[s] = "leader" THEN vote[s].ep + 1
       ELSE IF role[l] = "leader" /\ store[l].ep > vote[l].ep THEN store[l].ep
       ELSE 0

Catch(s) ==
    /\ role[s] \in {"follower", "leader"}
    /\ IF store[s].ep < Target(s) /\ Target(s) <= MaxEpoch
       THEN store' = [store EXCEPT ![s] =
                        [ep |-> Target(s),
                         zx |-> IF role[s] = "leader" THEN @.zx ELSE <<Target(s), 0>>]]
       ELSE UNCHANGED store
    /\ UNCHANGED <<role, round, vote, tally, settled, wire>>

(* The process of a leader that every other server follows is killed (the  *)
(* failure these runs inject).  Its vote stays, the outcome it answered    *)
(* with; what it had queued to send dies with it, what others queued for   *)
(* it waits for its return.                                                *)
Fail(s) ==
    /\ role[s] = "leader"
    /\ Followers(s) = Servers \ {s}
    /\ role' = [role EXCEPT ![s] = "off"]
    /\ round' = [round EXCEPT ![s] = 0]
    /\ wire' = {n \in wire : n.src # s}
    /\ UNCHANGED <<vote, tally, settled, store>>

(* A voting server polls the notification it queued for itself and counts   *)
(* its own current vote.  Start and FromVoter count it already, so this step  *)
(* repeats what is done: it is the code's step, kept for what it does, and    *)
(* from every reachable state it changes nothing.                             *)
CountOwn(s) ==
    /\ role[s] = "voting"
    /\ tally' = [tally EXCEPT ![s] = WithSelf(@, s, vote[s], round[s])]
    /\ UNCHANGED <<role, round, vote, settled, store, wire>>

Deliver(s) == \E n \in wire : Receive(s, n)
Respond(s) == \E n \in wire : Answer(s, n)

Next ==
    \E s \in Servers :
        \/ Start(s)
        \/ Deliver(s)
        \/ CountOwn(s)
        \/ Conclude(s)
        \/ Respond(s)
        \/ Catch(s)
        \/ Fail(s)

Spec == Init /\ [][Next]_vars

=============================================================================
