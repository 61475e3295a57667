"""Reading TLA+ as tokens: renaming the names a mapping binds and a module declares, a
specification and a next-state relation taken apart."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from pytest_sysmobench.tla import modules
from pytest_sysmobench.tla.grammar import (declared_names, next_parts, referenced_names, rename_names,
                                           rename_references, spec_parts)
from pytest_sysmobench.tla.modules import strip_comments
from pytest_sysmobench.tla.unicode import protected_mask

_NAMES = st.sampled_from(["m", "x", "mx", "m_1", "Cardinality"])


def _expressions() -> st.SearchStrategy[str]:
    atom = st.one_of(_NAMES, st.sampled_from(['"m"', '"x m"', "1", "TRUE"]))
    return st.recursive(atom, lambda inner: st.one_of(
        st.tuples(inner, _NAMES).map(lambda p: f"{p[0]}.{p[1]}" if re.fullmatch(r"\w+", p[0]) else f"({p[0]}).{p[1]}"),
        st.tuples(_NAMES, inner).map(lambda p: f"[{p[0]} |-> {p[1]}]"),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: "{" + ", ".join(xs) + "}"),
        st.tuples(inner, inner).map(lambda p: f"IF {p[0]} = {p[1]} THEN {p[0]} ELSE {p[1]}"),
        st.tuples(inner, inner).map(lambda p: f"{p[0]} \\cup {p[1]}"),
    ), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(_expressions())
def test_renaming_touches_references_only_and_can_be_undone(expression: str) -> None:
    renamed = rename_references(expression, {"m": "sysmo_p_m"})
    assert "m" not in referenced_names(f"E == {renamed}")
    assert rename_references(renamed, {"sysmo_p_m": "m"}) == expression
    # Strings and record fields keep their text.
    assert re.findall(r'"[^"]*"', renamed) == re.findall(r'"[^"]*"', expression)
    assert re.findall(r"\.(\w+)", renamed) == re.findall(r"\.(\w+)", expression)


def _declarations() -> st.SearchStrategy[str]:
    """A module declaring and using ``m`` in every place a name can stand, with ``m`` also as a
    record field, a string and a comment."""
    uses = st.lists(st.sampled_from([
        "F(m) == m + 1",
        "G == LET m == 1 IN [m |-> m, x |-> r.m]",
        "H == \\E m \\in {1} : m = [m : {1}]",
        "K == {m \\in S : m > 1} \\cup {m + 1 : m \\in S}",
        "L == [r EXCEPT !.m = 1, ![m] = 2]",
        'M == CHOOSE m \\in S : m # "m" (* m *)',
        "N == [m \\in S |-> m] \\* m",
    ]), min_size=1, max_size=5, unique=True)
    return uses.map(lambda lines: "---- MODULE T ----\nCONSTANTS S, r, m\n" + "\n".join(lines) + "\n====\n")


@settings(max_examples=60, deadline=None)
@given(_declarations())
def test_a_module_renamed_keeps_its_fields_strings_and_comments_and_can_be_renamed_back(module: str) -> None:
    renamed = rename_names(module, {"m": "sysmo_ref_m"})
    assert "m" not in declared_names(renamed) and "m" not in referenced_names(renamed.split("\n", 1)[1][:-5])
    assert rename_names(renamed, {"sysmo_ref_m": "m"}) == module
    assert re.findall(r'"[^"]*"', renamed) == re.findall(r'"[^"]*"', module)
    assert re.findall(r"\.(\w+)", renamed) == re.findall(r"\.(\w+)", module)
    assert re.findall(r"\[(\w+) (?:\||:)", renamed) == re.findall(r"\[(\w+) (?:\||:)", module)
    assert re.findall(r"\(\*.*?\*\)|\\\*.*", renamed) == re.findall(r"\(\*.*?\*\)|\\\*.*", module)


_ACTIONS = st.sampled_from(["Lock(t)", "Acquire(t)", "Extra(t)", "x' = x + 1", "Step(t)"])


@settings(max_examples=120, deadline=None)
@given(st.lists(_ACTIONS, min_size=1, max_size=5), st.booleans(), st.booleans())
def test_a_next_state_relation_splits_into_the_named_operators_and_the_rest(disjuncts: list[str], bullets: bool,
                                                                              quantified: bool) -> None:
    """``Step`` is a definition that calls ``Lock``; ``Extra`` and the primed equation are no named
    operator's, so they, and only they, are left in the rest."""
    body = ("\n    ".join(f"\\/ {d}" for d in disjuncts) if bullets else " \\/ ".join(disjuncts))
    if quantified:
        body = f"\\E t \\in T :\n    {body}"
    module = f"---- MODULE M ----\nStep(t) == Lock(t)\nNext ==\n    {body}\n\\* a comment\n====\n"
    parts = next_parts([module], "Next", {"Lock", "Acquire"})
    assert parts is not None
    assert parts.transparent == {name for name in ("Lock", "Acquire") if any(name in d for d in disjuncts)} | \
        ({"Lock"} if "Step(t)" in disjuncts else set())
    kept = [d for d in disjuncts if d in ("Extra(t)", "x' = x + 1")]
    if not kept:
        assert parts.rest is None
    elif not parts.transparent:
        assert parts.rest == "Next" and not parts.definitions  # nothing named: the relation as it is
    else:
        rest = "\n".join([*parts.definitions, parts.rest])
        assert all(d in rest for d in kept) and "Lock(" not in rest and "Acquire(" not in rest


def test_a_comment_among_the_conjuncts_of_a_specification_is_no_conjunct() -> None:
    """A bulleted ``Spec`` with a comment line inside, and a block comment after it (the grammar
    places both among the conjuncts)."""
    module = ("---- MODULE M ----\nSpec == /\\ Init\n        /\\ [][Next]_vars\n        \\* weakly fair\n"
              "        /\\ WF_vars(Next)\n(* the end *)\n====\n")
    parts = spec_parts([module], "Spec")
    assert parts is not None
    assert parts.init == ("Init",) and parts.next == "Next" and parts.temporal == ("WF_vars(Next)",)


# -- foreign text: comments and blank lines anywhere between tokens change no reading ------------

_ROOT = Path(__file__).resolve().parents[1]
_SPECS = sorted([*(_ROOT / "tasks").glob("*/reference/*.tla"), *(_ROOT / "tests" / "data" / "foreign").rglob("*.tla")])
#: A comment that breaks its line goes on far to the right: the token after it must stay right of
#: any bullet it continues (TLA+'s layout rule, which SANY applies too).
_INSERTS = ["(* c *)", "(* a (* nested *) \\* not a line comment\n" + " " * 80 + "*)", "(**)", "(* \"quoted\" ==== *)"]


def _reading(text: str) -> tuple[object, ...]:
    """What the text-reading code makes of a module, comments and layout aside."""
    plain = lambda s: " ".join(strip_comments(s).split())  # noqa: E731
    name = modules.module_spans(text)[0].name if modules.module_spans(text) else ""
    parts = spec_parts([text], "Spec")
    spec = None if parts is None else (tuple(map(plain, parts.init)), plain(parts.next), plain(parts.subscript),
                                       tuple(map(plain, parts.temporal)))
    nexts = next_parts([text], "Next", [u.name for u in modules.top_level_units(text)])
    split = None if nexts is None else (sorted(nexts.transparent), plain(nexts.rest or ""))
    return (name, sorted(declared_names(text)), modules.extends(text), modules.declared(text),
            [u.name for u in modules.top_level_units(text)], spec, split)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_comments_and_blank_lines_between_tokens_change_no_reading_of_any_spec(data: st.DataObject) -> None:
    """Every reference and foreign spec in the tests: a block comment where a space separates two
    tokens, a blank line after any line, never a crash and the same reading (names, EXTENDS,
    declarations, definitions, the specification's parts and the next-state relation's)."""
    path = data.draw(st.sampled_from(_SPECS), label="spec")
    text = path.read_text()
    mask = protected_mask(text)
    # Not on a module's header or footer line (a comment splitting ``---- MODULE`` is no text a
    # spec is written in).
    framing = {n for n, line in enumerate(text.split("\n")) if "MODULE" in line or line.lstrip().startswith("====")}
    spaces = [i for i, c in enumerate(text) if c == " " and not mask[i] and 0 < i < len(text) - 1
              and text[i - 1] not in " \n" and text[i + 1] not in " \n" and text.count("\n", 0, i) not in framing]
    lines = [i + 1 for i, c in enumerate(text) if c == "\n"]
    edits = data.draw(st.lists(st.one_of(st.tuples(st.sampled_from(spaces), st.sampled_from(_INSERTS)),
                                         st.tuples(st.sampled_from(lines), st.just("\n"))),
                               min_size=1, max_size=4, unique_by=lambda e: e[0]), label="edits")
    changed = text
    for at, insert in sorted(edits, reverse=True):
        changed = changed[:at] + (f" {insert} " if insert != "\n" else insert) + changed[at:]
    assert _reading(changed) == _reading(text), edits
