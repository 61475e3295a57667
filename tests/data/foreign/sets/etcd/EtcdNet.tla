------------------------------- MODULE EtcdNet -------------------------------
(* One inbox per node: a function from nodes to the sets of messages        *)
(* addressed to them.                                                       *)
(* Post(box, out): box with every message of out added to its receiver's   *)
(* inbox; InFlightIn(box): every message of every inbox.                    *)
Post(box, out) == [j \in DOMAIN box |-> box[j] \cup {o \in out : o.to = j}]
InFlightIn(box) == UNION {box[j] : j \in DOMAIN box}
=============================================================================
