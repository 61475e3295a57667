---- MODULE NoEnd ----
VARIABLE x
Init == x = 0
Next == x' = x
