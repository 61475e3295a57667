-------------------------------- MODULE TLAPS --------------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ stand-in for the TLAPS module of the *)
(* TLA+ Proof System, so that specs which carry proofs parse and run under *)
(* SANY and TLC 2.15.  The names are the backend pragmas and proof rules that proofs     *)
(* cite (BY PTL, BY SMT, BY Zenon ...).  To SANY and TLC they are plain    *)
(* definitions that mean nothing to a model check: proofs are not checked  *)
(* here, and TLC never evaluates a THEOREM.                                *)
(***************************************************************************)

SMT == TRUE
SMTT(X) == TRUE
CVC3 == TRUE
CVC3T(X) == TRUE
Yices == TRUE
YicesT(X) == TRUE
veriT == TRUE
veriTT(X) == TRUE
Z3 == TRUE
Z3T(X) == TRUE
Spass == TRUE
SpassT(X) == TRUE
Zenon == TRUE
ZenonT(X) == TRUE
Isa == TRUE
IsaT(X) == TRUE
IsaM(X) == TRUE
IsaMT(X, Y) == TRUE
Auto == TRUE
Force == TRUE
Blast == TRUE
SimpleArithmetic == TRUE
AllProvers == TRUE
AllProversT(X) == TRUE
AllSMT == TRUE
AllSMTT(X) == TRUE
AllIsa == TRUE
AllIsaT(X) == TRUE
SetExtensionality == TRUE
NoSetContainsEverything == TRUE
IsaWithSetExtensionality == TRUE
LS4 == TRUE
PTL == TRUE
PropositionalTemporalLogic == TRUE
ExpandENABLED == TRUE
ExpandCdot == TRUE
AutoUSE == TRUE
Lambdify == TRUE
ENABLEDaxioms == TRUE
ENABLEDrewrites == TRUE
ENABLEDrules == TRUE
LevelComparison == TRUE
Trivial == TRUE

=============================================================================
