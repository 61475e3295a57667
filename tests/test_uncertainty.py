"""How sure the board is: intervals on every mean (seeded, so the same board gives the same
interval), pass^k beside pass@k, and the note when one sample per cell hides sampling variation."""

from __future__ import annotations

import random

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
