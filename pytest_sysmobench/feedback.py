"""Corrections from the system's behaviour (``--sysmobench-method feedback``).

A spec that P1 and P2 accept is judged as P3 and P4 would judge it, and what they find is sent
back in the task's canonical vocabulary: per failing action its first failing window (the
pre-state, the action and its arguments, the real post-state, where the spec's closest step
differs) and its first step the system cannot take, and the properties that fail with their
counterexamples.
Never the reference spec, never a template's text.  The evidence comes from the task's feedback
seeds only; the spec is scored on the held-out seeds, which it never saw, with the feedback
seeds' figure beside it, so a correction that fits the windows it was shown is seen as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .scoring import PhaseResult, Status, composite
from .tasks import Task

#: How much of each failing window's description, and of each failed property's reason, is sent.
EVIDENCE_CHARS = 1_500
#: How many failing actions and failed properties one correction shows.
MOST_SHOWN = 6
#: What P4's generated module prefixes each template's name with (``Sysmo_RequestConsistency``).
TEMPLATE_PREFIX = "Sysmo_"


@dataclass(frozen=True)
class Judged:
    """A usable spec judged beyond P1 and P2: P3 on the traces feedback may show (``shown``), P3
    on the held-out traces (``held_out``, what the cell is scored on), and P4."""

    shown: PhaseResult
    held_out: PhaseResult
    invariants: PhaseResult

    @property
    def complete(self) -> bool:
        """Nothing left to correct that the feedback could show."""
        return self.shown.status is Status.PASSED and self.invariants.status is Status.PASSED

    def figures(self, gate: tuple[PhaseResult, ...]) -> dict[str, Any]:
        """The round's figures as the board keeps them: each phase's score (P3 held-out, and the
        feedback seeds' P3 beside it) and the composite the cell would have with this answer."""
        results = {r.phase: r for r in gate} | {"conformance": self.held_out, "invariants": self.invariants}
        return {"phases": {p: r.score for p, r in results.items()} | {"conformance_shown": self.shown.score},
                "composite": composite(results)}


#: Judges a candidate that passed P1 and P2 for the attempt numbered; None when it could not be
#: judged (the cell's budget is spent): then nothing more is asked.
Judge = Callable[[Any, int], "Judged | None"]


def evidence(task: Task, judged: Judged) -> str:
    """What the correction prompt shows: P3's failures on the feedback seeds, and P4's."""
    lines = []
    shown = judged.shown
    if shown.status is not Status.PASSED:
        lines.append(f"- P3, your spec against traces of the real system: {shown.reason.partition(chr(10))[0]}")
        actions = shown.details.get("actions") or {}
        failing = [(name, a) for name, a in actions.items() if isinstance(a, dict) and a.get("score") != 1.0]
        for name, action in failing[:MOST_SHOWN]:
            lines.append(f"  - {name}: {action.get('passed')}/{action.get('windows')} windows pass")
            for text in (action.get("error"), action.get("first_failure"), (action.get("precision") or {}).get("first_extra")):
                if text:
                    lines.append(_indented(str(text)[:EVIDENCE_CHARS]))
        other = ((shown.details.get("precision") or {}).get("other_steps") or {}).get("first_extra")
        if other:
            lines.append("  - steps of no action of the task:")
            lines.append(_indented(str(other)[:EVIDENCE_CHARS]))
    meanings = {t.name: " ".join(t.meaning.split()) for t in task.templates}
    failed = [t for t in judged.invariants.details.get("templates") or []
              if isinstance(t, dict) and t.get("status") != "passed"]
    if failed or judged.invariants.status is not Status.PASSED:
        lines.append(f"- P4, the system's properties: {judged.invariants.reason.partition(chr(10))[0]}")
        for template in failed[:MOST_SHOWN]:
            name = str(template.get("name"))
            lines.append(f"  - {name}: {meanings.get(name, '')}")
            lines.append(_indented(str(template.get("reason") or "")[:EVIDENCE_CHARS]))
            preview = template.get("trace")
            if isinstance(preview, list) and preview:
                lines.append(_indented("counterexample (your spec's states):\n" + "\n".join(map(str, preview))[:EVIDENCE_CHARS]))
    # The benchmark's own names for the checks it generates mean nothing to the model.
    return "\n".join(lines).replace(TEMPLATE_PREFIX, "")


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def fits_feedback(task: Task, figures: dict[str, Any]) -> bool:
    """Whether a corrected spec's P3 on the traces it was shown is above its P3 on the held-out
    ones by more than the task's noise: P3 moves by whole actions (an action scores 0 or 1), so
    half of one target action's share is below any real difference."""
    phases = figures.get("phases") or {}
    shown, held = phases.get("conformance_shown"), phases.get("conformance")
    if not isinstance(shown, (int, float)) or not isinstance(held, (int, float)):
        return False
    return shown - held > 0.5 / max(1, len(task.target_actions))
