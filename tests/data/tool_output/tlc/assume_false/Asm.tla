---- MODULE Asm ----
EXTENDS Naturals
CONSTANT N
ASSUME N > 10
VARIABLE x
Init == x = N
Next == x' = x
====
