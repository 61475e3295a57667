"""P3's precision asked of states the traces never reached.

The traces show a few hundred states of each system; a spec's bounded exploration reaches many
more.  From a sample of the states P4's exploration reaches that no trace shows, every step of
the spec, read through its mapping, must be one the task's reference can take from the same
canonical state (or changes nothing).  It is the same check as P3's precision, from other
pre-states, so one piece of code serves both.

It is a diagnostic beside P4's score, not part of it: the reference is validated against the
real traces and the mutants, not against states no run of the system reached, and from a state
the system never reaches (one a wrong spec led to) the reference's steps say little about what
the system would do.  A step the reference cannot take there is evidence for a reviewer, not a
verdict.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Iterable, Mapping as TMapping

from ..mapping import Mapping
from ..scoring import PhaseResult
from ..tla.values import record_literal
from ..traces import Corpus
from ._codec import MappingProblem, prepare_codec
from ._context import CellContext
from ._precision import OTHER, ReferenceUnfit, check_precision

#: Whether P4 asks it (``perf/bench.py`` measures what it costs).
BEYOND_TRACES = True
#: How many of the untraced states P4's run printed are judged: a sample fixed by the states'
#: content, the same on every machine.
JUDGED = 60
ORIGIN = "a state the spec reaches that no trace shows"


def beyond_traces(ctx: CellContext, mapping: Mapping, corpus: Corpus, readings: Iterable[Any],
                  names: TMapping[str, Any], verdict: PhaseResult) -> PhaseResult:
    """P4's verdict with the check beyond the traces beside it (``beyond_traces`` in the details
    and a line of the reason); the score is left as it is."""
    found = _measure(ctx, mapping, corpus, list(readings), names)
    return dataclasses.replace(verdict, details={**verdict.details, "beyond_traces": found},
                               reason=f"{verdict.reason}\n{_line(found)}")


def _measure(ctx: CellContext, mapping: Mapping, corpus: Corpus, readings: list[Any],
             names: TMapping[str, Any]) -> dict[str, Any]:
    if any(not isinstance(v, str) for v in names.values()):
        return {"measured": False, "why": "the cfg names the processes by values the traces cannot be read back from"}
    back = {v: k for k, v in names.items()}
    variables = {v.name for v in ctx.task.vocabulary.variables}
    states: dict[str, dict[str, Any]] = {}
    for reading in readings:
        try:
            state = _trace_value(reading, back)
        except ValueError:
            continue
        if isinstance(state, dict) and set(state) == variables:
            states.setdefault(record_literal(state), state)
    if not states:
        return {"measured": False, "why": "the exploration reached no state the traces do not show"}
    chosen = [states[k] for k in sorted(states, key=lambda k: hashlib.sha256(k.encode()).hexdigest())[:JUDGED]]
    try:
        codec, config = prepare_codec(ctx, mapping, corpus)
        missing = ctx.missing_actions(codec.mapping)
        judged = [a.name for a in ctx.task.vocabulary.actions if a.name not in missing]
        precision = check_precision(ctx, codec, config, corpus, judged, chosen, ORIGIN, "invariants")
    except (MappingProblem, ReferenceUnfit, ValueError) as exc:
        return {"measured": False, "why": str(exc)}
    extra = {a: f"{len(p.extra)} of {p.states}" for a, p in precision.actions.items() if p.extra}
    first = next((p.first for p in precision.actions.values() if p.extra and p.first), "")
    return {"measured": True, "scored": False, "states": len(chosen), "untraced_seen": len(states),
            "over_permissive": extra, "first_extra": first,
            "not_judged": {a: p.unjudged for a, p in precision.actions.items() if p.unjudged}}


def _trace_value(value: Any, back: TMapping[str, str]) -> Any:
    """A value TLC printed, as the traces write it (sets tagged, sequences as lists), with the
    cfg's process names put back as the traces name them."""
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return back.get(value, value)
    if isinstance(value, tuple):
        return [_trace_value(v, back) for v in value]
    if isinstance(value, frozenset):
        return {"$set": [_trace_value(v, back) for v in value]}
    if hasattr(value, "items"):
        items = {}
        for key, item in value.items():
            key = back.get(key, key) if isinstance(key, str) else key
            if not isinstance(key, str):
                raise ValueError(f"a function over {key!r} has no reading in the traces' JSON")
            items[key] = _trace_value(item, back)
        return items
    raise ValueError(f"no reading in the traces' JSON for {value!r}")


def _line(found: TMapping[str, Any]) -> str:
    head = "beyond the traces (a diagnostic, not scored)"
    if not found.get("measured"):
        return f"{head}: not measured: {found.get('why')}"
    extra = found["over_permissive"]
    if not extra:
        unjudged = found["not_judged"]
        note = f" ({len(unjudged)} action(s) not judged: {next(iter(unjudged.values()))})" if unjudged else ""
        return (f"{head}: from {found['states']} states the spec reaches that no trace shows, "
                f"every step judged is one the reference can take{note}")
    listed = ", ".join(f"{'steps of no action' if a == OTHER else a} from {n}" for a, n in extra.items())
    return f"{head}: steps the reference cannot take: {listed} states\n  {found['first_extra']}"
