---------------------------- MODULE TestFunctions ----------------------------
(* Checks every operator of our Functions module on small values.          *)
EXTENDS Naturals, FiniteSets, Sequences, TLC, Functions

F == [x \in 1..3 |-> x % 2]

ASSUME Range(F) = {0, 1} /\ Range(<< >>) = {} /\ Range(<<"a", "a">>) = {"a"}
ASSUME Restrict(<<5, 6, 7>>, {1, 3}) = (1 :> 5 @@ 3 :> 7)
ASSUME Restrict(F, {}) = << >>
ASSUME RestrictDomain(<<5, 6, 7>>, LAMBDA i : i > 1) = (2 :> 6 @@ 3 :> 7)
ASSUME RestrictValues(<<5, 6, 7>>, LAMBDA v : v # 6) = (1 :> 5 @@ 3 :> 7)
ASSUME IsRestriction(1 :> 5, <<5, 6>>) /\ IsRestriction(<< >>, <<5>>)
ASSUME ~ IsRestriction(1 :> 6, <<5, 6>>) /\ ~ IsRestriction(<<5, 6>>, 1 :> 5)
ASSUME Inverse(<<"a", "b">>, {1, 2}, {"a", "b"}) = ("a" :> 1 @@ "b" :> 2)
ASSUME LET g == Inverse(F, 1..3, {0, 1}) IN g[0] = 2 /\ g[1] \in {1, 3}
ASSUME AntiFunction(<<"a", "b">>) = ("a" :> 1 @@ "b" :> 2)
ASSUME AntiFunction(<< >>) = << >>
ASSUME IsInjective(<<1, 2, 3>>) /\ ~ IsInjective(F) /\ IsInjective(<< >>)
ASSUME IsSurjective(F, 1..3, {0, 1}) /\ ~ IsSurjective(F, 1..3, {0, 1, 2})
ASSUME IsBijection(<<2, 1>>, {1, 2}, {1, 2}) /\ ~ IsBijection(F, 1..3, {0, 1})
ASSUME ~ IsBijection(<<1, 2>>, {1, 2}, {1, 2, 3})
ASSUME Cardinality(Injection(1..2, 1..3)) = 6 /\ Injection(1..3, 1..2) = {}
ASSUME Cardinality(Surjection(1..3, 1..2)) = 6 /\ Surjection(1..2, 1..3) = {}
ASSUME Bijection(1..2, {"a", "b"}) = {<<"a", "b">>, <<"b", "a">>}
ASSUME ExistsInjection(1..2, 1..3) /\ ~ ExistsInjection(1..3, 1..2)
ASSUME ExistsInjection({}, {}) /\ ExistsInjection({}, 1..2) /\ ~ ExistsInjection(1..2, {})
ASSUME ExistsSurjection(1..3, 1..2) /\ ~ ExistsSurjection(1..2, 1..3)
ASSUME ExistsSurjection({}, {}) /\ ~ ExistsSurjection(1..2, {})
ASSUME ExistsBijection(1..2, {"a", "b"}) /\ ~ ExistsBijection(1..2, 1..3)
ASSUME ExistsBijection({}, {})
\* The cardinality shortcuts agree with the definitions by function sets.
ASSUME \A S, T \in SUBSET (1..3) :
         /\ ExistsInjection(S, T) = (Injection(S, T) # {})
         /\ ExistsSurjection(S, T) = (Surjection(S, T) # {})
         /\ ExistsBijection(S, T) = (Bijection(S, T) # {})
ASSUME FoldFunction(LAMBDA x, y : {x} \cup y, {}, <<1, 2, 1>>) = {1, 2}
ASSUME FoldFunction(LAMBDA x, y : x + y, 0, [i \in 1..10 |-> i]) = 55
ASSUME FoldFunction(LAMBDA x, y : x + y, 3, << >>) = 3
ASSUME FoldFunctionOnSet(LAMBDA x, y : x + y, 0, <<10, 20, 30>>, {1, 3}) = 40
ASSUME FoldFunctionOnSet(LAMBDA x, y : {x} \cup y, {}, <<1, 2>>, {}) = {}
ASSUME Pointwise(<<1, 2>>, <<10, 20>>, LAMBDA a, b : a + b) = <<11, 22>>
ASSUME Pointwise(("x" :> 2), ("x" :> 3), LAMBDA a, b : a * b) = ("x" :> 6)

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
