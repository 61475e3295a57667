"""Who each outcome on a board is charged to: the spec (scored, in the means) or the benchmark
(no score, counted apart by cause), read the same way from a fresh board and from one written
before outcomes were charged."""

from __future__ import annotations

from typing import Any, Mapping

from ..scoring import PHASES, Cause, Charge, Status, default_cause

#: Skips that our own code worded before causes were recorded: their reason names the cause
#: better than the status does (a task unavailable offline has a spec; it has no system).
_OLD_SKIP_REASONS: tuple[tuple[str, Cause], ...] = (
    ("unavailable offline", Cause.UNAVAILABLE), ("skipped: no traces", Cause.NO_TRACES),
)
_CAUSES = frozenset(c.value for c in Cause)


def charge_of(result: Mapping[str, Any]) -> tuple[str, str | None]:
    """Who a phase outcome is charged to, and why when it is the benchmark.

    A score with no charge, or the spec's, is the spec's; no score is always the benchmark's,
    whatever an older record (or ``PhaseRecord``'s default) says, since there is nothing to
    count.  A record from before charges were recorded is read by its status."""
    if result.get("score") is not None and result.get("charged_to") != Charge.BENCHMARK.value:
        return Charge.SPEC.value, None
    return Charge.BENCHMARK.value, _cause_of(result)


def _cause_of(result: Mapping[str, Any]) -> str:
    given = result.get("cause")
    if isinstance(given, str) and given in _CAUSES:
        return given
    status = str(result.get("status") or "")
    if status == Status.SKIPPED.value:
        reason = str(result.get("reason") or "")
        for prefix, cause in _OLD_SKIP_REASONS:
            if reason.startswith(prefix):
                return cause.value
    return default_cause(status).value


def cell_charge(phases: Mapping[str, tuple[str, str | None]]) -> tuple[str, str | None]:
    """A cell is the spec's only when every phase ran and is the spec's; else the first phase in
    phase order that is not says why (one cause per cell, so that the counts add up to cells).
    ``phases`` holds each phase's charge, as ``charge_of`` reads it."""
    for phase in PHASES:
        if phase not in phases:
            return Charge.BENCHMARK.value, Cause.NOT_RUN.value
        charged_to, cause = phases[phase]
        if charged_to == Charge.BENCHMARK.value:
            return charged_to, cause
    return Charge.SPEC.value, None
