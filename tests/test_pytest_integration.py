"""The plugin as a pytest citizen: inert where unused, cells whole under xdist, plain-JSON records.

Every test runs pytest in a subprocess (pytester) with the installed plugin and real SANY/TLC.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_sysmobench.record import PhaseRecord, jsonable
from pytest_sysmobench.scheduling import cell_scope

ROOT = Path(__file__).resolve().parents[1]

PLAIN_TEST = """
import os
import sys


def test_plain():
    heavy = [m for m in ("pandas", "litellm", "yaml") if m in sys.modules]
    assert heavy == [], heavy
    ours = sorted(m for m in sys.modules if m.split(".")[0] == "pytest_sysmobench")
    assert ours == ["pytest_sysmobench", "pytest_sysmobench.plugin", "pytest_sysmobench.settings"], ours
    assert "LITELLM_LOCAL_MODEL_COST_MAP" not in os.environ
"""


def test_the_plugin_is_inert_in_a_project_that_does_not_use_it(pytester: pytest.Pytester,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A project with a broken tasks/ folder of its own and plain tests: no task is loaded, no marker
    registered, no module of the benchmark imported, the environment untouched, nothing written."""
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    (pytester.path / "tasks" / "x").mkdir(parents=True)
    (pytester.path / "tasks" / "x" / "task.yaml").write_text("not: [valid")
    pytester.makepyfile(test_plain=PLAIN_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(passed=1)
    assert "sysmobench: models" not in result.stdout.str() and "SysMoBench leaderboard" not in result.stdout.str()
    markers = pytester.runpytest_subprocess("--markers", "-p", "no:cacheprovider")
    assert not re.search(r"@pytest\.mark\.(p1|p4|x):", markers.stdout.str())
    assert not (pytester.path / ".sysmobench").exists()


@pytest.fixture
def mixed(pytester: pytest.Pytester) -> pytest.Pytester:
    """Two tasks and one replayed model whose cells fail, block, error and are not evaluable."""
    for task in ("spin", "mutex"):
        shutil.copytree(ROOT / "tasks" / task, pytester.path / "tasks" / task)
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    # spin: a spec SANY rejects (P1 fails, the rest blocked).  mutex: the reference without its
    # mapping (its names are not canonical: P3 and P4 not evaluable).
    spin = pytester.path / "specs" / "spin"
    spin.mkdir(parents=True)
    (spin / "Spin.tla").write_text("---- MODULE Spin ----\nEXTENDS Naturals\nInit == x = \n====\n")
    mutex = pytester.path / "specs" / "mutex"
    mutex.mkdir(parents=True)
    for name in ("Mutex.tla", "Mutex.cfg"):
        shutil.copy(ROOT / "tasks" / "mutex" / "reference" / name, mutex / name)
    # A corrupt spin trace: P3 of every spin cell that reaches it is an error (the data's fault).
    traces = pytester.path / "data" / "traces" / "spin"
    traces.mkdir(parents=True)
    (traces / "bad.ndjson").write_text('{"meta": {}}\n{"step": 0, "action": "Init", "state": {"locked": 0.5}}\n')
    pytester.makeini("[pytest]\njunit_family = xunit1\n")
    return pytester


def _cells_by_worker(lines: list[str]) -> dict[str, set[str]]:
    workers: dict[str, set[str]] = {}
    for line in lines:
        match = re.match(r"\[(gw\d+)\].*test_phase\[(.+)-(syntax|runtime|conformance|invariants)\]", line)
        if match:
            workers.setdefault(match.group(2), set()).add(match.group(1))
    return workers


def test_under_xdist_every_cell_stays_on_one_worker_and_every_record_is_json(mixed: pytest.Pytester) -> None:
    args = ("benchmarks", "--sysmobench-models", "reference,replay:specs", "-p", "no:cacheprovider",
            "--sysmobench-no-cache")
    serial = mixed.runpytest_subprocess(*args)
    serial_board = json.loads((mixed.path / ".sysmobench" / "leaderboard.json").read_text())
    parallel = mixed.runpytest_subprocess(*args, "-n", "2", "-v")
    assert "INTERNALERROR" not in parallel.stdout.str() + parallel.stderr.str()
    assert parallel.parseoutcomes() == serial.parseoutcomes()
    board = json.loads((mixed.path / ".sysmobench" / "leaderboard.json").read_text())
    drop = ("generated", "run_id", "tool_runs", "runs")

    def comparable(b: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in b.items() if k not in drop},
                "cells": [{k: v for k, v in c.items() if k != "runs"} for c in b["cells"]]}

    assert comparable(board) == comparable(serial_board)
    statuses = {p["status"] for c in board["cells"] for p in c["phases"].values()}
    assert {"passed", "failed", "blocked", "error", "not_evaluable"} <= statuses, statuses
    workers = _cells_by_worker(parallel.outlines)
    assert len(workers) == 4 and all(len(w) == 1 for w in workers.values()), workers


def test_under_xdist_the_costliest_cells_are_handed_out_first(mixed: pytest.Pytester) -> None:
    """A worker takes the next cell when it is done, in collection order: the costliest last
    would leave the other worker idle, so a worker's collection puts each task's cells by its
    measured cost, costliest first (here against the alphabetical order)."""
    for task, cost in (("spin", 99.0), ("mutex", 1.0)):
        path = mixed.path / "tasks" / task / "task.yaml"
        path.write_text(re.sub(r"(?m)^cost_s: .*$", f"cost_s: {cost}", path.read_text()))
    result = mixed.runpytest_subprocess("benchmarks", "--sysmobench-models", "reference,replay:specs", "-p",
                                        "no:cacheprovider", "--sysmobench-no-cache", "-m", "p1", "-n", "1", "-v")
    ran = [line.split("test_phase[")[1].split("-")[0] for line in result.outlines
           if line.startswith("[gw") and "test_phase[" in line]
    assert ran == ["spin", "spin", "mutex", "mutex"], result.outlines


def test_an_explicit_dist_mode_is_respected(mixed: pytest.Pytester) -> None:
    result = mixed.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-n", "2", "--dist", "each", "-k", "spin")
    # 'each' runs every item on every worker: the user asked for it, the plugin does not override it.
    outcomes = result.parseoutcomes()
    assert sum(outcomes.values()) == 8, outcomes


@pytest.mark.parametrize("nodeid, scope", [
    ("benchmarks/test_sysmobench.py::test_phase[spin-reference-syntax]", "benchmarks/test_sysmobench.py::test_phase[spin-reference"),
    ("b.py::test_phase[etcd-replay:/x/y-z-s2-invariants]", "b.py::test_phase[etcd-replay:/x/y-z-s2"),
    ("tests/test_x.py::test_a[1-2]", None),
    ("tests/test_x.py::test_syntax", None),
])
def test_cell_scope_of_a_node_id(nodeid: str, scope: str | None) -> None:
    assert cell_scope(nodeid) == (None if scope is None else "sysmobench-cell:" + scope)


def test_records_are_plain_json_whatever_the_details_hold() -> None:
    import enum

    from pytest_sysmobench import PhaseResult, Status

    class Kind(str, enum.Enum):  # like SanyErrorKind: a str subclass that execnet cannot serialize
        PARSE = "parse"

    result = PhaseResult("syntax", Status.FAILED, 0.25, "why",
                         {"errors": [{"kind": Kind.PARSE, "at": Path("/x"), "span": (1, 2)}], "seen": {"b", "a"},
                          "nan": float("nan")})
    record = PhaseRecord.of("spin", "m", 0, result, tools={"tlc": 1})
    data: dict[str, Any] = record.to_json()
    assert json.loads(json.dumps(data)) == data
    assert type(data["details"]["errors"][0]["kind"]) is str
    assert data["details"]["errors"] == [{"kind": "parse", "at": "/x", "span": [1, 2]}]
    assert data["details"]["seen"] == ["a", "b"] and data["details"]["nan"] == "nan"
    assert PhaseRecord.from_json(data) == record
    assert jsonable({1: (2, 3)}) == {"1": [2, 3]}


def test_merging_boards_keeps_the_latest_result_of_every_cell_phase() -> None:
    from pytest_sysmobench.leaderboard import board as report

    def record(task: str, phase: str, score: float) -> dict[str, Any]:
        return {"task": task, "model": "m", "sample": 0, "phase": phase, "status": "passed" if score == 1 else "failed",
                "score": score, "reason": ""}

    phases = ("syntax", "runtime", "conformance", "invariants")
    first = report.build([record(t, p, 1.0) for t in ("spin", "etcd") for p in phases], {}, "run-1").to_json()
    second = report.build([record("etcd", "invariants", 0.5)], {}, "run-2").to_json()
    assert second["cells"][0]["composite"] is None and second["models"][0]["syntax"] is None
    merged = report.merge(first, second).to_json()
    cells = {c["task"]: c for c in merged["cells"]}
    assert cells["etcd"]["phases"]["invariants"]["score"] == 0.5 and cells["etcd"]["runs"] == ["run-1", "run-2"]
    assert cells["spin"]["runs"] == ["run-1"] and cells["spin"]["composite"] == 1.0
    assert cells["etcd"]["composite"] == round(0.65 + 0.35 * 0.5, 6)
    assert merged["runs"] == ["run-1", "run-2"]
    assert report.merge({**first, "interrupted": True}, second).to_json() == second


def test_the_leaderboard_counts_failure_classes_per_model(pytester: pytest.Pytester) -> None:
    shutil.copytree(ROOT / "tasks" / "spin", pytester.path / "tasks" / "spin")
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    result = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models",
                                           "mutant:acquire-ignores-lock,mutant:unknown-operator")
    result.stdout.fnmatch_lines(["failure classes of mutant:acquire-ignores-lock: P4 safety_violation 1"])
    result.stdout.fnmatch_lines(["failure classes of mutant:unknown-operator: P1 undefined_operator 1"])
    board = json.loads((pytester.path / ".sysmobench" / "leaderboard.json").read_text())
    classes = {m["model"]: m["failure_classes"] for m in board["models"]}
    assert classes == {"mutant:acquire-ignores-lock": {"invariants": {"safety_violation": 1}},
                       "mutant:unknown-operator": {"syntax": {"undefined_operator": 1}}}
    cell = next(c for c in board["cells"] if c["model"] == "mutant:unknown-operator")
    assert cell["phases"]["syntax"]["failure_class"] == "undefined_operator"
