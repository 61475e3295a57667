"""How much evidence stands behind a task's P3: windows per action, the distinct (pre-state,
action) combinations the traces show, and the target actions no window exercises.

A P3 score over a handful of windows says less than one over a thousand; the board cannot tell
them apart unless it is told.  This reads the committed traces (``sysmobench tasks --coverage``,
each task's docs page, and a note beside a P3 score that rests on few windows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .tasks import Task
from .traces import Corpus

#: Below this many windows an action's P3 verdict rests on little evidence: the board says so.
FEW_WINDOWS = 20


@dataclass(frozen=True)
class ActionCoverage:
    action: str
    windows: int
    changing: int  # windows whose post-state differs from the pre-state
    combinations: int  # distinct (pre-state, arguments)


@dataclass(frozen=True)
class HeldOut:
    """What the held-out seeds' windows of one action show that no feedback seed's window does:
    a correction that fits only the windows it was shown can be told apart there alone."""

    action: str
    windows: int  # the held-out seeds' windows of the action
    #: Distinct (pre-state, arguments) no feedback window has, among the windows that change the
    #: state (all of them, for an action that never changes it).
    unseen: int


@dataclass(frozen=True)
class TaskCoverage:
    task: str
    traces: int
    windows: int
    combinations: int
    actions: tuple[ActionCoverage, ...]
    #: Target actions of the task no window exercises.
    unexercised: tuple[str, ...]
    #: The held-out seeds (``harness.held_out``) and, per target action, what only they show.
    held_out_seeds: tuple[int, ...] = ()
    held_out: tuple[HeldOut, ...] = ()

    @property
    def indistinct(self) -> tuple[str, ...]:
        """Target actions whose held-out windows show nothing the feedback windows do not: on
        them, a correction that hard-codes what it was shown cannot be told from a real one."""
        return tuple(h.action for h in self.held_out if not h.unseen)

    @property
    def thin(self) -> tuple[str, ...]:
        """Target actions with some, but fewer than FEW_WINDOWS, windows."""
        return tuple(a.action for a in self.actions if 0 < a.windows < FEW_WINDOWS)

    def markdown(self) -> str:
        rows = "\n".join(f"| `{a.action}` | {a.windows} | {a.changing} | {a.combinations} |" for a in self.actions)
        lines = [
            f"{self.traces} traces, {self.windows} windows, {self.combinations} distinct (pre-state, action, "
            "arguments) combinations (`sysmobench tasks --coverage`).",
            "",
            "| action | windows | change the state | distinct (pre-state, arguments) |",
            "|---|---|---|---|",
            rows,
        ]
        if self.unexercised:
            lines += ["", f"No window exercises: {', '.join(f'`{a}`' for a in self.unexercised)}."]
        if self.thin:
            lines += ["", f"Fewer than {FEW_WINDOWS} windows (a P3 verdict on little evidence): "
                          f"{', '.join(f'`{a}`' for a in self.thin)}."]
        if self.held_out_seeds:
            seeds = ", ".join(map(str, self.held_out_seeds))
            lines += ["", f"Held out of feedback: seed(s) {seeds}. What their windows show that no other seed's does "
                          "(distinct pre-state and arguments, of the windows that change the state, or of all for an action "
                          "that never does): "
                          + ", ".join(f"`{h.action}` {h.unseen} of {h.windows}" for h in self.held_out) + "."]
            if self.indistinct:
                lines += ["", "Too few to tell a correction that fits the windows it was shown from one that "
                              f"generalizes: {', '.join(f'`{a}`' for a in self.indistinct)}."]
        return "\n".join(lines) + "\n"


def of(task: Task, corpus: Corpus, held_out: bool = True) -> TaskCoverage:
    """What the corpus covers; with ``held_out``, also what only the held-out seeds show (the
    task's page and ``sysmobench tasks --coverage``; a P3 verdict's note needs none of it)."""
    windows = [w for t in corpus.traces for w in t.windows()]
    seen: dict[str, set[str]] = {}
    for w in windows:
        seen.setdefault(w.action, set()).add(json.dumps([w.pre, w.args], sort_keys=True))
    actions = tuple(ActionCoverage(a, sum(1 for w in windows if w.action == a),
                                   sum(1 for w in windows if w.action == a and w.pre != w.post), len(seen.get(a, ())))
                    for a in task.target_actions)
    held = task.harness.held_out if task.harness is not None and held_out else ()
    return TaskCoverage(task.name, len(corpus.traces), len(windows), sum(len(s) for s in seen.values()), actions,
                        tuple(a.action for a in actions if not a.windows), held,
                        _held_out(task, corpus, held) if held else ())


def _held_out(task: Task, corpus: Corpus, held: tuple[int, ...]) -> tuple[HeldOut, ...]:
    windows = [(t.meta.get("seed") in held, w) for t in corpus.traces for w in t.windows()]
    # A window that changes nothing tells little (a spec that does nothing passes it), unless the
    # action never changes anything (a failed try_lock): then its pre-states are what it shows.
    changing = {w.action for _, w in windows if w.pre != w.post}
    shown: dict[str, set[str]] = {}
    kept: dict[str, set[str]] = {}
    counts = dict.fromkeys(task.target_actions, 0)
    for is_held, w in windows:
        if is_held and w.action in counts:
            counts[w.action] += 1
        if w.pre != w.post or w.action not in changing:
            (kept if is_held else shown).setdefault(w.action, set()).add(json.dumps([w.pre, w.args], sort_keys=True))
    return tuple(HeldOut(a, counts[a], len(kept.get(a, set()) - shown.get(a, set()))) for a in task.target_actions)


def p3_note(coverage: TaskCoverage) -> str | None:
    """What a P3 score of this task should be read with, or None when its evidence is ample."""
    parts = []
    if coverage.thin:
        parts.append(f"{', '.join(coverage.thin)} rest{'s' if len(coverage.thin) == 1 else ''} on fewer than "
                     f"{FEW_WINDOWS} windows")
    if coverage.unexercised:
        parts.append(f"no window exercises {', '.join(coverage.unexercised)}")
    return "; ".join(parts) or None
