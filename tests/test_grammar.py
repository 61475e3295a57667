"""Reading TLA+ as tokens: renaming the names a mapping binds."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from pytest_sysmobench.tla.grammar import referenced_names, rename_references

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
