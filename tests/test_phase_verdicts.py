"""How phase results are read from tool runs: P4 templates without a verdict, P2 coverage from
the BFS and the simulations, and the screen for untrusted mapping expressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from pytest_sysmobench import Status, load_task
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.phases.invariants import TemplateOutcome, template_verdict
from pytest_sysmobench.phases.runtime import coverage
from pytest_sysmobench.tla.expressions import ExpressionError, check_expression
from pytest_sysmobench.tla.messages import ActionCoverage, TlcResult, Verdict

ROOT = Path(__file__).resolve().parents[1]


def _outcome(name: str, status: str, states: int | None = 10) -> TemplateOutcome:
    reason = {"passed": "holds", "failed": f"{name} violated", "inconclusive": "budget reached"}[status]
    return TemplateOutcome(name, "safety", status, reason, states)


def test_every_template_counts_whatever_stopped_its_check() -> None:
    """No template drops out of the denominator: each one holds (on the explored part) or fails."""
    result = template_verdict([_outcome("A", "passed"), _outcome("B", "failed", 1234), _outcome("C", "failed")], {})
    assert result.status is Status.FAILED and result.score == pytest.approx(1 / 3)
    assert result.details["decided"] == 3 and result.details["states"]["B"] == 1234
    assert result.charged_to.value == "spec"


def test_templates_that_hold_within_the_work_bound_pass_and_say_so() -> None:
    bounded = _outcome("B", "passed")
    bounded.reason = "holds in the explored part: work bound reached (2000001 generated, 1458 distinct)"
    result = template_verdict([_outcome("A", "passed"), bounded], {"work_bound": {"generated": 2_000_000}})
    assert result.status is Status.PASSED and result.score == 1.0
    assert "1 within the work bound of 2000000 generated states" in result.reason


def test_a_run_that_misses_its_work_bound_mark_is_not_taken_for_a_bounded_one() -> None:
    """Only this run's mark says the work bound ended it: a spec printing the label does not."""
    from pytest_sysmobench.phases._work import bound_reached

    forged = TlcResult(Verdict.INCOMPLETE, "", print_lines=['<<"SYSMOforged", "work bound">>'])
    real = TlcResult(Verdict.INCOMPLETE, "", print_lines=['<<"SYSMOreal", "work bound">>'])
    assert not bound_reached(forged, "SYSMOreal") and bound_reached(real, "SYSMOreal")


def test_target_actions_the_spec_lacks_count_as_never_fired() -> None:
    score, details = coverage([], _run(Verdict.OK, Lock=(1, 1), Unlock=(1, 1)), missing=["TryLock"])
    assert details["not_in_spec"] == ["TryLock"] and score == pytest.approx(2 / 3)


def test_a_spec_operator_of_a_missing_actions_name_does_not_stand_in_for_it() -> None:
    """The canonical Lock is missing (its mapping names an operator the spec lacks); the spec's own
    operator called Lock is another action: both count."""
    score, details = coverage([], _run(Verdict.OK, Lock=(1, 1), Unlock=(1, 1)), missing=["Lock", "TryLock"])
    assert details["not_in_spec"] == ["Lock", "TryLock"] and score == pytest.approx(2 / 4)


def _run(verdict: Verdict, **actions: tuple[int, int]) -> TlcResult:
    return TlcResult(verdict, "", coverage={n: ActionCoverage(n, d, g) for n, (d, g) in actions.items()})


def test_an_action_only_the_bfs_reaches_counts_as_fired() -> None:
    bfs = _run(Verdict.INCOMPLETE, Restart=(3, 9), Deep=(1, 1), Never=(0, 0))
    sims = [_run(Verdict.OK, Restart=(0, 40), Deep=(0, 0), Never=(0, 0))]
    score, details = coverage(sims, bfs)
    assert details["covered"] == ["Deep", "Restart"] and details["never_fired"] == ["Never"]
    assert details["fired_in"] == {"Deep": ["bfs"], "Restart": ["bfs", "simulation"]}
    assert score == 2 / 3


def test_a_bfs_step_that_only_revisits_states_does_not_count() -> None:
    score, details = coverage([], _run(Verdict.OK, Stutter=(0, 12), Real=(2, 2)))
    assert details["never_fired"] == ["Stutter"] and score == 0.5


@given(st.text(max_size=300))
def test_the_expression_screen_accepts_or_refuses_never_crashes(text: str) -> None:
    try:
        checked = check_expression(text)
    except ExpressionError:
        return
    depth = 0
    outside_strings = checked
    assert "====" not in outside_strings and "(*" not in outside_strings.replace('"(*"', "")
    for char in checked:
        depth += char in "([{"
        depth -= char in ")]}"
    assert depth == 0 or '"' in checked


@given(st.lists(st.sampled_from(["x", "1", "+", "(", ")", "[", "]", "<<", ">>", "LET", "IN", "==", ",", " ", "\n",
                                 "f", "\\in", "|->", '"s"']), max_size=40))
def test_an_accepted_expression_can_never_open_a_definition(tokens: list[str]) -> None:
    text = " ".join(tokens)
    try:
        checked = check_expression(text)
    except ExpressionError:
        return
    if "==" in checked:
        assert "LET" in checked


def test_model_means_leave_out_phases_that_have_no_score() -> None:
    """An inconclusive P4 or a mapping error says nothing about the spec: not a 0 in the mean."""
    from pytest_sysmobench.leaderboard import board as report

    def record(task: str, phase: str, status: str, score: float | None) -> dict[str, object]:
        return {"task": task, "model": "m", "sample": 0, "phase": phase, "status": status, "score": score}

    records = [record(t, p, "passed", 1.0) for t in ("a", "b") for p in ("syntax", "runtime", "conformance")]
    records += [record("a", "invariants", "passed", 1.0), record("b", "invariants", "inconclusive", None)]
    records += [record("c", p, "not_evaluable", None) for p in ("syntax", "runtime", "conformance", "invariants")]
    board = report.build(records, {}, "run").to_json()
    row = board["models"][0]
    assert row["invariants"] == 1.0 and row["syntax"] == 1.0
    board_none = report.build([record("c", "invariants", "inconclusive", None)], {}, "run").to_json()
    assert board_none["models"][0]["invariants"] is None
    assert "-" in report.table(board_none).splitlines()[-1]


def test_an_unexpected_exception_in_a_phase_is_recorded_as_a_harness_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of ours (or RecursionError on a pathological input) ends as a recorded error, never a crash."""
    from pytest_sysmobench import cell as cell_module
    from pytest_sysmobench.sources import ReferenceSource

    def explode(_ctx: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(cell_module.CHECKS, "runtime", explode)
    with Scorer(tmp_path / "out", use_cache=False) as scorer:
        cell = scorer.cell(load_task(ROOT / "tasks" / "spin"), ReferenceSource())
        results = cell.evaluate()
    assert results["syntax"].status is Status.PASSED
    assert results["runtime"].status is Status.ERROR and "RecursionError" in results["runtime"].reason
    assert results["invariants"].status is Status.BLOCKED
    stored = json.loads((cell.run_dir / "result.json").read_text())
    assert stored["phases"]["runtime"]["status"] == "error"


def test_a_full_disk_loses_no_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_sysmobench import cell as cell_module
    from pytest_sysmobench.sources import ReferenceSource

    def no_space(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cell_module, "atomic_write_text", no_space)
    with Scorer(tmp_path / "out", use_cache=False) as scorer:
        cell = scorer.cell(load_task(ROOT / "tasks" / "spin"), ReferenceSource())
        results = cell.evaluate()
    assert results["syntax"].status is Status.PASSED and results["invariants"].status is Status.PASSED
    assert cell.write_errors and "No space left on device" in cell.write_errors[0]


@pytest.mark.parametrize("template, premise", [
    ("T == \\A t \\in Threads : pc[t] = \"try\" => pc[t] /= \"spinning\"", "\\E t \\in Threads : pc[t] = \"try\""),
    ("T == \\A i, j \\in S : (a[i] /\\ b[j]) => i = j", "\\E i, j \\in S : (a[i] /\\ b[j])"),
    ("T == \\A i \\in S : \\A n \\in 1..Len(l[i]) : l[i][n] > 0 => ok", "\\E i \\in S : \\E n \\in 1..Len(l[i]) : l[i][n] > 0"),
    ("T == \\A t \\in Threads : pc[t] = \"locked\" ~> pc[t] = \"idle\"", "\\E t \\in Threads : pc[t] = \"locked\""),
    ("T == (\\A t \\in Threads : pc[t] = \"waiting\") => ~locked", "(\\A t \\in Threads : pc[t] = \"waiting\")"),
    ("T == locked <=> \\E t \\in Threads : pc[t] = \"locked\"", None),
    ("T == [][\\A i \\in S : x'[i] >= x[i]]_x", None),
    ("T == \\E t \\in S : p => q", None),
])
def test_a_templates_premise_is_read_from_its_shape(template: str, premise: str | None) -> None:
    from pytest_sysmobench.tla.grammar import premise as premise_of

    assert premise_of(template) == premise


@given(st.text(max_size=200))
def test_reading_a_premise_never_raises(text: str) -> None:
    from pytest_sysmobench.tla.grammar import premise, referenced_names

    found = premise(f"T == {text}")
    assert found is None or isinstance(found, str)
    assert isinstance(referenced_names(text), frozenset)


TOGETHER_CASES = [(task, mutant) for task in ("spin", "mutex", "dqueue")
                  for mutant in [None, *(m.name for m in load_task(ROOT / "tasks" / task).mutants if m.phase == "conformance")]]


@pytest.mark.parametrize("task, mutant", TOGETHER_CASES, ids=[f"{t}-{m or 'reference'}" for t, m in TOGETHER_CASES])
def test_every_actions_windows_checked_in_one_run_give_each_actions_own_verdict(
        task: str, mutant: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """P3 checks the windows of every action in one TLC run; the verdict, the windows accepted
    and the first failing window (with the closest step) are what each action's run of its own
    gives."""
    from pytest_sysmobench.phases import conformance
    from pytest_sysmobench.sources import MutantSource, ReferenceSource

    source = MutantSource(mutant) if mutant else ReferenceSource()
    results = []
    for alone in (False, True):
        monkeypatch.setattr(conformance, "WINDOWS_TOGETHER", not alone)
        with Scorer(tmp_path / f"out{int(alone)}", traces_dir=ROOT / "data" / "traces") as scorer:
            cell = scorer.cell(load_task(ROOT / "tasks" / task), source)
            results.append(cell.result("conformance"))
            jobs = sorted(p.name for p in cell.run_dir.glob("conformance/windows*"))
        assert jobs == (sorted(f"windows-{a}" for a in results[-1].details["actions"]) if alone else ["windows"])
    together, alone_result = results
    assert (together.status, together.score, together.reason) == (alone_result.status, alone_result.score, alone_result.reason)
    assert together.details["actions"] == alone_result.details["actions"]
    assert (together.status is Status.PASSED) is (mutant is None)


def test_an_error_in_one_actions_step_leaves_the_others_to_their_own_runs(tmp_path: Path) -> None:
    """One run for every action ends at the first error; each action is then checked alone, so
    the error fails only the action it is in."""
    from pytest_sysmobench.sources import ReplaySource

    reference = ROOT / "tasks" / "spin" / "reference"
    mapping = (reference / "mapping.yaml").read_text()
    broken = mapping.replace("TryLock: {action: TryLock}", "TryLock: {action: TryLock, args: ['1 + \"one\"']}")
    assert broken != mapping
    folder = tmp_path / "specs" / "spin"
    folder.mkdir(parents=True)
    for name in ("Spin.tla", "Spin.cfg"):
        (folder / name).write_text((reference / name).read_text())
    (folder / "mapping.yaml").write_text(broken)
    with Scorer(tmp_path / "out", traces_dir=ROOT / "data" / "traces") as scorer:
        cell = scorer.cell(load_task(ROOT / "tasks" / "spin"), ReplaySource(tmp_path / "specs"))
        result = cell.result("conformance")
        jobs = sorted(p.name for p in cell.run_dir.glob("conformance/windows*"))
    actions = result.details["actions"]
    assert result.status is Status.FAILED, result.reason
    assert [a for a, d in actions.items() if d["score"] < 1.0] == ["TryLock"], result.reason
    assert "its mapped step cannot be checked" in actions["TryLock"]["error"]
    assert jobs == ["windows", *sorted(f"windows-{a}" for a in actions)]
