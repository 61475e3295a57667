"""The CI gate: scores compared with a blessed baseline, per cell phase and per composite.

A baseline is a leaderboard (``sysmobench leaderboard bless`` writes one).  A cell phase whose
score falls below its baseline score minus the tolerance is a regression and fails its item; one
that fails as it did in the baseline is an expected failure; a higher score is an improvement.
One that the benchmark could not score now (charged to the benchmark: no traces, a harness
error, a system unavailable offline) is *left out*, with its cause: neither a regression nor a
pass of the spec, and listed as such.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..record import CellId
from ..scoring import PHASE_TABLE, PHASES, Cause, phase_of
from .records import Board, CellRow, PhaseCell, as_board

COMPOSITE = "composite"
#: The repaired composite, compared as the strict one is (its tolerance defaults to the composite's).
REPAIRED_COMPOSITE = "repaired_composite"
COMPOSITES = (COMPOSITE, REPAIRED_COMPOSITE)
_PHASE_NAMES = {n for p in PHASE_TABLE for n in (p.name, p.marker)}
#: Provenance that changes what a score means: a baseline from another jar or Java is compared with a warning.
PROVENANCE_KEYS = ("jar_sha256", "java_version", "library_sha256")


class BaselineError(ValueError):
    """A baseline file or tolerance that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Tolerance:
    """How far a score may drop before it is a regression: per phase and for the composite."""

    phases: Mapping[str, float] = field(default_factory=dict)
    composite: float = 0.0
    #: None: the composite's.
    repaired: float | None = None

    @classmethod
    def parse(cls, text: str | None) -> Tolerance:
        """``0.05`` (everything) or ``p4=0.1,composite=0.02,syntax=0`` (others 0)."""
        text = (text or "0").strip()
        items = [part.strip() for part in text.split(",") if part.strip()]
        if len(items) == 1 and "=" not in items[0]:
            value = _fraction(items[0], "--sysmobench-tolerance")
            return cls({p: value for p in PHASES}, value)
        phases: dict[str, float] = {}
        for item in items:
            name, sep, raw = item.partition("=")
            name = name.strip()
            name = phase_of(name).name if name.lower() in _PHASE_NAMES else name
            if not sep or (name not in PHASES and name not in COMPOSITES):
                raise BaselineError(f"--sysmobench-tolerance: {item!r} is not PHASE=VALUE "
                                    f"(phases: {', '.join(PHASES)}, {PHASE_TABLE[0].marker}..{PHASE_TABLE[-1].marker}, "
                                    f"{', '.join(COMPOSITES)})")
            phases[name] = _fraction(raw, f"--sysmobench-tolerance {name}")
        composite = phases.pop(COMPOSITE, 0.0)
        return cls(phases, composite, phases.pop(REPAIRED_COMPOSITE, None))

    def of(self, phase: str) -> float:
        if phase == REPAIRED_COMPOSITE:
            return self.composite if self.repaired is None else self.repaired
        return self.composite if phase == COMPOSITE else float(self.phases.get(phase, 0.0))


def _fraction(raw: str, where: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise BaselineError(f"{where}: {raw!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise BaselineError(f"{where}: {raw!r} is not between 0 and 1")
    return value


@dataclass(frozen=True)
class Change:
    """One cell phase (or composite) compared with the baseline."""

    task: str
    model: str
    sample: int
    phase: str
    before: float | None
    after: float | None
    kind: str  # regression | improvement | same | new | gone | left_out | missing
    #: For ``left_out``: why the benchmark could not score it now.
    cause: Cause | None = None

    @property
    def cell(self) -> str:
        return CellId(self.task, self.model, self.sample).path

    def describe(self, tolerance: Tolerance) -> str:
        before = "-" if self.before is None else f"{self.before:.2f}"
        after = "-" if self.after is None else f"{self.after:.2f}"
        what = {"regression": "regressed", "improvement": "improved", "same": "unchanged", "new": "new",
                "gone": "not in this run",
                "missing": "missing: the board was to hold it (a shard not merged, a cell never reported)",
                "left_out": f"left out ({self.cause or 'unknown cause'}), charged to the "
                                                       "benchmark, not a pass of the spec"}[self.kind]
        return f"{self.cell} {self.phase}: {what}: baseline {before}, now {after} (tolerance {tolerance.of(self.phase):g})"


def scored(result: PhaseCell | Mapping[str, Any] | None) -> float | None:
    """A phase result's score as the gate compares it: None when it is charged to the benchmark,
    which says nothing about the spec (a record without a charge is read as the board reads it)."""
    if isinstance(result, Mapping):
        result = PhaseCell.from_json(result)
    return result.score if isinstance(result, PhaseCell) and result.is_spec else None


def judge(before: float | None, after: float | None, tolerance: float) -> str:
    if before is None:
        return "new" if after is not None else "same"
    if after is None:
        return "left_out"
    if after < before - tolerance - 1e-9:
        return "regression"
    if after > before + 1e-9:
        return "improvement"
    return "same"


@dataclass(frozen=True)
class Baseline:
    """A blessed board, and where it came from.  A board given as JSON is read as any board
    from a file is."""

    board: Board
    path: Path
    #: The board's cells by id: the gate looks one up for every item and every compared phase.
    _cells: dict[CellId, CellRow] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "board", as_board(self.board))
        object.__setattr__(self, "_cells", {cell.cell_id: cell for cell in reversed(self.board.cells)})

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            board = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise BaselineError(f"baseline {path}: cannot read: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise BaselineError(f"baseline {path}: not JSON: {exc}") from exc
        if not isinstance(board, dict) or not isinstance(board.get("cells"), list):
            raise BaselineError(f"baseline {path}: not a leaderboard (no 'cells')")
        if board.get("interrupted"):
            raise BaselineError(f"baseline {path}: the board of an interrupted run cannot be a baseline")
        return cls(Board.from_json(board), path)

    def _cell(self, task: str, model: str, sample: int) -> CellRow | None:
        return self._cells.get(CellId(task, model, sample))

    def score(self, task: str, model: str, sample: int, phase: str) -> float | None:
        cell = self._cell(task, model, sample)
        if cell is None:
            return None
        if phase == COMPOSITE:
            return cell.composite
        if phase == REPAIRED_COMPOSITE:
            return cell.repaired_composite
        return scored(cell.phases.get(phase))

    def cause(self, task: str, model: str, sample: int, phase: str) -> Cause | None:
        """Why the benchmark could not score a cell phase (or a cell, for the composite); None when it did."""
        cell = self._cell(task, model, sample)
        if cell is None:
            return None
        if phase == COMPOSITE:
            return cell.cause
        if phase == REPAIRED_COMPOSITE:
            return cell.cause or (cell.repair.cause if cell.repair is not None else None)
        result = cell.phases.get(phase)
        return result.cause if result is not None else None

    def has(self, task: str, model: str, sample: int, phase: str) -> bool:
        cell = self._cell(task, model, sample)
        if cell is None:
            return False
        if phase == REPAIRED_COMPOSITE:
            return cell.repair is not None
        return phase == COMPOSITE or phase in cell.phases

    def provenance_mismatches(self, provenance: Mapping[str, Any]) -> list[str]:
        theirs = self.board.provenance
        return [f"{key}: baseline {theirs.get(key)!s:.20}, now {provenance.get(key)!s:.20}" for key in PROVENANCE_KEYS
                if theirs.get(key) and provenance.get(key) and theirs.get(key) != provenance.get(key)]


#: What decides a verdict besides the spec; boards that differ in one are not compared or merged
#: unless told to (the Java version is only warned of: it changes speed, not verdicts).
FINGERPRINT_KEYS = ("jar_sha256", "library_sha256", "method")


def fingerprint_mismatches(first: Board, second: Board) -> list[str]:
    """Where two boards were made differently (known on both sides): the jar, the TLA+ library
    modules, the method, and each task both hold (its files and its traces)."""
    a, b = first.provenance, second.provenance
    found = [f"{key}: {a[key]!s:.16} against {b[key]!s:.16}" for key in FINGERPRINT_KEYS
             if a.get(key) and b.get(key) and a[key] != b[key]]
    tasks_a, tasks_b = a.get("tasks_sha256"), b.get("tasks_sha256")
    if isinstance(tasks_a, Mapping) and isinstance(tasks_b, Mapping):
        found += [f"task {name}'s data (task files or traces): {tasks_a[name]!s:.16} against {tasks_b[name]!s:.16}"
                  for name in sorted(set(tasks_a) & set(tasks_b)) if tasks_a[name] != tasks_b[name]]
    return found


def compare(before: Board | Mapping[str, Any], after: Board | Mapping[str, Any], tolerance: Tolerance) -> list[Change]:
    """Every cell phase and composite of either board, in a stable order."""
    base = Baseline(before, Path("-"))
    now = Baseline(after, Path("-"))
    keys = sorted({(c.task, c.model, c.sample) for c in [*base.board.cells, *now.board.cells]})
    # Cells the board was asked to hold and lacks (a shard not merged): not "not in this run".
    lacking = {cell for cell, _ in now.board.missing}
    # A baseline blessed from a run without repair has no repaired composite to hold a run to.
    repaired = any(cell.repair is not None for cell in base.board.cells)
    changes = []
    for task, model, sample in keys:
        for phase in (*PHASES, *(COMPOSITES if repaired else (COMPOSITE,))):
            if not (base.has(task, model, sample, phase) or now.has(task, model, sample, phase)):
                continue
            old, new = base.score(task, model, sample, phase), now.score(task, model, sample, phase)
            kind = "gone" if not now.has(task, model, sample, phase) else judge(old, new, tolerance.of(phase))
            if not base.has(task, model, sample, phase):
                kind = "new"
            elif kind == "gone" and CellId(task, model, sample) in lacking:
                kind = "missing"
            cause = now.cause(task, model, sample, phase) if kind == "left_out" else None
            changes.append(Change(task, model, sample, phase, old, new, kind, cause))
    return changes


def regressions(changes: Iterable[Change]) -> list[Change]:
    return [c for c in changes if c.kind == "regression"]


def missing(changes: Iterable[Change]) -> list[Change]:
    """What the baseline has and an incomplete board lacks: a gate fails on it, as on a
    regression (nothing says the missing cells would have held)."""
    return [c for c in changes if c.kind == "missing"]


def failing(changes: Iterable[Change], on: Iterable[str] = (COMPOSITE,)) -> list[Change]:
    """What fails a gate that guards these composites: their regressions, and any missing cell."""
    on = tuple(on)
    return [c for c in changes if c.kind in ("regression", "missing") and c.phase in on]


def left_out(changes: Iterable[Change]) -> list[Change]:
    """What the baseline scored and this run could not: not a regression (the spec did nothing
    wrong), and not a pass either, so it is always named."""
    return [c for c in changes if c.kind == "left_out"]


def counts_line(changes: list[Change]) -> str:
    """'2 regression(s), 0 improvement(s), 1 left out by the benchmark' (left out only when there is any)."""
    line = f"{len(regressions(changes))} regression(s), {sum(c.kind == 'improvement' for c in changes)} improvement(s)"
    line += f", {len(left_out(changes))} left out by the benchmark" if left_out(changes) else ""
    lacking = {c.cell for c in missing(changes)}
    return line + (f", {len(lacking)} cell(s) missing from an incomplete board" if lacking else "")


def markdown(changes: list[Change], tolerance: Tolerance, before: str, after: str) -> str:
    """For a CI job summary or a pull-request comment."""
    moved = [c for c in changes if c.kind not in ("same",)]
    lines = [f"### SysMoBench: {after} against {before}", ""]
    worse = regressions(changes)
    gone = left_out(changes)
    lines.append(f"**{len(worse)} regression(s)**, {sum(c.kind == 'improvement' for c in changes)} improvement(s), "
                 f"{sum(c.kind == 'same' for c in changes)} unchanged"
                 + (f", {len(gone)} left out by the benchmark (not a pass of the spec)" if gone else "")
                 + (f", **{len({c.cell for c in missing(changes)})} cell(s) missing** (the board is incomplete)."
                    if missing(changes) else "."))
    if moved:
        lines += ["", "| cell | phase | baseline | now | change |", "|---|---|---|---|---|"]
        for c in moved:
            before_s = "-" if c.before is None else f"{c.before:.2f}"
            after_s = "-" if c.after is None else f"{c.after:.2f}"
            mark = {"regression": "**regressed**", "improvement": "improved", "missing": "**missing**",
                    "left_out": f"left out ({c.cause})"}.get(c.kind, c.kind)
            lines.append(f"| {c.cell} | {c.phase} | {before_s} | {after_s} | {mark} |")
    return "\n".join(lines) + "\n"


def bless(board: Board | Mapping[str, Any]) -> Board:
    """A board made a baseline: complete runs only, volatile fields dropped."""
    board = as_board(board)
    if board.interrupted:
        raise BaselineError("the board of an interrupted run cannot be blessed")
    return dataclasses.replace(board, tool_runs=None, blessed_from=board.runs or (board.run_id,))
