"""The leaderboard as typed records: a board, its cells and their phases, the sample groups of
each task and model, and one row per model.

``Board.to_json`` is the board a run writes (``leaderboard.json``, schema 2), key for key, so
that every reader of the file keeps working.  ``Board.from_json`` reads a board back from any
JSON value: a board from a file may come from an older version, from CI or from anywhere, so
what is not usable (a number that is no number, a list where a mapping belongs) is dropped or
read as unknown, and nothing in it makes the reader raise.  A board written before outcomes
were charged has its charges derived, as charges.py reads them.  Readers of a board (the
tables, the CSV, the HTML page, the CI gate) take these records and trust their types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeVar

from ..record import KINDS, CellId, RepairSummary, Usage, real
from ..scoring import PHASES, Cause, Charge, RepairStatus, Status
from .charges import cell_charge, charge_of

JSON = Any
SCHEMA = 2
#: A count this large is not one a board could hold: read as unknown.
COUNT_LIMIT = 10**12

_Row = TypeVar("_Row")


@dataclass(frozen=True)
class ActionRates:
    """One action's raw P3 rates: windows passed of all its windows (recall), and traced states
    at which the spec took no step of it the system cannot, of all judged (precision; None when
    not judged)."""

    passed: int
    windows: int
    precise: int | None = None
    states: int | None = None

    def to_json(self) -> JSON:
        data: dict[str, JSON] = {"windows": [self.passed, self.windows]}
        if self.precise is not None and self.states is not None:
            data["states"] = [self.precise, self.states]
        return data

    @classmethod
    def from_json(cls, data: JSON) -> ActionRates | None:
        windows, states = _pair(mapping(data).get("windows")), _pair(mapping(data).get("states"))
        if windows is None:
            return None
        return cls(*windows, *(states if states is not None else (None, None)))


@dataclass(frozen=True)
class ConformanceRates:
    """P3's raw rates beside its zero-tolerance score, as the original keeps its window rate:
    every window, the windows that change the state, and each action both ways."""

    window_pass_rate: float | None
    on_change: float | None
    actions: tuple[tuple[str, ActionRates], ...]

    def to_json(self) -> JSON:
        return {"window_pass_rate": self.window_pass_rate, "p3_on_change": self.on_change,
                "actions": {name: rates.to_json() for name, rates in self.actions}}

    @classmethod
    def from_json(cls, data: JSON) -> ConformanceRates | None:
        data = mapping(data)
        if not data:
            return None
        actions = [(str(name), ActionRates.from_json(value)) for name, value in mapping(data.get("actions")).items()]
        return cls(real(data.get("window_pass_rate")), real(data.get("p3_on_change")),
                   tuple((name, rates) for name, rates in actions if rates is not None))

    @classmethod
    def of_details(cls, details: Mapping[str, JSON]) -> ConformanceRates | None:
        """From a P3 result's details (which the worker's record carries)."""
        actions = []
        for name, value in mapping(details.get("actions")).items():
            value = mapping(value)
            precision = mapping(value.get("precision"))
            passed, windows = count(value.get("passed")), count(value.get("windows"))
            if passed is None or windows is None:
                continue
            actions.append((str(name), ActionRates(passed, windows, count(precision.get("precise")),
                                                   count(precision.get("states")))))
        if not actions:
            return None
        return cls(real(details.get("window_pass_rate")), real(details.get("p3_on_change")), tuple(actions))


def _pair(value: JSON) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2:
        first, second = count(value[0]), count(value[1])
        if first is not None and second is not None and first <= second:
            return first, second
    return None


@dataclass(frozen=True)
class PhaseCell:
    """One phase of one cell.  Who it is charged to is always filled in, so that every reader
    counts it the same way: a score the spec is answerable for, or none, with the cause."""

    score: float | None
    status: Status
    reason: str
    charged_to: Charge
    cause: Cause | None
    #: Why a failed phase failed, as a class the board counts per model.
    failure_class: str | None = None
    #: P4: the original benchmark's plain share of its templates held, beside our weighted score.
    template_fraction: float | None = None
    #: P3: the raw rates behind its zero-tolerance score.
    rates: ConformanceRates | None = None

    @property
    def is_spec(self) -> bool:
        return self.charged_to is Charge.SPEC

    @property
    def charge(self) -> tuple[Charge, Cause | None]:
        return self.charged_to, self.cause

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"score": self.score, "status": self.status.value, "reason": self.reason,
                                 "charged_to": self.charged_to.value, "cause": self.cause.value if self.cause else None}
        if self.failure_class is not None:
            data["failure_class"] = self.failure_class
        if self.template_fraction is not None:
            data["template_fraction"] = self.template_fraction
        if self.rates is not None:
            data["rates"] = self.rates.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> PhaseCell:
        score, reason = real(data.get("score")), text(data.get("reason"))
        # A status no outcome has is a fault of ours, never a score of the spec's.
        status = Status.read(data.get("status")) or Status.ERROR
        # Charged from what is kept, so that a score read as unknown is never the spec's.
        charged_to, cause = charge_of(score, status, reason, data.get("charged_to"), data.get("cause"))
        return cls(score, status, reason, charged_to, cause, text(data.get("failure_class")) or None,
                   real(data.get("template_fraction")), ConformanceRates.from_json(data.get("rates")))


@dataclass(frozen=True)
class RepairCell:
    """A cell's repair, as the original's board counts it (``none`` for a spec usable as
    written), and P3 and P4 of the repaired spec when a repair made it usable."""

    status: RepairStatus
    edits: int
    reason: str
    phases: dict[str, PhaseCell]
    #: A replayed spec's: what the SysMoBench repair manifest beside it declares (status, edits).
    declared: dict[str, JSON] | None = None
    #: The repair model's use, when one was asked (counted apart from generation's).
    use: dict[str, JSON] | None = None

    @property
    def cause(self) -> Cause | None:
        """Why the cell has no repaired composite, when the benchmark could not repair it."""
        return Cause.HARNESS if self.status is RepairStatus.ERROR else None

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"status": self.status.value, "edits": self.edits, "reason": self.reason}
        if self.phases:
            data["phases"] = {phase: result.to_json() for phase, result in self.phases.items()}
        if self.declared is not None:
            data["declared"] = dict(self.declared)
        if self.use is not None:
            data["use"] = dict(self.use)
        return data

    @classmethod
    def of(cls, summary: RepairSummary) -> RepairCell:
        """A phase record's repair; the repaired spec's phases are the cell's to gather."""
        return cls(summary.status, summary.edits, summary.reason, {}, _declared(summary.declared),
                   _json_object(summary.use))

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> RepairCell:
        given = mapping(data.get("phases"))
        phases = {p: PhaseCell.from_json(given[p]) for p in PHASES if isinstance(given.get(p), Mapping)}
        return cls(RepairStatus.read(data.get("status")) or RepairStatus.ERROR, count(data.get("edits")) or 0,
                   text(data.get("reason")),
                   phases, _declared(data.get("declared")), _json_object(data.get("use")))


@dataclass(frozen=True)
class CellRow:
    """One cell (task x model x sample): its phases in phase order, and its composite when the
    spec is answerable for all four."""

    task: str
    model: str
    sample: int
    phases: dict[str, PhaseCell]
    charged_to: Charge
    cause: Cause | None
    composite: float | None
    #: The runs its phases came from, oldest first (a merged board's cells name several).
    runs: tuple[str, ...] = ()
    #: The model's use in generating the spec, as the generation recorded it.
    generation: Usage | None = None
    #: The evaluator model's use over the cell's phases.
    evaluator: dict[str, JSON] | None = None
    #: With repair on (``--sysmobench-repair``): the cell's repair and its repaired composite
    #: (P1, P2 as written; P3, P4 of the repaired spec, or as written when nothing was repaired).
    repair: RepairCell | None = None
    repaired_composite: float | None = None
    #: What its spec source is (reference, model, agent, replay, mutant, floor); None on a board
    #: written before cells said.
    kind: str | None = None

    @property
    def cell_id(self) -> CellId:
        return CellId(self.task, self.model, self.sample)

    @property
    def is_spec(self) -> bool:
        return self.charged_to is Charge.SPEC

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"task": self.task, "model": self.model, "sample": self.sample,
                                 "phases": {phase: result.to_json() for phase, result in self.phases.items()}}
        if self.runs:
            data["runs"] = list(self.runs)
        if self.generation is not None:
            data["generation"] = self.generation.to_json()
        if self.evaluator is not None:
            data["evaluator"] = dict(self.evaluator)
        data.update(charged_to=self.charged_to.value, cause=self.cause.value if self.cause else None,
                    composite=self.composite)
        if self.repair is not None:
            data.update(repair=self.repair.to_json(), repaired_composite=self.repaired_composite)
        if self.kind is not None:
            data["kind"] = self.kind
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> CellRow:
        given = mapping(data.get("phases"))
        phases = {p: PhaseCell.from_json(given[p]) for p in PHASES if isinstance(given.get(p), Mapping)}
        charged_to, cause = _cell_charge_of(data, phases)
        repair = RepairCell.from_json(data["repair"]) if isinstance(data.get("repair"), Mapping) else None
        return cls(text(data.get("task")), text(data.get("model")), count(data.get("sample")) or 0, phases,
                   charged_to, cause, real(data.get("composite")), _texts(data.get("runs")),
                   Usage.of(data.get("generation")), _json_object(data.get("evaluator")), repair,
                   real(data.get("repaired_composite")) if repair is not None else None,
                   data["kind"] if data.get("kind") in KINDS else None)


def _cell_charge_of(data: Mapping[str, JSON], phases: Mapping[str, PhaseCell]) -> tuple[Charge, Cause | None]:
    """A cell's charge as its board says, or derived from its phases for a board written
    before cells had one."""
    charged_to = Charge.read(data.get("charged_to"))
    if charged_to is Charge.SPEC:
        return charged_to, None
    if charged_to is Charge.BENCHMARK:
        return charged_to, Cause.read(data.get("cause"))
    return cell_charge({phase: result.charge for phase, result in phases.items()})


@dataclass(frozen=True)
class Intervals:
    """A model's 95% intervals: per measure (the composite, each phase) its low and high bound,
    the method, and a note when they ignore sampling variation (one sample per cell)."""

    method: str
    bounds: tuple[tuple[str, float, float], ...]
    note: str | None = None

    def of(self, measure: str) -> tuple[float, float] | None:
        return next(((low, high) for name, low, high in self.bounds if name == measure), None)

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"method": self.method, **{name: [low, high] for name, low, high in self.bounds}}
        if self.note is not None:
            data["note"] = self.note
        return data

    @classmethod
    def from_json(cls, data: JSON) -> Intervals | None:
        given = mapping(data)
        if not given:
            return None
        bounds = []
        for name in ("composite", *PHASES):
            pair = given.get(name)
            if isinstance(pair, list) and len(pair) == 2:
                low, high = real(pair[0]), real(pair[1])
                if low is not None and high is not None and low <= high:
                    bounds.append((name, low, high))
        return cls(text(given.get("method")), tuple(bounds), text(given.get("note")) or None)


@dataclass(frozen=True)
class TaskRow:
    """The samples of one task by one model: best of k and pass@k over the samples charged to
    the spec."""

    task: str
    model: str
    samples: int
    scored_samples: int
    #: {cause: samples} charged to the benchmark; None on a board from before charges.
    left_out: dict[str, int] | None
    best_of_k: float | None
    #: {phase: {k: pass@k}}, k as a string (a JSON key).
    pass_at_k: dict[str, dict[str, float]]
    #: {phase: {k: pass^k}}: all k samples pass; None on a board from before it was kept.
    pass_hat_k: dict[str, dict[str, float]] | None = None

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"task": self.task, "model": self.model, "samples": self.samples,
                                 "scored_samples": self.scored_samples}
        if self.left_out is not None:
            data["left_out"] = dict(self.left_out)
        data.update(best_of_k=self.best_of_k, pass_at_k=_copied(self.pass_at_k))
        _put_known(data, pass_hat_k=_copied(self.pass_hat_k))
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> TaskRow:
        samples = count(data.get("samples")) or 0
        # Before charges every sample was scored.
        scored = count(data.get("scored_samples"))
        return cls(text(data.get("task")), text(data.get("model")), samples, samples if scored is None else scored,
                   _counts(data.get("left_out")), real(data.get("best_of_k")), _pass_at_k(data.get("pass_at_k")),
                   _pass_at_k(data["pass_hat_k"]) if isinstance(data.get("pass_hat_k"), Mapping) else None)


@dataclass(frozen=True)
class ModelRow:
    """One model over all its cells; every number counts only what is charged to the spec."""

    model: str
    cells: int
    #: None (with ``left_out``) on a board from before charges, where only ``unscored`` was kept.
    scored_cells: int | None
    #: {cause: cells} charged to the benchmark.
    left_out: dict[str, int] | None
    #: The cells without a composite: kept for readers of boards from before charges.
    unscored: int | None
    composite: float | None
    #: {phase: mean score} in phase order; written as top-level keys of the row.
    means: dict[str, float | None]
    best_of_k: float | None
    pass_at_k: dict[str, dict[str, float]]
    #: {phase: {failure class: failed phases}}.
    failure_classes: dict[str, dict[str, int]]
    usage: dict[str, JSON] | None = None
    #: With repair on: {repair status: cells} over the cells charged to the spec, and the mean
    #: repaired composite over those that have one (never merged with ``composite``).
    repairs: dict[str, int] | None = None
    repaired_composite: float | None = None
    #: {phase: {k: pass^k}}, the mean over tasks as pass_at_k; None on older boards.
    pass_hat_k: dict[str, dict[str, float]] | None = None
    #: How sure the means are; None on older boards.
    intervals: Intervals | None = None

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"model": self.model, "cells": self.cells}
        _put_known(data, scored_cells=self.scored_cells, left_out=_copied(self.left_out), unscored=self.unscored)
        data["composite"] = self.composite
        if self.repairs is not None:
            data.update(repaired_composite=self.repaired_composite, repairs=dict(self.repairs))
        data.update((phase, self.means.get(phase)) for phase in PHASES)
        data.update(best_of_k=self.best_of_k, pass_at_k=_copied(self.pass_at_k))
        _put_known(data, pass_hat_k=_copied(self.pass_hat_k),
                   intervals=self.intervals.to_json() if self.intervals is not None else None)
        if self.usage is not None:
            data["usage"] = dict(self.usage)
        data["failure_classes"] = _copied(self.failure_classes)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> ModelRow:
        return cls(text(data.get("model")), count(data.get("cells")) or 0, count(data.get("scored_cells")),
                   _counts(data.get("left_out")), count(data.get("unscored")), real(data.get("composite")),
                   {phase: real(data.get(phase)) for phase in PHASES}, real(data.get("best_of_k")),
                   _pass_at_k(data.get("pass_at_k")), _failure_classes(data.get("failure_classes")),
                   _json_object(data.get("usage")), _counts(data.get("repairs")),
                   real(data.get("repaired_composite")),
                   _pass_at_k(data["pass_hat_k"]) if isinstance(data.get("pass_hat_k"), Mapping) else None,
                   Intervals.from_json(data.get("intervals")))


@dataclass(frozen=True)
class Sweep:
    """A selection split into shards (``--sysmobench-shard I/N``): every shard's board carries
    the whole selection, so that a merge can tell which shards it has and which cells the
    missing ones hold."""

    shards: int
    #: The shards merged into the board (1-based).
    seen: tuple[int, ...]
    cells: dict[CellId, tuple[str, ...]]

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(i for i in range(1, self.shards + 1) if i not in self.seen)


@dataclass(frozen=True)
class Selection:
    """What a board was asked to hold: the cells and phases its run selected (after ``-k``,
    ``-m`` and the shard), or for a merged board those of every board merged, a shard's widened
    to its whole sweep.  A board that lacks one of them is incomplete, and a gate holds the
    lack against it."""

    cells: dict[CellId, tuple[str, ...]]
    #: {sweep id: sweep} of the shards in the board; the id digests the whole selection.
    sweeps: dict[str, Sweep] = field(default_factory=dict)
    #: A single run's: its shard ("2/3"), -k, -m, models and samples, as given.
    shard: str | None = None
    keyword: str | None = None
    markers: str | None = None
    models: tuple[str, ...] = ()
    samples: int | None = None

    def widened(self) -> Selection:
        """As a merge reads it: a shard's board stands for its whole sweep."""
        cells = dict(self.cells)
        for sweep in self.sweeps.values():
            for cell, phases in sweep.cells.items():
                cells[cell] = _union(cells.get(cell, ()), phases)
        return Selection(cells, dict(self.sweeps))

    def combined(self, other: Selection) -> Selection:
        """Two merged boards' selections: every cell either asked for, every shard either has."""
        mine, theirs = self.widened(), other.widened()
        cells = dict(mine.cells)
        for cell, phases in theirs.cells.items():
            cells[cell] = _union(cells.get(cell, ()), phases)
        sweeps = dict(mine.sweeps)
        for key, sweep in theirs.sweeps.items():
            known = sweeps.get(key)
            sweeps[key] = sweep if known is None else Sweep(
                sweep.shards, tuple(sorted(set(known.seen) | set(sweep.seen))), sweep.cells)
        return Selection(cells, sweeps)

    @property
    def missing_shards(self) -> tuple[str, ...]:
        """The shards of its sweeps a merged board lacks (a shard's own board lacks none: it
        stands for its share)."""
        if self.shard is not None:
            return ()
        return tuple(f"{i}/{s.shards}" for s in self.sweeps.values() for i in s.missing)

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"cells": _cells_json(self.cells)}
        if self.sweeps:
            data["sweeps"] = {key: {"shards": s.shards, "seen": list(s.seen), "cells": _cells_json(s.cells)}
                              for key, s in self.sweeps.items()}
        for key in ("shard", "keyword", "markers", "samples"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.models:
            data["models"] = list(self.models)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Selection:
        sweeps = {}
        for key, raw in mapping(data.get("sweeps")).items():
            raw = mapping(raw)
            shards = count(raw.get("shards")) or 0
            if 0 < shards <= 1000:
                seen = raw.get("seen") if isinstance(raw.get("seen"), list) else []
                sweeps[str(key)] = Sweep(shards, tuple(sorted({i for i in seen if count(i) and i <= shards})),
                                         _cells_of(raw.get("cells")))
        return cls(_cells_of(data.get("cells")), sweeps, text(data.get("shard")) or None,
                   text(data.get("keyword")) or None, text(data.get("markers")) or None,
                   _texts(data.get("models")), count(data.get("samples")))


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p for p in PHASES if p in first or p in second)


def _cells_json(cells: Mapping[CellId, tuple[str, ...]]) -> list[JSON]:
    return [{"task": c.task, "model": c.model, "sample": c.sample, "phases": list(phases)}
            for c, phases in sorted(cells.items(), key=lambda item: (item[0].task, item[0].model, item[0].sample))]


def _cells_of(value: JSON) -> dict[CellId, tuple[str, ...]]:
    items = value if isinstance(value, list) else []
    cells: dict[CellId, tuple[str, ...]] = {}
    for item in items:
        item = mapping(item)
        task, model = text(item.get("task")), text(item.get("model"))
        phases = item.get("phases") if isinstance(item.get("phases"), list) else []
        if task and model:
            cells[CellId(task, model, count(item.get("sample")) or 0)] = tuple(p for p in PHASES if p in phases)
    return cells


@dataclass(frozen=True)
class Board:
    """A run's board, or several runs' merged: the cells, the sample groups, the model rows and
    what the run spent."""

    generated: str
    run_id: str
    weights: dict[str, float]
    provenance: dict[str, JSON]
    cells: tuple[CellRow, ...]
    runs: tuple[str, ...]
    tasks: tuple[TaskRow, ...]
    models: tuple[ModelRow, ...]
    #: None (with ``left_out``) on a board from before charges.
    scored_cells: int | None
    left_out: dict[str, int] | None
    #: Generation and evaluator use, when a model was asked anything.
    usage: dict[str, JSON] | None = None
    #: SANY and TLC runs and cache hits of the run that wrote it.
    tool_runs: dict[str, int] | None = None
    #: A run stopped before it finished: its board holds only what finished.
    interrupted: bool = False
    #: A baseline's: the runs it was blessed from.
    blessed_from: tuple[str, ...] | None = None
    #: The schema the board was written in (a board is only merged with one of this one's).
    schema: int | None = SCHEMA
    #: What the run (or the runs merged) selected; None on a board from before it was kept.
    selection: Selection | None = None

    @property
    def missing(self) -> tuple[tuple[CellId, str], ...]:
        """The cell phases the board was asked to hold and does not: a shard not merged, a
        cell a crashed worker never reported."""
        if self.selection is None:
            return ()
        held = {(cell.cell_id, phase) for cell in self.cells for phase in cell.phases}
        ordered = sorted(self.selection.cells.items(), key=lambda item: (item[0].task, item[0].model, item[0].sample))
        return tuple((cell, phase) for cell, phases in ordered for phase in phases if (cell, phase) not in held)

    @property
    def complete(self) -> bool:
        return not self.interrupted and not self.missing

    @property
    def incomplete(self) -> str | None:
        """Why the board does not hold all it was asked to, and what that means for a gate;
        None when it does."""
        if self.interrupted:
            return "the run was interrupted: the board holds only what finished"
        cells = sorted({cell.path for cell, _ in self.missing})
        if not cells:
            return None
        shards = self.selection.missing_shards if self.selection is not None else ()
        why = f"shard(s) {', '.join(shards)} not merged" if shards else "never reported"
        return (f"incomplete: {len(cells)} selected cell(s) missing ({why}; e.g. {cells[0]}); a gate fails it "
                "against a baseline that has them")

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "schema": self.schema, "generated": self.generated, "run_id": self.run_id,
            "weights": dict(self.weights), "provenance": dict(self.provenance),
            "cells": [cell.to_json() for cell in self.cells], "runs": list(self.runs),
            "tasks": [group.to_json() for group in self.tasks], "models": [row.to_json() for row in self.models],
        }
        _put_known(data, scored_cells=self.scored_cells, left_out=_copied(self.left_out),
                   usage=_copied(self.usage), tool_runs=_copied(self.tool_runs))
        if self.interrupted:
            data["interrupted"] = True
        if self.blessed_from is not None:
            data["blessed_from"] = list(self.blessed_from)
        if self.selection is not None:
            data["selection"] = self.selection.to_json()
            # Derived, for readers of the file (a dashboard); read back from the selection.
            data["complete"] = self.complete
            missing = self.missing
            if missing:
                data["missing"] = {"shards": list(self.selection.missing_shards),
                                   "cells": [{"task": c.task, "model": c.model, "sample": c.sample, "phase": p}
                                             for c, p in missing]}
        return data

    @classmethod
    def from_json(cls, data: JSON) -> Board:
        data = mapping(data)
        blessed = data.get("blessed_from")
        return cls(
            text(data.get("generated")), text(data.get("run_id")),
            {str(k): v for k, v in mapping(data.get("weights")).items() if real(v) is not None},
            dict(mapping(data.get("provenance"))),
            _rows(CellRow.from_json, data.get("cells")), _texts(data.get("runs")),
            _rows(TaskRow.from_json, data.get("tasks")), _rows(ModelRow.from_json, data.get("models")),
            count(data.get("scored_cells")), _counts(data.get("left_out")),
            _json_object(data.get("usage")), _tool_runs(data.get("tool_runs")), bool(data.get("interrupted")),
            _texts(blessed) if isinstance(blessed, (list, tuple)) else None, count(data.get("schema")),
            Selection.from_json(data["selection"]) if isinstance(data.get("selection"), Mapping) else None,
        )


def as_board(board: Board | Mapping[str, JSON]) -> Board:
    """A board as given, or read from its JSON as any board from a file is."""
    return board if isinstance(board, Board) else Board.from_json(board)


# ------------------------------------------------------------------ reading untrusted JSON


def count(value: JSON) -> int | None:
    """A count as written, or None when it is none."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < COUNT_LIMIT:
        return value
    return None


def text(value: JSON) -> str:
    """A name or a reason: a string as written, a number or a truth value as it reads; nothing
    (or a list or mapping, which no name is) is empty."""
    if isinstance(value, str):
        return value
    return "" if value is None or isinstance(value, (list, tuple, Mapping)) else str(value)


def mapping(value: JSON) -> Mapping[str, JSON]:
    return value if isinstance(value, Mapping) else {}


def _json_object(value: JSON) -> dict[str, JSON] | None:
    """A part a board keeps as written (usage, provenance): whatever a mapping holds."""
    return dict(value) if isinstance(value, Mapping) else None


def _declared(value: JSON) -> dict[str, JSON] | None:
    """A declared repair as shown: its status as text, its edits as a count."""
    if not isinstance(value, Mapping):
        return None
    declared = {"status": text(value.get("status")) or "unknown", "edits": count(value.get("edits")),
                "by": text(value.get("by"))}
    problem = text(value.get("problem"))
    return {**declared, "problem": problem} if problem else declared


def _texts(value: JSON) -> tuple[str, ...]:
    """Run ids: the non-empty ones."""
    items = value if isinstance(value, (list, tuple)) else []
    return tuple(t for t in (text(item) for item in items) if t)


def _rows(read: Callable[[Mapping[str, JSON]], _Row], value: JSON) -> tuple[_Row, ...]:
    items = value if isinstance(value, (list, tuple)) else []
    return tuple(read(item) for item in items if isinstance(item, Mapping))


def _counts(value: JSON) -> dict[str, int] | None:
    """{cause: count} of the counts that are some; None when there is no mapping (a board from
    before it was written)."""
    if not isinstance(value, Mapping):
        return None
    return {str(key): n for key, n in value.items() if (count(n) or 0) > 0}


def _tool_runs(value: JSON) -> dict[str, int] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(key): n for key, n in value.items() if count(n) is not None}


def _pass_at_k(value: JSON) -> dict[str, dict[str, float]]:
    given = mapping(value)
    return {phase: {str(k): v for k, v in mapping(given[phase]).items() if real(v) is not None}
            for phase in PHASES if isinstance(given.get(phase), Mapping)}


def _failure_classes(value: JSON) -> dict[str, dict[str, int]]:
    found = ((str(phase), _counts(by_class)) for phase, by_class in mapping(value).items())
    return {phase: counts for phase, counts in found if counts is not None}


# ------------------------------------------------------------------ writing


def _copied(value: Any) -> Any:
    """Two levels of mappings copied, so that what ``to_json`` hands out cannot change a record."""
    if not isinstance(value, Mapping):
        return value
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}


def _put_known(data: dict[str, JSON], **values: JSON) -> None:
    """Optional keys go in only when known: a board without them (one written before them, or a
    run that asked no model) is written again without them."""
    data.update((key, value) for key, value in values.items() if value is not None)

