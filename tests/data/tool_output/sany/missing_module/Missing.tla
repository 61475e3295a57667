---- MODULE Missing ----
EXTENDS Naturals, NoSuchModule
VARIABLE x
Init == x = 0
====
