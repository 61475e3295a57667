---- MODULE Lex ----
VARIABLE x
Init == x = 0
Next == x' = x;
====
