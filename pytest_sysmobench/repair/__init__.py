"""Spec repair: the mechanical edits a program can make to a spec that fails P1 or P2, each tied
to a rule, and a check on SANY's reading that the repaired spec still models what was written."""

from __future__ import annotations

from .engine import MAX_ROUNDS, RULES_VERSION, Repair, Repairer, status_of
from .intent import Intent, judge
from .model import Mender, RepairModelError
from .rules import Edit

__all__ = ["MAX_ROUNDS", "RULES_VERSION", "Edit", "Intent", "Mender", "Repair", "RepairModelError", "Repairer", "judge",
           "status_of"]
