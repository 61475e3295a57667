"""The CI gate: baselines, tolerances, compare/bless/merge, and items judged against a baseline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from pytest_sysmobench import load_tasks
from pytest_sysmobench.leaderboard import board as report
from pytest_sysmobench.leaderboard.baseline import (Baseline, BaselineError, Tolerance, bless, compare, counts_line, judge, left_out,
                                        markdown, regressions, scored)
from pytest_sysmobench.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "data" / "baselines" / "reference.json"
PHASES = ("syntax", "runtime", "conformance", "invariants")


def _board(scores: dict[tuple[str, str], float], run_id: str = "r1") -> dict[str, Any]:
    records = [{"task": task, "model": "m", "sample": 0, "phase": phase, "score": score,
                "status": "passed" if score == 1.0 else "failed", "reason": ""}
               for (task, phase), score in scores.items()]
    return report.build(records, {"jar_sha256": "a"}, run_id).to_json()


def test_tolerance_reads_one_number_or_phases_and_composite() -> None:
    assert Tolerance.parse("0.05").of("invariants") == 0.05 and Tolerance.parse("0.05").of("composite") == 0.05
    mixed = Tolerance.parse("p4=0.1, composite=0.02, syntax=0")
    assert (mixed.of("invariants"), mixed.of("composite"), mixed.of("runtime")) == (0.1, 0.02, 0.0)
    for bad in ("p9=0.1", "nan", "1.5", "p4", "p4=x"):
        with pytest.raises(BaselineError, match="--sysmobench-tolerance"):
            Tolerance.parse(bad)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_a_regression_is_exactly_a_drop_past_the_tolerance(before: float, after: float, tolerance: float) -> None:
    kind = judge(before, after, tolerance)
    assert (kind == "regression") == (after < before - tolerance - 1e-9)
    assert kind != "improvement" or after > before


def test_compare_names_every_changed_cell_and_markdown_reports_it() -> None:
    before = _board({("spin", p): 1.0 for p in PHASES})
    after = _board({**{("spin", p): 1.0 for p in PHASES}, ("spin", "invariants"): 0.5,
                    **{("etcd", p): 1.0 for p in PHASES}}, "r2")
    changes = compare(before, after, Tolerance.parse("0"))
    worse = regressions(changes)
    assert [(c.task, c.phase) for c in worse] == [("spin", "invariants"), ("spin", "composite")]
    assert {c.kind for c in changes if c.task == "etcd"} == {"new"}
    text = markdown(changes, Tolerance.parse("0"), "base.json", "now.json")
    assert "**2 regression(s)**" in text and "| spin/m | invariants | 1.00 | 0.50 | **regressed** |" in text
    assert not regressions(compare(before, after, Tolerance.parse("invariants=0.5,composite=0.2")))


def test_bless_refuses_an_interrupted_board_and_records_its_runs() -> None:
    board = _board({("spin", p): 1.0 for p in PHASES})
    assert bless(board).to_json()["blessed_from"] == ["r1"] and "tool_runs" not in bless(board).to_json()
    with pytest.raises(BaselineError, match="interrupted"):
        bless({**board, "interrupted": True})


def test_cli_compare_exits_1_on_a_regression_and_merge_keeps_the_latest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_board({("spin", p): 1.0 for p in PHASES})))
    b.write_text(json.dumps(_board({("spin", "invariants"): 0.25}, "r2")))
    assert cli(["leaderboard", "compare", str(a), str(b)]) == 1
    assert "spin/m syntax: not in this run" in capsys.readouterr().out, "a phase that did not run is no regression"
    merged = tmp_path / "m.json"
    assert cli(["leaderboard", "merge", str(a), str(b), "--out", str(merged)]) == 0
    assert cli(["leaderboard", "compare", str(a), str(merged), "--markdown"]) == 1
    out = capsys.readouterr().out
    assert "| spin/m | invariants | 1.00 | 0.25 | **regressed** |" in out
    assert cli(["leaderboard", "bless", str(merged), "--out", str(tmp_path / "base.json")]) == 0
    assert json.loads((tmp_path / "base.json").read_text())["blessed_from"] == ["r1", "r2"]
    assert cli(["leaderboard", "compare", str(tmp_path / "nope.json"), str(a)]) == 2


def test_the_committed_baseline_is_the_reference_at_full_score() -> None:
    board = json.loads(BASELINE.read_text())
    loaded = load_tasks(ROOT / "tasks")
    runnable, unavailable = {t.name for t in loaded.tasks}, {t.name for t in loaded.unavailable}
    assert {c["task"] for c in board["cells"]} == runnable | unavailable
    assert all(c["model"] == "reference" for c in board["cells"])
    assert all(c["composite"] == 1.0 for c in board["cells"] if c["task"] in runnable)
    # A task that cannot run here is in the board with no score, never as a 0.
    assert all(c["composite"] is None and {p["status"] for p in c["phases"].values()} == {"skipped"}
               for c in board["cells"] if c["task"] in unavailable)


def _unavailable(task: str, run_id: str = "r2", model: str = "m") -> dict[str, Any]:
    """A board where ``task`` could not run here (its system is unavailable offline)."""
    records = [{"task": task, "model": model, "sample": 0, "phase": p, "score": None, "status": "skipped",
                "reason": "unavailable offline: gone", "charged_to": "benchmark", "cause": "system_unavailable"}
               for p in PHASES]
    return report.build(records, {"jar_sha256": "a"}, run_id).to_json()


def test_the_gate_reads_the_charge_not_the_status() -> None:
    assert scored({"status": "inconclusive", "score": 0.5}) == 0.5  # a score is the spec's, whatever the status
    assert scored({"status": "failed", "score": None}) is None
    assert scored({"status": "skipped", "score": None, "charged_to": "spec"}) is None  # no score: nothing to compare
    assert scored({"status": "failed", "score": 0.5, "charged_to": "benchmark", "cause": "evaluator_failed"}) is None
    assert scored({"status": "passed", "score": 1.0, "charged_to": "spec", "cause": None}) == 1.0


def test_a_cell_the_baseline_scored_and_this_run_left_out_is_named_with_its_cause_never_a_pass() -> None:
    before = _board({("curp", p): 1.0 for p in PHASES})
    changes = compare(before, _unavailable("curp"), Tolerance.parse("0"))
    assert [(c.phase, c.kind, c.cause) for c in changes] == [(p, "left_out", "system_unavailable")
                                                              for p in (*PHASES, "composite")]
    assert not regressions(changes) and len(left_out(changes)) == 5
    assert changes[-1].describe(Tolerance.parse("0")) == (
        "curp/m composite: left out (system_unavailable), charged to the benchmark, not a pass of the spec: "
        "baseline 1.00, now - (tolerance 0)")
    assert counts_line(changes) == "0 regression(s), 0 improvement(s), 5 left out by the benchmark"
    text = markdown(changes, Tolerance.parse("0"), "base.json", "now.json")
    assert "5 left out by the benchmark (not a pass of the spec)" in text
    assert "| curp/m | composite | 1.00 | - | left out (system_unavailable) |" in text
    # The other way round a cell scored now and left out in the baseline is new, and left out both times is the same.
    assert {c.kind for c in compare(_unavailable("curp"), before, Tolerance.parse("0"))} == {"new"}
    assert {c.kind for c in compare(_unavailable("curp"), _unavailable("curp"), Tolerance.parse("0"))} == {"same"}


def test_a_baseline_from_before_charges_is_read_by_score_and_status() -> None:
    """The committed baseline has no charges: curp's skipped phases are left out there too, never a 0."""
    old = json.loads(BASELINE.read_text())
    base = Baseline(old, BASELINE)
    assert all(base.score("curp", "reference", 0, p) is None for p in (*PHASES, "composite"))
    assert {base.cause("curp", "reference", 0, p) for p in (*PHASES, "composite")} == {"system_unavailable"}
    assert base.cause("spin", "reference", 0, "composite") is None
    changes = compare(old, _unavailable("curp", model="reference"), Tolerance.parse("0"))
    assert {c.kind for c in changes if c.task == "curp"} == {"same"}


def test_cli_compare_names_what_was_left_out_and_does_not_fail_on_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_board({**{("curp", p): 1.0 for p in PHASES}, **{("spin", p): 1.0 for p in PHASES}})))
    b.write_text(json.dumps(report.merge(_board({("spin", p): 1.0 for p in PHASES}), _unavailable("curp")).to_json()))
    assert cli(["leaderboard", "compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "curp/m invariants: left out (system_unavailable), charged to the benchmark, not a pass of the spec" in out
    assert "0 regression(s), 0 improvement(s), 5 left out by the benchmark, 5 unchanged" in out


# ------------------------------------------------------------------ items against a baseline


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(ROOT / "tasks" / "spin", pytester.path / "tasks" / "spin")
    (pytester.path / "data" / "traces" / "spin").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "traces" / "spin" / "seed-1.ndjson", pytester.path / "data" / "traces" / "spin")
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    broken = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text().replace(
        "    /\\ pc[t] = \"spin\"\n    /\\ lock = FALSE\n", "    /\\ pc[t] = \"spin\"\n")
    specs = pytester.path / "specs" / "spin"
    specs.mkdir(parents=True)
    (specs / "Spin.tla").write_text(broken)
    for name in ("Spin.cfg", "mapping.yaml"):
        shutil.copy(ROOT / "tasks" / "spin" / "reference" / name, specs / name)
    return pytester


def _baseline_for(bench: pytest.Pytester, model: str, scores: dict[str, float], provenance: dict[str, str]) -> Path:
    """A blessed board for the spin cell of ``model``."""
    records = [{"task": "spin", "model": model, "sample": 0, "phase": p, "score": s,
                "status": "passed" if s == 1.0 else "failed", "reason": ""}
               for p, s in {"conformance": 1.0, **scores}.items()]
    path = bench.path / "baseline.json"
    path.write_text(json.dumps(bless(report.build(records, provenance, "blessed-run")).to_json()))
    return path


def test_a_score_below_the_baseline_fails_its_item_and_the_composite_fails_the_session(bench: pytest.Pytester) -> None:
    baseline = _baseline_for(bench, "replay:specs", {p: 1.0 for p in PHASES}, {"java_version": "1.0-other"})
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "replay:specs",
                                        "--sysmobench-baseline", str(baseline))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        # Acquire also takes a step the real lock cannot (P3), from where MutualExclusion breaks (P4).
        f"*conformance regressed against the baseline {baseline}: was 1.00, now 0.80 (tolerance 0)*Acquire*",
        f"*invariants regressed against the baseline {baseline}: was 1.00, now 0.*(tolerance 0)*MutualExclusion*",
        "*baseline*: 3 regression(s), 0 improvement(s)*",
        "*spin/replay:specs composite: regressed: baseline 1.00, now 0.8*",
        "*warning: scored with another toolchain than the baseline (java_version: baseline 1.0-other*",
    ])


def test_a_failure_the_baseline_already_had_is_expected_and_a_tolerance_absorbs_a_drop(bench: pytest.Pytester) -> None:
    known = _baseline_for(bench, "replay:specs", {"syntax": 1.0, "runtime": 1.0, "conformance": 0.8,
                                                  "invariants": 0.615385}, {})
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "replay:specs",
                                        "--sysmobench-baseline", str(known), "-rx")
    result.assert_outcomes(passed=2, xfailed=2)
    result.stdout.fnmatch_lines(["*invariants score 0.* (failed), as in the baseline (0.62)*"])
    assert result.ret == pytest.ExitCode.OK
    strict = _baseline_for(bench, "replay:specs", {p: 1.0 for p in PHASES}, {})
    tolerant = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "replay:specs",
                                          "--sysmobench-baseline", str(strict), "--sysmobench-tolerance",
                                          "p3=0.5,p4=0.5,composite=0.5")
    tolerant.assert_outcomes(passed=2, xfailed=2)
    assert tolerant.ret == pytest.ExitCode.OK


def test_a_gate_that_knows_noise_judges_the_model_not_each_cell(bench: pytest.Pytester) -> None:
    """One sample of one task below a perfect baseline: a permutation test cannot call one sample
    a drop (p = 1), so the significance rule passes the run, each lower cell listed and marked;
    the interval rule fails it (the baseline is above the run's interval) and says so."""
    baseline = _baseline_for(bench, "replay:specs", {p: 1.0 for p in PHASES}, {})
    args = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "replay:specs", "--sysmobench-baseline",
            str(baseline), "-rx")
    lenient = bench.runpytest_subprocess(*args, "--sysmobench-gate-rule", "significance")
    lenient.assert_outcomes(passed=2, xfailed=2)
    assert lenient.ret == pytest.ExitCode.OK
    lenient.stdout.fnmatch_lines([
        "*gate (significance rule): replay:specs: spin: *p = 1.0000 (exact*not distinguishable at 0.05: not a regression",
        "*conformance below the baseline*judged per model by the significance rule*",
    ])
    strict = bench.runpytest_subprocess(*args, "--sysmobench-gate-rule", "interval")
    strict.assert_outcomes(passed=2, xfailed=2)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["*gate (interval rule): replay:specs: composite 0.* (95% 0.*), baseline 1.000: "
                                 "a drop beyond the interval: regressed"])


def test_a_cell_left_out_now_is_listed_with_its_cause_and_does_not_fail_the_gate(bench: pytest.Pytester) -> None:
    """curp scored in the baseline (as if it had run there), unavailable here: listed, not a regression, not a pass."""
    shutil.copytree(ROOT / "tasks" / "curp", bench.path / "tasks" / "curp")
    records = [{"task": t, "model": "reference", "sample": 0, "phase": p, "score": 1.0, "status": "passed", "reason": ""}
               for t in ("spin", "curp") for p in PHASES]
    baseline = bench.path / "baseline.json"
    baseline.write_text(json.dumps(bless(report.build(records, {}, "blessed-run")).to_json()))
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-baseline", str(baseline))
    result.assert_outcomes(passed=4, skipped=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "*baseline*: 0 regression(s), 0 improvement(s), 5 left out by the benchmark",
        "*curp/reference composite: left out (system_unavailable), charged to the benchmark, not a pass of the spec: "
        "baseline 1.00, now -*",
        "reference: 1 scored, 1 left out (system_unavailable)",
    ])


@pytest.mark.parametrize("args, message", [
    (["--sysmobench-tolerance", "0.1"], "--sysmobench-tolerance needs --sysmobench-baseline"),
    (["--sysmobench-gate-rule", "interval"], "--sysmobench-gate-rule needs --sysmobench-baseline"),
    (["--sysmobench-baseline", "missing.json"], "cannot read"),
    (["--sysmobench-baseline", "baseline.json", "--sysmobench-tolerance", "p7=1"], "is not PHASE=VALUE"),
])
def test_a_bad_gate_is_a_usage_error(bench: pytest.Pytester, args: list[str], message: str) -> None:
    (bench.path / "baseline.json").write_text(json.dumps(_board({("spin", "syntax"): 1.0})))
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and message in result.stderr.str()


@pytest.mark.slow
def test_the_reference_specs_hold_the_committed_baseline(pytester: pytest.Pytester) -> None:
    """The CI gate itself: every task's reference, scored afresh, against data/baselines/reference.json."""
    for name in ("tasks", "benchmarks", "data"):  # without the harnesses' build products (hundreds of MB)
        shutil.copytree(ROOT / name, pytester.path / name, ignore=shutil.ignore_patterns("target", ".cache", "pkg"))
    result = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-baseline", str(BASELINE))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*baseline*: 0 regression(s), 0 improvement(s)*"])


def test_cli_compare_pairs_two_model_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One board with the reference and a model on the same task: --as puts them side by side."""
    records = [{"task": "spin", "model": model, "sample": 0, "phase": p, "score": score, "status": status,
                "reason": "", "charged_to": "spec", "cause": None}
               for model, score, status in (("reference", 1.0, "passed"), ("sonnet", 0.0, "failed"))
               for p in PHASES]
    board = tmp_path / "board.json"
    board.write_text(json.dumps(report.build(records, {"jar_sha256": "a"}, "r1").to_json()))
    assert cli(["leaderboard", "compare", str(board), str(board), "--as", "reference=sonnet"]) == 1
    out = capsys.readouterr().out
    assert "spin/sonnet syntax: regressed" in out and "5 regression(s)" in out
    assert cli(["leaderboard", "compare", str(board), str(board), "--as", "sonnet=sonnet"]) == 0
    assert cli(["leaderboard", "compare", str(board), str(board), "--as", "refrence=sonnet"]) == 2
    assert "the first board has no model 'refrence'; did you mean 'reference'?" in capsys.readouterr().err
    assert cli(["leaderboard", "compare", str(board), str(board), "--as", "reference"]) == 2
