from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, strategies as st

from pytest_sysmobench.record import PhaseRecord
from pytest_sysmobench.leaderboard.board import build
from pytest_sysmobench.scoring import (WEIGHTS, Cause, Charge, PhaseResult, Status, TemplateVerdict, composite, gate,
                                      pass_at_k, template_score)

SCORES = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.dictionaries(st.sampled_from(list(WEIGHTS)), SCORES | st.none()))
def test_composite_is_the_weighted_sum_and_unknown_when_a_phase_has_no_score(
        scores: dict[str, float | None]) -> None:
    results = {p: PhaseResult(p, Status.FAILED if s is not None else Status.INCONCLUSIVE, s) for p, s in scores.items()}
    if len(scores) < len(WEIGHTS) or None in scores.values():
        assert composite(results) is None  # never a 0 standing in for what was not decided
        return
    expected = sum(WEIGHTS[p] * s for p, s in scores.items())
    assert math.isclose(composite(results), expected, abs_tol=1e-6)
    assert 0.0 <= composite(results) <= 1.0


def test_blocked_by_an_unscored_phase_has_no_score() -> None:
    unfinished = PhaseResult("syntax", Status.INCONCLUSIVE, None, "inconclusive: SANY did not finish")
    assert gate("runtime", [unfinished]).score is None
    assert gate("runtime", [PhaseResult("syntax", Status.FAILED, 0.5, "parse error")]).score == 0.0


def test_weights_are_the_canonical_ones() -> None:
    assert dict(WEIGHTS) == {"syntax": 0.15, "runtime": 0.15, "conformance": 0.35, "invariants": 0.35}
    full = {p: PhaseResult(p, Status.PASSED, 1.0) for p in WEIGHTS}
    assert composite(full) == 1.0


def test_gates() -> None:
    p1_bad = PhaseResult("syntax", Status.FAILED, 0.25, "parse error")
    assert gate("runtime", [p1_bad]).status is Status.BLOCKED
    p1 = PhaseResult("syntax", Status.PASSED, 1.0)
    zero = PhaseResult("runtime", Status.FAILED, 0.0, "", {"runtime_check": True})
    assert gate("invariants", [p1, zero]).status is Status.BLOCKED
    crashed = PhaseResult("runtime", Status.FAILED, 0.8, "eval error", {"runtime_check": False})
    assert "blocked by runtime" in gate("conformance", [p1, crashed]).reason
    partial = PhaseResult("runtime", Status.FAILED, 0.5, "", {"runtime_check": True})
    assert gate("invariants", [p1, partial]) is None
    assert gate("runtime", [p1]) is None


def test_scores_out_of_range_are_rejected() -> None:
    with pytest.raises(ValueError):
        PhaseResult("syntax", Status.PASSED, 1.5)
    with pytest.raises(ValueError):
        PhaseResult("nonsense", Status.PASSED, 1.0)


def _pass_at_k_by_enumeration(n: int, c: int, k: int) -> float:
    from itertools import combinations

    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(range(n), k))
    return sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_matches_enumeration(args: tuple[int, int, int]) -> None:
    n, c, k = args
    assert math.isclose(pass_at_k(n, c, k), _pass_at_k_by_enumeration(n, c, k), abs_tol=1e-9)


def test_result_json_round_trip() -> None:
    result = PhaseResult("invariants", Status.INCONCLUSIVE, 0.5, "budget", {"passed": 1})
    assert PhaseResult.from_json(result.to_json()) == result


RESULTS = st.builds(
    PhaseResult, st.sampled_from(list(WEIGHTS)), st.sampled_from(list(Status)), SCORES | st.none(),
    st.sampled_from(["", "why", "harness error: x"]), st.just({}), st.none() | st.sampled_from(list(Cause)))


@given(RESULTS)
def test_the_board_reads_a_record_with_the_charge_its_result_had(result: PhaseResult) -> None:
    record = PhaseRecord.of("spin", "m", 0, result).to_json()
    assert _charge_on_a_board(record) == (result.charged_to, result.cause)
    assert (result.charged_to is Charge.BENCHMARK) == (result.score is None) == (result.cause is not None)
    # Read as a record from before charges (no charged_to, no cause): the same charge, and for
    # the benchmark's, the cause that the status gives by default.
    old = {k: v for k, v in record.items() if k not in ("charged_to", "cause")}
    default = PhaseResult(result.phase, result.status, result.score, result.reason)
    assert _charge_on_a_board(old) == (default.charged_to, default.cause)


def _charge_on_a_board(record: dict[str, Any]) -> tuple[Charge, Cause | None]:
    """The charge of a record's phase on the board built from it, as a worker would send it."""
    (cell,) = build([record], {}, "run").cells
    return cell.phases[record["phase"]].charge


_FLAGS = st.lists(st.booleans(), min_size=1, max_size=16)  # defines, per template


@given(_FLAGS, st.data())
def test_breaking_a_defining_template_ranks_below_keeping_them_all(defines: list[bool], data: st.DataObject) -> None:
    """Whatever else holds: a spec that keeps every defining template scores above one that
    breaks any, on the same task."""
    if not any(defines):
        return
    n = len(defines)
    keeps = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    breaks = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keeps = [held or d for held, d in zip(keeps, defines)]
    victim = data.draw(st.sampled_from([i for i, d in enumerate(defines) if d]))
    breaks[victim] = False
    score = lambda held: template_score([TemplateVerdict(h, d) for h, d in zip(held, defines)])  # noqa: E731
    assert score(breaks) < score(keeps)
    assert 0.0 <= score(breaks) and score(keeps) <= 1.0


@given(st.lists(st.booleans(), min_size=1, max_size=16))
def test_without_defining_templates_p4_is_the_fraction_of_templates_held(held: list[bool]) -> None:
    score = template_score([TemplateVerdict(h) for h in held])
    assert score == pytest.approx(sum(held) / len(held), abs=1e-6)
    assert (score == 1.0) == all(held) and template_score([]) is None
