"""The board's typed records: what a run writes reads back as the same board, and any JSON at all
reads as some board (a board from a file is not trusted to be one)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings, strategies as st

from pytest_sysmobench.leaderboard import board as report
from pytest_sysmobench.leaderboard.baseline import Tolerance, bless, compare
from pytest_sysmobench.leaderboard.html import render
from pytest_sysmobench.leaderboard.records import Board, PhaseCell
from pytest_sysmobench.leaderboard.schema import problems
from pytest_sysmobench.record import CellId, PhaseRecord, PhaseSummary, RepairSummary, Usage
from pytest_sysmobench.scoring import PHASES, REPAIRED_PHASES, Cause, Charge, PhaseResult, RepairStatus, Status

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "data" / "baselines" / "reference.json"
SCHEMA = ROOT / "schemas" / "leaderboard.schema.json"
NAMES = st.sampled_from(["spin", "etcd", "m-x:y", '<b>"x"</b>']) | st.text(max_size=8)
SCORED = st.sampled_from([Status.PASSED, Status.FAILED, Status.BLOCKED, Status.NOT_EVALUABLE, Status.INCONCLUSIVE])
UNSCORED = st.sampled_from([Status.SKIPPED, Status.ERROR, Status.BLOCKED, Status.INCONCLUSIVE])
USE = st.fixed_dictionaries({"requests": st.integers(0, 3), "cached": st.integers(0, 3),
                             "prompt_tokens": st.integers(0, 10**6), "completion_tokens": st.integers(0, 10**5),
                             "cost_usd": st.floats(0, 5, allow_nan=False), "cost_complete": st.booleans()})
GENERATION = st.fixed_dictionaries(
    {"route": st.just("openai/tiny"), "method": st.sampled_from(["direct", "traces"])},
    optional={"prompt_tokens": st.integers(0, 10**6), "cost_usd": st.none() | st.floats(0, 5),
              "requests": st.integers(0, 3), "cached": st.integers(0, 3)})


@st.composite
def results(draw: st.DrawFn, phase: str) -> PhaseResult:
    """A phase outcome as a phase gives it: scored (the spec's) or not (the benchmark's, with a cause)."""
    details: dict[str, Any] = {}
    if phase in ("conformance", "invariants") and draw(st.booleans()):
        details["evaluator_use"] = draw(USE)
    if draw(st.booleans()):
        status = draw(SCORED)
        score = 1.0 if status is Status.PASSED else draw(st.floats(0, 1))
        if status is Status.FAILED and draw(st.booleans()):
            details["failure_class"] = draw(st.sampled_from(["safety_violation", "deadlock", "<i>odd</i>"]))
        return PhaseResult(phase, status, score, draw(st.text(max_size=20)), details)
    cause = draw(st.none() | st.sampled_from(list(Cause)))
    return PhaseResult(phase, draw(UNSCORED), None, draw(st.text(max_size=20)), details, cause=cause)


DECLARED = st.fixed_dictionaries({"status": st.sampled_from(["minor", "unknown", "unreadable"]),
                                  "edits": st.none() | st.integers(0, 40), "by": st.just("repair_manifest.json")},
                                 optional={"problem": st.text(min_size=1, max_size=8)})
REPAIRS = st.builds(RepairSummary, st.sampled_from(RepairStatus),
                    st.integers(0, 12), st.text(max_size=12), st.none() | DECLARED)


@st.composite
def records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The records of a run, in the order a parallel run might report them."""
    cells = draw(st.lists(st.tuples(NAMES, NAMES, st.integers(0, 3)), unique=True, max_size=6))
    out = []
    for task, model, sample in cells:
        generation = draw(st.none() | GENERATION)  # every phase of a cell has the same candidate
        repair = draw(st.none() | REPAIRS)  # so is its repair, on the records of P3 and P4
        for phase in draw(st.lists(st.sampled_from(PHASES), unique=True, min_size=1)):
            result = draw(results(phase))
            extra: dict[str, Any] = {}
            if repair is not None and phase in REPAIRED_PHASES:
                extra["repair"] = repair
                if repair.status.repaired:
                    extra["repaired"] = PhaseSummary.of(draw(results(phase)))
            out.append(PhaseRecord.of(task, model, sample, result, generation=generation, **extra).to_json())
    return draw(st.permutations(out))


def _read_back(board: Board) -> None:
    data = board.to_json()
    assert not problems(data, SCHEMA), problems(data, SCHEMA)  # as published
    assert Board.from_json(data) == board
    assert Board.from_json(data).to_json() == data
    assert Board.from_json(json.loads(json.dumps(data))).to_json() == data  # through a file


@settings(max_examples=150, deadline=None)
@given(records(), records(), st.booleans())
def test_a_board_reads_back_as_the_board_that_was_written(first: list[dict[str, Any]], later: list[dict[str, Any]],
                                                          interrupted: bool) -> None:
    board = report.build(first, {"jar_sha256": "x", "java_version": "21"}, "run-1")
    _read_back(board)
    _read_back(dataclasses.replace(board, tool_runs={"sany": 2, "tlc": 0}, interrupted=interrupted))
    _read_back(bless(board))
    merged = report.merge(board, dataclasses.replace(report.build(later, {}, "run-2"), tool_runs={"tlc": 1}))
    _read_back(merged)


def test_the_committed_baseline_reads_back_as_written() -> None:
    data = json.loads(BASELINE.read_text())
    assert Board.from_json(data).to_json() == data


def test_a_board_from_before_charges_reads_with_the_charges_derived_and_gains_no_keys() -> None:
    committed = json.loads(BASELINE.read_text())
    old = json.loads(json.dumps(committed))
    for cell in old["cells"]:
        for key in ("charged_to", "cause"):
            cell.pop(key)
            for phase in cell["phases"].values():
                phase.pop(key)
    for row in old["models"]:
        for key in ("scored_cells", "left_out"):
            row.pop(key)
    board = Board.from_json(old)
    assert board.cells == Board.from_json(committed).cells
    (row,) = board.models
    assert (row.scored_cells, row.left_out, row.unscored) == (None, None, 1)
    assert {"scored_cells", "left_out"}.isdisjoint(board.to_json()["models"][0])


def test_a_cell_knows_its_name() -> None:
    (cell,) = report.build([{"task": "spin", "model": "m-1", "sample": 2, "phase": "syntax", "status": "passed",
                             "score": 1.0}], {}, "run").cells
    assert cell.cell_id == CellId("spin", "m-1", 2) and cell.cell_id.path == "spin/m-1/s2"
    assert (cell.charged_to, cell.cause, cell.composite) == ("benchmark", "not_run", None)


# ------------------------------------------------------------------ any JSON at all


LEAVES = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
          | st.sampled_from([10**400, -1, 2, 0.5, "spec", "benchmark", "failed", "no_traces"]))
JSON = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                       max_size=4), max_leaves=30)
PHASE_JSON = st.dictionaries(st.sampled_from(["score", "status", "reason", "failure_class", "charged_to", "cause"]),
                             JSON)
CELL_JSON = st.fixed_dictionaries({}, optional={
    "task": JSON, "model": JSON, "sample": JSON, "composite": JSON, "runs": JSON, "charged_to": JSON, "cause": JSON,
    "generation": JSON, "evaluator": JSON, "phases": st.dictionaries(st.sampled_from(PHASES), PHASE_JSON) | JSON})
ROW_JSON = st.dictionaries(st.sampled_from(["model", "task", *PHASES, "composite", "failure_classes", "usage",
                                            "pass_at_k", "cells", "unscored", "scored_cells", "left_out", "samples",
                                            "scored_samples", "best_of_k"]), JSON)
BOARD_JSON = st.fixed_dictionaries({}, optional={
    "cells": st.lists(CELL_JSON, max_size=4) | JSON, "models": st.lists(ROW_JSON, max_size=3) | JSON,
    "tasks": st.lists(ROW_JSON, max_size=3) | JSON, **{key: JSON for key in (
        "schema", "generated", "run_id", "weights", "provenance", "runs", "scored_cells", "left_out", "usage",
        "tool_runs", "interrupted", "blessed_from")},
    "selection": st.fixed_dictionaries({}, optional={
        "cells": st.lists(st.fixed_dictionaries({}, optional={"task": JSON, "model": JSON, "sample": JSON,
                                                             "phases": st.lists(st.sampled_from(PHASES)) | JSON}),
                          max_size=3) | JSON,
        "sweeps": st.dictionaries(st.text(max_size=4), st.dictionaries(st.sampled_from(["shards", "seen", "cells"]),
                                                                       JSON) | JSON, max_size=2) | JSON,
        **{key: JSON for key in ("shard", "keyword", "markers", "models", "samples")}}) | JSON})


@settings(max_examples=300, deadline=None)
@given(JSON | BOARD_JSON)
@example({"cells": [{"phases": {"syntax": {"score": float("nan"), "status": ["x"]}}, "sample": 10**400}],
          "models": [{"syntax": float("inf"), "cells": -3, "left_out": {"x": 10**400}}], "weights": {"syntax": 1e309}})
def test_any_json_reads_as_a_board_that_every_reader_can_use(data: Any) -> None:
    board = Board.from_json(data)
    assert Board.from_json(board.to_json()).to_json() == board.to_json()  # what is read is what is kept
    for cell in board.cells:
        assert all(isinstance(r, PhaseCell) and (r.score is None or 0 <= r.score <= 1) for r in cell.phases.values())
        assert cell.charged_to in ("spec", "benchmark") and isinstance(cell.sample, int)
    report.table(board)
    report.cells_csv(board)
    render(board)
    report.merge(board, board)
    compare(board, board, Tolerance.parse("0"))
    for row in board.models:
        report.charges_line(row)


USAGE_JSON = st.dictionaries(st.sampled_from([f.name for f in dataclasses.fields(Usage)] + ["stages", "command"]),
                             JSON | st.lists(st.dictionaries(st.text(max_size=4), JSON, max_size=3), max_size=3))
RECORD_JSON = st.dictionaries(st.sampled_from([f.name for f in dataclasses.fields(PhaseRecord)]), JSON) \
    | st.fixed_dictionaries({"phase": st.sampled_from(PHASES), "status": st.sampled_from(list(Status)) | JSON,
                             "generation": USAGE_JSON})


@given(USAGE_JSON)
def test_any_usage_reads_as_typed_fields_and_reads_back_as_itself(data: dict[str, Any]) -> None:
    """A usage blob from anywhere keeps only what has a board field's type, and what it keeps
    is written and read back unchanged, through a file too."""
    usage = Usage.of(data)
    if usage is None:
        return
    written = usage.to_json()
    assert set(written) <= set(data) | {"cost_usd", "exit_code", "usage_reported"}
    assert Usage.of(written) == usage == Usage.of(json.loads(json.dumps(written)))


@given(RECORD_JSON)
@example({"score": float("nan"), "details": {"x": float("inf")}, "sample": 10**400, "status": "passed"})
@example({"score": 10**400, "generation": {"seconds": float("nan"), "attempts": [{"a": 1}, 3]}})
def test_any_record_a_report_carries_reads_back_as_the_same_typed_record(data: dict[str, Any]) -> None:
    """What crosses from a worker is read typed on the controller, whatever it holds: a status
    or cause no outcome has reads as a fault of ours, never as a score of the spec's."""
    record = PhaseRecord.from_json(data)
    assert isinstance(record.status, Status) and isinstance(record.charged_to, Charge)
    assert PhaseRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    if Status.read(data.get("status")) is None:
        assert record.status is Status.ERROR


@pytest.mark.parametrize("junk", [None, 3, "board", [], [{"cells": []}], {"cells": "many"}])
def test_what_is_no_board_reads_as_an_empty_one(junk: Any) -> None:
    board = Board.from_json(junk)
    assert (board.cells, board.models, board.tasks, board.schema) == ((), (), (), None)
    assert report.merge(junk if isinstance(junk, dict) else None, board) == board


def test_p4s_plain_share_of_templates_held_is_kept_beside_the_weighted_score() -> None:
    """The original benchmark counts templates; ours weighs the defining ones.  The board keeps both."""
    record = PhaseRecord.of("spin", "m", 0, PhaseResult("invariants", Status.FAILED, 0.346154, "MutualExclusion violated",
                                                        {"fraction": 0.777778, "failure_class": "safety_violation"}))
    board = report.build([record.to_json()], {}, "run")
    (cell,) = board.cells
    assert cell.phases["invariants"].template_fraction == 0.777778
    assert board.to_json()["cells"][0]["phases"]["invariants"]["template_fraction"] == 0.777778
    _read_back(board)
    assert "0.778 held" in render(board)
    other = PhaseRecord.of("mutex", "m", 0, PhaseResult("syntax", Status.PASSED, 1.0, "SANY accepts the module"))
    merged = report.merge(board, report.build([other.to_json()], {}, "run-2"))
    assert next(c for c in merged.cells if c.task == "spin").phases["invariants"].template_fraction == 0.777778


SEEDED = sorted((ROOT / "tests" / "data" / "boards").glob("seeded-*.records.json"))


def _written(board: Board) -> str:
    """The board's file as ``write_json`` writes it, its time stamp fixed."""
    return json.dumps({**board.to_json(), "generated": "2026-11-30T00:00:00+00:00"}, indent=2) + "\n"


@pytest.mark.parametrize("path", SEEDED, ids=lambda p: p.name.split(".")[0])
def test_seeded_runs_give_byte_for_byte_the_boards_they_gave(path: Path) -> None:
    """Two runs' records as they cross from the workers (every kind of source, usage blob, repair,
    status and cause), the first run's board and the second merged into it from its file: the
    JSON written is the one committed, so that a change to how records are carried or typed
    cannot change a board unseen."""
    runs = json.loads(path.read_text(encoding="utf-8"))
    expected = {name: path.with_name(path.name.replace("records", name)).read_text(encoding="utf-8")
                for name in ("run-1", "merged")}
    first = report.build(runs["run-1"], {"jar_sha256": "x" * 8}, "run-1")
    assert _written(first) == expected["run-1"]
    second = report.build(runs["run-2"], {"jar_sha256": "x" * 8}, "run-2")
    assert _written(report.merge(Board.from_json(json.loads(expected["run-1"])), second)) == expected["merged"]
