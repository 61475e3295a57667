---------------------------- MODULE ZooKeeperFLE ----------------------------
(* Fast Leader Election written the way ZooKeeper's own TLA+ specifications  *)
(* lay it out: one record per server, votes as records with a nested zxid,   *)
(* the received votes as a total function with a sentinel for "none yet",   *)
(* states in lower case, and a network of nested records.                    *)
EXTENDS Integers, FiniteSets

CONSTANTS Server, EpochBound, RoundBound

VARIABLES srv, rv, oe, cur, disk, net

vars == <<srv, rv, oe, cur, disk, net>>

Nil == [id |-> 0, zx |-> [e |-> 0, c |-> 0], rnd |-> 0, ep |-> 0, st |-> "none"]
Blank == [id |-> -1, zx |-> [e |-> -1, c |-> -1], ep |-> 0]
Empty == [q \in Server |-> Nil]

ZxLess(a, b) == a.e < b.e \/ (a.e = b.e /\ a.c < b.c)
\* v beats w: epoch, then zxid, then id
Beats(v, w) == w.ep < v.ep \/ (w.ep = v.ep /\ (ZxLess(w.zx, v.zx) \/ (w.zx = v.zx /\ w.id < v.id)))
Majority(Q) == 2 * Cardinality(Q) > Cardinality(Server)

Ballot(m) == [id |-> m.vote.id, zx |-> m.vote.zx, rnd |-> m.rnd, ep |-> m.vote.ep, st |-> m.st]
Equal(x, y) ==
    IF x.st = "looking" \/ y.st = "looking"
    THEN x.id = y.id /\ x.zx = y.zx /\ x.rnd = y.rnd /\ x.ep = y.ep
    ELSE x.id = y.id /\ x.ep = y.ep
Support(tab, b) == {q \in Server : tab[q] # Nil /\ Equal(tab[q], b)}
Own(s) == [id |-> s, zx |-> disk[s].zx, ep |-> disk[s].ep]
Msg(s, t, v, r, st) == [src |-> s, dst |-> t, vote |-> [id |-> v.id, zx |-> v.zx, ep |-> v.ep], rnd |-> r, st |-> st]
Bcast(s, v, r) == {Msg(s, t, v, r, "looking") : t \in Server}
Role(s, l) == IF l = s THEN "leading" ELSE "following"

TypeOK ==
    /\ \A s \in Server : srv[s].role \in {"down", "looking", "following", "leading"}
    /\ \A s \in Server : srv[s].clock \in 0..RoundBound
    /\ \A m \in net : m.src \in Server /\ m.dst \in Server

Init ==
    /\ srv = [s \in Server |-> [role |-> "down", clock |-> 0, prop |-> Blank]]
    /\ rv = [s \in Server |-> Empty]
    /\ oe = [s \in Server |-> Empty]
    /\ cur = [s \in Server |-> [id |-> s, zx |-> [e |-> 0, c |-> 0], rnd |-> -1, ep |-> 0]]
    /\ disk = [s \in Server |-> [ep |-> 0, zx |-> [e |-> 0, c |-> 0]]]
    /\ net = {}

Boot(s) ==
    /\ srv[s].role # "looking"
    /\ srv[s].clock < RoundBound
    /\ srv' = [srv EXCEPT ![s] = [role |-> "looking", clock |-> @.clock + 1, prop |-> Own(s)]]
    /\ rv' = [rv EXCEPT ![s] = Empty]
    /\ oe' = [oe EXCEPT ![s] = Empty]
    /\ cur' = IF srv[s].role = "down"
              THEN [cur EXCEPT ![s] = [id |-> s, zx |-> disk[s].zx, rnd |-> -1, ep |-> disk[s].ep]]
              ELSE cur
    /\ net' = net \cup Bcast(s, Own(s), srv[s].clock + 1)
    /\ UNCHANGED disk

Looking(s, m) ==
    /\ m.vote.zx # [e |-> -1, c |-> -1]
    /\ m.rnd >= srv[s].clock
    /\ LET fresh == m.rnd > srv[s].clock
           base == IF fresh THEN Own(s) ELSE srv[s].prop
           better == Beats(m.vote, base)
           nxt == IF better THEN m.vote ELSE base
       IN /\ srv' = [srv EXCEPT ![s].clock = m.rnd, ![s].prop = nxt]
          /\ rv' = [rv EXCEPT ![s] = [(IF fresh THEN Empty ELSE @) EXCEPT ![m.src] = Ballot(m)]]
          /\ net' = IF fresh \/ better THEN net \cup Bcast(s, nxt, m.rnd) ELSE net
          /\ UNCHANGED <<oe, cur>>

Settle(s, m, r) ==
    /\ srv' = [srv EXCEPT ![s].role = Role(s, m.vote.id), ![s].clock = r]
    /\ rv' = [rv EXCEPT ![s] = Empty]
    /\ oe' = [oe EXCEPT ![s] = Empty]
    /\ cur' = [cur EXCEPT ![s] = [id |-> m.vote.id, zx |-> m.vote.zx, rnd |-> m.rnd, ep |-> m.vote.ep]]
    /\ UNCHANGED net

Settled(s, m) ==
    LET b == Ballot(m)
        inRound == m.rnd = srv[s].clock
        r2 == IF inRound THEN [rv[s] EXCEPT ![m.src] = b] ELSE rv[s]
        o2 == [oe[s] EXCEPT ![m.src] = b]
        Knows(tab, l, r) == IF l # s THEN tab[l] # Nil /\ tab[l].st = "leading" ELSE srv[s].clock = r
    IN IF inRound /\ Majority(Support(r2, b)) /\ Knows(r2, m.vote.id, m.rnd)
       THEN Settle(s, m, srv[s].clock)
       ELSE IF Majority(Support(o2, b)) /\ Knows(o2, m.vote.id, m.rnd)
       THEN Settle(s, m, m.rnd)
       ELSE /\ rv' = [rv EXCEPT ![s] = r2]
            /\ oe' = [oe EXCEPT ![s] = o2]
            /\ UNCHANGED <<srv, cur, net>>

Take(s, m) ==
    /\ srv[s].role = "looking"
    /\ m \in net
    /\ m.dst = s
    /\ IF m.st = "looking" THEN Looking(s, m) ELSE Settled(s, m)
    /\ UNCHANGED disk

Finish(s) ==
    /\ srv[s].role = "looking"
    /\ LET p == srv[s].prop
           b == [id |-> p.id, zx |-> p.zx, rnd |-> srv[s].clock, ep |-> p.ep, st |-> "looking"]
       IN /\ Majority(Support(rv[s], b))
          /\ srv' = [srv EXCEPT ![s].role = Role(s, p.id)]
          /\ cur' = [cur EXCEPT ![s] = [id |-> p.id, zx |-> p.zx, rnd |-> srv[s].clock, ep |-> p.ep]]
    /\ rv' = [rv EXCEPT ![s] = Empty]
    /\ oe' = [oe EXCEPT ![s] = Empty]
    /\ UNCHANGED <<disk, net>>

Answer(s, m) ==
    /\ m \in net
    /\ m.dst = s
    /\ m.st = "looking"
    /\ \/ /\ srv[s].role = "looking"
          /\ m.rnd < srv[s].clock
          /\ net' = net \cup {Msg(s, m.src, srv[s].prop, srv[s].clock, "looking")}
       \/ /\ srv[s].role \in {"following", "leading"}
          /\ net' = net \cup {Msg(s, m.src, cur[s], cur[s].rnd, srv[s].role)}
    /\ UNCHANGED <<srv, rv, oe, cur, disk>>

Catchup(s) ==
    /\ srv[s].role \in {"following", "leading"}
    /\ \E e \in disk[s].ep..EpochBound,
          z \in {disk[s].zx} \cup {[e |-> x, c |-> 0] : x \in disk[s].zx.e..EpochBound},
          ve \in cur[s].ep..EpochBound :
          /\ disk' = [disk EXCEPT ![s] = [ep |-> e, zx |-> z]]
          /\ cur' = [cur EXCEPT ![s].ep = ve]
    /\ UNCHANGED <<srv, rv, oe, net>>

Kill(s) ==
    /\ srv[s].role # "down"
    /\ srv' = [srv EXCEPT ![s] = [role |-> "down", clock |-> 0, prop |-> Blank]]
    /\ rv' = [rv EXCEPT ![s] = Empty]
    /\ oe' = [oe EXCEPT ![s] = Empty]
    /\ UNCHANGED <<cur, disk, net>>

Poll(s) == \E m \in net : Take(s, m)
Respond(s) == \E m \in net : Answer(s, m)

Next == \E s \in Server : Boot(s) \/ Poll(s) \/ Finish(s) \/ Respond(s) \/ Catchup(s) \/ Kill(s)

Spec == Init /\ [][Next]_vars
=============================================================================
