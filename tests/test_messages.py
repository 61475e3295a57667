"""TLC -tool output parsing and classification against real TLC 2.15 runs.

Every case under tests/data/tool_output/tlc/<case>/ holds the tiny spec, the
TLC arguments (args.txt), the verbatim output and the exit code; capture.sh
regenerates them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sysmobench.tla.messages import (
    ActionCoverage,
    Location,
    Message,
    TlcResult,
    Verdict,
    classify_tlc,
    parse_messages,
    parse_tool_output,
    walk,
)
from pytest_sysmobench.tla.sany import SanyErrorKind
from pytest_sysmobench.tla.values import ModelValue, Record, TlaFunction

TLC_DATA = Path(__file__).parent / "data" / "tool_output" / "tlc"
CASES = sorted(path.name for path in TLC_DATA.iterdir() if (path / "output.txt").is_file())


def tlc_output(case: str) -> str:
    return (TLC_DATA / case / "output.txt").read_text()


def tlc_exit_code(case: str) -> int:
    return int((TLC_DATA / case / "exit_code.txt").read_text())


def run(case: str) -> TlcResult:
    """Classify a captured run exactly as the harness would have seen it."""
    timed_out = (TLC_DATA / case / "timeout_seconds.txt").exists()
    return classify_tlc(tlc_output(case), tlc_exit_code(case), timed_out=timed_out)


V = Verdict
# case -> (exit code, verdict, deciding message code, summary)
EXPECTED: dict[str, tuple[int, Verdict, int | None, str]] = {
    "success": (0, V.OK, None, "no error found: 7 states generated, 6 distinct, depth 6"),
    "dfid": (0, V.OK, None, "no error found: 22 states generated, 6 distinct"),
    "bfs_coverage": (0, V.OK, None, "no error found: 5 states generated, 3 distinct, depth 2"),
    "coverage_unnamed": (0, V.OK, None, "no error found: 14 states generated, 5 distinct, depth 3"),
    "simulate_coverage": (0, V.OK, None, "simulation finished without error: 201 states generated"),
    "simulate_coverage_unnamed": (
        0, V.OK, None, "simulation finished without error: 51 states generated"
    ),
    "init_empty": (0, V.VACUOUS, None, "vacuous: the initial predicate has no satisfying state"),
    "simulate_init_empty": (
        255, V.VACUOUS, 2118, "vacuous: the initial predicate has no satisfying state"
    ),
    "stop_after": (0, V.INCOMPLETE, None, "incomplete: stopped with "),
    "timeout": (137, V.TIMEOUT, None, "timed out before TLC reported any states"),
    "invariant_init": (12, V.INVARIANT_VIOLATION, 2107, "invariant Small violated in the initial state"),
    "value_shapes": (12, V.INVARIANT_VIOLATION, 2107, "invariant Inv violated in the initial state"),
    "invariant_later": (
        12, V.INVARIANT_VIOLATION, 2110, "invariant MutualExclusion violated after 2 steps (3 states)"
    ),
    "invariant_values": (12, V.INVARIANT_VIOLATION, 2110, "invariant Inv violated after 2 steps (3 states)"),
    "simulate_invariant": (
        12, V.INVARIANT_VIOLATION, 2110, "invariant MutualExclusion violated after 2 steps (3 states)"
    ),
    "action_property": (
        13, V.ACTION_PROPERTY_VIOLATION, 2112, "action property Monotone violated after 3 steps (4 states)"
    ),
    "liveness_loop": (
        13,
        V.LIVENESS_VIOLATION,
        2116,
        "temporal property violated: counterexample of 3 states, looping back to state 2",
    ),
    "liveness_stutter": (
        13,
        V.LIVENESS_VIOLATION,
        2116,
        "temporal property violated: counterexample of 2 states, then stuttering forever",
    ),
    "deadlock": (11, V.DEADLOCK, 2114, "deadlock reached after 3 steps (4 states)"),
    "assert_failed": (
        75,
        V.ASSERT_FAILED,
        2132,
        "assertion failed at line 5, col 23 of module Asrt: The first argument of Assert evaluated "
        'to FALSE; the second argument was: "x too big"',
    ),
    "eval_nonfunction": (
        75,
        V.EVAL_ERROR,
        1000,
        "evaluation error at line 5, col 14 of module EvalErr: "
        "A non-function (an integer) was applied as a function.",
    ),
    "eval_domain": (
        75,
        V.EVAL_ERROR,
        1000,
        "evaluation error at line 5, col 30 of module Dom: "
        "Attempted to apply tuple <<2, 2>> to integer 3 which is out of domain.",
    ),
    "eval_type": (
        75,
        V.EVAL_ERROR,
        1000,
        "evaluation error at line 5, col 14 of module TypeErr: Attempted to apply the operator "
        "overridden by the Java method public static tlc2.value.impl.IntValue "
        "tlc2.module.Naturals.Plus(tlc2.value.impl.IntValue,tlc2.value.impl.IntValue), but it "
        "produced the following error: Cannot cast tlc2.value.impl.StringValue to "
        "tlc2.value.impl.IntValue",
    ),
    "eval_divzero": (
        75,
        V.EVAL_ERROR,
        1000,
        "evaluation error at line 5, col 15 of module Div: The second argument of \\div is 0.",
    ),
    "eval_invariant_init": (
        75,
        V.EVAL_ERROR,
        2102,
        "evaluation error at line 6, col 11 of module InvEval: "
        "A non-function (an integer) was applied as a function.",
    ),
    "property_eval_error": (
        0,
        V.EVAL_ERROR,
        2102,
        "evaluation error at line 7, col 11 of module PropErr: "
        "A non-function (an integer) was applied as a function.",
    ),
    "unassigned": (
        75,
        V.EVAL_ERROR,
        2109,
        "evaluation error at line 5, col 9 of module Unas: Successor state is not completely "
        "specified by the next-state action. The following variable is not assigned: y.",
    ),
    "assume_false": (10, V.ASSUMPTION_FALSE, 2104, "assumption at line 4, col 8 of module Asm is false"),
    "parse_error": (
        150,
        V.PARSE_ERROR,
        3002,
        'parse error: syntax error at line 6, col 1 of module Syn: Encountered "====" at line 6, '
        'column 1 and token "+"',
    ),
    "semantic_error": (
        150,
        V.PARSE_ERROR,
        3002,
        "parse error: unknown operator error at line 5, col 14 of module Sem: Unknown operator: `Foo'.",
    ),
    "constant_unassigned": (
        151,
        V.CONFIG_ERROR,
        2222,
        "configuration error: The constant parameter N is not assigned a value by the configuration file.",
    ),
    "undefined_invariant": (
        151,
        V.CONFIG_ERROR,
        2229,
        "configuration error: The invariant Nope specified in the configuration file is not defined "
        "in the specification.",
    ),
    "cfg_missing": (
        255,
        V.CONFIG_ERROR,
        5001,
        "configuration error: TLC encountered the following error when trying to read the "
        "configuration file Missing.cfg: File not found.",
    ),
    "cfg_syntax": (
        255,
        V.CONFIG_ERROR,
        5006,
        "configuration error: TLC found an error in the configuration file at line 3 "
        "It was expecting a keyword, but did not find it.",
    ),
    "usage_error": (
        1,
        V.USAGE_ERROR,
        1102,
        "bad TLC command line: Error: worker number required. But encountered auto",
    ),
}


def test_every_fixture_has_an_expectation() -> None:
    assert set(CASES) == set(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_fixture_verdict_and_summary(case: str) -> None:
    exit_code, verdict, error_code, summary = EXPECTED[case]
    result = run(case)
    assert tlc_exit_code(case) == exit_code
    assert result.verdict is verdict
    assert result.error_code == error_code
    assert result.exit_code == exit_code
    assert result.summary().startswith(summary)
    if verdict is not V.INCOMPLETE:
        assert result.summary() == summary


# ---------------------------------------------------------------------------
# The message tree


def test_messages_nest_after_colon() -> None:
    general = next(m for m in parse_messages(tlc_output("eval_type")) if m.code == 1000)
    assert general.severity == 1
    assert general.text.endswith("The exception was a java.lang.RuntimeException\n:")
    assert [(c.code, c.severity) for c in general.children] == [(2154, 0)]
    assert general.children[0].text.endswith("Cannot cast tlc2.value.impl.StringValue to tlc2.value.impl.IntValue")
    assert "Cannot cast" in general.full_text()


def test_walk_is_output_order() -> None:
    codes = [m.code for m in walk(parse_messages(tlc_output("assert_failed")))]
    assert codes.index(1000) + 1 == codes.index(2132) < codes.index(2103)


def test_raw_lines_split_into_sany_and_prints() -> None:
    tool = parse_tool_output(tlc_output("success"))
    assert tool.print_lines == [f'<<"inc", {i}>>' for i in range(5)]
    assert any(line.startswith("Parsing file") for line in tool.sany_lines)
    assert "Semantic processing of module Counter" in tool.sany_lines
    assert set(tool.print_lines) | set(tool.sany_lines) <= set(tool.raw_lines)
    parse = parse_tool_output(tlc_output("parse_error"))
    assert "***Parse Error***" in parse.sany_lines and parse.print_lines == []


def test_text_before_a_start_marker_is_a_raw_line() -> None:
    output = "hello @!@!@STARTMSG 2262:0 @!@!@\nTLC2\n@!@!@ENDMSG 2262 @!@!@\nafter\n"
    tool = parse_tool_output(output)
    assert tool.raw_lines == ["hello ", "after"]
    assert [(m.code, m.text) for m in tool.messages] == [(2262, "TLC2")]


def test_truncated_and_unbalanced_markers() -> None:
    tool = parse_tool_output("@!@!@STARTMSG 1000:1 @!@!@\nboom: @!@!@STARTMSG 2132:0 @!@!@\nhalf")
    assert tool.messages == [Message(1000, 1, "boom:", [Message(2132, 0, "half", [])])]
    stray = parse_tool_output("@!@!@ENDMSG 2186 @!@!@\nx\n")
    assert stray.messages == [] and stray.raw_lines == ["x"]


def test_absurd_nesting_is_bounded() -> None:
    output = "@!@!@STARTMSG 1000:1 @!@!@\n" * 5000 + "x"
    result = classify_tlc(output, 75)
    assert result.verdict is V.EVAL_ERROR
    depth, message = 0, parse_messages(output)[0]
    while message.children:
        depth, message = depth + 1, message.children[0]
    assert depth < 20


def test_windows_line_endings() -> None:
    result = classify_tlc(tlc_output("success").replace("\n", "\r\n"), 0)
    assert result.verdict is V.OK and result.distinct_states == 6


# ---------------------------------------------------------------------------
# Traces


def test_trace_of_invariant_violation() -> None:
    result = run("invariant_later")
    assert result.violated == "MutualExclusion"
    assert [(s.index, s.action) for s in result.trace] == [(1, None), (2, "Acquire"), (3, "Acquire")]
    assert result.trace[1].location == Location(6, 15, "Mutex", 6, 77)
    p1, p2 = ModelValue("p1"), ModelValue("p2")
    assert result.trace[-1].values == {"lock": True, "pc": TlaFunction({p1: "cs", p2: "cs"})}
    assert result.trace[0].raw.startswith("1: <Initial predicate>")


def test_trace_of_initial_state_violation_comes_from_the_message() -> None:
    result = run("invariant_init")
    assert len(result.trace) == 1
    assert result.trace[0].values == {"x": 3, "y": "a"}
    assert run("eval_invariant_init").trace[0].values == {"x": 0}


def test_single_variable_states_have_no_conjunct_prefix() -> None:
    assert [s.values for s in run("deadlock").trace] == [{"x": i} for i in range(4)]


def test_liveness_back_to_state() -> None:
    trace = run("liveness_loop").trace
    last = trace[-1]
    assert (last.index, last.back_to, last.action, last.values) == (4, 2, "Acquire", None)
    assert last.location == Location(7, 15, "Spin", 7, 86)
    assert not any(s.stuttering for s in trace)


def test_liveness_stuttering() -> None:
    last = run("liveness_stutter").trace[-1]
    assert (last.index, last.stuttering, last.values, last.back_to) == (3, True, None, None)


def test_unassigned_variable_is_printed_as_null() -> None:
    assert run("unassigned").trace[-1].values == {"x": 1, "y": ModelValue("null")}


def test_trace_values_of_every_shape() -> None:
    state = run("invariant_values").trace[2].values
    assert state is not None
    procs = [ModelValue(p) for p in ("p1", "p2", "p3")]
    assert state["str"] == 'quote" back\\ tab\t nl\n end'
    assert state["n"] == -1
    assert state["s"] == frozenset({1, 2, 3})
    assert state["rec"] == Record({"a": 1, "b": "x", "c": (True, False)})
    assert state["fn"] == TlaFunction({p: frozenset({-3, -2}) for p in procs})
    assert state["seq"] == (
        Record({"k": -3, "v": frozenset(procs)}),
        Record({"k": -2, "v": frozenset(procs)}),
    )
    big = state["big"]
    assert isinstance(big, tuple) and len(big) == 12
    assert big[11] == Record(
        {"id": 12, "name": "some longer text here", "tags": frozenset({"alpha", "beta", "gamma"}), "ok": True}
    )


def test_tlc_normalised_value_shapes() -> None:
    state = run("value_shapes").trace[0].values
    assert state == {
        "a": frozenset({1, 2, 3}),
        "b": frozenset({frozenset(), frozenset({1}), frozenset({2}), frozenset({1, 2})}),
        "c": frozenset({(3, 3)}),
        "d": frozenset({Record({"k": 1})}),
        "e": Record({"a": 1, "b": 1}),
        "f": "h\u00e9llo \u00fcn\u00ef",
        "g": TlaFunction({2: 2, 3: 3}),
        "h": (frozenset(), (), (), 0, frozenset({-5, -4, -3})),
    }


def test_unreadable_state_keeps_raw_and_never_raises() -> None:
    output = tlc_output("deadlock").replace("x = 2\n", "x = <<2 ???\n")
    result = classify_tlc(output, 11)
    assert result.verdict is V.DEADLOCK
    assert result.trace[2].values is None
    assert "<<2 ???" in result.trace[2].raw
    assert result.trace[3].values == {"x": 3}


# ---------------------------------------------------------------------------
# Coverage and statistics


def test_bfs_coverage_of_named_actions() -> None:
    result = run("bfs_coverage")
    assert result.coverage == {
        "Acquire": ActionCoverage("Acquire", 2, 2, (Location(6, 1, "Lock", 6, 10),)),
        "Release": ActionCoverage("Release", 0, 2, (Location(7, 1, "Lock", 7, 10),)),
        "Never": ActionCoverage("Never", 0, 0, (Location(8, 1, "Lock", 8, 5),)),
    }
    assert result.init_coverage == ActionCoverage("Init", 1, 1, (Location(5, 1, "Lock", 5, 4),))


def test_simulate_coverage_counts_only_generated() -> None:
    result = run("simulate_coverage")
    assert result.mode == "simulate"
    assert {name: (c.distinct, c.generated) for name, c in result.coverage.items()} == {
        "Acquire": (0, 100),
        "Release": (0, 100),
        "Never": (0, 0),
    }
    assert (result.states_generated, result.distinct_states, result.states_left) == (201, None, None)


def test_unnamed_disjuncts_are_actions_of_their_own_named_by_their_place() -> None:
    bfs = run("coverage_unnamed").coverage
    first, second = bfs["Next at line 6, col 12"], bfs["Next at line 7, col 12"]
    assert (first.distinct, first.generated, second.distinct, second.generated) == (2, 4, 2, 4)
    assert first.locations == (Location(6, 12, "Pm", 6, 30),) and second.locations == (Location(7, 12, "Pm", 7, 31),)
    assert (bfs["Step"].distinct, bfs["Step"].generated) == (0, 5)
    assert "Next" not in bfs
    simulate = run("simulate_coverage_unnamed").coverage
    assert (simulate["Next at line 6, col 12"].generated, simulate["Next at line 7, col 12"].generated,
            simulate["Step"].generated) == (19, 12, 19)


@pytest.mark.parametrize(
    ("case", "stats"),
    [
        ("success", (7, 6, 0, 6)),
        ("dfid", (22, 6, None, None)),
        ("invariant_later", (5, 4, 1, 3)),
        ("init_empty", (0, 0, 0, 1)),
        ("simulate_invariant", (59, None, None, None)),
        ("assume_false", (None, None, None, None)),
    ],
)
def test_statistics(case: str, stats: tuple[int | None, ...]) -> None:
    result = run(case)
    assert (result.states_generated, result.distinct_states, result.states_left, result.depth) == stats


def test_stop_after_leaves_states_on_the_queue() -> None:
    result = run("stop_after")
    assert result.exit_code == 0
    assert result.states_left and result.states_left > 0
    assert result.distinct_states and result.distinct_states > 1000


def test_modes_and_warnings() -> None:
    assert (run("success").mode, run("dfid").mode, run("simulate_coverage").mode) == ("bfs", "dfid", "simulate")
    assert run("success").warnings == [
        'Please run the Java VM which executes TLC with a throughput optimized garbage collector by '
        'passing the "-XX:+UseParallelGC" property.'
    ]


def test_eval_error_positions_and_parse_error_details() -> None:
    assert run("eval_domain").positions[0] == Location(5, 9, "Dom", 5, 42)
    assert run("eval_domain").positions[-1] == Location(5, 30, "Dom", 5, 37)
    sany = run("semantic_error").sany
    assert sany is not None and sany.errors[0].kind is SanyErrorKind.UNKNOWN_OPERATOR
    assert run("parse_error").location == Location(6, 1, "Syn")


# ---------------------------------------------------------------------------
# Timeouts, truncation and exit-code cross-checks


def _cut_before(case: str, marker: str) -> str:
    output = tlc_output(case)
    return output[: output.index(marker)]


def test_timeout_keeps_stats_and_coverage() -> None:
    output = _cut_before("bfs_coverage", "@!@!@STARTMSG 2186")
    result = classify_tlc(output, None, timed_out=True)
    assert result.verdict is V.TIMEOUT
    assert (result.states_generated, result.distinct_states) == (5, 3)
    assert result.coverage["Acquire"].generated == 2
    assert result.summary() == "timed out after 5 states generated, 3 distinct, depth 2"


def test_timeout_after_a_violation_keeps_the_violation() -> None:
    output = _cut_before("invariant_later", "@!@!@STARTMSG 2200")
    result = classify_tlc(output, None, timed_out=True)
    assert result.verdict is V.INVARIANT_VIOLATION and result.timed_out


def test_truncated_without_completion_is_unknown() -> None:
    result = classify_tlc(_cut_before("success", "@!@!@STARTMSG 2193"), None)
    assert result.verdict is V.UNKNOWN
    assert result.print_lines  # what was printed is still there


def test_exit_code_cross_check() -> None:
    result = classify_tlc(tlc_output("success"), 12)
    assert result.verdict is V.UNKNOWN
    assert "exited with code 12 (safety violation)" in result.summary()


@pytest.mark.parametrize(("exit_code", "verdict"), [(150, V.PARSE_ERROR), (151, V.CONFIG_ERROR), (None, V.UNKNOWN)])
def test_exit_code_alone(exit_code: int | None, verdict: Verdict) -> None:
    assert classify_tlc("", exit_code).verdict is verdict


# ---------------------------------------------------------------------------
# Robustness

_MARKERS = [
    "@!@!@STARTMSG 1000:1 @!@!@\n",
    "@!@!@STARTMSG 2217:4 @!@!@\n",
    "@!@!@STARTMSG 2772:0 @!@!@\n",
    "@!@!@STARTMSG 2199:0 @!@!@\n",
    "@!@!@STARTMSG 2193:0 @!@!@\n",
    "@!@!@STARTMSG 2122:4 @!@!@\n",
    "@!@!@STARTMSG 3002:1 @!@!@\n",
    "@!@!@ENDMSG 1000 @!@!@\n",
    "@!@!@ENDMSG 2217 @!@!@\n",
    "@!@!@ENDMSG 2186 @!@!@\n",
    "1: <Initial predicate>\n",
    "2: Back to state: <A line 1, col 1 to line 1, col 2 of module M>\n",
    "/\\ x = {1, <<2\n",
    "<A line 1, col 1 to line 1, col 2 of module M>: 3:-1\n",
    "-1 states generated, x distinct states found, 9,9 states left on queue.\n",
    "@!@!@STARTMSG 2200:0 @!@!@\n, states generated, -, distinct states found\n",
    ": ",
    "garbage",
    "\n",
]


def _check(result: TlcResult) -> None:
    assert isinstance(result.verdict, Verdict)
    assert isinstance(result.summary(), str)


@settings(max_examples=300)
@given(st.text(max_size=400), st.one_of(st.none(), st.integers(-300, 300)), st.booleans())
def test_never_raises_on_random_text(text: str, exit_code: int | None, timed_out: bool) -> None:
    result = classify_tlc(text, exit_code, timed_out)
    _check(result)
    if "@!@!@" not in text and exit_code not in (150, 151):
        assert result.verdict in (V.UNKNOWN, V.TIMEOUT)


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_MARKERS), max_size=40), st.booleans())
def test_never_raises_on_marker_soup(parts: list[str], timed_out: bool) -> None:
    _check(classify_tlc("".join(parts), None, timed_out))


@settings(max_examples=300)
@given(st.sampled_from(CASES), st.data())
def test_never_raises_on_cut_or_spliced_real_output(case: str, data: st.DataObject) -> None:
    text = tlc_output(case)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    other = tlc_output(data.draw(st.sampled_from(CASES)))
    _check(classify_tlc(text[:start] + other[end % (len(other) + 1) :], tlc_exit_code(case)))
    _check(classify_tlc(text[start:end], None, timed_out=True))
