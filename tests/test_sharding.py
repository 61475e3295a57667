"""``--sysmobench-shard I/N``: the selected cells split over runners, every phase of a cell in one
shard, balanced by each task's measured cost; the shards' boards merged are the one-process board."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from projects import benchmark_project

from pytest_sysmobench.cli import main
from pytest_sysmobench.leaderboard.baseline import Tolerance, compare, failing, missing, regressions
from pytest_sysmobench.leaderboard.board import build, merge
from pytest_sysmobench.leaderboard.records import Board
from pytest_sysmobench.record import CellId
from pytest_sysmobench.scoring import PHASES
from pytest_sysmobench.sharding import Shard, assign, selection

TASKS = ("spin", "mutex", "dqueue")
MODELS = "reference,mutant:acquire-ignores-lock,mutant:unlock-keeps-request"


def _selected(pytester: pytest.Pytester, *args: str) -> set[str]:
    result = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--collect-only", "-q",
                                           "--sysmobench-models", MODELS, *args)
    return {line.split("[", 1)[1].rstrip("]") for line in result.outlines if "::test_phase[" in line}


def test_shards_split_the_selection_by_cell_and_compose_with_k(pytester: pytest.Pytester) -> None:
    benchmark_project(pytester, *TASKS)
    whole = _selected(pytester)
    assert len(whole) == 3 * 3 * 4  # every task and model; curp and the rest are not in this project
    for k in ("", "spin or mutex"):
        extra = ("-k", k) if k else ()
        selected = _selected(pytester, *extra)
        shards = [_selected(pytester, "--sysmobench-shard", f"{i}/3", *extra) for i in (1, 2, 3)]
        assert set().union(*shards) == selected and sum(map(len, shards)) == len(selected)
        for shard in shards:  # a cell's four phases stay together
            cells = {re.sub(r"-(syntax|runtime|conformance|invariants)$", "", item) for item in shard}
            assert len(shard) == 4 * len(cells)
    bad = pytester.runpytest_subprocess("benchmarks", "--sysmobench-shard", "4/3")
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(["*--sysmobench-shard '4/3': expected I/N with 1 <= I <= N*"])


def test_the_merged_boards_of_the_shards_are_the_one_process_board(pytester: pytest.Pytester,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    benchmark_project(pytester, *TASKS)
    common = ("benchmarks", "-p", "no:cacheprovider", "-m", "p1", "--sysmobench-models", MODELS)
    whole = pytester.runpytest_subprocess(*common, "--sysmobench-output", "whole")
    whole.assert_outcomes(passed=5, skipped=4)  # the mutants are spin's: absent from the other tasks
    for i in (1, 2, 3):
        shard = pytester.runpytest_subprocess(*common, "--sysmobench-output", f"shard{i}", "--sysmobench-shard",
                                              f"{i}/3", "-n", "2" if i == 2 else "0")
        if i != 2:  # under xdist the controller collects nothing: the summary says it
            shard.stdout.fnmatch_lines([f"sysmobench: shard {i}/3: * of 9 cells (about * s of * s of cold work)"])
        shard.stdout.fnmatch_lines([f"shard {i}/3: this board holds * of the sweep's 9 cells; *"])
        run_board = json.loads(next((pytester.path / f"shard{i}" / "runs").glob("*/leaderboard.json")).read_text())
        assert run_board["complete"] is True and run_board["selection"]["shard"] == f"{i}/3"
        assert run_board["selection"]["markers"] == "p1" and len(run_board["selection"]["sweeps"]) == 1
    boards = [str(pytester.path / f"shard{i}" / "runs") for i in (1, 2, 3)]
    boards = [str(next(Path(b).glob("*/leaderboard.json"))) for b in boards]
    assert main(["leaderboard", "merge", *boards, "--out", str(pytester.path / "merged.json")]) == 0

    def cells(path: Path) -> dict[str, object]:
        board = json.loads(path.read_text())
        return {f"{c['task']}/{c['model']}": c["phases"] for c in board["cells"]}

    merged, one = cells(pytester.path / "merged.json"), cells(pytester.path / "whole" / "leaderboard.json")
    assert merged.keys() == one.keys() and len(one) == 9
    assert {k: v["syntax"]["score"] for k, v in merged.items()} == {k: v["syntax"]["score"] for k, v in one.items()}
    assert json.loads((pytester.path / "merged.json").read_text())["complete"] is True
    baseline = str(pytester.path / "whole" / "leaderboard.json")
    assert main(["leaderboard", "compare", baseline, str(pytester.path / "merged.json")]) == 0
    capsys.readouterr()

    # Shard 2 not merged: the merge says so, the board is marked, and the gate fails it.
    assert main(["leaderboard", "merge", boards[0], boards[2], "--out", str(pytester.path / "partial.json")]) == 0
    assert "warning: incomplete: " in capsys.readouterr().err
    partial = json.loads((pytester.path / "partial.json").read_text())
    assert partial["complete"] is False and partial["missing"]["shards"] == ["2/3"]
    assert main(["leaderboard", "compare", baseline, str(pytester.path / "partial.json")]) == 1
    out = capsys.readouterr().out
    assert "missing: the board was to hold it" in out and "cell(s) missing from an incomplete board" in out
    # A shard's output folder stands for the whole sweep too: its top-level board is incomplete.
    top = json.loads((pytester.path / "shard1" / "leaderboard.json").read_text())
    assert top["complete"] is False and top["missing"]["shards"] == ["2/3", "3/3"]


@given(costs=st.lists(st.floats(0.1, 100), min_size=1, max_size=6), samples=st.integers(1, 4),
       count=st.integers(1, 5))
def test_assignment_is_a_balanced_partition(costs: list[float], samples: int, count: int) -> None:
    cells = [CellId(f"t{i}", "m", s) for i in range(len(costs)) for s in range(samples)]
    cost = {f"t{i}": c for i, c in enumerate(costs)}.__getitem__
    shards = assign(cells, cost, count)
    assert set(shards) == set(cells) and set(shards.values()) <= set(range(1, count + 1))
    assert assign(reversed(cells), cost, count) == shards  # the same on every runner, whatever the order
    loads = [sum(cost(c.task) for c, k in shards.items() if k == i) for i in range(1, count + 1)]
    assert max(loads) - min(loads) <= max(costs) + 1e-9  # greedy by cost: within one cell of even


def test_a_shard_is_i_of_n() -> None:
    assert Shard.parse(" 2 / 3 ") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"
    for bad in ("0/3", "3/2", "1", "a/b", "1/0"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


CELLS = st.lists(st.tuples(st.sampled_from(["spin", "etcd", "mutex"]), st.sampled_from(["m", "openai/x"]),
                           st.integers(0, 2)), unique=True, min_size=1, max_size=8)


@given(cells=CELLS, count=st.integers(1, 4), data=st.data())
def test_merged_shards_know_which_shard_is_missing(cells: list[tuple[str, str, int]], count: int,
                                                   data: st.DataObject) -> None:
    """Each shard's board holds its share; merged, they hold the sweep, and a shard left out is
    named with its cells, which a gate against a baseline that has them fails."""
    phases = [(CellId(*cell), phase) for cell in cells for phase in PHASES]
    cost = {"spin": 1.0, "etcd": 6.0, "mutex": 1.5}.__getitem__
    shards = assign((cell for cell, _ in phases), cost, count)
    boards, everything = [], []
    for index in range(1, count + 1):
        records = [{"task": c.task, "model": c.model, "sample": c.sample, "phase": p, "status": "passed", "score": 1.0,
                    "charged_to": "spec"} for c, p in phases if shards[c] == index]
        chosen = selection(phases, Shard(index, count), shards, keyword="k", models=("m",), samples=3)
        board = dataclasses.replace(build(records, {}, f"run-{index}"), selection=chosen)
        assert board.complete and Board.from_json(json.loads(json.dumps(board.to_json()))) == board
        boards.append(board)
        everything += records
    left = data.draw(st.sampled_from([None, *range(1, count + 1)]))
    merged = None
    for index, board in enumerate(boards, 1):
        if index != left:
            merged = merge(merged, board)
    whole = dataclasses.replace(build(everything, {}, "whole"),
                                selection=selection(phases, None, {}))
    if merged is None:  # the one shard, left out
        return
    assert Board.from_json(json.loads(json.dumps(merged.to_json()))).to_json() == merged.to_json()
    lacking = {c for c, k in shards.items() if k == left}
    assert {cell for cell, _ in merged.missing} == lacking
    assert merged.complete == (not lacking)
    if lacking:
        assert merged.selection is not None and merged.selection.missing_shards == (f"{left}/{count}",)
        assert f"shard(s) {left}/{count} not merged" in (merged.incomplete or "")
        changes = compare(whole, merged, Tolerance.parse("0"))
        assert {c.cell for c in missing(changes)} == {c.path for c in lacking}
        assert failing(changes) and not regressions(changes)
    else:
        assert {c.cell_id for c in merged.cells} == {c.cell_id for c in whole.cells}
        assert not failing(compare(whole, merged, Tolerance.parse("0")))
