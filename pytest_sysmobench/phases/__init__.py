"""The four phases; each takes a :class:`CellContext` and returns a :class:`PhaseResult`."""

from __future__ import annotations

from typing import Callable

from ..scoring import PhaseResult
from ._context import CellContext
from .conformance import check_conformance
from .invariants import check_invariants
from .runtime import check_runtime
from .syntax import check_syntax

CHECKS: dict[str, Callable[[CellContext], PhaseResult]] = {
    "syntax": check_syntax,
    "runtime": check_runtime,
    "conformance": check_conformance,
    "invariants": check_invariants,
}



def gate_results(ctx: CellContext) -> tuple[PhaseResult, ...]:
    """P1, then P2 if P1 passed: what P3 and P4 wait for, and what a correction round or a
    repair round is judged by."""
    syntax = check_syntax(ctx)
    if not syntax.usable:
        return (syntax,)
    return (syntax, check_runtime(ctx))


__all__ = ["CHECKS", "CellContext", "gate_results", "check_conformance", "check_invariants", "check_runtime", "check_syntax"]
