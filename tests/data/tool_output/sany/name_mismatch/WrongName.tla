---- MODULE Other ----
VARIABLE x
Init == x = 0
====
