"""The leaderboard: built on the controller from per-item records, never from worker state.

Records arrive one per phase item (``task, model, sample, phase, status, score, reason,
charged_to, cause``).  Cells and model rows are derived here, sorted, so a serial run and a
``-n 2`` run give the same leaderboard apart from the run's id and time stamp.

Every number of a model row counts only what is charged to the spec: the composite mean and
best of k are over the cells whose four phases are the spec's; a phase mean and its pass@k are
over the phases the spec is charged with.  A cell with a phase the benchmark could not score (or
that was not run, -m p4) has no composite and is counted apart by cause; no spec can move a
mean by making its cell undecidable, and no fault of ours is counted against a spec.
"""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import io
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import failures
from ..cache import atomic_write_text
from ..scoring import (
    PHASES,
    WEIGHTS,
    Cause,
    Charge,
    PhaseResult,
    Status,
    composite,
    pass_at_k,
    phase_of,
)
from . import html as html_report
from .charges import cell_charge, charge_of, charge_of_cell, phase_charges

SCHEMA = 2


def _is_spec(cell: Mapping[str, Any]) -> bool:
    return cell.get("charged_to") == Charge.SPEC.value


def _phase_counts(cell: Mapping[str, Any], phase: str) -> bool:
    """Whether a cell's phase counts in that phase's mean and pass@k: it ran and is the spec's.
    A phase the benchmark could not score, or that was not selected in this run (-m p4), is
    nobody's result; the spec's other phases of the cell still count, though the cell has no
    composite."""
    result = (cell.get("phases") or {}).get(phase)
    return isinstance(result, Mapping) and charge_of(result)[0] == Charge.SPEC.value


def _cells(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str, int], dict[str, Any]] = {}
    for record in records:
        key = (record["task"], record["model"], int(record["sample"]))
        cell = grouped.setdefault(key, {"task": key[0], "model": key[1], "sample": key[2], "phases": {}})
        charged_to, cause = charge_of(record)
        cell["phases"][record["phase"]] = {
            "score": record.get("score"),
            "status": record["status"],
            "reason": record.get("reason", ""),
            "charged_to": charged_to,
            "cause": cause,
        }
        klass = record.get("failure_class") or (record.get("details") or {}).get("failure_class")
        if klass and record["status"] == Status.FAILED.value:
            cell["phases"][record["phase"]]["failure_class"] = klass
        if record.get("run_id"):
            cell["runs"] = sorted({*cell.get("runs", []), str(record["run_id"])})
        if record.get("generation"):
            cell["generation"] = _usage_of(record["generation"])
        evaluator_use = (record.get("details") or {}).get("evaluator_use")
        if evaluator_use:
            cell["evaluator"] = _added(cell.get("evaluator"), evaluator_use)
        if record.get("cell_evaluator"):  # a record read back from a board: the cell's total, not one phase's
            cell["evaluator"] = dict(record["cell_evaluator"])
    cells = []
    for key in sorted(grouped):
        cell = grouped[key]
        cell["phases"] = {p: cell["phases"][p] for p in PHASES if p in cell["phases"]}
        cell["charged_to"], cell["cause"] = cell_charge(phase_charges(cell["phases"]))
        # A cell the benchmark could not score in full has no composite: a phase not run (-m p4)
        # or without a score is unknown, never a 0.
        cell["composite"] = _composite(cell["phases"]) if _is_spec(cell) else None
        cells.append(cell)
    return cells


def _composite(phases: Mapping[str, Mapping[str, Any]]) -> float | None:
    return composite({p: PhaseResult(p, Status(v["status"]), v["score"]) for p, v in phases.items()})


def _usage_of(generation: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("route", "method", "prompt_tokens", "completion_tokens", "cost_usd", "requests", "cached")
    return {k: generation.get(k) for k in keys if k in generation}


def _added(total: Mapping[str, Any] | None, use: Mapping[str, Any]) -> dict[str, Any]:
    """An evaluator's use summed over the phases of one cell (P3 asks for a mapping, P4 for translations)."""
    total = total or {}
    keys = ("requests", "cached", "prompt_tokens", "completion_tokens")
    summed: dict[str, Any] = {k: int(total.get(k) or 0) + int(use.get(k) or 0) for k in keys}
    summed["cost_usd"] = round(float(total.get("cost_usd") or 0.0) + float(use.get("cost_usd") or 0.0), 8)
    summed["cost_complete"] = bool(total.get("cost_complete", True)) and bool(use.get("cost_complete", True))
    return summed


def left_out(cells: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """{cause: cells} of the cells charged to the benchmark, in a stable order."""
    counts: dict[str, int] = {}
    for cell in cells:
        if not _is_spec(cell):
            cause = str(cell.get("cause") or Cause.HARNESS.value)
            counts[cause] = counts.get(cause, 0) + 1
    return dict(sorted(counts.items()))


def _samples(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """pass@k per phase (unbiased estimator) and the best sample's composite, over the samples
    charged to the spec: a sample the benchmark could not score is neither a pass nor a fail."""
    scored = [c for c in cells if _is_spec(c)]
    composites = [c["composite"] for c in scored if c["composite"] is not None]
    result: dict[str, Any] = {"samples": len(cells), "scored_samples": len(scored), "left_out": left_out(cells),
                              "best_of_k": max(composites) if composites else None, "pass_at_k": {}}
    for phase in PHASES:
        ran = [cell for cell in cells if _phase_counts(cell, phase)]
        n, c = len(ran), sum(1 for cell in ran if cell["phases"][phase]["status"] == Status.PASSED.value)
        result["pass_at_k"][phase] = {str(k): round(pass_at_k(n, c, k), 6) for k in range(1, n + 1)}
    return result


def _groups(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = sorted({(c["task"], c["model"]) for c in cells})
    return [{"task": t, "model": m, **_samples([c for c in cells if (c["task"], c["model"]) == (t, m)])} for t, m in keys]


def _spend(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Generation use at the top level (schema 2), the evaluator's beside it, and both in total_cost_usd."""
    used = [c["generation"] for c in cells if c.get("generation")]
    costs = [u.get("cost_usd") for u in used]
    spend: dict[str, Any] = {
        "prompt_tokens": sum(int(u.get("prompt_tokens") or 0) for u in used),
        "completion_tokens": sum(int(u.get("completion_tokens") or 0) for u in used),
        "cost_usd": round(sum(float(x) for x in costs if x is not None), 8) if used else None,
        "cost_complete": all(x is not None for x in costs),
        "requests": sum(int(u.get("requests") or 0) for u in used),
    }
    judged = [c["evaluator"] for c in cells if c.get("evaluator")]
    if judged:
        spend["evaluator"] = functools.reduce(_added, judged, {})
    spend["total_cost_usd"] = round((spend["cost_usd"] or 0.0) + (spend.get("evaluator") or {}).get("cost_usd", 0.0), 8)
    return spend


def _models(cells: list[dict[str, Any]], groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for model in sorted({c["model"] for c in cells}):
        mine = [c for c in cells if c["model"] == model]
        scored = [c for c in mine if _is_spec(c)]
        row: dict[str, Any] = {"model": model, "cells": len(mine), "scored_cells": len(scored),
                               "left_out": left_out(mine)}
        # Kept for readers of boards from before cells were charged: the cells without a composite.
        row["unscored"] = len(mine) - len(scored)
        row["composite"] = _mean([c["composite"] for c in scored])
        for phase in PHASES:
            row[phase] = _mean([c["phases"][phase]["score"] for c in mine if _phase_counts(c, phase)])
        # A task none of whose samples the benchmark could score (one unavailable offline) says
        # nothing about the model: it is left out of best of k and pass@k, not counted as a fail.
        per_task = [g for g in groups if g["model"] == model]
        row["best_of_k"] = _mean([g["best_of_k"] for g in per_task if g["scored_samples"]])
        row["pass_at_k"] = _mean_pass_at_k(per_task)
        if any(c.get("generation") or c.get("evaluator") for c in mine):
            row["usage"] = _spend(mine)
        row["failure_classes"] = failures.counts((p, r["failure_class"]) for c in mine for p, r in c["phases"].items()
                                                 if r.get("failure_class"))
        rows.append(row)
    return sorted(rows, key=lambda r: (r["composite"] is None, -(r["composite"] or 0.0), r["model"]))


def _mean_pass_at_k(groups: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per phase and k, the mean over the tasks that have a sample of that phase to count, for
    the k every such task has."""
    out: dict[str, dict[str, float]] = {}
    for phase in PHASES:
        having = [g for g in groups if g["pass_at_k"][phase]]
        k_max = min((len(g["pass_at_k"][phase]) for g in having), default=0)
        out[phase] = {str(k): round(sum(g["pass_at_k"][phase][str(k)] for g in having) / len(having), 6)
                      for k in range(1, k_max + 1)}
    return out


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 6) if known else None


def records_of(board: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-phase records a board was built from (enough to build it again, or merge it)."""
    records = []
    for cell in board.get("cells") or []:
        runs = cell.get("runs") or [board.get("run_id")]
        for phase, result in (cell.get("phases") or {}).items():
            records.append({"task": cell["task"], "model": cell["model"], "sample": cell["sample"], "phase": phase,
                            "status": result["status"], "score": result.get("score"), "reason": result.get("reason", ""),
                            "charged_to": result.get("charged_to"), "cause": result.get("cause"),
                            "failure_class": result.get("failure_class"), "run_id": runs[-1],
                            "generation": cell.get("generation"), "cell_evaluator": cell.get("evaluator")})
    return records


def merge(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> dict[str, Any]:
    """The latest complete result of every cell phase across runs: a run that scored only some
    cells or phases (-k etcd, -m p4) replaces those and keeps the rest, and says which run each
    cell's phases came from."""
    if not previous or previous.get("schema") != SCHEMA or previous.get("interrupted"):
        return dict(current)
    def key(record: Mapping[str, Any]) -> tuple[str, str, int, str]:
        return record["task"], record["model"], int(record["sample"]), record["phase"]

    fresh = records_of(current)
    replaced = {key(r) for r in fresh}
    # This run's records last: where a cell's usage is read back, the run that touched it last wins.
    kept = [r for r in records_of(previous) if key(r) not in replaced]
    merged = build([*kept, *fresh], current.get("provenance") or {}, str(current.get("run_id")))
    for key in ("tool_runs",):
        if key in current:
            merged[key] = current[key]
    return merged


def read(path: Path) -> dict[str, Any] | None:
    """A board written earlier, or None when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def build(records: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    records = [r if r.get("run_id") else {**r, "run_id": run_id} for r in records]
    cells = _cells(records)
    groups = _groups(cells)
    board = {
        "schema": SCHEMA,
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "run_id": run_id,
        "weights": dict(WEIGHTS),
        "provenance": dict(provenance),
        "cells": cells,
        "runs": sorted({run for cell in cells for run in cell.get("runs", [])}),
        "tasks": groups,
        "models": _models(cells, groups),
        "scored_cells": sum(1 for c in cells if _is_spec(c)),
        "left_out": left_out(cells),
    }
    if any(c.get("generation") or c.get("evaluator") for c in cells):
        board["usage"] = _spend(cells)
    return board


def _spent(label: str, usage: Mapping[str, Any]) -> str:
    cost = usage.get("cost_usd")
    return (f"{label} used {usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion "
            f"tokens, cost {'unknown' if cost is None else f'${cost:.4f}'}"
            + ("" if usage.get("cost_complete", True) else " (some models have no price)"))


def usage_line(usage: Mapping[str, Any], tools: Mapping[str, int]) -> str:
    """The terminal's account of what the models cost this run."""
    line = (f"model requests: {tools.get('model_requests', 0)} sent, {tools.get('answers_cached', 0)} answered from "
            f"the answer store (generation and evaluator); {_spent('generation', usage)}")
    if usage.get("evaluator"):
        line += f"; {_spent('the evaluator', usage['evaluator'])}"
    return line


CSV_COLUMNS = ("task", "model", "sample", *[f"{p}_{k}" for p in PHASES for k in ("score", "status")], "composite",
               "charged_to", "cause")


def cells_csv(board: Mapping[str, Any]) -> str:
    """One row per cell; a phase that has no score is an empty field, and so is a spec's cause.
    New columns go at the end, so that a reader by position keeps working."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for cell in board["cells"]:
        row: list[Any] = [cell["task"], cell["model"], cell["sample"]]
        for phase in PHASES:
            result = cell["phases"].get(phase) or {}
            row += [_csv_number(result.get("score")), result.get("status") or ""]
        charged_to, cause = charge_of_cell(cell)
        row += [_csv_number(cell["composite"]), charged_to, cause or ""]
        writer.writerow(row)
    return out.getvalue()


def _csv_number(value: Any) -> str:
    return "" if value is None else repr(float(value))


def write(board: Mapping[str, Any], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / "leaderboard.json"
    csv_path = directory / "leaderboard.csv"
    html_path = directory / "leaderboard.html"
    atomic_write_text(json_path, json.dumps(board, indent=2, sort_keys=False) + "\n")
    atomic_write_text(csv_path, cells_csv(board))
    atomic_write_text(html_path, html_report.render(board))
    return [json_path, csv_path, html_path]


def _fmt(score: Any, status: str | None) -> str:
    if status is None:
        return "-"
    if status in ("passed", "failed", "inconclusive") and score is not None:
        mark = {"passed": "", "failed": " x", "inconclusive": " ?"}[status]
        return f"{score:.2f}{mark}"
    return status


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(board: Mapping[str, Any]) -> str:
    """A terminal table: one row per cell, then one per model."""
    headers = ["task", "model", *(phase_of(p).short for p in PHASES), "composite"]
    rows = []
    for cell in board["cells"]:
        label = cell["model"] + (f" s{cell['sample']}" if cell["sample"] else "")
        phases = [cell["phases"].get(p) or {} for p in PHASES]
        charged_to, cause = charge_of_cell(cell)
        left = f" left out ({cause})" if charged_to == Charge.BENCHMARK.value else ""
        rows.append([cell["task"], label, *[_fmt(r.get("score"), r.get("status")) for r in phases],
                     _number(cell["composite"]) + left])
    for model in board["models"]:
        means = ["-" if model[p] is None else f"{model[p]:.2f}" for p in PHASES]
        rows.append(["(mean)", model["model"], *means, _number(model["composite"])])
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    line = lambda cols: "  ".join(str(c).ljust(w) for c, w in zip(cols, widths))  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])
