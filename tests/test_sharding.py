"""``--sysmobench-shard I/N``: the selected cells split over runners, every phase of a cell in one
shard, balanced by each task's measured cost; the shards' boards merged are the one-process board."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from projects import benchmark_project

from pytest_sysmobench.cli import main
from pytest_sysmobench.record import CellId
from pytest_sysmobench.sharding import Shard, assign

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


def test_the_merged_boards_of_the_shards_are_the_one_process_board(pytester: pytest.Pytester) -> None:
    benchmark_project(pytester, *TASKS)
    common = ("benchmarks", "-p", "no:cacheprovider", "-m", "p1", "--sysmobench-models", MODELS)
    whole = pytester.runpytest_subprocess(*common, "--sysmobench-output", "whole")
    whole.assert_outcomes(passed=5, skipped=4)  # the mutants are spin's: absent from the other tasks
    for i in (1, 2):
        shard = pytester.runpytest_subprocess(*common, "--sysmobench-output", f"shard{i}", "--sysmobench-shard",
                                              f"{i}/2")
        shard.stdout.fnmatch_lines([f"sysmobench: shard {i}/2: * of 9 cells (about * s of * s of cold work)"])
    boards = [str(pytester.path / f"shard{i}" / "leaderboard.json") for i in (1, 2)]
    assert main(["leaderboard", "merge", *boards, "--out", str(pytester.path / "merged.json")]) == 0

    def cells(path: Path) -> dict[str, object]:
        board = json.loads(path.read_text())
        return {f"{c['task']}/{c['model']}": c["phases"] for c in board["cells"]}

    merged, one = cells(pytester.path / "merged.json"), cells(pytester.path / "whole" / "leaderboard.json")
    assert merged.keys() == one.keys() and len(one) == 9
    assert {k: v["syntax"]["score"] for k, v in merged.items()} == {k: v["syntax"]["score"] for k, v in one.items()}


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
