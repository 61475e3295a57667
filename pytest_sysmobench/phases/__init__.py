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

__all__ = ["CHECKS", "CellContext", "check_conformance", "check_invariants", "check_runtime", "check_syntax"]
