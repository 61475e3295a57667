------------------------------ MODULE MutexTypes -----------------------------
(* The thread states of a mutex spec split over two files.                 *)
Out == [where |-> "out", call |-> "none"]
Waiting == [where |-> "queued", call |-> "lock"]
Holding(call) == [where |-> "inside", call |-> call]
=============================================================================
