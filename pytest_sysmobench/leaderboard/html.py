"""The leaderboard as one HTML page that a person would rather look at than read.

The page is self-contained: styles inline, plots as inline SVG, no script and no request at
view time (its Content-Security-Policy forbids both).  Every string on it comes from a board,
and boards carry text from specs, traces and models: all of it is escaped, and cut to a
length.  A board given as JSON (one from a file) is read as ``Board.from_json`` reads any: it
is not trusted to hold numbers where numbers belong.
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping

from ..scoring import PHASE_TABLE, PHASES, RepairStatus, Status, phase_of
from ..record import Usage, slug
from .records import Board, CellRow, ModelRow, PhaseCell, TaskRow, as_board, count, real
from .significance import compare_models

PHASE_LABELS = {p.name: p.label for p in PHASE_TABLE}
PHASE_COLOURS = {"syntax": "#4e79a7", "runtime": "#59a14f", "conformance": "#f28e2b", "invariants": "#b07aa1"}
CLASS_COLOURS = ("#e15759", "#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac", "#86bcb6", "#d37295")
#: A board's reasons are already capped; a board from elsewhere is held to the same length here.
TEXT_LIMIT = 2000
NAME_LIMIT = 200

#: What each column means, on its header (a tooltip) and in a legend under its table.
COLUMN_HELP = {
    "model": "who wrote the specs: a model, an agent, a replayed folder, or the task's reference",
    "kind": "model (asked through its API), agent (a command run in a sandbox), replay (specs written elsewhere), "
            "reference or mutant (the task's own)",
    "made": "how the spec came to be: the attempt scored (agent_based), an agent's checks, time and exit, the "
            "tokens and cost asked for it (an agent's as it reported them), and a link to the cell's folder "
            "(prompts, answers, an agent's transcript)",
    "task": "the system the spec models",
    "sample": "which of a model's answers for this task (0 is the first)",
    "samples": "how many answers were scored for this task",
    "cells": "task-and-sample pairs this model was run on (a cell is one spec, scored in four phases)",
    "scored": "cells with a composite: every phase charged to the spec",
    "left out": "cells the benchmark could not score (its fault, not the spec's), by cause; kept out of every mean",
    **{p.label: f"{p.checks} (0-1; in the models table, the mean over scored cells)" for p in PHASE_TABLE},
    "composite": "0.15·P1 + 0.15·P2 + 0.35·P3 + 0.35·P4 (the mean over scored cells in the models table)",
    "rank": "models share a rank when a permutation test of their samples within each task (p >= 0.05) cannot "
            "tell them apart from the model above: a rank never says more than the samples do",
    "95% interval": "where the mean composite would lie on another draw of tasks and samples: a percentile "
                    "bootstrap over tasks, then each task's samples, seeded (the same board gives the same "
                    "interval); * marks one sample per cell, where it ignores how another answer could differ. "
                    "The bars of the chart below carry the same intervals for each phase",
    "repaired": "the repaired composite, beside the strict one and never merged with it: P1 and P2 as written, "
                "P3 and P4 of the spec after mechanical repair (as written when it needed none or could not be "
                "repaired); under it, how many cells needed what repair (none, minor 1-3 edits, moderate 4-10, "
                "heavy 11+, unrepairable)",
    "best of k": "the mean over tasks of the best composite among each task's samples",
    "pass@1 P4": "the chance that one sample keeps every invariant template (pass@k, unbiased estimate)",
    "cost": "tokens and dollars spent asking the model (and any evaluator) for this row",
    "runs": "the runs whose results make up this cell (a merged board can hold several)",
}
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
.meta{color:#57606a;font-size:12.5px}.meta code{font-size:12px}
.banner{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;margin:12px 0}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
th{background:#f6f8fa;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.passed{background:#dafbe1}td.failed{background:#ffebe9}td.other{background:#f6f8fa;color:#57606a}
small.charge{display:block;color:#8250df}
details summary{cursor:pointer}details div{max-width:520px;white-space:pre-wrap;font-size:12px;color:#57606a}
.heat td{text-align:center;min-width:90px}.plots{display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}.legend span{display:inline-block;margin-right:14px}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
small.why{color:#57606a;margin-left:4px}details.help,details.fold{margin:4px 0 12px;font-size:12.5px}
details.help dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:6px 0}
details.help dt{font-weight:600}details.help dd{margin:0;color:#57606a}
table.rates{font-size:12px;color:#57606a}table.rates td,table.rates th{padding:1px 6px}
"""


def render(board: Board | Mapping[str, Any], folders: str | None = None) -> str:
    """The page for one board (a run's, or the merged one).  ``folders``: where the runs'
    folders are, relative to the page (``runs/``), for a link to each cell's files."""
    board = as_board(board)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>SysMoBench leaderboard {_e(board.run_id)}</title><style>{_STYLE}</style></head><body>",
        *_header(board),
        "<h2>Models</h2>", _models_table(board.models, rank_groups(board)),
        '<div class="plots">',
        _figure("Mean score per phase", _phase_bars(board.models)),
        _figure("Composite per task and model", _heatmap(board.cells)),
        _figure("Why phases failed", _failure_bars(board.models)),
        "</div>",
        "<h2>Cells</h2>", _cells_table(board.cells, folders),
        "<h2>Samples per task (pass@k)</h2>", _groups_table(board.tasks),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _header(board: Board) -> list[str]:
    facts = [f"run <code>{_e(board.run_id)}</code>", f"generated {_e(board.generated)}"]
    if len(board.runs) > 1:
        facts.append(f"merged from {len(board.runs)} runs")
    facts += [f'{_e(k)} <code title="{_e(v)}">{_e(_short(v, 24))}</code>'
              for k, v in list(board.provenance.items())[:20]]
    formula = " + ".join(f"{_number(board.weights.get(p), 2)}·{phase_of(p).short}" for p in PHASES)
    lines = ["<h1>SysMoBench leaderboard</h1>", f'<p class="meta">{" · ".join(facts)}</p>',
             f'<p class="meta">composite = {formula}; a cell charged to the benchmark (a phase it could not '
             "score, or one not run) has no composite and is kept out of every mean, best of k and pass@k, "
             "counted apart by cause</p>"]
    if any(cell.repair is not None for cell in board.cells):
        lines.append('<p class="meta">repaired composite = the same weights over P1 and P2 as written and P3 and '
                     "P4 of the spec after mechanical repair (allow-listed edits, each checked to keep what the spec "
                     "models): shown beside the composite, never merged with it</p>")
    if board.incomplete:
        lines.append(f'<p class="banner">This board is {_e(board.incomplete)}.</p>'
                     if not board.interrupted else
                     '<p class="banner">This run was interrupted: the board holds only what finished.</p>')
    if board.usage:
        lines.append(f'<p class="meta">spent: {_e(_cost(board.usage))}</p>')
    return lines


def rank_groups(board: Board) -> dict[str, int]:
    """Ranked by composite, each model joins the group of the one above it unless a permutation
    test of their samples (within each task) tells them apart: a rank that says no more than
    the evidence does."""
    ranked = [m.model for m in board.models if m.composite is not None]
    groups: dict[str, int] = {}
    for above, model in zip([None, *ranked], ranked):
        if above is None:
            groups[model] = 1
            continue
        found = compare_models([c for c in board.cells if c.model == above], [c for c in board.cells if c.model == model],
                               (above, model))
        overall = found[-1] if found else None
        groups[model] = groups[above] + (1 if overall is not None and overall.differs else 0)
    return groups


def _models_table(models: tuple[ModelRow, ...], groups: Mapping[str, int] | None = None) -> str:
    repaired = any(model.repairs is not None for model in models)
    groups = groups or {}
    head = ["model", "cells", "scored", "left out", *(PHASE_LABELS[p] for p in PHASES), "composite",
            *(["repaired"] if repaired else []), "95% interval", "rank", "best of k", "pass@1 P4", "cost"]
    rows = []
    for model in models:
        pass1 = model.pass_at_k.get("invariants", {}).get("1")
        rows.append("<tr>" + "".join([
            f"<td>{_name(model.model)}</td>", f'<td class="num">{_e(model.cells)}</td>',
            f'<td class="num scored">{_e(_known(model.scored_cells))}</td>',
            _left_out_cell(model.left_out, model.unscored),
            *(f'<td class="num">{_number(model.means.get(p))}</td>' for p in PHASES),
            f'<td class="num"><b>{_number(model.composite)}</b></td>',
            *([_repairs_cell(model.repaired_composite, model.repairs)] if repaired else []),
            _interval_cell(model), f'<td class="num">{_e(groups.get(model.model, "-"))}</td>',
            f'<td class="num">{_number(model.best_of_k)}</td>', f'<td class="num">{_number(pass1)}</td>',
            f"<td>{_e(_cost(model.usage)) if model.usage else '-'}</td>"]) + "</tr>")
    return _table(head, rows, "models") + _legend(head)


def _interval_cell(model: ModelRow) -> str:
    bounds = model.intervals.of("composite") if model.intervals is not None else None
    if bounds is None or model.intervals is None:
        return '<td class="num">-</td>'
    note = f"{model.intervals.method}" + (f"; {model.intervals.note}" if model.intervals.note else "")
    mark = " *" if model.intervals.note else ""
    return f'<td class="num" title="{_e(note)}">{bounds[0]:.3f}–{bounds[1]:.3f}{mark}</td>'


def _repairs_cell(value: float | None, counts: Mapping[str, int] | None) -> str:
    """The repaired composite, and how many cells needed which repair under it."""
    why = "".join(f'<small class="charge">{_e(status)} {n}</small>' for status, n in list((counts or {}).items())[:8])
    return f'<td class="num repaired"><b>{_number(value)}</b>{why}</td>'


def _repaired_cell(cell: CellRow) -> str:
    """A cell's repaired composite, its repair's status and edits, and why (folded)."""
    repair = cell.repair
    if repair is None:
        return '<td class="num repaired">-</td>'
    edits = f" · {repair.edits} edit{'s' if repair.edits != 1 else ''}" if repair.edits else ""
    shown = f'<b>{_number(cell.repaired_composite)}</b><small class="charge">{_e(repair.status)}{edits}</small>'
    if repair.declared:
        declared = repair.declared
        told = f" · {declared['edits']} edits" if declared.get("edits") is not None else ""
        shown += (f'<small class="charge" title="{_e(declared.get("problem") or declared.get("by"))}">'
                  f"SysMoBench: {_e(declared.get('status'))}{_e(told)}</small>")
    if repair.status is RepairStatus.NONE or not repair.reason:
        return f'<td class="num repaired">{shown}</td>'
    return (f'<td class="num repaired"><details><summary title="show the repair">{shown}</summary>'
            f"<div>{_e(_cut(repair.reason))}</div></details></td>")


def _left_out_cell(counts: Mapping[str, int] | None, unscored: int | None) -> str:
    """How many cells were left out, by cause; a board from before causes shows its unscored count."""
    if counts is None:
        return f'<td class="num left-out">{_e(_known(unscored))}</td>'
    known = list(counts.items())[:20]
    if not known:
        return '<td class="num left-out">0</td>'
    why = "".join(f'<small class="charge">{_e(cause)} {n}</small>' for cause, n in known)
    return f'<td class="num left-out">{sum(n for _, n in known)}{why}</td>'


def _cells_table(cells: Iterable[CellRow], folders: str | None) -> str:
    """The scored cells, then the ones the benchmark left out folded away under a count (a run
    with a task unavailable here, or a mutant run, would bury the scores under them)."""
    cells = tuple(cells)
    repaired = any(cell.repair is not None for cell in cells)
    made = any(cell.generation for cell in cells)
    head = ["task", "model", "kind", "sample", *(PHASE_LABELS[p] for p in PHASES), "composite",
            *(["repaired"] if repaired else []), *(["made"] if made else []), "runs"]
    scored, left = [], []
    for cell in cells:
        runs = ", ".join(_e(r) for r in cell.runs[:5])
        (scored if cell.is_spec else left).append('<tr class="cell">' + "".join([
            f"<td>{_name(cell.task)}</td>", f"<td>{_name(cell.model)}</td>", f"<td>{_kind(cell)}</td>",
            f'<td class="num">{_e(cell.sample)}</td>',
            *(_phase_cell(cell.phases.get(p)) for p in PHASES),
            _composite_cell(cell), *([_repaired_cell(cell)] if repaired else []),
            *([_made_cell(cell, folders)] if made else []), f"<td>{runs}</td>"]) + "</tr>")
    page = _table(head, scored, "cells") if scored or not left else ""
    if left:
        page += (f'<details class="fold"><summary>{len(left)} cell{"s" if len(left) != 1 else ""} left out by the '
                 "benchmark (no composite, kept out of every mean): show</summary>"
                 + _table(head, left, "cells left-out") + "</details>")
    return page + _legend(head)


def _kind(cell: CellRow) -> str:
    """What the cell's spec source is, as its records say; on a board written before they said,
    read from the label's prefix."""
    if cell.kind is not None:
        return cell.kind
    for prefix, kind in (("agent:", "agent"), ("replay:", "replay"), ("mutant:", "mutant"), ("floor:", "floor")):
        if cell.model.startswith(prefix):
            return kind
    return "reference" if cell.model == "reference" else "model"


def _feedback_parts(made: Usage) -> list[str]:
    """The ``feedback`` method's figures: the first answer's composite, and a correction that fits
    the traces it was shown better than the held-out ones."""
    attempts = made.attempts
    if made.method != "feedback" or not attempts:
        return []
    parts = []
    first = real(attempts[0].get("composite"))
    if first is not None:
        parts.append(f"first shot {first:.3f}")
    last = attempts[-1].get("phases")
    if made.fits_feedback is True and isinstance(last, Mapping):
        shown, held = real(last.get("conformance_shown")), real(last.get("conformance"))
        figures = f" (P3 {shown:.2f} on the traces it was shown, {held:.2f} held out)" if shown is not None and held is not None else ""
        parts.append(f"<b>fits the feedback</b>{figures}")
    return parts


def _made_cell(cell: CellRow, folders: str | None) -> str:
    """What the generation recorded, read as untrusted as any board's numbers."""
    made = cell.generation or Usage()
    parts = []
    scored, allowed = count(made.scored_attempt), count(made.corrections_allowed)
    if scored is not None and allowed is not None:
        parts.append(f"attempt {scored} of {allowed + 1}")
    parts += _feedback_parts(made)
    checks, limit = count(made.checks), count(made.max_checks)
    if checks is not None:
        parts.append(f"{checks} check{'s' if checks != 1 else ''}" + (f" of {limit}" if limit is not None else ""))
    seconds = real(made.seconds, upper=None)
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    if made.timed_out is True:
        parts.append("stopped at its time limit")
    elif count(made.exit_code) not in (None, 0):
        parts.append(f"exit code {_e(made.exit_code)}")
    reported = made.usage_reported
    if made.prompt_tokens is not None:
        counted = _tokens_cost(made.prompt_tokens, made.completion_tokens, made.cost_usd)
        parts.append(("counted: " if isinstance(reported, Mapping) else "") + counted)
    if isinstance(reported, Mapping):
        parts.append(f"reported: {_cost(reported)}")
    served = made.model_use
    if served is not None and served.get("budget_spent"):
        parts.append(f"<b>model budget spent</b> ({_e(served.get('budget_spent'))})")
    if made.equals_reference is True:
        parts.append("<b>equals the reference</b>")
    link = ""
    if folders is not None and cell.runs:
        href = f"{folders}{cell.runs[-1]}/{cell.task}/{slug(cell.model)}/s{cell.sample}/"
        link = f' <a href="{_e(href)}">files</a>'
    return f"<td>{'; '.join(parts)}{link}</td>"


def _composite_cell(cell: CellRow) -> str:
    left = "" if cell.is_spec else f'<small class="charge">left out: {_e(cell.cause)}</small>'
    return f'<td class="num"><b>{_number(cell.composite)}</b>{left}</td>'


def _phase_cell(result: PhaseCell | None) -> str:
    if result is None:
        return '<td class="other">not run<small class="charge">benchmark: not_run</small></td>'
    status, score = result.status, result.score
    shown = _number(score) if score is not None else _e(status.replace("_", " "))
    if status is Status.FAILED and result.failure_class:
        shown += f" <small>({_e(result.failure_class)})</small>"
    elif status not in (Status.PASSED, Status.FAILED):
        shown += f" <small>{_e(status.replace('_', ' '))}</small>" if score is not None else ""
    if result.template_fraction is not None and result.template_fraction != score:
        shown += (' <small title="the original benchmark\'s share of templates held">'
                  f"{_number(result.template_fraction)} held</small>")
    if result.rates is not None and result.rates.window_pass_rate is not None:
        shown += (' <small title="the share of all windows that passed (the original\'s raw rate), beside the '
                  f'zero-tolerance score">{_number(result.rates.window_pass_rate)} of windows</small>')
    css = status.value if status in (Status.PASSED, Status.FAILED) else "other"
    if not result.is_spec:  # the spec's outcomes are the default and go unmarked
        shown += f'<small class="charge">benchmark: {_e(result.cause)}</small>'
    if not result.reason:
        return f'<td class="{css}">{shown}</td>'
    return (f'<td class="{css}"><details><summary title="show why">{shown}<small class="why">why</small></summary>'
            f"<div>{_e(_cut(result.reason))}</div>{_rates(result)}</details></td>")


def _rates(result: PhaseCell) -> str:
    """P3's raw rates per action: windows passed (recall) and traced states with no step the
    system cannot take (precision)."""
    rates = result.rates
    if rates is None or not rates.actions:
        return ""
    rows = "".join(f"<tr><td>{_e(name)}</td><td>{a.passed}/{a.windows}</td>"
                   f"<td>{'-' if a.states is None else f'{a.precise}/{a.states}'}</td></tr>" for name, a in rates.actions)
    change = "" if rates.on_change is None else f"<p>P3 over the windows that change the state: {_number(rates.on_change)}</p>"
    return (f'<table class="rates"><tr><th>action</th><th>windows passed</th><th>states without an extra step</th></tr>'
            f"{rows}</table>{change}")


def _groups_table(groups: tuple[TaskRow, ...]) -> str:
    k_max = max((g.scored_samples for g in groups), default=1)
    ks = [k for k in (1, 2, 5, 10) if k <= k_max] or [1]
    head = ["task", "model", "samples", "scored", "left out", "best of k",
            *(f"pass@{k} {phase_of(p).short}" for p in PHASES for k in ks)]
    rows = []
    for group in groups:
        values = [group.pass_at_k.get(p, {}).get(str(k)) for p in PHASES for k in ks]
        rows.append("<tr>" + "".join([
            f"<td>{_name(group.task)}</td>", f"<td>{_name(group.model)}</td>",
            f'<td class="num">{_e(group.samples)}</td>', f'<td class="num">{_e(group.scored_samples)}</td>',
            _left_out_cell(group.left_out, None),
            f'<td class="num">{_number(group.best_of_k)}</td>',
            *(f'<td class="num">{_number(v)}</td>' for v in values)]) + "</tr>")
    return _table(head, rows, "samples") + _legend(head)


def _phase_bars(models: tuple[ModelRow, ...]) -> str:
    """Grouped bars: one group per model, one bar per phase, on a 0..1 scale."""
    if not models:
        return "<p>no model</p>"
    bar, left, top, plot_h = 16, 36, 10, 160
    gap = 110 - len(PHASES) * bar  # room for a model's name under its bars
    width = left + len(models) * (len(PHASES) * bar + gap) + 10
    shapes = [f'<line x1="{left}" y1="{top + plot_h * (1 - t)}" x2="{width - 10}" y2="{top + plot_h * (1 - t)}" '
              f'stroke="#d0d7de"/><text x="{left - 6}" y="{top + plot_h * (1 - t) + 4}" text-anchor="end">{t:g}</text>'
              for t in (0, 0.25, 0.5, 0.75, 1)]
    for i, model in enumerate(models):
        x0 = left + gap / 2 + i * (len(PHASES) * bar + gap)
        for j, phase in enumerate(PHASES):
            value = model.means.get(phase)
            h = plot_h * (value or 0.0)
            label = f"{_plain(model.model)}: {PHASE_LABELS[phase]} {_number(value)}"
            bounds = model.intervals.of(phase) if model.intervals is not None else None
            if bounds is not None:
                label += f" (95% interval {bounds[0]:.3f}–{bounds[1]:.3f})"
            shapes.append(f'<rect class="bar" x="{x0 + j * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 2}" '
                          f'height="{h:.1f}" fill="{PHASE_COLOURS[phase]}"><title>{_e(label)}</title></rect>')
            if bounds is not None and bounds[1] > bounds[0]:
                mid = x0 + j * bar + (bar - 2) / 2
                low, high = top + plot_h * (1 - bounds[0]), top + plot_h * (1 - bounds[1])
                shapes += [f'<line class="error-bar" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                           f'stroke="#24292f"/>' for x1, y1, x2, y2 in ((mid, low, mid, high), (mid - 3, low, mid + 3, low),
                                                                         (mid - 3, high, mid + 3, high))]
        shapes.append(f'<text x="{x0 + len(PHASES) * bar / 2:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                      f"{_e(_short(model.model, 17))}<title>{_e(_plain(model.model))}</title></text>")
    legend = "".join(f'<span><i class="swatch" style="background:{PHASE_COLOURS[p]}"></i>{PHASE_LABELS[p]}</span>'
                     for p in PHASES)
    return (f'<svg role="img" aria-label="mean score per phase and model" width="{width}" '
            f'height="{top + plot_h + 28}">{"".join(shapes)}</svg><div class="legend">{legend}</div>')


def _heatmap(cells: tuple[CellRow, ...]) -> str:
    """Tasks by models, each square the mean composite of that task's samples for that model."""
    tasks = sorted({_plain(c.task) for c in cells})
    models = sorted({_plain(c.model) for c in cells})
    if not tasks:
        return "<p>no cell</p>"
    rows = []
    for task in tasks:
        squares = []
        for model in models:
            values = [c.composite for c in cells if _plain(c.task) == task and _plain(c.model) == model]
            known = [v for v in values if v is not None]
            mean = sum(known) / len(known) if known else None
            squares.append(f'<td class="num" style="background:{_heat(mean)}" title="{_e(task)} / {_e(model)}">'
                           f"{_number(mean) if values else ''}</td>")
        rows.append(f'<tr><th title="{_e(task)}">{_e(_short(task))}</th>{"".join(squares)}</tr>')
    head = "".join(f'<th title="{_e(m)}">{_e(_short(m))}</th>' for m in models)
    return f'<table class="heat"><tr><th>task \\ model</th>{head}</tr>{"".join(rows)}</table>'


def _failure_bars(models: tuple[ModelRow, ...]) -> str:
    """One stacked bar per model: how many failed phases fell in each class (the paper's Fig. 4)."""
    counted: list[tuple[str, list[tuple[str, int]]]] = []
    for model in models:
        found = [(f"{phase_of(p).short if p in PHASES else p} {klass}", n)
                 for p, by_class in model.failure_classes.items() for klass, n in by_class.items()]
        counted.append((_plain(model.model), found))
    names = sorted({name for _, found in counted for name, _ in found})
    if not names:
        return "<p>No phase failed.</p>"
    colour = {name: CLASS_COLOURS[i % len(CLASS_COLOURS)] for i, name in enumerate(names)}
    most = max(sum(n for _, n in found) for _, found in counted) or 1
    left, bar_w, row_h = 150, 300, 22
    shapes = []
    for i, (model, found) in enumerate(counted):
        y = 6 + i * row_h
        shapes.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{_e(_short(model))}'
                      f"<title>{_e(model)}</title></text>")
        x = float(left)
        for name, n in sorted(found):
            w = bar_w * n / most
            shapes.append(f'<rect class="failure" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 6}" '
                          f'fill="{colour[name]}"><title>{_e(model)}: {_e(name)} × {n}</title></rect>')
            x += w
        shapes.append(f'<text x="{x + 4:.1f}" y="{y + 13}">{sum(n for _, n in found)}</text>')
    legend = "".join(f'<span><i class="swatch" style="background:{colour[n]}"></i>{_e(n)}</span>' for n in names)
    return (f'<svg role="img" aria-label="failed phases per class and model" width="{left + bar_w + 40}" '
            f'height="{12 + len(counted) * row_h}">{"".join(shapes)}</svg><div class="legend">{legend}</div>')


def _figure(title: str, body: str) -> str:
    return f"<figure><figcaption><b>{_e(title)}</b></figcaption>{body}</figure>"


def _table(head: Iterable[str], rows: list[str], name: str) -> str:
    header = "".join(f'<th title="{_e(_help(h))}">{_e(h)}</th>' if _help(h) else f"<th>{_e(h)}</th>" for h in head)
    body = "".join(rows) if rows else f'<tr><td colspan="99">no {name}</td></tr>'
    return f'<table class="{name}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _help(column: str) -> str:
    return COLUMN_HELP.get(column) or (
        f"the share of samples, estimated without bias, among which one of k keeps {column.split()[-1]} at 1.0"
        if column.startswith("pass@") else "")


def _legend(head: Iterable[str]) -> str:
    """The columns explained in words a reader sees without hovering."""
    items = "".join(f"<dt>{_e(h)}</dt><dd>{_e(_help(h))}</dd>" for h in head if _help(h))
    return f'<details class="help"><summary>What the columns mean</summary><dl>{items}</dl></details>'


def _heat(value: float | None) -> str:
    """Red through amber to green; grey for a cell with no composite."""
    if value is None:
        return "#eaeef2"
    return f"hsl({120 * value:.0f},65%,{78 - 8 * value:.0f}%)"


def _cost(usage: Mapping[str, Any]) -> str:
    """Usage is kept on a board as written: read here as untrusted as any board's numbers."""
    return _tokens_cost(usage.get("prompt_tokens"), usage.get("completion_tokens"),
                        usage.get("total_cost_usd", usage.get("cost_usd")), usage.get("cost_complete", True))


def _tokens_cost(prompt: object, completion: object, cost_usd: object, complete: object = True) -> str:
    tokens = (count(prompt) or 0) + (count(completion) or 0)
    cost = real(cost_usd, upper=None)
    shown = "unknown cost" if cost is None else f"${cost:.4f}"
    return f"{tokens} tokens, {shown}" + ("" if complete else " (some models unpriced)")


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _known(value: int | None) -> int | str:
    return "-" if value is None else value


def _plain(value: Any) -> str:
    return _cut(str(value if value is not None else ""), NAME_LIMIT)


def _short(value: Any, limit: int = 22) -> str:
    text = _plain(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _name(value: Any) -> str:
    return _e(_plain(value))


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def _e(value: Any) -> str:
    return html.escape(_cut(str(value if value is not None else "")), quote=True)
