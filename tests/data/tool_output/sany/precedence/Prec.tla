---- MODULE Prec ----
VARIABLES a, b, c
Init == a = TRUE /\ b = TRUE /\ c = TRUE
Next == UNCHANGED <<a, b, c>>
Bad == a /\ b \/ c
====
