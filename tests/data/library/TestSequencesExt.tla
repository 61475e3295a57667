--------------------------- MODULE TestSequencesExt ---------------------------
(* Checks every operator of our SequencesExt on small concrete values.      *)
(* Sequences, Naturals, FiniteSets, Bags and TLC come in through SequencesExt. *)
EXTENDS Integers, SequencesExt

Twelve == {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
Pair(a, b) == <<a, b>>

ASSUME ToSet(<< >>) = {}
ASSUME ToSet(<<1, 2, 1>>) = {1, 2}
ASSUME ToBag(<<"a", "b", "a">>) = ("a" :> 2 @@ "b" :> 1)
ASSUME BagToSet(ToBag(<<1, 2, 1>>)) = {1, 2}

ASSUME SetToSeq({}) = << >>
ASSUME LET s == SetToSeq({3, 1, 2})
       IN  Len(s) = 3 /\ ToSet(s) = {1, 2, 3}
ASSUME LET s == SetToSeq(Twelve)
       IN  /\ Len(s) = 12
           /\ ToSet(s) = Twelve
           /\ \A i, j \in 1..12 : i # j => s[i] # s[j]
ASSUME LET s == SetToSeq(1..40) IN Len(s) = 40 /\ ToSet(s) = 1..40
ASSUME SetToSeqs({}) = {<< >>}
ASSUME SetToSeqs({1, 2}) = {<<1, 2>>, <<2, 1>>}
ASSUME Cardinality(SetToSeqs(1..4)) = 24
ASSUME SetToSortSeq({}, <) = << >>
ASSUME SetToSortSeq({3, 1, 2}, <) = <<1, 2, 3>>
ASSUME SetToSortSeq({3, 1, 2}, >) = <<3, 2, 1>>
ASSUME SetToSortSeq({3, 1, 2}, LAMBDA a, b : a =< b) = <<1, 2, 3>>
ASSUME SetToSortSeq(1..12, >) = [i \in 1..12 |-> 13 - i]
ASSUME SetToAllKPermutations({}) = {<< >>}
ASSUME SetToAllKPermutations({"a", "b"}) =
         {<< >>, <<"a">>, <<"b">>, <<"a", "b">>, <<"b", "a">>}
ASSUME TupleOf({0, 1}, 2) = {<<0, 0>>, <<0, 1>>, <<1, 0>>, <<1, 1>>}
ASSUME TupleOf({0, 1}, 0) = {<< >>}
ASSUME SeqOf({0}, 2) = {<< >>, <<0>>, <<0, 0>>}
ASSUME BoundedSeq({0, 1}, 2) =
         {<< >>, <<0>>, <<1>>, <<0, 0>>, <<0, 1>>, <<1, 0>>, <<1, 1>>}
ASSUME <<1, 1>> \in BoundedSeq(1..3, 3) /\ <<1, 1, 1, 1>> \notin BoundedSeq(1..3, 3)

ASSUME Contains(<<1, 2>>, 2) /\ ~ Contains(<<1, 2>>, 3) /\ ~ Contains(<< >>, 1)
ASSUME IsSorted(<< >>, <) /\ IsSorted(<<5>>, <) /\ IsSorted(<<1, 2, 3>>, <)
ASSUME ~ IsSorted(<<1, 2, 2>>, <) /\ IsSorted(<<1, 2, 2>>, LAMBDA a, b : a =< b)
ASSUME ~ IsSorted(<<3, 2, 1>>, <) /\ IsSorted(<<3, 2, 1>>, >)
ASSUME Reverse(<< >>) = << >>
ASSUME Reverse(<<1, 2, 3>>) = <<3, 2, 1>>
ASSUME Remove(<<1, 2, 1, 3>>, 1) = <<2, 3>>
ASSUME Remove(<<1, 2>>, 5) = <<1, 2>>
ASSUME ReplaceAll(<<1, 2, 1>>, 1, 7) = <<7, 2, 7>>
ASSUME ReplaceAll(<< >>, 1, 7) = << >>

ASSUME SelectInSeq(<<1, 2, 3, 2>>, LAMBDA x : x = 2) = 2
ASSUME SelectInSeq(<<1, 2, 3>>, LAMBDA x : x > 5) = 0
ASSUME SelectLastInSeq(<<1, 2, 3, 2>>, LAMBDA x : x = 2) = 4
ASSUME SelectLastInSeq(<< >>, LAMBDA x : TRUE) = 0
\* the index is into the whole sequence, as with TLC's override
ASSUME SelectInSubSeq(<<2, 1, 2, 3>>, 2, 4, LAMBDA x : x = 2) = 3
ASSUME SelectLastInSubSeq(<<2, 1, 2, 2>>, 1, 3, LAMBDA x : x = 2) = 3

ASSUME InsertAt(<<1, 3>>, 2, 2) = <<1, 2, 3>>
ASSUME InsertAt(<< >>, 1, 9) = <<9>>
ASSUME InsertAt(<<1, 2>>, 3, 3) = <<1, 2, 3>>
ASSUME ReplaceAt(<<1, 2, 3>>, 2, 9) = <<1, 9, 3>>
ASSUME RemoveAt(<<1, 2, 3>>, 2) = <<1, 3>>
ASSUME RemoveAt(<<1>>, 1) = << >>
ASSUME RemoveFirst(<<1, 2, 1>>, 1) = <<2, 1>>
ASSUME RemoveFirst(<<1, 2>>, 3) = <<1, 2>>
ASSUME RemoveFirstMatch(<<1, 4, 6>>, LAMBDA x : x > 3) = <<1, 6>>
ASSUME RemoveFirstMatch(<<1>>, LAMBDA x : x > 3) = <<1>>

ASSUME Cons(0, <<1, 2>>) = <<0, 1, 2>>
ASSUME Cons(0, << >>) = <<0>>
ASSUME Snoc(3, <<1, 2>>) = <<1, 2, 3>>
ASSUME Front(<<1, 2, 3>>) = <<1, 2>>
ASSUME Front(<<1>>) = << >>
ASSUME Last(<<1, 2, 3>>) = 3

ASSUME IsPrefix(<< >>, <<1>>) /\ IsPrefix(<<1, 2>>, <<1, 2, 3>>) /\ IsPrefix(<<1>>, <<1>>)
ASSUME ~ IsPrefix(<<2>>, <<1, 2>>) /\ ~ IsPrefix(<<1, 2, 3>>, <<1, 2>>)
ASSUME IsStrictPrefix(<<1>>, <<1, 2>>) /\ ~ IsStrictPrefix(<<1, 2>>, <<1, 2>>)
ASSUME IsSuffix(<<2, 3>>, <<1, 2, 3>>) /\ IsSuffix(<< >>, <<1>>) /\ ~ IsSuffix(<<1>>, <<1, 2>>)
ASSUME ~ IsSuffix(<<0, 1, 2>>, <<1, 2>>)
ASSUME IsStrictSuffix(<<3>>, <<2, 3>>) /\ ~ IsStrictSuffix(<<2, 3>>, <<2, 3>>)
ASSUME Prefixes(<<1, 2>>) = {<< >>, <<1>>, <<1, 2>>}
ASSUME Prefixes(<< >>) = {<< >>}
ASSUME Suffixes(<<1, 2>>) = {<< >>, <<2>>, <<1, 2>>}
ASSUME LongestCommonPrefix({<<1, 2, 3>>, <<1, 2, 4>>, <<1, 2>>}) = <<1, 2>>
ASSUME LongestCommonPrefix({<<1, 2>>}) = <<1, 2>>
ASSUME LongestCommonPrefix({<<1>>, <<2>>}) = << >>
ASSUME LongestCommonPrefix({<< >>, <<2>>}) = << >>
ASSUME CommonPrefixes({<<1, 2, 3>>, <<1, 2, 4>>}) = {<< >>, <<1>>, <<1, 2>>}
ASSUME CommonPrefixes({}) = {}

ASSUME FoldLeft(Pair, 0, <<3, 1, 2>>) = << << <<0, 3>>, 1>>, 2>>
ASSUME FoldLeft(Pair, 0, << >>) = 0
ASSUME FoldLeft(LAMBDA a, b : a - b, 10, <<1, 2, 3>>) = 4
ASSUME FoldRight(Pair, <<3, 1, 2>>, 0) = <<3, <<1, <<2, 0>> >> >>
ASSUME FoldRight(LAMBDA a, b : a - b, <<1, 2, 3>>, 10) = -8
ASSUME FoldRight(Pair, << >>, 0) = 0
ASSUME FoldSeq(LAMBDA x, y : {x} \cup y, {}, <<1, 2, 1>>) = {1, 2}
ASSUME FoldSeq(LAMBDA x, y : x + y, 0, <<1, 2, 3>>) = 6
ASSUME FoldLeftDomain(LAMBDA acc, i : acc \o <<i>>, << >>, <<"x", "y">>) = <<1, 2>>
ASSUME FoldRightDomain(LAMBDA i, acc : acc \o <<i>>, <<"x", "y">>, << >>) = <<2, 1>>
ASSUME LET s == [i \in 1..200 |-> i] IN FoldLeft(LAMBDA a, b : a + b, 0, s) = 20100

ASSUME FlattenSeq(<< >>) = << >>
ASSUME FlattenSeq(<< <<1, 2>>, << >>, <<3>> >>) = <<1, 2, 3>>
ASSUME FlattenSeq(<< <<"a">>, <<"b">> >>) = <<"a", "b">>
ASSUME Zip(<< >>, << >>) = << >>
ASSUME Zip(<<1, 3>>, <<2, 4>>) = << <<1, 2>>, <<3, 4>> >>
ASSUME Zip(<<"a", "b", "c">>, <<1>>) = << <<"a", 1>> >>
ASSUME Interleave(<< >>, << >>) = << << >>, << >> >>
ASSUME Interleave(<<1, 3>>, <<2, 4>>) = << <<1>>, <<2>>, <<3>>, <<4>> >>
ASSUME FlattenSeq(Interleave(<<1, 3>>, <<2, 4>>)) = <<1, 2, 3, 4>>
ASSUME SubSeqs(<<1, 2, 3>>) =
         {<< >>, <<1>>, <<2>>, <<3>>, <<1, 2>>, <<2, 3>>, <<1, 2, 3>>}
ASSUME AllSubSeqs(<<1, 2, 3>>) =
         {<< >>, <<1>>, <<2>>, <<3>>, <<1, 2>>, <<1, 3>>, <<2, 3>>, <<1, 2, 3>>}
ASSUME AllSubSeqs(<< >>) = {<< >>}
ASSUME IndexFirstSubSeq(<<1>>, <<1, 1, 1>>) = 1
ASSUME IndexFirstSubSeq(<<2, 3>>, <<1, 2, 3, 2, 3>>) = 2
ASSUME IndexFirstSubSeq(<< >>, <<5>>) = 1
ASSUME ReplaceSubSeqAt(2, <<9>>, <<2, 3>>, <<1, 2, 3, 4>>) = <<1, 9, 4>>
ASSUME ReplaceFirstSubSeq(<<9>>, <<2>>, <<1, 2, 2>>) = <<1, 9, 2>>
ASSUME ReplaceFirstSubSeq(<<9>>, <<5>>, <<1, 2>>) = <<1, 2>>
ASSUME ReplaceAllSubSeqs(<< >>, << >>, << >>) = << >>
ASSUME ReplaceAllSubSeqs(<<4>>, << >>, << >>) = <<4>>
ASSUME ReplaceAllSubSeqs(<<2>>, <<3>>, <<1, 3>>) = <<1, 2>>
ASSUME ReplaceAllSubSeqs(<<2, 2>>, <<1, 1>>, <<1, 1, 1>>) = <<2, 2, 1>>
ASSUME ReplaceAllSubSeqs(<<0>>, << >>, <<1, 2>>) = <<0, 1, 0, 2>>
ASSUME ReplaceAllSubSeqs(<< >>, <<1>>, <<1, 2, 1>>) = <<2>>
ASSUME ReplaceAllSubSeqs(<<7>>, <<5>>, <<1, 2>>) = <<1, 2>>

ASSUME SeqMod(3, 3) = 3 /\ SeqMod(4, 3) = 1 /\ SeqMod(0, 3) = 3 /\ SeqMod(2, 3) = 2

VARIABLE x
Init == x = 0
Next == UNCHANGED x
=============================================================================
