"""How sure the board is: intervals on every mean (seeded, so the same board gives the same
interval), pass^k beside pass@k, and the note when one sample per cell hides sampling variation."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sysmobench.leaderboard import board as report
from pytest_sysmobench.leaderboard.records import Board
from pytest_sysmobench.leaderboard.uncertainty import ONE_SAMPLE_NOTE, interval, seed_of
from pytest_sysmobench.record import PhaseRecord
from pytest_sysmobench.scoring import PHASES, PhaseResult, Status, pass_at_k, pass_hat_k

SCORES = st.floats(0, 1, allow_nan=False)
GROUPS = st.lists(st.lists(SCORES, min_size=1, max_size=5), min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(GROUPS, st.integers(0, 2**32))
def test_an_interval_holds_the_mean_within_the_values_and_is_the_same_every_time(groups: list[list[float]],
                                                                                 seed: int) -> None:
    low, high = interval(groups, seed, resamples=400)  # type: ignore[misc]
    values = [v for g in groups for v in g]
    mean = sum(values) / len(values)
    assert min(values) - 1e-6 <= low <= high <= max(values) + 1e-6  # rounded to 6 places
    assert (low, high) == interval(groups, seed, resamples=400)
    if len(set(values)) == 1:
        assert low == high == round(values[0], 6)
    assert low - 0.2 <= mean <= high + 0.2  # a percentile interval is near its mean, not far off


def test_intervals_cover_the_true_mean_about_as_often_as_they_say() -> None:
    """Tasks of a known pass rate each, five samples a task: over 200 simulated boards the 95%
    interval covers the true mean about 95% of the time (a percentile bootstrap over ten tasks
    runs a little short; never as short as a fixed +-0.02 would)."""
    rng = random.Random(7)
    covered = 0
    for trial in range(200):
        rates = [rng.random() for _ in range(10)]
        groups = [[float(rng.random() < p) for _ in range(5)] for p in rates]
        truth = sum(rates) / len(rates)
        low, high = interval(groups, seed_of("trial", str(trial)), resamples=600)  # type: ignore[misc]
        covered += low <= truth <= high
    assert 0.85 * 200 <= covered <= 200, covered


def test_pass_hat_k_is_all_k_pass_and_never_above_pass_at_k() -> None:
    assert pass_hat_k(5, 5, 3) == 1.0 and pass_hat_k(5, 2, 3) == 0.0 and pass_hat_k(4, 2, 2) == 1 / 6
    for n in range(1, 7):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_hat_k(n, c, k) <= pass_at_k(n, c, k) + 1e-12


def _records(model: str, task_samples: dict[str, list[float]]) -> list[dict]:
    out = []
    for task, scores in task_samples.items():
        for sample, score in enumerate(scores):
            for phase in PHASES:
                status = Status.PASSED if score == 1.0 else Status.FAILED
                out.append(PhaseRecord.of(task, model, sample, PhaseResult(phase, status, score, "x", {})).to_json())
    return out


def test_the_board_carries_intervals_and_pass_hat_k_and_says_when_one_sample_hides_variation() -> None:
    several = _records("m", {"spin": [1.0, 0.5, 1.0], "etcd": [0.25, 0.5, 0.0]})
    single = _records("one", {"spin": [1.0], "etcd": [0.5]})
    board = report.build(several + single, {}, "run-1")
    rows = {row.model: row for row in board.models}
    low, high = rows["m"].intervals.of("composite")  # type: ignore[union-attr,misc]
    assert low < rows["m"].composite < high  # type: ignore[operator]
    assert rows["m"].intervals.note is None and rows["one"].intervals.note == ONE_SAMPLE_NOTE  # type: ignore[union-attr]
    hat = rows["m"].pass_hat_k["syntax"]  # type: ignore[index]
    assert list(hat) == ["1", "2", "3"] and abs(hat["1"] - 1 / 3) < 1e-5 and abs(hat["2"] - 1 / 6) < 1e-5
    assert hat["3"] == 0.0 and rows["m"].pass_at_k["syntax"]["3"] == 0.5
    again = report.build(list(reversed(several + single)), {}, "run-2")
    assert [r.intervals for r in again.models] == [r.intervals for r in board.models]
    assert Board.from_json(board.to_json()) == board
    assert "95% intervals of m: composite" in report.intervals_line(rows["m"])  # type: ignore[operator]
    lines = report.models_csv(board).splitlines()
    assert lines[0].startswith("model,cells,scored_cells,composite,composite_low,composite_high,syntax,")
    assert any(line.startswith("one,") and ONE_SAMPLE_NOTE in line for line in lines)


def _cells(model: str, task_samples: dict[str, list[float]]) -> list:
    return list(report.build(_records(model, task_samples), {}, "r").cells)


def test_a_permutation_test_is_exact_where_small_and_the_same_every_time_where_not() -> None:
    from pytest_sysmobench.leaderboard.significance import compare_models

    (one,) = compare_models(_cells("a", {"spin": [0.0, 0.0, 0.0]}), _cells("b", {"spin": [1.0, 1.0, 1.0]}))
    assert (one.scope, one.effect, one.p_value, one.exact) == ("spin", 1.0, 0.1, True)  # 2 of C(6,3) = 20
    assert not one.differs and "not distinguishable" in one.describe("A", "B")
    # One sample a task on each side: the exact sign-flip test over tasks.
    a = {f"t{i}": [0.0] for i in range(6)}
    b = {f"t{i}": [1.0] for i in range(6)}
    overall = compare_models(_cells("a", a), _cells("b", b))[-1]
    assert (overall.scope, overall.p_value, overall.exact, overall.differs) == ("overall", 2 / 64, True, True)
    five = compare_models(_cells("a", dict(list(a.items())[:5])), _cells("b", dict(list(b.items())[:5])))[-1]
    assert five.p_value == 2 / 32 and not five.differs  # five tasks, one sample each, cannot tell at 0.05
    # Many samples: a seeded Monte Carlo draw, the same p-value run after run.
    many_a = {f"t{i}": [0.2 * (j % 5) for j in range(8)] for i in range(4)}
    many_b = {f"t{i}": [0.2 * ((j + 1) % 5) for j in range(8)] for i in range(4)}
    first = compare_models(_cells("a", many_a), _cells("b", many_b), ("m",))[-1]
    again = compare_models(_cells("a", many_a), _cells("b", many_b), ("m",))[-1]
    assert not first.exact and first.p_value == again.p_value


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["spin", "etcd", "mutex", "dqueue"]),
                       st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=3), min_size=1))
def test_a_model_never_differs_from_itself_and_identical_samples_are_one_behaviour(samples: dict[str, list[float]]) -> None:
    from pytest_sysmobench.leaderboard.significance import compare_models

    found = compare_models(_cells("m", samples), _cells("m", samples), ("m",))
    assert found and all(c.p_value == 1.0 and c.effect == 0.0 and not c.differs for c in found)
    for comparison in found[: len(samples)]:
        assert comparison.a[0].distinct == len(set(comparison.a[0].values))


def test_cli_compare_says_whether_two_boards_of_a_model_differ(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_sysmobench.cli import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(report.build(_records("m", {f"t{i}": [0.0, 0.0] for i in range(6)}), {}, "r1").to_json()))
    b.write_text(json.dumps(report.build(_records("m", {f"t{i}": [1.0, 1.0] for i in range(6)}), {}, "r2").to_json()))
    main(["leaderboard", "compare", str(a), str(b)])
    out = capsys.readouterr().out
    assert "m: overall: A 0.000 (12 samples, 6 distinct behaviours); B 1.000 (12 samples, 6 distinct behaviours): " \
           "effect +1.000 (95% +1.000 to +1.000), p = " in out and ": differ at 0.05" in out
    main(["leaderboard", "compare", str(a), str(b), "--markdown"])
    assert "**Do they differ?**" in capsys.readouterr().out


def test_the_page_ranks_models_the_samples_cannot_tell_apart_together() -> None:
    from pytest_sysmobench.leaderboard.html import rank_groups, render

    tasks = [f"t{i}" for i in range(6)]
    records = _records("best", {t: [1.0] for t in tasks}) + _records("low", {t: [0.25] for t in tasks}) \
        + _records("low-too", {t: [0.25] for t in tasks[:5]} | {"t5": [0.5]})
    board = report.build(records, {}, "r")
    assert rank_groups(board) == {"best": 1, "low-too": 2, "low": 2}
    page = render(board)
    assert "<th title=" in page and ">rank<" in page and ">95% interval<" in page


def test_boards_made_with_other_data_or_tools_are_not_compared_or_merged_unless_told(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_sysmobench.cli import main

    made = {"jar_sha256": "aaa", "library_sha256": "lib", "method": "direct", "tasks_sha256": {"spin": "s1", "etcd": "e1"}}
    records = _records("m", {"spin": [1.0], "etcd": [0.5]})
    paths = {}
    for name, provenance in (("same", made), ("edited", {**made, "tasks_sha256": {"spin": "s2", "etcd": "e1"}}),
                             ("jar", {**made, "jar_sha256": "bbb"}), ("bounds", {**made, "method": "traces"})):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(report.build(records, provenance, name).to_json()))
    assert main(["leaderboard", "compare", str(paths["same"]), str(paths["same"])]) == 0
    capsys.readouterr()
    for other, named in (("edited", "task spin's data (task files or traces): s1 against s2"),
                         ("jar", "jar_sha256: aaa against bbb"), ("bounds", "method: direct against traces")):
        assert main(["leaderboard", "compare", str(paths["same"]), str(paths[other])]) == 2
        assert named in capsys.readouterr().err
        assert main(["leaderboard", "merge", str(paths["same"]), str(paths[other]), "--out", str(tmp_path / "m.json")]) == 2
        assert named in capsys.readouterr().err and not (tmp_path / "m.json").exists()
    assert main(["leaderboard", "compare", str(paths["same"]), str(paths["jar"]), "--allow-mismatch"]) == 0
    assert "warning: made differently: jar_sha256" in capsys.readouterr().err


def test_a_run_board_records_what_decides_its_verdicts() -> None:
    from pytest_sysmobench.session import task_fingerprint

    root = Path(__file__).resolve().parents[1]
    spin = task_fingerprint(root / "tasks" / "spin", root / "data" / "traces" / "spin")
    assert spin == task_fingerprint(root / "tasks" / "spin", root / "data" / "traces" / "spin") and len(spin) == 16
    assert spin != task_fingerprint(root / "tasks" / "spin", root / "data" / "traces" / "mutex")


def test_a_board_of_stored_answers_says_how_sure_it_is_and_compares_the_same_every_time(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    """The reference and a seeded bug of spin, three samples each, scored for real: every mean has
    its interval (the samples are one behaviour each, so the intervals are points), and the
    comparison of the two, run twice, gives the same exact p-value: three samples a side of one
    task cannot show a difference at 0.05 (2 of C(6, 3) relabellings are as extreme)."""
    from projects import benchmark_project

    from pytest_sysmobench.cli import main

    benchmark_project(pytester, "spin")
    result = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models",
                                           "reference,mutant:acquire-ignores-lock", "--sysmobench-samples", "3")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the mutant fails its phases
    path = pytester.path / ".sysmobench" / "leaderboard.json"
    rows = {row["model"]: row for row in json.loads(path.read_text())["models"]}
    assert rows["reference"]["intervals"]["composite"] == [1.0, 1.0] and "note" not in rows["reference"]["intervals"]
    low, high = rows["mutant:acquire-ignores-lock"]["intervals"]["composite"]
    assert low == high == rows["mutant:acquire-ignores-lock"]["composite"] < 1.0
    outputs = []
    for _ in range(2):
        main(["leaderboard", "compare", str(path), str(path), "--as", "reference=mutant:acquire-ignores-lock"])
        outputs.append([line for line in capsys.readouterr().out.splitlines() if "p = " in line])
    assert outputs[0] == outputs[1] and len(outputs[0]) == 1
    assert "(3 samples, 1 distinct behaviours)" in outputs[0][0] and "p = 0.1000 (exact" in outputs[0][0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=4), min_size=1, max_size=5),
       st.sampled_from([-0.5, -0.25, 0.0, 0.25, 0.5]), st.integers(0, 2**32))
def test_the_effects_interval_covers_the_true_difference(samples: list[list[float]], shift: float, seed: int) -> None:
    """B's samples are A's, each moved by a known difference: whatever the samples and the seed,
    the effect's interval covers that difference (each resample of A and of B is drawn alike, so
    their difference is spread evenly about it)."""
    from pytest_sysmobench.leaderboard.significance import effect_interval

    low, high = effect_interval(samples, [[v + shift for v in s] for s in samples], seed, resamples=400)
    assert low - 1e-6 <= shift <= high + 1e-6
