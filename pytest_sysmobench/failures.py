"""Why a phase failed, as a class that can be counted (the original paper's error study, Fig. 4).

Each failed phase result carries ``details["failure_class"]``; the leaderboard counts them per
model and phase (``leaderboard.board``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from .tasks import TYPE_TEMPLATE
from .tla.messages import TlcResult, Verdict
from .tla.sany import SanyErrorKind, SanyResult

_PYTHON_LINE = re.compile(r"^\s*(def \w+\(.*\)\s*:|class \w+.*:|import \w+|from \w+ import |return\b|self\.)", re.M)
_FAIRNESS = re.compile(r"\b[WS]F_")
#: How P4 says that a template reads a variable the spec's mapping leaves unmodelled.
UNMODELLED_NOTE = "which the mapping leaves unmodelled"
#: How P4 says that a template held only because its premise never did.
VACUOUS_NOTE = "holds only vacuously"

RUNTIME_CLASSES = {
    Verdict.EVAL_ERROR: "evaluation_error",
    Verdict.CONFIG_ERROR: "config_error",
    Verdict.DEADLOCK: "deadlock",
    Verdict.ASSERT_FAILED: "assertion_failed",
    Verdict.ASSUMPTION_FALSE: "assumption_false",
    Verdict.VACUOUS: "no_initial_state",
    Verdict.TIMEOUT: "timeout",
    Verdict.OUTPUT_LIMIT: "output_limit",
    Verdict.PARSE_ERROR: "parse_error",
    Verdict.OUT_OF_MEMORY: "out_of_memory",
    Verdict.INVARIANT_VIOLATION: "cfg_invariant_violated",
    Verdict.LIVENESS_VIOLATION: "cfg_property_violated",
}


def looks_like_python(text: str) -> bool:
    return len(_PYTHON_LINE.findall(text[:200_000])) >= 2


def no_module_class(problem: str) -> str:
    return "python_syntax" if "looks like Python" in problem else "no_module"


def syntax_class(result: SanyResult, spec: str) -> str:
    """The first SANY error's kind, told apart where models typically go wrong."""
    first = result.errors[0] if result.errors else None
    if first is None:
        return "other"
    if looks_like_python(spec):
        return "python_syntax"
    if first.kind is SanyErrorKind.LEXICAL and not spec.isascii():
        return "non_ascii_operator"
    if first.kind is SanyErrorKind.UNKNOWN_OPERATOR:
        return "undefined_operator"
    return first.kind.value


def runtime_class(bfs: TlcResult, runtime_ok: bool) -> str:
    if runtime_ok:
        return "actions_never_fire"
    return RUNTIME_CLASSES.get(bfs.verdict, bfs.verdict.value.lower())


def invariants_class(failed: Iterable[Mapping[str, Any]], spec: str) -> str:
    """Types before safety before liveness.  A liveness counterexample that ends stuttering (the system just
    stops where the property needs a step), or any in a spec with no fairness at all, is a
    missing fairness condition; one that loops is a liveness violation proper."""
    failed = list(failed)
    violated = [t for t in failed if " violated" in str(t.get("reason", ""))]
    if any(t.get("name") == TYPE_TEMPLATE for t in violated):
        return "type_violation"  # a value outside the task's types: the templates judged nonsense
    if any(t.get("kind") == "safety" for t in violated):
        return "safety_violation"
    if violated:
        stutters = any(t.get("stuttering") for t in violated)
        return "fairness_missing" if stutters or not _FAIRNESS.search(spec) else "liveness_violation"
    if any(VACUOUS_NOTE in str(t.get("reason", "")) for t in failed):
        return "vacuous"  # templates whose premise no explored state reaches
    if any(UNMODELLED_NOTE in str(t.get("reason", "")) for t in failed):
        return "unmodelled_variables"  # templates about what the spec chose not to model
    if any("charged to the spec" in str(t.get("reason", "")) for t in failed):
        return "timeout"  # a check only seconds (or the spec itself) could stop
    return "evaluation_error" if failed else "other"
