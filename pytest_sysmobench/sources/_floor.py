"""Floor rows: specs that show what a phase gives for nothing, beside the reference's ceiling.

``floor:noop`` does nothing: the task's canonical variables start where the real system started
(its first trace) and every action of the vocabulary is a step that changes nothing.
``floor:loose`` allows too much: the task's reference, with every target action allowed to take
any step the reference's next-state relation can take (an ``Acquire(t1)`` that lets any thread
in, a failed ``try_lock`` on a free lock).  Both are scored like any spec; a model's row means
something only as far as it stands above them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..mapping import ActionCall, ActionMap
from ..tasks import Task
from ..tla import modules
from ..tla.values import tla_literal
from ..traces import TraceError, load_trace
from ._candidate import Candidate, SpecSource, with_spec

#: The floors there are, and what each stands for.
FLOORS = {
    "noop": "every action a step that changes nothing, from the system's initial state",
    "loose": "the reference, every target action allowed any step of its next-state relation",
}
PREFIX = "floor:"


class FloorSource(SpecSource):
    """A spec made from the task itself, the same for every model: a floor to read scores by."""

    kind = "floor"

    def __init__(self, floor: str, traces_dir: Path) -> None:
        self.floor = floor
        self.name = f"{PREFIX}{floor}"
        self.traces_dir = traces_dir

    def candidate(self, task: Task, sample: int, check: Any = None, judge: Any = None) -> Candidate:
        base = Candidate(task.name, self.name, sample, task.module, origin=f"{self.name}: {FLOORS[self.floor]}")
        if self.floor == "noop":
            return self._noop(base, task)
        return self._loose(base, task)

    def _noop(self, base: Candidate, task: Task) -> Candidate:
        start = self._initial_state(task)
        if start is None:
            return dataclasses.replace(base, absent=f"floor:noop starts where the system did: task {task.name} has no "
                                                    f"trace in {self.traces_dir / task.name}")
        vocabulary = task.vocabulary
        names = [v.name for v in vocabulary.variables]
        lines = []
        if vocabulary.constants:
            lines.append("CONSTANTS " + ", ".join(c.name for c in vocabulary.constants))
        lines += [f"VARIABLES {', '.join(names)}", f"vars == <<{', '.join(names)}>>",
                  "Init ==\n    " + "\n    ".join(f"/\\ {n} = {tla_literal(start[n])}" for n in names)]
        steps = []
        for action in vocabulary.actions:
            params = f"({', '.join(action.params)})" if action.params else ""
            lines.append(f"{action.name}{params} == UNCHANGED vars")
            bounds = ", ".join(f"{p} \\in {vocabulary.domain(p)}" for p in action.params)
            steps.append(f"\\E {bounds} : {action.name}{params}" if bounds else action.name)
        lines += ["Next ==\n    " + "\n    ".join(f"\\/ {s}" for s in steps), "Spec == Init /\\ [][Next]_vars"]
        text = modules.module(task.module, "\n".join(lines), ("Naturals", "Integers", "Sequences", "FiniteSets", "TLC"))
        return with_spec(base, task, text, None, None)

    def _initial_state(self, task: Task) -> dict | None:
        for path in sorted((self.traces_dir / task.name).glob("*.ndjson")):
            try:
                return dict(load_trace(path, task).states[0])
            except TraceError:
                continue
        return None

    def _loose(self, base: Candidate, task: Task) -> Candidate:
        from ._builtin import ReferenceSource

        reference = ReferenceSource().candidate(task, 0)
        if reference.tla is None or reference.mapping is None:
            return dataclasses.replace(base, absent=f"floor:loose is made from task {task.name}'s reference, which has "
                                                    "no spec with a mapping")
        from ..tla.cfg import Config
        from ..tla.grammar import spec_parts

        config = Config.parse(reference.cfg or "")
        formula = next((s.names()[0] for s in config.sections if s.canonical == "SPECIFICATION" and s.names()), "Spec")
        parts = spec_parts([reference.tla], formula)
        if parts is None:
            return dataclasses.replace(base, absent=f"floor:loose: task {task.name}'s reference has no next-state "
                                                    "relation to loosen")
        params = {a.name: a.params for a in task.vocabulary.actions}
        loose = [f"Loose{name}({', '.join(params[name])}) == {parts.next}" if params[name]
                 else f"Loose{name} == {parts.next}" for name in task.target_actions]
        text = _before_end(reference.tla, "\n".join(loose))
        actions = tuple(ActionMap(a.canonical, (ActionCall(f"Loose{a.canonical}"),)) if a.canonical in task.target_actions
                        else a for a in reference.mapping.actions)
        candidate = with_spec(base, task, text, reference.cfg, None)
        return dataclasses.replace(candidate, mapping=dataclasses.replace(reference.mapping, actions=actions),
                                   mapping_problem=None)


def _before_end(module: str, definitions: str) -> str:
    """The module with definitions added just before its closing line."""
    lines = module.rstrip().split("\n")
    end = max(i for i, line in enumerate(lines) if line.strip().startswith("===="))
    return "\n".join([*lines[:end], definitions, *lines[end:]]) + "\n"
