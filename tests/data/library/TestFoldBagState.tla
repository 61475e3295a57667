---------------------------- MODULE TestFoldBagState ----------------------------
(* FoldBag as etcd's spec uses it: a bag of message records in a variable,  *)
(* folded into a function of the servers, the accumulator being op's first *)
(* argument (BagsExt.java foldBag: acc := op(acc, m) for every copy of     *)
(* every message m).  The fold is evaluated on states, in the invariant,   *)
(* and in an action on a bag built there.                                  *)
EXTENDS Naturals, Bags, BagsExt

Servers == {"s1", "s2"}
Msg(src, n) == [msource |-> src, n |-> n]

VARIABLE msgs

Sent(bag) == FoldBag(LAMBDA acc, m : [acc EXCEPT ![m.msource] = @ + m.n],
                     [s \in Servers |-> 0], bag)
Total(bag) == FoldBag(LAMBDA acc, m : acc + m.n, 0, bag)

Init == msgs = SetToBag({Msg("s1", 1), Msg("s2", 2)})

Next == \/ /\ BagCardinality(msgs) = 2
           /\ msgs' = BagAdd(msgs, Msg("s2", 2))
           /\ Total(msgs') = 5
           /\ Sent(msgs')["s2"] = 4
        \/ UNCHANGED msgs

Inv == \/ /\ BagCardinality(msgs) = 2
          /\ Sent(msgs) = ("s1" :> 1 @@ "s2" :> 2)
          /\ Total(msgs) = 3
       \/ /\ BagCardinality(msgs) = 3
          /\ Sent(msgs) = ("s1" :> 1 @@ "s2" :> 4)
          /\ Total(msgs) = 5

(* Both states must be reached, or the action above never ran.            *)
Grows == BagCardinality(msgs) < 3
=============================================================================
