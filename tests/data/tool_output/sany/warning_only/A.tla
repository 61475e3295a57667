---- MODULE A ----
EXTENDS Naturals
VARIABLE x
VARIABLE x
Init == x = 0
====
