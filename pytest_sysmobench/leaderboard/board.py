"""The leaderboard: built on the controller from per-item records, never from worker state.

Records arrive one per phase item (``record.PhaseRecord``, read back from the JSON a report
carries).  Cells and model rows are derived here into a ``records.Board``, sorted, so a serial
run and a ``-n 2`` run give the same leaderboard apart from the run's id and time stamp; a merge
works on the typed cells of both boards.

Every number of a model row counts only what is charged to the spec: the composite mean and
best of k are over the cells whose four phases are the spec's; a phase mean and its pass@k are
over the phases the spec is charged with.  A cell with a phase the benchmark could not score (or
that was not run, -m p4) has no composite and is counted apart by cause; no spec can move a
mean by making its cell undecidable, and no fault of ours is counted against a spec.

Every function that takes a board also takes its JSON (a file's, or a test's), read as
``Board.from_json`` reads any board.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import functools
import io
import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..cache import atomic_write_text
from ..record import KINDS, PhaseRecord, PhaseSummary, Usage
from ..scoring import (PHASES, REPAIRED_PHASES, WEIGHTS, Cause, Charge, PhaseResult, RepairStatus, Status, composite,
                       pass_at_k, pass_hat_k, phase_of, repaired_composite)
from . import html as html_report
from . import schema, uncertainty
from .charges import cell_charge, charge_of
from .records import (JSON, SCHEMA, Board, CellRow, ConformanceRates, Intervals, ModelRow, PhaseCell, RepairCell,
                      Selection, TaskRow, as_board, real)

#: A record as a worker sends it: typed, or its JSON (a test's, or one read from a file).
Record = PhaseRecord | Mapping[str, JSON]


@dataclasses.dataclass
class _Gathered:
    """A cell while its phases are read, in the order they came: the last of a phase wins, and
    the evaluator's use adds up over the phases."""

    phases: dict[str, PhaseCell] = dataclasses.field(default_factory=dict)
    runs: set[str] = dataclasses.field(default_factory=set)
    generation: Usage | None = None
    evaluator: dict[str, JSON] | None = None
    kind: str | None = None
    #: The cell's repair as its P3/P4 outcomes say (the last wins), and the repaired spec's phases.
    repair: RepairCell | None = None
    repaired: dict[str, PhaseCell] = dataclasses.field(default_factory=dict)

    def add(self, record: PhaseRecord, run: str) -> None:
        """One phase item's record, from this run's workers."""
        self.phases[record.phase] = _phase(record)
        if record.repair is not None:
            self._repair(record.phase, RepairCell.of(record.repair),
                         _phase(record.repaired) if record.repaired is not None else None)
        self.runs.add(run)
        self.generation = record.generation or self.generation
        self.kind = record.kind if record.kind in KINDS else self.kind
        evaluator_use = record.details.get("evaluator_use")
        if isinstance(evaluator_use, Mapping) and evaluator_use:
            self.evaluator = _added(self.evaluator, evaluator_use)

    def take(self, cell: CellRow, phases: Iterable[str], run: str) -> None:
        """Some phases of a cell of an earlier board, as it holds them (a merge)."""
        for phase in phases:
            self.phases[phase] = cell.phases[phase]
            if cell.repair is not None and phase in REPAIRED_PHASES:
                self._repair(phase, dataclasses.replace(cell.repair, phases={}), cell.repair.phases.get(phase))
        self.runs.add(run)
        self.generation = cell.generation or self.generation
        self.kind = cell.kind if cell.kind in KINDS else self.kind
        self.evaluator = dict(cell.evaluator) if cell.evaluator else self.evaluator

    def _repair(self, phase: str, repair: RepairCell, fixed: PhaseCell | None) -> None:
        self.repair = repair
        self.repaired.pop(phase, None)
        if fixed is not None:
            self.repaired[phase] = fixed

    def cell(self, task: str, model: str, sample: int) -> CellRow:
        phases = {p: self.phases[p] for p in PHASES if p in self.phases}
        charged_to, cause = cell_charge({phase: result.charge for phase, result in phases.items()})
        # A cell the benchmark could not score in full has no composite: a phase not run (-m p4)
        # or without a score is unknown, never a 0.
        score = _composite(phases) if charged_to is Charge.SPEC else None
        repair = self._repaired()
        repaired = _repaired_composite(phases, repair) if repair is not None and score is not None else None
        return CellRow(task, model, sample, phases, charged_to, cause, score, tuple(sorted(self.runs)),
                       self.generation, self.evaluator, repair, repaired, self.kind)

    def _repaired(self) -> RepairCell | None:
        if self.repair is None:
            return None
        return dataclasses.replace(self.repair, phases={p: self.repaired[p] for p in PHASES if p in self.repaired})


def _class_counts(failed: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """{phase: {class: count}} over the (phase, class) of some failed phases."""
    found: dict[str, dict[str, int]] = {}
    for phase, klass in failed:
        found.setdefault(phase, {})
        found[phase][klass] = found[phase].get(klass, 0) + 1
    return {p: dict(sorted(c.items())) for p, c in sorted(found.items())}


def _phase(outcome: PhaseRecord | PhaseSummary) -> PhaseCell:
    """A phase as the board keeps it: why it failed, P4's plain share of templates held, P3's raw rates."""
    charged_to, cause = charge_of(outcome.score, outcome.status, outcome.reason, outcome.charged_to, outcome.cause)
    klass = outcome.details.get("failure_class")
    failed = isinstance(klass, str) and klass and outcome.status is Status.FAILED
    fraction = outcome.details.get("fraction") if outcome.phase == "invariants" else None
    rates = ConformanceRates.of_details(outcome.details) if outcome.phase == "conformance" else None
    return PhaseCell(outcome.score, outcome.status, outcome.reason, charged_to, cause,
                     klass if failed else None, real(fraction), rates)


def _phase_counts(cell: CellRow, phase: str) -> bool:
    """Whether a cell's phase counts in that phase's mean and pass@k: it ran and is the spec's.
    A phase the benchmark could not score, or that was not selected in this run (-m p4), is
    nobody's result; the spec's other phases of the cell still count, though the cell has no
    composite."""
    result = cell.phases.get(phase)
    return result is not None and result.is_spec


def _composite(phases: Mapping[str, PhaseCell]) -> float | None:
    return composite(_results(phases))


def _results(phases: Mapping[str, PhaseCell]) -> dict[str, PhaseResult]:
    return {p: PhaseResult(p, Status(v.status), v.score) for p, v in phases.items()}


def _repaired_composite(phases: Mapping[str, PhaseCell], repair: RepairCell) -> float | None:
    """P1 and P2 as written, P3 and P4 of the repaired spec (as written when nothing was
    repaired); unknown when the benchmark could not finish the repair."""
    if repair.cause is not None:
        return None
    return repaired_composite(_results(phases), _results(repair.phases) if repair.phases else None)


def _added(total: Mapping[str, JSON] | None, use: Mapping[str, JSON]) -> dict[str, JSON]:
    """An evaluator's use summed over the phases of one cell (P3 asks for a mapping, P4 for translations)."""
    total = total or {}
    keys = ("requests", "cached", "prompt_tokens", "completion_tokens")
    summed: dict[str, JSON] = {k: int(total.get(k) or 0) + int(use.get(k) or 0) for k in keys}
    summed["cost_usd"] = round(float(total.get("cost_usd") or 0.0) + float(use.get("cost_usd") or 0.0), 8)
    summed["cost_complete"] = bool(total.get("cost_complete", True)) and bool(use.get("cost_complete", True))
    return summed


def left_out(cells: Iterable[CellRow]) -> dict[str, int]:
    """{cause: cells} of the cells charged to the benchmark, in a stable order."""
    counts: dict[str, int] = {}
    for cell in cells:
        if not cell.is_spec:
            cause = (cell.cause or Cause.HARNESS).value
            counts[cause] = counts.get(cause, 0) + 1
    return dict(sorted(counts.items()))


def _task_row(task: str, model: str, cells: list[CellRow]) -> TaskRow:
    """pass@k per phase (unbiased estimator) and the best sample's composite, over the samples
    charged to the spec: a sample the benchmark could not score is neither a pass nor a fail."""
    scored = [c for c in cells if c.is_spec]
    composites = [c.composite for c in scored if c.composite is not None]
    return TaskRow(task, model, len(cells), len(scored), left_out(cells), max(composites) if composites else None,
                   {phase: _pass_at_k(cells, phase) for phase in PHASES},
                   {phase: _pass_at_k(cells, phase, pass_hat_k) for phase in PHASES})


def _pass_at_k(cells: list[CellRow], phase: str,
               estimator: Callable[[int, int, int], float] = pass_at_k) -> dict[str, float]:
    ran = [cell for cell in cells if _phase_counts(cell, phase)]
    n, c = len(ran), sum(1 for cell in ran if cell.phases[phase].status is Status.PASSED)
    return {str(k): round(estimator(n, c, k), 6) for k in range(1, n + 1)}


def _groups(cells: tuple[CellRow, ...]) -> tuple[TaskRow, ...]:
    keys = sorted({(c.task, c.model) for c in cells})
    return tuple(_task_row(t, m, [c for c in cells if (c.task, c.model) == (t, m)]) for t, m in keys)


def _spend(cells: Sequence[CellRow]) -> dict[str, JSON]:
    """Generation use at the top level (schema 2), the evaluator's beside it, and both in total_cost_usd."""
    used = [c.generation for c in cells if c.generation is not None]
    costs = [u.cost_usd for u in used]
    spend: dict[str, JSON] = {
        "prompt_tokens": sum(u.prompt_tokens or 0 for u in used),
        "completion_tokens": sum(u.completion_tokens or 0 for u in used),
        "cost_usd": round(sum(float(x) for x in costs if x is not None), 8) if used else None,
        "cost_complete": all(x is not None for x in costs),
        "requests": sum(u.requests or 0 for u in used),
    }
    judged = [c.evaluator for c in cells if c.evaluator]
    if judged:
        spend["evaluator"] = functools.reduce(_added, judged, {})
    mended = [c.repair.use for c in cells if c.repair is not None and c.repair.use]
    if mended:
        spend["repairer"] = functools.reduce(_added, mended, {})
    apart = sum((spend.get(k) or {}).get("cost_usd", 0.0) for k in ("evaluator", "repairer"))
    spend["total_cost_usd"] = round((spend["cost_usd"] or 0.0) + apart, 8)
    return spend


def _spent_any(cells: Iterable[CellRow]) -> bool:
    return any(c.generation is not None or c.evaluator or (c.repair is not None and c.repair.use) for c in cells)


def _model_row(model: str, mine: list[CellRow], groups: tuple[TaskRow, ...]) -> ModelRow:
    scored = [c for c in mine if c.is_spec]
    # A task none of whose samples the benchmark could score (one unavailable offline) says
    # nothing about the model: it is left out of best of k and pass@k, not counted as a fail.
    per_task = [g for g in groups if g.model == model]
    return ModelRow(
        model=model, cells=len(mine), scored_cells=len(scored), left_out=left_out(mine),
        # Kept for readers of boards from before cells were charged: the cells without a composite.
        unscored=len(mine) - len(scored),
        composite=_mean(c.composite for c in scored),
        means={p: _mean(c.phases[p].score for c in mine if _phase_counts(c, p)) for p in PHASES},
        best_of_k=_mean(g.best_of_k for g in per_task if g.scored_samples),
        pass_at_k=_mean_pass_at_k(per_task),
        pass_hat_k=_mean_pass_at_k(per_task, hat=True),
        intervals=_intervals(model, mine),
        failure_classes=_class_counts((p, r.failure_class) for c in mine for p, r in c.phases.items()
                                        if r.failure_class),
        usage=_spend(mine) if _spent_any(mine) else None,
        **_repairs(scored),
    )


def _repairs(scored: list[CellRow]) -> dict[str, Any]:
    """Counts per repair status and the mean repaired composite, over the scored cells that were
    run with repair on; nothing when none was."""
    repaired = [c for c in scored if c.repair is not None]
    if not repaired:
        return {}
    counts: dict[RepairStatus, int] = {}
    for cell in repaired:
        counts[cell.repair.status] = counts.get(cell.repair.status, 0) + 1  # type: ignore[union-attr]
    # The original's statuses in their order, then ours.
    return {"repairs": {status.value: counts[status] for status in RepairStatus if status in counts},
            "repaired_composite": _mean(c.repaired_composite for c in repaired)}


def _models(cells: tuple[CellRow, ...], groups: tuple[TaskRow, ...]) -> tuple[ModelRow, ...]:
    models = sorted({c.model for c in cells})
    rows = [_model_row(model, [c for c in cells if c.model == model], groups) for model in models]
    return tuple(sorted(rows, key=lambda r: (r.composite is None, -(r.composite or 0.0), r.model)))


def _mean_pass_at_k(groups: list[TaskRow], hat: bool = False) -> dict[str, dict[str, float]]:
    """Per phase and k, the mean over the tasks that have a sample of that phase to count, for
    the k every such task has (of pass^k with ``hat``)."""
    out: dict[str, dict[str, float]] = {}
    for phase in PHASES:
        having = [(g.pass_hat_k or {}) if hat else g.pass_at_k for g in groups]
        having = [h for h in having if h.get(phase)]
        k_max = min((len(h[phase]) for h in having), default=0)
        out[phase] = {str(k): round(sum(h[phase][str(k)] for h in having) / len(having), 6)
                      for k in range(1, k_max + 1)}
    return out


def _intervals(model: str, mine: list[CellRow]) -> Intervals | None:
    """The 95% interval of the composite and of each phase's mean, over the same cells as the
    means (see uncertainty.py)."""
    measures: dict[str, dict[str, list[float]]] = {"composite": {}, **{p: {} for p in PHASES}}
    for cell in mine:
        if cell.is_spec and cell.composite is not None:
            measures["composite"].setdefault(cell.task, []).append(cell.composite)
        for phase in PHASES:
            score = cell.phases[phase].score if _phase_counts(cell, phase) else None
            if score is not None:
                measures[phase].setdefault(cell.task, []).append(score)
    bounds = []
    for name, groups in measures.items():
        found = uncertainty.interval(list(groups.values()), uncertainty.seed_of(model, name))
        if found is not None:
            bounds.append((name, *found))
    if not bounds:
        return None
    single = all(len(g) <= 1 for groups in measures.values() for g in groups.values())
    return Intervals(uncertainty.METHOD, tuple(bounds), uncertainty.ONE_SAMPLE_NOTE if single else None)


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 6) if known else None


def merge(previous: Board | Mapping[str, JSON] | None, current: Board | Mapping[str, JSON]) -> Board:
    """The latest complete result of every cell phase across runs: a run that scored only some
    cells or phases (-k etcd, -m p4) replaces those and keeps the rest, and says which run each
    cell's phases came from."""
    current = as_board(current)
    previous = as_board(previous) if previous is not None else None
    if previous is None or previous.schema != SCHEMA or previous.interrupted:
        # A shard's board merged stands for its whole sweep: what the other shards hold is missing.
        widened = current.selection.widened() if current.selection is not None else None
        return dataclasses.replace(current, selection=widened)
    fresh = {_key(cell): cell for cell in current.cells}
    gathered: dict[tuple[str, str, int], _Gathered] = {}
    # This run's phases last: where a cell's usage is read back, the run that touched it last wins.
    for board, cells in ((previous, previous.cells), (current, current.cells)):
        for cell in cells:
            replaced = fresh[_key(cell)].phases if board is previous and _key(cell) in fresh else {}
            kept = [phase for phase in cell.phases if phase not in replaced]
            if kept:
                gathered.setdefault(_key(cell), _Gathered()).take(cell, kept, (cell.runs or (board.run_id,))[-1])
    merged = _board(gathered, current.provenance, current.run_id)
    return dataclasses.replace(merged, tool_runs=current.tool_runs, selection=_selection(previous, current))


def _key(cell: CellRow) -> tuple[str, str, int]:
    return cell.task, cell.model, cell.sample


def _selection(previous: Board, current: Board) -> Selection | None:
    """Both boards' selections; a board from before selections were kept asked for what it holds."""
    if previous.selection is None and current.selection is None:
        return None
    mine = previous.selection or Selection({c.cell_id: tuple(c.phases) for c in previous.cells})
    theirs = current.selection or Selection({c.cell_id: tuple(c.phases) for c in current.cells})
    return mine.combined(theirs)


def read(path: Path) -> Board | None:
    """A board written earlier, or None when there is none, it cannot be read or it is not a
    board (no list of cells)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None
    return Board.from_json(data)


def build(records: Iterable[Record], provenance: Mapping[str, JSON], run_id: str) -> Board:
    """This run's board, from its phase items' records."""
    gathered: dict[tuple[str, str, int], _Gathered] = {}
    for given in records:
        record = given if isinstance(given, PhaseRecord) else PhaseRecord.from_json(given)
        gathered.setdefault((record.task, record.model, record.sample), _Gathered()).add(record, run_id)
    return _board(gathered, provenance, run_id)


def _board(gathered: Mapping[tuple[str, str, int], _Gathered], provenance: Mapping[str, JSON], run_id: str) -> Board:
    cells = tuple(gathered[key].cell(*key) for key in sorted(gathered))
    groups = _groups(cells)
    return Board(
        generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        run_id=run_id,
        weights=dict(WEIGHTS),
        provenance=dict(provenance),
        cells=cells,
        runs=tuple(sorted({run for cell in cells for run in cell.runs})),
        tasks=groups,
        models=_models(cells, groups),
        scored_cells=sum(1 for c in cells if c.is_spec),
        left_out=left_out(cells),
        usage=_spend(cells) if _spent_any(cells) else None,
    )


def charges_line(row: ModelRow | Mapping[str, JSON]) -> str:
    """'10 scored, 1 left out (system_unavailable)': what a model's means are over, and why the
    rest is not in them."""
    if not isinstance(row, ModelRow):
        row = ModelRow.from_json(row)
    counts = row.left_out or {}
    total = sum(counts.values())
    if not total:
        return f"{row.scored_cells or 0} scored"
    why = next(iter(counts)) if len(counts) == 1 else ", ".join(f"{cause} {n}" for cause, n in counts.items())
    return f"{row.scored_cells or 0} scored, {total} left out ({why})"


def _spent(label: str, usage: Mapping[str, JSON]) -> str:
    cost = usage.get("cost_usd")
    return (f"{label} used {usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion "
            f"tokens, cost {'unknown' if cost is None else f'${cost:.4f}'}"
            + ("" if usage.get("cost_complete", True) else " (some models have no price)"))


def usage_line(usage: Mapping[str, JSON], tools: Mapping[str, int]) -> str:
    """The terminal's account of what the models cost this run."""
    line = (f"model requests: {tools.get('model_requests', 0)} sent, {tools.get('answers_cached', 0)} answered from "
            f"the answer store (generation and evaluator); {_spent('generation', usage)}")
    if usage.get("evaluator"):
        line += f"; {_spent('the evaluator', usage['evaluator'])}"
    if usage.get("repairer"):
        line += f"; {_spent('the repair model', usage['repairer'])}"
    return line


CSV_COLUMNS = ("task", "model", "sample", *[f"{p}_{k}" for p in PHASES for k in ("score", "status")], "composite",
               "charged_to", "cause", "repair_status", "repair_edits", "repaired_composite", "declared_repair")


def cells_csv(board: Board | Mapping[str, JSON]) -> str:
    """One row per cell; a phase that has no score is an empty field, and so is a spec's cause.
    New columns go at the end, so that a reader by position keeps working."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for cell in as_board(board).cells:
        row: list[Any] = [cell.task, cell.model, cell.sample]
        for phase in PHASES:
            result = cell.phases.get(phase)
            row += [_csv_number(result.score), result.status] if result else ["", ""]
        row += [_csv_number(cell.composite), cell.charged_to, cell.cause or ""]
        repair = cell.repair
        row += [repair.status, repair.edits, _csv_number(cell.repaired_composite)] if repair else ["", "", ""]
        row.append((repair.declared or {}).get("status", "") if repair else "")
        writer.writerow(row)
    return out.getvalue()


MODEL_CSV_COLUMNS = ("model", "cells", "scored_cells",
                     *[f"{m}{k}" for m in ("composite", *PHASES) for k in ("", "_low", "_high")], "interval_note")


def models_csv(board: Board | Mapping[str, JSON]) -> str:
    """One row per model: each mean with its 95% interval (empty where unknown)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(MODEL_CSV_COLUMNS)
    for model in as_board(board).models:
        row: list[Any] = [model.model, model.cells, "" if model.scored_cells is None else model.scored_cells]
        for measure in ("composite", *PHASES):
            bounds = model.intervals.of(measure) if model.intervals is not None else None
            mean = model.composite if measure == "composite" else model.means.get(measure)
            row += [_csv_number(mean), *(_csv_number(b) for b in (bounds or (None, None)))]
        row.append(model.intervals.note or "" if model.intervals is not None else "")
        writer.writerow(row)
    return out.getvalue()


def _csv_number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def write_json(board: Board, path: Path) -> None:
    """The board's JSON, as the published schema describes it (checked when a run is asked to)."""
    data = board.to_json()
    schema.check_written(data)
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def write(board: Board | Mapping[str, JSON], directory: Path) -> list[Path]:
    board = as_board(board)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "leaderboard.json"
    csv_path = directory / "leaderboard.csv"
    models_path = directory / "leaderboard-models.csv"
    html_path = directory / "leaderboard.html"
    write_json(board, json_path)
    atomic_write_text(csv_path, cells_csv(board))
    atomic_write_text(models_path, models_csv(board))
    # The cells' folders (prompts, answers, an agent's transcript) are <output>/runs/<run>/...:
    # linked from the page beside them, or from a run's own copy inside runs/<run>/.
    folders = "runs/" if (directory / "runs").is_dir() else "../" if directory.parent.name == "runs" else None
    atomic_write_text(html_path, html_report.render(board, folders))
    return [json_path, csv_path, models_path, html_path]


#: A scored phase in the terminal table: its number and this mark.
_MARKS = {Status.PASSED: "", Status.FAILED: " x", Status.INCONCLUSIVE: " ?"}


def _fmt(result: PhaseCell | None) -> str:
    if result is None:
        return "-"
    mark = _MARKS.get(result.status)
    if mark is not None and result.score is not None:
        return f"{result.score:.2f}{mark}"
    return result.status.value


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _repaired_mark(cell: CellRow) -> str:
    """'0.700 (minor, 1 edit)'; a cell usable as written shows its number alone."""
    repair = cell.repair
    if repair is None:
        return "-"
    if repair.status is RepairStatus.NONE:
        return _number(cell.repaired_composite)
    edits = f", {repair.edits} edit{'s' if repair.edits != 1 else ''}" if repair.edits else ""
    return f"{_number(cell.repaired_composite)} ({repair.status}{edits})"


def intervals_line(row: ModelRow) -> str | None:
    """'reference: composite 0.812 (95% 0.741-0.880), P1 ...' and the note, when known."""
    if row.intervals is None or not row.intervals.bounds:
        return None
    shown = ", ".join(f"{'composite' if name == 'composite' else phase_of(name).short} "
                      f"{low:.3f}-{high:.3f}" for name, low, high in row.intervals.bounds)
    return f"95% intervals of {row.model}: {shown}" + (f" ({row.intervals.note})" if row.intervals.note else "")


def repairs_line(row: ModelRow) -> str | None:
    """'etcd-model: repairs none 8, minor 1, unrepairable 1; repaired composite 0.712 (strict
    0.655)', when a spec of the model needed repair."""
    if row.repairs is None or set(row.repairs) <= {RepairStatus.NONE.value}:
        return None
    counts = ", ".join(f"{status} {n}" for status, n in row.repairs.items())
    return (f"{row.model}: repairs {counts}; repaired composite {_number(row.repaired_composite)} "
            f"(strict {_number(row.composite)})")


def attempts_line(board: Board, row: ModelRow) -> str | None:
    """'m@agent_based: P1 and P2 pass after attempt 1: 2/5, 2: 4/5, 3: 4/5, 4: 5/5', for a
    method that sends rejected specs back: how many cells were usable after each round."""
    corrected = [c.generation for c in board.cells
                 if c.model == row.model and c.generation is not None and c.generation.attempts is not None]
    if not corrected:
        return None
    rounds = [use.attempts or () for use in corrected]
    allowed = max(use.corrections_allowed or 0 for use in corrected) + 1
    passed = [next((_int(a.get("attempt")) for a in r if a.get("passed")), None) for r in rounds]
    counts = ", ".join(f"{k}: {sum(1 for p in passed if p is not None and p <= k)}/{len(rounds)}"
                       for k in range(1, allowed + 1))
    return f"{row.model}: P1 and P2 pass after attempt {counts}"


def feedback_line(board: Board, row: ModelRow) -> str | None:
    """'m@feedback: P3 after each round (held-out): 1: 0.40, 2: 0.80; first shot 0.61 ->
    corrected 0.86; fits the feedback: 0 of 3 cells', for the ``feedback`` method: each round's
    held-out P3 (a cell's last judged figure so far; 0 while P1 or P2 reject its answer),
    means over the model's cells."""
    cells = [c for c in board.cells if c.model == row.model and c.generation is not None
             and c.generation.method == "feedback" and c.generation.attempts is not None]
    if not cells:
        return None
    rounds = [list(c.generation.attempts or ()) for c in cells if c.generation is not None]
    last = max((_int(a.get("attempt")) for r in rounds for a in r), default=0)

    def held_out(attempts: list[Mapping[str, JSON]], k: int) -> float:
        judged = [a for a in attempts if _int(a.get("attempt")) <= k and isinstance(a.get("phases"), Mapping)
                  and isinstance(a["phases"].get("conformance"), (int, float))]  # type: ignore[union-attr]
        return float(judged[-1]["phases"]["conformance"]) if judged else 0.0  # type: ignore[index]

    def mean(values: list[float]) -> str:
        return f"{sum(values) / len(values):.2f}" if values else "-"

    per_round = ", ".join(f"{k}: {mean([held_out(r, k) for r in rounds])}" for k in range(1, last + 1))
    first = [float(r[0]["composite"]) for r in rounds if r and isinstance(r[0].get("composite"), (int, float))]  # type: ignore[arg-type]
    corrected = [c.composite for c in cells if c.composite is not None]
    fits = sum(1 for c in cells if c.generation is not None and c.generation.fits_feedback is True)
    return (f"{row.model}: P3 after each round (held-out): {per_round}; first shot {mean(first)} -> corrected "
            f"{mean(corrected)}; fits the feedback: {fits} of {len(cells)} cells")


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def table(board: Board | Mapping[str, JSON]) -> str:
    """A terminal table: one row per cell, then one per model; when a spec needed repair, the
    repaired composite in a column of its own beside the strict one."""
    board = as_board(board)
    repaired = any(cell.repair is not None and cell.repair.status is not RepairStatus.NONE for cell in board.cells)
    headers = ["task", "model", *(phase_of(p).short for p in PHASES), "composite", *(["repaired"] if repaired else [])]
    rows = []
    for cell in board.cells:
        label = cell.model + (f" s{cell.sample}" if cell.sample else "")
        left = "" if cell.is_spec else f" left out ({cell.cause})"
        row = [cell.task, label, *[_fmt(cell.phases.get(p)) for p in PHASES], _number(cell.composite) + left]
        rows.append(row + ([_repaired_mark(cell)] if repaired else []))
    for model in board.models:
        means = ["-" if model.means[p] is None else f"{model.means[p]:.2f}" for p in PHASES]
        rows.append(["(mean)", model.model, *means, _number(model.composite),
                     *([_number(model.repaired_composite)] if repaired else [])])
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    line = lambda cols: "  ".join(str(c).ljust(w) for c, w in zip(cols, widths))  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])
