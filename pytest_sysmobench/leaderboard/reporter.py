"""The controller's side of a run: records gathered from the items' reports, the board written
at the end, the run judged against a baseline, the terminal summary.

Built by the plugin on the first benchmark record a report carries, with everything it needs
handed in, so that a pytest session that never runs a benchmark item never loads this.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..record import PhaseRecord
from ..scoring import Cause, phase_of
from . import board as boards
from .baseline import COMPOSITE, Baseline, Tolerance, compare, counts_line, failing
from .records import Board, Selection


#: The exit code of a run in which some model's endpoint answered none of its requests: apart
#: from 1 (a spec failed a phase, or a composite regressed) so that CI can tell the two apart.
EXIT_NO_ANSWER = 6


@dataclass(frozen=True)
class Gate:
    """A blessed board and how far a score may drop below it (``--sysmobench-baseline``)."""

    baseline: Baseline
    tolerance: Tolerance
    #: Which composites fail the run when they regress: the strict one, the repaired one or both.
    on: tuple[str, ...] = (COMPOSITE,)
    #: What a drop must be to fail the run: beyond the tolerance, per cell (``tolerance``); or,
    #: per model, below this run's 95% interval (``interval``) or significant in a permutation
    #: test of the samples within each task (``significance``).
    rule: str = "tolerance"


@dataclass
class Collector:
    """What the reports carried: the records, the richest provenance, tool-run counts."""

    records: list[PhaseRecord] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=lambda: {"sany": 0, "tlc": 0, "cache_hits": 0})
    written: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, record: PhaseRecord) -> None:
        self.records.append(record)
        if len(record.provenance) > len(self.provenance):
            self.provenance = dict(record.provenance)
        for key, value in record.tools.items():
            self.tools[key] = self.tools.get(key, 0) + value


class LeaderboardReporter:
    """Writes this run's board into its run folder and merges it into the top-level one."""

    def __init__(self, output: Path, run_id: str, gate: Gate | None) -> None:
        self.output = output
        self.run_id = run_id
        self.gate = gate
        self.collector = Collector()
        #: Filled at session finish, printed in the summary (board and comparison are made once).
        self.final_board: Board | None = None
        self.baseline_lines: list[str] = []
        #: What the run selected (handed in at the end: a worker's arrives when it stops).
        self.selection: Selection | None = None

    def add(self, record: PhaseRecord) -> None:
        self.collector.add(record)

    def board(self) -> Board:
        board = boards.build(self.collector.records, self.collector.provenance, self.run_id)
        return dataclasses.replace(board, tool_runs=dict(self.collector.tools), selection=self.selection)

    def finish(self, interrupted: bool, selection: Mapping[str, Any] | None = None) -> bool:
        """Writes the boards; whether a composite regressed (or a selected cell is missing)
        against the baseline."""
        self.selection = Selection.from_json(selection) if selection is not None else None
        board = self.final_board = self.board()
        regressed = self._against_baseline(board)
        if interrupted:
            # A partial board stays in its run folder, marked; the last complete one is kept.
            board = self.final_board = dataclasses.replace(board, interrupted=True)
        self._write(board, self.output / "runs" / self.run_id)
        if not interrupted:
            # The top-level board: this run's cells and phases over the latest of every other one.
            previous = boards.read(self.output / "leaderboard.json")
            self._write(boards.merge(previous, board), self.output)
        return regressed

    def _write(self, board: Board, directory: Path) -> None:
        """A finished run's results are never lost to an unwritable output folder: they go to a
        fresh temporary folder instead, and the summary says where."""
        try:
            self.collector.written += boards.write(board, directory)
        except OSError as exc:
            fallback = Path(tempfile.mkdtemp(prefix="sysmobench-leaderboard-"))
            self.collector.problems.append(f"could not write the leaderboard to {directory} ({exc.strerror or exc}); "
                                           f"wrote it to {fallback}")
            self.collector.written += boards.write(board, fallback)

    def _against_baseline(self, board: Board) -> bool:
        """Every change against the baseline is listed; a composite regression fails the run."""
        gate = self.gate
        if gate is None:
            return False
        changes = [c for c in compare(gate.baseline.board, board, gate.tolerance) if c.kind not in ("gone", "same")]
        # A cell left out for a cause of the benchmark's is listed, never failed: the spec did
        # nothing wrong, and a harness error already fails its item as a pytest error.
        worse = failing(changes, gate.on)
        lines = [f"baseline {gate.baseline.path}: {counts_line(changes)}"]
        lines += [f"  {c.describe(gate.tolerance)}" for c in changes]
        if gate.rule != "tolerance":
            # Per-cell drops are listed above; only the model-level rule (or a missing cell) fails.
            noisy, verdicts = noise_gate(gate.baseline.board, board, gate.rule)
            worse = [c for c in worse if c.kind == "missing"] + noisy
            lines += [f"  gate ({gate.rule} rule): {line}" for line in verdicts]
        lines += [f"  warning: scored with another toolchain than the baseline ({m})"
                  for m in gate.baseline.provenance_mismatches(board.provenance)]
        self.baseline_lines = lines
        return bool(worse)

    def silent_models(self) -> list[str]:
        """Models whose endpoint answered none of the run's requests (every cell's generation
        failed): a run that measured nothing of a model must not pass."""
        board = self.final_board or self.board()
        return [line for line, silent in _generation_failures(board) if silent]

    def summary(self) -> list[tuple[str, bool]]:
        """The terminal summary's lines, each with whether it is a warning."""
        board = self.final_board or self.board()
        lines = [boards.table(board), *self.baseline_lines]
        lines += [line for line in map(boards.intervals_line, board.models) if line]
        lines += [line for line in map(boards.repairs_line, board.models) if line]
        lines += [line for model in board.models if (line := boards.attempts_line(board, model))]
        lines += [line for model in board.models if (line := boards.feedback_line(board, model))]
        for model in board.models:
            if model.failure_classes:
                classes = "; ".join(f"{phase_of(p).short} " + ", ".join(f"{k} {n}" for k, n in c.items())
                                    for p, c in model.failure_classes.items())
                lines.append(f"failure classes of {model.model}: {classes}")
        lines += _charges(board)
        lines += _what_to_do(board)
        tools = self.collector.tools
        lines.append(f"tool runs: {tools.get('sany', 0)} SANY, {tools.get('tlc', 0)} TLC; "
                     f"{tools.get('cache_hits', 0)} answered from cache")
        if board.usage or tools.get("model_requests"):
            lines.append(boards.usage_line(board.usage or {}, tools))
        lines += _best_of_k(board)
        lines += _shard_line(board)
        lines += [f"wrote {os.path.relpath(path)}" for path in self.collector.written]
        warnings = [line for line, _ in _generation_failures(board)] + self.collector.problems
        if board.incomplete and not board.interrupted:
            warnings.append(f"this run's board is {board.incomplete}")
        return [(line, False) for line in lines] + [(f"warning: {p}", True) for p in warnings]


def noise_gate(baseline: Board, board: Board, rule: str) -> tuple[list[Any], list[str]]:
    """Per model both boards have: whether its composite fell by more than noise (``interval``:
    the baseline's mean is above this run's 95% interval; ``significance``: a permutation test of
    the samples within each task finds a drop at 0.05).  What fails, and a line per model."""
    from .significance import compare_models

    failed: list[Any] = []
    lines = []
    before = {m.model: m for m in baseline.models}
    for row in board.models:
        then = before.get(row.model)
        if then is None or then.composite is None or row.composite is None:
            continue
        if rule == "interval":
            bounds = row.intervals.of("composite") if row.intervals is not None else None
            low, high = bounds if bounds is not None else (row.composite, row.composite)
            dropped = then.composite > high
            lines.append(f"{row.model}: composite {row.composite:.3f} (95% {low:.3f}-{high:.3f}), baseline "
                         f"{then.composite:.3f}: " + ("a drop beyond the interval: regressed" if dropped
                                                       else "within the interval: not a regression"))
        else:
            found = compare_models([c for c in baseline.cells if c.model == row.model],
                                   [c for c in board.cells if c.model == row.model], (row.model, "gate"))
            overall = found[-1] if found else None
            dropped = overall is not None and overall.effect < 0 and overall.differs
            told = overall.describe("baseline", "this run") if overall is not None else "no task in common"
            lines.append(f"{row.model}: {told}" + (": regressed" if dropped else ": not a regression"))
        if dropped:
            failed.append(row.model)
    return failed, lines


def _shard_line(board: Board) -> list[str]:
    """A shard's run says which share of the sweep its board holds, and how to get the whole."""
    chosen = board.selection
    if chosen is None or chosen.shard is None or not chosen.sweeps:
        return []
    (sweep,) = chosen.sweeps.values()
    return [f"shard {chosen.shard}: this board holds {len(chosen.cells)} of the sweep's {len(sweep.cells)} cells; "
            f"'sysmobench leaderboard merge' of all {sweep.shards} shards' boards is the whole (it names any missing)"]


def _generation_failures(board: Board) -> list[tuple[str, bool]]:
    """Per model whose requests failed: how many of its cells got no spec and the first reason
    (which names the model and its endpoint), and whether none of its requests was answered."""
    found = []
    for model in board.models:
        cells = [c for c in board.cells if c.model == model.model]
        failed = [c for c in cells if c.cause is Cause.GENERATION]
        if not failed:
            continue
        reason = next(iter(failed[0].phases.values())).reason.removeprefix("blocked: generation failed: ")
        if len(failed) == len(cells):
            found.append((f"{model.model}: no answer to any of its {len(cells)} request(s), nothing of it was "
                          f"measured (exit code {EXIT_NO_ANSWER}): {reason}", True))
        else:
            found.append((f"{model.model}: {len(failed)} of {len(cells)} cells got no spec from the model (left "
                          f"out of its means): {reason}", False))
    return found


def _charges(board: Board) -> list[str]:
    """What each model's means are over, and what was left out of them and why."""
    lines = [f"{model.model}: {boards.charges_line(model)}" for model in board.models]
    if any(m.left_out for m in board.models):
        lines.append("cells left out were charged to the benchmark (a phase it could not score, or one not run): "
                     "no composite, outside the composite mean and best-of-k; phase means and pass@k count only "
                     "the phases charged to the spec")
    return lines


#: What a user can do about a phase the benchmark could not score, by cause.
FIXES: dict[Cause, str] = {
    Cause.NO_TRACES: "capture them (sysmobench traces capture TASK) or point --sysmobench-traces at a folder "
                           "that has TASK/*.ndjson",
    Cause.TOOLCHAIN: "run scripts/setup (Java 17 and the TLA+ jar), or pass --sysmobench-jar",
    Cause.UNAVAILABLE: "this system cannot be run offline here (sysmobench tasks lists why)",
    Cause.NO_SPEC: "put the task's module (and mapping.yaml if it does not use the task's names) in "
                         "the replay folder's TASK/",
    Cause.GENERATION: "check the model's endpoint and key (the warning below names them)",
    Cause.EVALUATOR: "check the evaluator model's endpoint and key, or add mapping.yaml beside the spec",
    Cause.TASK: "fix the task file the reason names",
    Cause.HARNESS: "a fault of the benchmark or the machine: run again, and report it if it stays",
}
#: At most this many cells are listed with what to do.
SHOWN_LEFT_OUT = 10


def _what_to_do(board: Board) -> list[str]:
    """Under the table: why each cell left out of the means has no score, and the fix (the
    phase items' skip reasons say it too, but only with -rs)."""
    lines = []
    for cell in board.cells:
        if cell.is_spec or cell.cause in (None, Cause.NOT_RUN, Cause.UPSTREAM):
            continue
        phase, result = next(((p, r) for p, r in cell.phases.items() if r.cause == cell.cause),
                             next(iter(cell.phases.items())))
        why = " ".join(result.reason.split())
        why = why if len(why) <= 200 else why[:200].rstrip() + " ..."
        fix = FIXES.get(cell.cause, "").replace("TASK", cell.task) if cell.cause is not None else ""
        lines.append(f"  {cell.task} x {cell.model}#{cell.sample}: {phase_of(phase).short} {cell.cause}: {why}"
                     + (f"; to score it: {fix}" if fix else ""))
    if not lines:
        return []
    more = [f"  ... {len(lines) - SHOWN_LEFT_OUT} more (the board's cells have them all)"] if len(lines) > SHOWN_LEFT_OUT else []
    return ["not scored, and what to do:", *lines[:SHOWN_LEFT_OUT], *more]


def _best_of_k(board: Board) -> list[str]:
    lines = []
    for model in board.models:
        k_max = max((len(v) for v in model.pass_at_k.values()), default=0)
        if k_max > 1:
            k = str(k_max)
            cols = ", ".join(f"{p} {v[k]:.2f}" for p, v in model.pass_at_k.items() if k in v)
            best = "-" if model.best_of_k is None else format(model.best_of_k, ".3f")
            lines.append(f"{model.model}: pass@{k} {cols}; best-of-{k} composite {best}")
    return lines
