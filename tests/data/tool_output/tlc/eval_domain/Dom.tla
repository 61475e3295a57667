---- MODULE Dom ----
EXTENDS Naturals
VARIABLES s, i
Init == s = <<1, 2>> /\ i = 1
Next == i' = i + 1 /\ s' = <<s[i + 1], 2>>
====
