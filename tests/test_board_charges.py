"""Every phase of a board is charged to the spec or to the benchmark, and only the spec's count.

What the benchmark could not score (a phase with no score, or one not run) must not move any
mean, best of k or pass@k; what the spec could not do (a 0) must.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from pytest_sysmobench.leaderboard import board as report
from pytest_sysmobench.leaderboard import charges
from pytest_sysmobench.record import PhaseRecord
from pytest_sysmobench.scoring import Cause, PhaseResult, Status
from pytest_sysmobench.scoring import PHASES

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "data" / "baselines" / "reference.json"
TASKS = ("spin", "etcd", "mutex")
MODELS = ("a", "b")
#: The numbers of a model row that must only ever see the spec's cells.
ROW_NUMBERS = ("composite", *PHASES, "best_of_k", "pass_at_k", "scored_cells")
UNSCORED_STATUSES = ("error", "skipped", "inconclusive", "not_evaluable", "blocked")


def _record(task: str, model: str, sample: int, phase: str, status: str, score: float | None,
            reason: str = "", **extra: Any) -> dict[str, Any]:
    return {"task": task, "model": model, "sample": sample, "phase": phase, "status": status, "score": score,
            "reason": reason, **extra}


def _status_of(phase: str, score: float) -> str:
    return "passed" if score == 1.0 else ("blocked" if phase != "syntax" and score == 0.0 else "failed")


SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def spec_cells(draw: st.DrawFn, sample: int) -> list[dict[str, Any]]:
    """Four scored phases: a cell the spec is answerable for (sometimes written without a charge, as old boards were)."""
    task, model = draw(st.sampled_from(TASKS)), draw(st.sampled_from(MODELS))
    charged = draw(st.booleans())
    return [_record(task, model, sample, p, _status_of(p, s), s, **({"charged_to": "spec"} if charged else {}))
            for p in PHASES for s in [draw(SCORES)]]


@st.composite
def benchmark_cells(draw: st.DrawFn, sample: int) -> list[dict[str, Any]]:
    """Phases the benchmark could not score (or did not run): any status, any cause."""
    task, model = draw(st.sampled_from(TASKS)), draw(st.sampled_from((*MODELS, "only-left-out")))
    present = draw(st.lists(st.sampled_from(PHASES), unique=True, max_size=4))
    records = []
    for phase in present:
        cause = draw(st.none() | st.sampled_from([c.value for c in Cause]))
        extra = {"charged_to": "benchmark", "cause": cause} if cause else {}
        records.append(_record(task, model, sample, phase, draw(st.sampled_from(UNSCORED_STATUSES)), None, **extra))
    return records or [_record(task, model, sample, "syntax", "error", None, "harness error: the JVM died")]


def _cells(strategy: Any, first: int, max_size: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Cells with distinct sample numbers from ``first`` on (so that no two share a key)."""
    return st.integers(0, max_size).flatmap(
        lambda n: st.tuples(*[strategy(first + i) for i in range(n)]).map(lambda cells: [r for c in cells for r in c]))


def _numbers(board: dict[str, Any]) -> dict[str, Any]:
    rows = {m["model"]: {k: m[k] for k in ROW_NUMBERS} for m in board["models"]}
    groups = {(g["task"], g["model"]): (g["best_of_k"], g["pass_at_k"], g["scored_samples"]) for g in board["tasks"]}
    return {"rows": rows, "groups": groups, "scored_cells": board["scored_cells"]}


@settings(max_examples=150, deadline=None)
@given(_cells(spec_cells, 0, 6), _cells(benchmark_cells, 100, 6), st.randoms(use_true_random=False))
def test_cells_charged_to_the_benchmark_never_move_a_mean_best_of_k_or_pass_at_k(
        spec: list[dict[str, Any]], benchmark: list[dict[str, Any]], rng: random.Random) -> None:
    alone = report.build(spec, {}, "run").to_json()
    mixed = rng.sample([*spec, *benchmark], len(spec) + len(benchmark))
    together = report.build(mixed, {}, "run").to_json()
    before, after = _numbers(alone), _numbers(together)
    assert after["scored_cells"] == before["scored_cells"]
    for model, numbers in before["rows"].items():
        assert after["rows"][model] == numbers, model
    for key, numbers in before["groups"].items():
        assert after["groups"][key] == numbers, key
    added = {(r["task"], r["model"], r["sample"]) for r in benchmark}
    assert sum(together["left_out"].values()) == len(added)
    assert all(c["charged_to"] == "benchmark" and c["composite"] is None and c["cause"]
               for c in together["cells"] if (c["task"], c["model"], c["sample"]) in added)
    for row in together["models"]:
        assert row["unscored"] == sum(row["left_out"].values()) == row["cells"] - row["scored_cells"]
        if row["model"] not in before["rows"]:  # only left-out cells: nothing to take a mean of
            assert row["scored_cells"] == 0 and row["composite"] is None and row["best_of_k"] is None
            assert all(row[p] is None and row["pass_at_k"][p] == {} for p in PHASES)


def test_a_partial_run_counts_the_phases_it_ran_but_gives_no_composite() -> None:
    """-m p4: the P4 scores are means of their own; the cells have no composite (``not_run``)."""
    records = [_record("spin", "a", k, "invariants", "passed" if k else "failed", 1.0 if k else 0.5) for k in range(3)]
    board = report.build(records, {}, "run").to_json()
    (row,) = board["models"]
    assert row["invariants"] == pytest.approx(2.5 / 3) and row["syntax"] is None
    assert row["composite"] is None and row["left_out"] == {"not_run": 3}
    assert row["pass_at_k"]["invariants"]["1"] == pytest.approx(2 / 3) and row["pass_at_k"]["syntax"] == {}


def _row(board: dict[str, Any], model: str) -> dict[str, Any] | None:
    return next((m for m in board["models"] if m["model"] == model), None)


@settings(max_examples=150, deadline=None)
@given(_cells(spec_cells, 0, 6), _cells(benchmark_cells, 100, 3), st.sampled_from(MODELS), st.sampled_from(TASKS))
def test_a_cell_the_spec_scored_0_lowers_or_keeps_every_mean(
        spec: list[dict[str, Any]], benchmark: list[dict[str, Any]], model: str, task: str) -> None:
    """What the spec could not do (P1 failed, the rest blocked) is counted, as a 0, never left out."""
    before = report.build([*spec, *benchmark], {}, "run").to_json()
    zero = [_record(task, model, 50, p, "failed" if p == "syntax" else "blocked", 0.0) for p in PHASES]
    after = report.build([*spec, *benchmark, *zero], {}, "run").to_json()
    old, new = _row(before, model), _row(after, model)
    assert new is not None and new["scored_cells"] == (old["scored_cells"] if old else 0) + 1
    assert new["composite"] is not None and all(new[p] is not None for p in PHASES)
    assert new["left_out"] == (old["left_out"] if old else {})
    if old is not None and old["scored_cells"]:
        assert all(new[k] <= old[k] for k in ("composite", *PHASES))
        assert all(new["pass_at_k"][p]["1"] <= old["pass_at_k"][p]["1"] for p in PHASES)


@settings(max_examples=150, deadline=None)
@given(_cells(spec_cells, 0, 6).filter(bool), _cells(benchmark_cells, 100, 3), st.sampled_from(PHASES),
       st.randoms(use_true_random=False))
def test_a_phase_the_spec_scored_0_instead_lowers_or_keeps_the_means(
        spec: list[dict[str, Any]], benchmark: list[dict[str, Any]], phase: str, rng: random.Random) -> None:
    """A spec cannot gain by a phase at 0 (what an outcome the spec caused now scores)."""
    target = rng.choice([r for r in spec if r["phase"] == phase])
    zeroed = [{**r, "score": 0.0, "status": "failed"} if r is target else r for r in spec]
    before, after = (report.build([*spec, *benchmark], {}, "run").to_json(),
                     report.build([*zeroed, *benchmark], {}, "run").to_json())
    old, new = _row(before, target["model"]), _row(after, target["model"])
    assert old is not None and new is not None and new["scored_cells"] == old["scored_cells"]
    assert new["composite"] <= old["composite"] and new[phase] <= old[phase]


@pytest.mark.parametrize("status, score, reason, charge", [
    ("error", None, "harness error: the JVM died", ("benchmark", "harness_error")),
    ("skipped", None, "skipped: replay folder has no Spin.tla", ("benchmark", "no_spec")),
    ("skipped", None, "unavailable offline: no implementation of CURP", ("benchmark", "system_unavailable")),
    ("skipped", None, "skipped: no traces for task spin", ("benchmark", "no_traces")),
    ("blocked", None, "blocked by syntax: inconclusive", ("benchmark", "upstream_unscored")),
    ("inconclusive", None, "inconclusive: SANY did not finish", ("benchmark", "harness_error")),
    ("not_evaluable", None, "mapping error: no mapping", ("benchmark", "harness_error")),
    ("inconclusive", 0.5, "inconclusive: budget", ("spec", None)),
    ("not_evaluable", 0.0, "no mapping", ("spec", None)),
    ("blocked", 0.0, "blocked by syntax", ("spec", None)),
    ("failed", 0.25, "parse error", ("spec", None)),
    ("passed", 1.0, "", ("spec", None)),
])
def test_a_record_from_before_charges_is_charged_by_its_score_and_status(
        status: str, score: float | None, reason: str, charge: tuple[str, str | None]) -> None:
    assert charges.charge_of(score, status, reason) == charge
    # A record that says the spec's (an old default) with no cause changes nothing.
    assert charges.charge_of(score, status, reason, "spec", None) == charge


def test_a_recorded_charge_and_cause_are_kept_and_a_cause_that_is_none_is_derived() -> None:
    assert charges.charge_of(None, "skipped", "", "benchmark", "generation_failed") == ("benchmark", "generation_failed")
    assert charges.charge_of(None, "error", "", None, "not a cause") == ("benchmark", "harness_error")
    # A record that says the benchmark caused it is left out even if it carries a number.
    assert charges.charge_of(0.5, "failed", "", "benchmark", "evaluator_failed") == ("benchmark", "evaluator_failed")


def test_a_phase_not_run_leaves_the_cell_out_as_not_run_and_the_first_unscored_phase_names_the_cause() -> None:
    only_p4 = report.build([_record("spin", "m", 0, "invariants", "passed", 1.0)], {}, "run").to_json()
    (cell,) = only_p4["cells"]
    assert (cell["charged_to"], cell["cause"], cell["composite"]) == ("benchmark", "not_run", None)
    assert cell["phases"]["invariants"]["charged_to"] == "spec" and cell["phases"]["invariants"]["cause"] is None
    (row,) = only_p4["models"]
    assert (row["scored_cells"], row["left_out"], row["unscored"], row["invariants"]) == (0, {"not_run": 1}, 1, 1.0)
    records = [_record("spin", "m", 0, "syntax", "passed", 1.0), _record("spin", "m", 0, "runtime", "passed", 1.0),
               _record("spin", "m", 0, "conformance", "skipped", None, "skipped: no traces for task spin",
                       charged_to="benchmark", cause="no_traces"),
               _record("spin", "m", 0, "invariants", "blocked", None, "blocked by conformance", cause="upstream_unscored")]
    (cell,) = report.build(records, {}, "run").to_json()["cells"]
    assert (cell["charged_to"], cell["cause"]) == ("benchmark", "no_traces")


def _curp_beside_perfect_references() -> list[dict[str, Any]]:
    """What the default run gives: every runnable task's reference at 1.0 and curp's four items skipped."""
    runnable = ("dqueue", "etcd", "locksvc", "mutex", "raftkvs", "redisraft", "ringbuffer", "rwmutex", "spin", "zookeeper")
    records = [PhaseRecord.of(t, "reference", 0, PhaseResult(p, Status.PASSED, 1.0)).to_json()
               for t in runnable for p in PHASES]
    unavailable = "unavailable offline: No implementation of CURP"
    records += [PhaseRecord.of("curp", "reference", 0, PhaseResult(p, Status.SKIPPED, None, unavailable,
                                                                  cause=Cause.UNAVAILABLE)).to_json() for p in PHASES]
    return records


def test_a_task_unavailable_offline_is_left_out_of_pass_at_k_not_counted_as_a_failed_sample() -> None:
    board = report.build(_curp_beside_perfect_references(), {}, "run").to_json()
    (row,) = board["models"]
    assert row["pass_at_k"] == {p: {"1": 1.0} for p in PHASES}
    assert (row["composite"], row["best_of_k"], row["scored_cells"], row["cells"]) == (1.0, 1.0, 10, 11)
    assert row["left_out"] == {"system_unavailable": 1} and row["unscored"] == 1
    assert (board["scored_cells"], board["left_out"]) == (10, {"system_unavailable": 1})
    (curp,) = [g for g in board["tasks"] if g["task"] == "curp"]
    assert (curp["samples"], curp["scored_samples"], curp["best_of_k"]) == (1, 0, None)
    assert curp["pass_at_k"] == {p: {} for p in PHASES} and curp["left_out"] == {"system_unavailable": 1}
    (cell,) = [c for c in board["cells"] if c["task"] == "curp"]
    assert all(p["charged_to"] == "benchmark" and p["cause"] == "system_unavailable" for p in cell["phases"].values())
    assert report.charges_line(row) == "10 scored, 1 left out (system_unavailable)"


def test_the_committed_baseline_read_again_gives_pass_at_1_of_one() -> None:
    """The committed baseline (curp skipped, left out), and the same board written before
    charges (no charge, no cause), are both read with the same rule."""
    committed = json.loads(BASELINE.read_text())
    assert committed["models"][0]["pass_at_k"] == {p: {"1": 1.0} for p in PHASES}
    old = json.loads(json.dumps(committed))
    for cell in old["cells"]:
        for key in ("charged_to", "cause"):
            cell.pop(key, None)
            for phase in cell["phases"].values():
                phase.pop(key, None)
    assert "charged_to" not in json.dumps(old["cells"])
    board = report.merge(report.build([], {}, "empty"), old).to_json()
    (row,) = board["models"]
    assert row["pass_at_k"] == {p: {"1": 1.0} for p in PHASES}
    assert row["left_out"] == {"system_unavailable": 1} and row["scored_cells"] == row["cells"] - 1


def test_charges_survive_a_merge() -> None:
    first = report.build(_curp_beside_perfect_references(), {}, "run-1")
    later = [_record("spin", "reference", 0, "conformance", "error", None, "harness error: disk full",
                     charged_to="benchmark", cause="harness_error")]
    merged = report.merge(first, report.build(later, {}, "run-2")).to_json()
    spin = next(c for c in merged["cells"] if c["task"] == "spin")
    assert (spin["charged_to"], spin["cause"], spin["composite"]) == ("benchmark", "harness_error", None)
    assert spin["phases"]["conformance"]["cause"] == "harness_error"
    curp = next(c for c in merged["cells"] if c["task"] == "curp")
    assert curp["phases"]["syntax"]["cause"] == "system_unavailable"  # carried through, not derived again
    (row,) = merged["models"]
    assert row["left_out"] == {"harness_error": 1, "system_unavailable": 1} and row["scored_cells"] == 9
    assert report.charges_line(row) == "9 scored, 2 left out (harness_error 1, system_unavailable 1)"
    assert row["pass_at_k"]["invariants"] == {"1": 1.0}


def test_the_csv_ends_each_row_with_who_the_cell_is_charged_to_and_why() -> None:
    board = report.build(_curp_beside_perfect_references(), {}, "run")
    lines = report.cells_csv(board).splitlines()
    assert lines[0] == ("task,model,sample,syntax_score,syntax_status,runtime_score,runtime_status,conformance_score,"
                        "conformance_status,invariants_score,invariants_status,composite,charged_to,cause,"
                        "repair_status,repair_edits,repaired_composite,declared_repair")
    # Run without repair: its three columns are empty.
    assert lines[1] == "curp,reference,0,,skipped,,skipped,,skipped,,skipped,,benchmark,system_unavailable,,,,"
    assert lines[2] == "dqueue,reference,0,1.0,passed,1.0,passed,1.0,passed,1.0,passed,1.0,spec,,,,,"
    old = json.loads(BASELINE.read_text())  # a board without charges: derived, same columns
    assert report.cells_csv(old).splitlines()[1].endswith(",,benchmark,system_unavailable,,,,")


# ------------------------------------------------------------------ the terminal, in a real run


@pytest.fixture
def spin_and_curp(pytester: pytest.Pytester) -> pytest.Pytester:
    for task in ("spin", "curp"):
        shutil.copytree(ROOT / "tasks" / task, pytester.path / "tasks" / task)
    (pytester.path / "data" / "traces" / "spin").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "traces" / "spin" / "seed-1.ndjson", pytester.path / "data" / "traces" / "spin")
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    return pytester


def test_the_terminal_says_what_each_model_was_scored_on_and_what_was_left_out(spin_and_curp: pytest.Pytester) -> None:
    result = spin_and_curp.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, skipped=4)
    result.stdout.fnmatch_lines(["reference: 1 scored, 1 left out (system_unavailable)",
                                 "cells left out were charged to the benchmark*outside the composite mean and best-of-k*"])
    output = spin_and_curp.path / ".sysmobench"
    board = json.loads((output / "leaderboard.json").read_text())
    (row,) = board["models"]
    assert row["pass_at_k"] == {p: {"1": 1.0} for p in PHASES} and row["composite"] == 1.0
    assert (output / "leaderboard.csv").read_text().splitlines()[1].endswith(",benchmark,system_unavailable,,,,")
    assert "benchmark: system_unavailable" in (output / "leaderboard.html").read_text()

    only_p1 = spin_and_curp.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-m", "p1")
    only_p1.stdout.fnmatch_lines(["reference: 0 scored, 2 left out (not_run 1, system_unavailable 1)"])
    merged = json.loads((output / "leaderboard.json").read_text())
    assert merged["models"][0]["left_out"] == {"system_unavailable": 1}  # the merged board has every phase again
    run = json.loads((output / "runs" / merged["run_id"] / "leaderboard.json").read_text())
    assert run["models"][0]["syntax"] == 1.0 and run["models"][0]["composite"] is None  # P1 alone: its mean, no composite
