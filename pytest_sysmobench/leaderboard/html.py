"""The leaderboard as one HTML page that a person would rather look at than read.

The page is self-contained: styles inline, plots as inline SVG, no script and no request at
view time (its Content-Security-Policy forbids both).  Every string on it comes from a board,
and boards carry text from specs, traces and models: all of it is escaped, and a board read
from a file is not trusted to hold numbers where numbers belong.
"""

from __future__ import annotations

import html
import math
from typing import Any, Iterable, Mapping

from ..scoring import PHASE_TABLE, PHASES, phase_of
from .charges import charge_of, charge_of_cell

PHASE_LABELS = {p.name: p.label for p in PHASE_TABLE}
PHASE_COLOURS = {"syntax": "#4e79a7", "runtime": "#59a14f", "conformance": "#f28e2b", "invariants": "#b07aa1"}
CLASS_COLOURS = ("#e15759", "#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac", "#86bcb6", "#d37295")
#: A board's reasons are already capped; a board from elsewhere is held to the same length here.
TEXT_LIMIT = 2000
NAME_LIMIT = 200

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
"""


def render(board: Mapping[str, Any]) -> str:
    """The page for one board (a run's, or the merged one)."""
    cells = [c for c in _list(board.get("cells")) if isinstance(c, Mapping)]
    models = [m for m in _list(board.get("models")) if isinstance(m, Mapping)]
    groups = [g for g in _list(board.get("tasks")) if isinstance(g, Mapping)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>SysMoBench leaderboard {_e(board.get('run_id'))}</title><style>{_STYLE}</style></head><body>",
        *_header(board),
        "<h2>Models</h2>", _models_table(models),
        '<div class="plots">',
        _figure("Mean score per phase", _phase_bars(models)),
        _figure("Composite per task and model", _heatmap(cells)),
        _figure("Why phases failed", _failure_bars(models)),
        "</div>",
        "<h2>Cells</h2>", _cells_table(cells),
        "<h2>Samples per task (pass@k)</h2>", _groups_table(groups),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _header(board: Mapping[str, Any]) -> list[str]:
    provenance = board.get("provenance") if isinstance(board.get("provenance"), Mapping) else {}
    weights = board.get("weights") if isinstance(board.get("weights"), Mapping) else {}
    facts = [f"run <code>{_e(board.get('run_id'))}</code>", f"generated {_e(board.get('generated'))}"]
    runs = _list(board.get("runs"))
    if len(runs) > 1:
        facts.append(f"merged from {len(runs)} runs")
    facts += [f'{_e(k)} <code title="{_e(v)}">{_e(_short(v, 24))}</code>' for k, v in list(provenance.items())[:20]]
    formula = " + ".join(f"{_number(weights.get(p), 2)}·{phase_of(p).short}" for p in PHASES)
    lines = ["<h1>SysMoBench leaderboard</h1>", f'<p class="meta">{" · ".join(facts)}</p>',
             f'<p class="meta">composite = {formula}; a cell charged to the benchmark (a phase it could not '
             "score, or one not run) has no composite and is kept out of every mean, best of k and pass@k, "
             "counted apart by cause</p>"]
    if board.get("interrupted"):
        lines.append('<p class="banner">This run was interrupted: the board holds only what finished.</p>')
    usage = board.get("usage") if isinstance(board.get("usage"), Mapping) else None
    if usage:
        lines.append(f'<p class="meta">spent: {_e(_cost(usage))}</p>')
    return lines


def _models_table(models: list[Mapping[str, Any]]) -> str:
    head = ["model", "cells", "scored", "left out", *(PHASE_LABELS[p] for p in PHASES), "composite", "best of k",
            "pass@1 P4", "cost"]
    rows = []
    for model in models:
        pass1 = ((model.get("pass_at_k") or {}).get("invariants") or {}).get("1") if isinstance(
            model.get("pass_at_k"), Mapping) else None
        usage = model.get("usage") if isinstance(model.get("usage"), Mapping) else None
        rows.append("<tr>" + "".join([
            f"<td>{_name(model.get('model'))}</td>", f'<td class="num">{_e(model.get("cells"))}</td>',
            f'<td class="num scored">{_e(model.get("scored_cells", "-"))}</td>', _left_out_cell(model),
            *(f'<td class="num">{_number(model.get(p))}</td>' for p in PHASES),
            f'<td class="num"><b>{_number(model.get("composite"))}</b></td>',
            f'<td class="num">{_number(model.get("best_of_k"))}</td>', f'<td class="num">{_number(pass1)}</td>',
            f"<td>{_e(_cost(usage)) if usage else '-'}</td>"]) + "</tr>")
    return _table(head, rows, "models")


def _left_out_cell(row: Mapping[str, Any]) -> str:
    """How many cells were left out, by cause; a board from before causes shows its unscored count."""
    counts = row.get("left_out")
    if not isinstance(counts, Mapping):
        return f'<td class="num left-out">{_e(row.get("unscored", "-"))}</td>'
    known = [(str(cause), _int(n)) for cause, n in list(counts.items())[:20] if _int(n) > 0]
    if not known:
        return '<td class="num left-out">0</td>'
    why = "".join(f'<small class="charge">{_e(cause)} {n}</small>' for cause, n in known)
    return f'<td class="num left-out">{sum(n for _, n in known)}{why}</td>'


def _cells_table(cells: list[Mapping[str, Any]]) -> str:
    head = ["task", "model", "sample", *(PHASE_LABELS[p] for p in PHASES), "composite", "runs"]
    rows = []
    for cell in cells:
        phases = cell.get("phases") if isinstance(cell.get("phases"), Mapping) else {}
        runs = ", ".join(_e(r) for r in _list(cell.get("runs"))[:5])
        rows.append('<tr class="cell">' + "".join([
            f"<td>{_name(cell.get('task'))}</td>", f"<td>{_name(cell.get('model'))}</td>",
            f'<td class="num">{_e(cell.get("sample"))}</td>',
            *(_phase_cell(phases.get(p)) for p in PHASES),
            _composite_cell(cell, phases), f"<td>{runs}</td>"]) + "</tr>")
    return _table(head, rows, "cells")


def _composite_cell(cell: Mapping[str, Any], phases: Mapping[str, Any]) -> str:

    charged_to, cause = charge_of_cell({**cell, "phases": phases})
    left = f'<small class="charge">left out: {_e(cause)}</small>' if charged_to == "benchmark" else ""
    return f'<td class="num"><b>{_number(cell.get("composite"))}</b>{left}</td>'


def _phase_cell(result: Any) -> str:

    if not isinstance(result, Mapping):
        return '<td class="other">not run<small class="charge">benchmark: not_run</small></td>'
    status = str(result.get("status") or "")
    score = _real(result.get("score"))
    shown = _number(score) if score is not None else _e(status.replace("_", " "))
    if status == "failed" and result.get("failure_class"):
        shown += f" <small>({_e(result['failure_class'])})</small>"
    elif status not in ("passed", "failed"):
        shown += f" <small>{_e(status.replace('_', ' '))}</small>" if score is not None else ""
    css = status if status in ("passed", "failed") else "other"
    charged_to, cause = charge_of(result)
    if charged_to == "benchmark":  # the spec's outcomes are the default and go unmarked
        shown += f'<small class="charge">benchmark: {_e(cause)}</small>'
    reason = str(result.get("reason") or "")
    if not reason:
        return f'<td class="{css}">{shown}</td>'
    return f'<td class="{css}"><details><summary>{shown}</summary><div>{_e(_cut(reason))}</div></details></td>'


def _groups_table(groups: list[Mapping[str, Any]]) -> str:
    k_max = max((_int(g.get("scored_samples", g.get("samples"))) for g in groups), default=1)
    ks = [k for k in (1, 2, 5, 10) if k <= k_max] or [1]
    head = ["task", "model", "samples", "scored", "left out", "best of k",
            *(f"pass@{k} {phase_of(p).short}" for p in PHASES for k in ks)]
    rows = []
    for group in groups:
        passes = group.get("pass_at_k") if isinstance(group.get("pass_at_k"), Mapping) else {}
        values = [(passes.get(p) or {}).get(str(k)) if isinstance(passes.get(p), Mapping) else None
                  for p in PHASES for k in ks]
        rows.append("<tr>" + "".join([
            f"<td>{_name(group.get('task'))}</td>", f"<td>{_name(group.get('model'))}</td>",
            f'<td class="num">{_e(group.get("samples"))}</td>',
            f'<td class="num">{_e(group.get("scored_samples", group.get("samples")))}</td>', _left_out_cell(group),
            f'<td class="num">{_number(group.get("best_of_k"))}</td>',
            *(f'<td class="num">{_number(v)}</td>' for v in values)]) + "</tr>")
    return _table(head, rows, "samples")


def _phase_bars(models: list[Mapping[str, Any]]) -> str:
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
            value = _real(model.get(phase))
            h = plot_h * (value or 0.0)
            label = f"{_plain(model.get('model'))}: {PHASE_LABELS[phase]} {_number(value)}"
            shapes.append(f'<rect class="bar" x="{x0 + j * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 2}" '
                          f'height="{h:.1f}" fill="{PHASE_COLOURS[phase]}"><title>{_e(label)}</title></rect>')
        shapes.append(f'<text x="{x0 + len(PHASES) * bar / 2:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                      f"{_e(_short(model.get('model'), 17))}<title>{_e(_plain(model.get('model')))}</title></text>")
    legend = "".join(f'<span><i class="swatch" style="background:{PHASE_COLOURS[p]}"></i>{PHASE_LABELS[p]}</span>'
                     for p in PHASES)
    return (f'<svg role="img" aria-label="mean score per phase and model" width="{width}" '
            f'height="{top + plot_h + 28}">{"".join(shapes)}</svg><div class="legend">{legend}</div>')


def _heatmap(cells: list[Mapping[str, Any]]) -> str:
    """Tasks by models, each square the mean composite of that task's samples for that model."""
    tasks = sorted({_plain(c.get("task")) for c in cells})
    models = sorted({_plain(c.get("model")) for c in cells})
    if not tasks:
        return "<p>no cell</p>"
    rows = []
    for task in tasks:
        squares = []
        for model in models:
            values = [_real(c.get("composite")) for c in cells
                      if _plain(c.get("task")) == task and _plain(c.get("model")) == model]
            known = [v for v in values if v is not None]
            mean = sum(known) / len(known) if known else None
            squares.append(f'<td class="num" style="background:{_heat(mean)}" title="{_e(task)} / {_e(model)}">'
                           f"{_number(mean) if values else ''}</td>")
        rows.append(f"<tr><th>{_e(_short(task))}</th>{''.join(squares)}</tr>")
    head = "".join(f'<th title="{_e(m)}">{_e(_short(m))}</th>' for m in models)
    return f'<table class="heat"><tr><th>task \\ model</th>{head}</tr>{"".join(rows)}</table>'


def _failure_bars(models: list[Mapping[str, Any]]) -> str:
    """One stacked bar per model: how many failed phases fell in each class (the paper's Fig. 4)."""
    counted: list[tuple[str, list[tuple[str, int]]]] = []
    for model in models:
        classes = model.get("failure_classes") if isinstance(model.get("failure_classes"), Mapping) else {}
        found = [(f"{(phase_of(str(p)).short if str(p) in PHASES else str(p))} {klass}", _int(n))
                 for p, by_class in classes.items() if isinstance(by_class, Mapping)
                 for klass, n in by_class.items() if _int(n) > 0]
        counted.append((_plain(model.get("model")), found))
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
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join(rows) if rows else f'<tr><td colspan="99">no {name}</td></tr>'
    return f'<table class="{name}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _heat(value: float | None) -> str:
    """Red through amber to green; grey for a cell with no composite."""
    if value is None:
        return "#eaeef2"
    return f"hsl({120 * value:.0f},65%,{78 - 8 * value:.0f}%)"


def _cost(usage: Mapping[str, Any]) -> str:
    tokens = _int(usage.get("prompt_tokens")) + _int(usage.get("completion_tokens"))
    cost = _real(usage.get("total_cost_usd", usage.get("cost_usd")), upper=None)
    shown = "unknown cost" if cost is None else f"${cost:.4f}"
    return f"{tokens} tokens, {shown}" + ("" if usage.get("cost_complete", True) else " (some models unpriced)")


def _real(value: Any, upper: float | None = 1.0) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if value < 0 or (upper is not None and value > upper):
        return None
    return float(value)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12 else 0


def _number(value: Any, digits: int = 3) -> str:
    real = _real(value)
    return "-" if real is None else f"{real:.{digits}f}"


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


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
