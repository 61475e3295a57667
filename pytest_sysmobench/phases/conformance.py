"""P3: can the spec take every step the real system took?

Traces captured from the running system live under ``data/traces/<task>/``.  Until a task
has them, the phase says so: skipped, with that reason, and a score of 0 in the composite.
"""

from __future__ import annotations

from ..scoring import PhaseResult, Status
from ._context import CellContext


def trace_files(ctx: CellContext) -> list[str]:
    folder = ctx.traces_dir / ctx.task.name
    return sorted(p.name for p in folder.glob("*.ndjson")) if folder.is_dir() else []


def check_conformance(ctx: CellContext) -> PhaseResult:
    if not trace_files(ctx):
        return PhaseResult("conformance", Status.SKIPPED, 0.0, f"skipped: no traces for task {ctx.task.name}")
    return PhaseResult(
        "conformance", Status.SKIPPED, 0.0, f"skipped: trace validation is not implemented for task {ctx.task.name}"
    )
