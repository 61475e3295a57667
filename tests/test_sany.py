"""SANY text classification against real SANY2 2.1 output (tests/data/tool_output/sany)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sysmobench.tla.sany import (
    SanyErrorKind,
    SanyResult,
    arity_errors,
    classify_sany,
    unknown_operators,
)

SANY_DATA = Path(__file__).parent / "data" / "tool_output" / "sany"
CASES = sorted(path.name for path in SANY_DATA.iterdir() if (path / "output.txt").is_file())
Kind = SanyErrorKind


def sany_output(case: str) -> str:
    return (SANY_DATA / case / "output.txt").read_text()


def sany_exit_code(case: str) -> int:
    return int((SANY_DATA / case / "exit_code.txt").read_text())


def classify(case: str) -> SanyResult:
    return classify_sany(sany_output(case))


# case -> (exit code SANY gave, [(kind, line, col, module)] of the errors)
EXPECTED: dict[str, tuple[int, list[tuple[Kind, int | None, int | None, str | None]]]] = {
    "ok": (0, []),
    "warning_only": (0, []),
    "syntax": (255, [(Kind.SYNTAX, 6, 1, "Syntax")]),
    "precedence": (255, [(Kind.SYNTAX, 5, 10, "Prec")]),
    "missing_end": (255, [(Kind.SYNTAX, 4, 15, "NoEnd")]),
    "lexical": (255, [(Kind.LEXICAL, 4, 15, "Lex")]),
    "missing_module": (255, [(Kind.MISSING_MODULE, None, None, "Missing")]),
    "name_mismatch": (255, [(Kind.MODULE_NAME_MISMATCH, None, None, "WrongName")]),
    "unknown_operator": (
        0,
        [(Kind.UNKNOWN_OPERATOR, 5, 14, "Unknown"), (Kind.UNKNOWN_OPERATOR, 5, 24, "Unknown")],
    ),
    "arity": (0, [(Kind.ARITY, 6, 15, "Arity")]),
    "redefinition": (0, [(Kind.REDEFINITION, 5, 1, "Redef")]),
    "level_box": (0, [(Kind.LEVEL, 6, 17, "Level")]),
    "level_prime": (0, [(Kind.LEVEL, 6, 8, "Level2")]),
    "mixed": (
        0,
        [
            (Kind.ARITY, 6, 18, "Mixed"),
            (Kind.UNKNOWN_OPERATOR, 7, 27, "Mixed"),
            (Kind.UNKNOWN_OPERATOR, 8, 12, "Mixed"),
        ],
    ),
    "multi_file": (
        255,
        [
            (Kind.UNKNOWN_OPERATOR, 5, 14, "Unknown"),
            (Kind.UNKNOWN_OPERATOR, 5, 24, "Unknown"),
            (Kind.SYNTAX, 6, 1, "Syntax"),
        ],
    ),
}


def test_every_fixture_has_an_expectation() -> None:
    assert set(CASES) == set(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_fixture_classification(case: str) -> None:
    exit_code, expected = EXPECTED[case]
    result = classify(case)
    assert sany_exit_code(case) == exit_code  # documents that exit 0 does not mean OK
    assert [(e.kind, e.line, e.col, e.module) for e in result.errors] == expected
    assert result.ok is (not expected)


def test_semantic_errors_exit_zero_but_are_not_ok() -> None:
    assert sany_exit_code("unknown_operator") == 0
    assert not classify("unknown_operator").ok


def test_unknown_operators_and_arity_for_stubbing() -> None:
    mixed = classify("mixed")
    assert unknown_operators(mixed) == ["Undefined1", "Undefined2"]
    assert arity_errors(mixed) == {"G": 1}
    assert arity_errors(classify("arity")) == {"F": 2}
    assert unknown_operators(classify("unknown_operator")) == ["Foo", "Bar"]
    assert unknown_operators(classify("ok")) == [] and arity_errors(classify("ok")) == {}


def test_names_of_missing_module_mismatch_and_redefinition() -> None:
    assert classify("missing_module").errors[0].name == "NoSuchModule"
    assert classify("name_mismatch").errors[0].name == "Other"
    assert classify("redefinition").errors[0].name == "Init"


def test_warnings_are_kept_but_do_not_fail() -> None:
    result = classify("warning_only")
    assert result.ok and not result.errors
    assert [(w.kind, w.name, w.line) for w in result.warnings] == [(Kind.REDEFINITION, "x", 4)]
    assert classify("redefinition").warnings[0].message.startswith(
        "Multiple declarations or definitions for symbol Init."
    )


def test_multi_line_messages_are_joined() -> None:
    error = classify("level_prime").errors[0]
    assert error.message == (
        "Level error in applying operator ': "
        "The level of argument 1 exceeds the maximum level allowed by the operator."
    )


@pytest.mark.parametrize(
    ("case", "summary"),
    [
        ("ok", "SANY found no errors"),
        (
            "syntax",
            'syntax error at line 6, col 1 of module Syntax: Encountered "====" at line 6, column 1 and token "+"',
        ),
        (
            "unknown_operator",
            "unknown operator error at line 5, col 14 of module Unknown: Unknown operator: `Foo'.",
        ),
        (
            "missing_module",
            "missing module error in module Missing: "
            "Cannot find source file for module NoSuchModule imported in module Missing.",
        ),
        (
            "lexical",
            'lexical error at line 4, col 15 of module Lex: Lexical error at line 4, column 15.  '
            'Encountered: ";" (59), after : ""',
        ),
    ],
)
def test_first_error_summary(case: str, summary: str) -> None:
    assert classify(case).first_error_summary() == summary


def test_tlc_embedded_sany_text_without_banner() -> None:
    text = (
        "Parsing file /x/Sem.tla\nParsing file /tmp/Naturals.tla\n"
        "Semantic processing of module Naturals\nSemantic processing of module Sem\n"
        "Semantic errors:\n\n*** Errors: 1\n\nline 5, col 14 to line 5, col 16 of module Sem\n\n"
        "Unknown operator: `Foo'.\n\n\n"
    )
    assert unknown_operators(classify_sany(text)) == ["Foo"]


@pytest.mark.parametrize("text", ["", "\n\n", "hello world", "Could not parse module X from file X.tla"])
def test_no_evidence_is_not_ok(text: str) -> None:
    result = classify_sany(text)
    assert not result.ok
    assert result.errors and result.errors[0].kind in (Kind.OTHER, Kind.SYNTAX)


def _check_invariants(result: SanyResult) -> None:
    assert isinstance(result, SanyResult)
    assert result.ok == (not result.errors)
    assert isinstance(result.first_error_summary(), str)
    unknown_operators(result)
    arity_errors(result)


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_never_raises_on_garbage(text: str) -> None:
    result = classify_sany(text)
    _check_invariants(result)
    if "Semantic processing of module" not in text:
        assert not result.ok


_LINES = [line for case in CASES for line in sany_output(case).splitlines()]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_LINES), max_size=40))
def test_never_raises_on_shuffled_real_lines(lines: list[str]) -> None:
    _check_invariants(classify_sany("\n".join(lines)))


@settings(max_examples=200)
@given(st.sampled_from(CASES), st.data())
def test_never_raises_on_truncated_real_output(case: str, data: st.DataObject) -> None:
    text = sany_output(case)
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    _check_invariants(classify_sany(text[:cut]))
