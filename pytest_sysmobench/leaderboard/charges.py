"""Who each outcome on a board is charged to: the spec (scored, in the means) or the benchmark
(no score, counted apart by cause), read the same way from a fresh board and from one written
before outcomes were charged."""

from __future__ import annotations

from typing import Mapping

from ..scoring import PHASES, Cause, Charge, Status, default_cause

#: Skips that our own code worded before causes were recorded: their reason names the cause
#: better than the status does (a task unavailable offline has a spec; it has no system).
_OLD_SKIP_REASONS: tuple[tuple[str, Cause], ...] = (
    ("unavailable offline", Cause.UNAVAILABLE), ("skipped: no traces", Cause.NO_TRACES),
)
def charge_of(score: float | None, status: str, reason: str = "", charged_to: object = None,
              cause: object = None) -> tuple[Charge, Cause | None]:
    """Who a phase outcome is charged to, and why when it is the benchmark.

    A score with no charge, or the spec's, is the spec's; no score is always the benchmark's,
    whatever an older record says, since there is nothing to count.  A record from before
    charges were recorded is read by its status."""
    if score is not None and charged_to != Charge.BENCHMARK:
        return Charge.SPEC, None
    return Charge.BENCHMARK, _cause_of(status, reason, cause)


def _cause_of(status: str, reason: str, given: object) -> Cause:
    known = Cause.read(given)
    if known is not None:
        return known
    if status == Status.SKIPPED:
        for prefix, cause in _OLD_SKIP_REASONS:
            if reason.startswith(prefix):
                return cause
    return default_cause(status)


def cell_charge(phases: Mapping[str, tuple[Charge, Cause | None]]) -> tuple[Charge, Cause | None]:
    """A cell is the spec's only when every phase ran and is the spec's; else the first phase in
    phase order that is not says why (one cause per cell, so that the counts add up to cells).
    ``phases`` holds each phase's charge, as ``charge_of`` reads it."""
    for phase in PHASES:
        if phase not in phases:
            return Charge.BENCHMARK, Cause.NOT_RUN
        charged_to, cause = phases[phase]
        if charged_to is Charge.BENCHMARK:
            return charged_to, cause
    return Charge.SPEC, None
