------------------------------ MODULE SpinBase ------------------------------
(* The declarations of a spin-lock spec split over two files: the thread    *)
(* records and the variables live here, the actions in Spin.tla.           *)
EXTENDS Naturals, FiniteSets

CONSTANT Procs

VARIABLES
    flag,       \* the AtomicBool
    proc,       \* proc[p] = [at |-> "Idle" | "Spinning" | "Won" | "Owner", via |-> "none" | "lock" | "try"]
    lastOwner   \* history: the last thread that entered, "nobody" at first

Idle == [at |-> "Idle", via |-> "none"]
=============================================================================
