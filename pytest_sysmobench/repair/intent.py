"""Did a repair keep what the spec models?  Judged on SANY's reading of the spec before and after.

The forbidden edits of the original's repair guide are checked, not trusted: the same variables
and constants (F4), the same actions reached from Next (F1), each action writing the same
variables, its UNCHANGED only growing (F3), and every definition whose canonical tree changed
explained by an edit whose rule allows exactly that change (F2, F5, F6 fall under this: a guard,
an effect or an invariant changed by no rule is a change of meaning).  Whole definitions are
compared, LET-local ones inline, because most real bugs change an effect or a nested guard, not
an action's shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..tla.tree import Node, SpecTree
from .rules import Edit


@dataclass(frozen=True)
class Intent:
    #: Forbidden changes found, each with its F-rule.
    violations: tuple[str, ...] = ()
    #: Definitions whose meaning changed, each explained by an edit.
    changed: tuple[str, ...] = ()
    #: What could not be checked, and why.
    unverified: tuple[str, ...] = ()
    summary: dict[str, str] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, object]:
        return {**self.summary, "changed_definitions": list(self.changed), "violations": list(self.violations),
                "unverified": list(self.unverified)}


def judge(before: SpecTree | None, after: SpecTree, edits: Sequence[Edit], next_name: str = "Next") -> Intent:
    if before is None:
        return Intent(unverified=("the spec as written did not parse, so there is no reading of it to compare: "
                                  "its repair is checked token by token only",),
                      summary={"variables": "unverified", "actions": "unverified", "writes": "unverified"})
    violations: list[str] = []
    # A CHOOSE sentinel made a constant (A11) is the one constant a repair may add.
    sentinels = {v for e in edits if e.check == "sentinel-constant" for v in e.variables}
    summary = {"variables": _same_names(violations, "F4", "variables", before.variables, after.variables),
               "constants": _same_names(violations, "F4", "constants", (*before.constants, *sentinels),
                                        after.constants)}
    old, new = before.actions(next_name), after.actions(next_name)
    summary["actions"] = _same_names(violations, "F1", "actions of Next", tuple(old), tuple(new))
    writes = []
    for name in sorted(set(old) & set(new)):
        if old[name].writes != new[name].writes:
            writes.append(f"F3: {name} writes {_delta(old[name].writes, new[name].writes)}")
        if not old[name].unchanged <= new[name].unchanged:
            writes.append(f"F3: {name} no longer leaves {', '.join(sorted(old[name].unchanged - new[name].unchanged))} "
                          "UNCHANGED")
    violations += writes
    summary["writes"] = "same" if not writes else "changed"
    changed = []
    for name in sorted(set(before.definitions) | set(after.definitions)):
        was, now = before.definitions.get(name), after.definitions.get(name)
        if was == now:
            continue
        changed.append(name)
        problem = _unexplained(name, was.body if was else None, now.body if now else None,
                               (was.params, was.level) if was else None, (now.params, now.level) if now else None,
                               [e for e in edits if e.definition == name])
        if problem:
            violations.append(problem)
    summary["definitions"] = "same" if not changed else f"{len(changed)} changed"
    # A definition the model changed kept its shape and the actions' writes; that it kept its
    # meaning is the model's word only, and says so (an action whose guard is the same tree says
    # that much more).
    unverified = tuple(_model_changed(name, before, after, edits) for name in changed
                       if any(e.check == "model" and e.definition == name for e in edits))
    return Intent(tuple(violations), tuple(changed), unverified, summary)


def _model_changed(name: str, before: SpecTree, after: SpecTree, edits: Sequence[Edit]) -> str:
    rules = ", ".join(sorted({e.rule for e in edits if e.definition == name}))
    guard = before.guard(name)
    if guard is not None and guard == after.guard(name):
        return (f"{name}: changed by the repair model ({rules}); its guard is the same ({len(guard)} conjunct(s)), "
                "what it does is not checked")
    if guard is not None and after.guard(name) is not None:
        return f"{name}: changed by the repair model ({rules}), its guard too; its meaning is not checked"
    return f"{name}: changed by the repair model ({rules}); its meaning is not checked"


def _same_names(violations: list[str], rule: str, what: str, old: Sequence[str], new: Sequence[str]) -> str:
    if set(old) == set(new):
        return "same"
    violations.append(f"{rule}: {what} {_delta(frozenset(old), frozenset(new))}")
    return "changed"


def _delta(old: frozenset[str], new: frozenset[str]) -> str:
    parts = [f"+{n}" for n in sorted(new - old)] + [f"-{n}" for n in sorted(old - new)]
    return "changed: " + ", ".join(parts)


def _unexplained(name: str, old: Node | None, new: Node | None, old_shape: object, new_shape: object,
                 edits: Sequence[Edit]) -> str | None:
    """Why the change of ``name`` is not one its edits allow, or None when one does."""
    if old is None and new is not None and any(e.check == "spec-added" and _is_plain_spec(new) for e in edits):
        return None
    if new is None and any(e.check == "sentinel-constant" and name in e.variables for e in edits):
        return None  # the definition is now the constant of that name, every use unchanged
    if old is None or new is None:
        return f"F1/F2: definition {name} {'added' if old is None else 'removed'} by no rule that may do so"
    if old_shape != new_shape:
        return f"F2: definition {name} changed its parameters or level"
    if any(edit.check == "model" for edit in edits):
        return None  # marked unverified by the caller
    for edit in edits:
        if edit.check == "unchanged-added" and _is_unchanged_added(old, new, set(edit.variables)):
            return None
        if edit.check == "domain-bounded" and _only_domains_bounded(old, new):
            return None
    return f"F2/F3: definition {name} changed in a way no rule explains (a guard, an effect or an invariant)"


def _is_unchanged_added(old: Node, new: Node, variables: set[str]) -> bool:
    """``new`` is ``old /\\ UNCHANGED <<variables>>`` (or ``old``'s conjunction list with one more
    item, that one), and nothing else."""
    if new[0] != "apply" or new[1] not in ("\\land", "$ConjList") or not new[2]:
        return False
    kept = new[2][:-1]
    if not (kept == (old,) or (old[0] == "apply" and old[1] == "$ConjList" and new[1] == "$ConjList"
                               and kept == old[2] and new[3] == old[3])):
        return False
    added = new[2][-1]
    if added[0] != "apply" or added[1] != "UNCHANGED" or len(added[2]) != 1:
        return False
    target = added[2][0]
    if target[0] == "apply" and target[1] == "$Tuple":
        named = [t[1] for t in target[2] if t[0] == "apply" and not t[2]]
    else:
        named = [target[1]] if target[0] == "apply" and not target[2] else []
    return set(named) == variables


def _only_domains_bounded(old: object, new: object) -> bool:
    """``new`` is ``old`` with some ``Nat``, ``Int`` or ``Seq(S)`` read as a finite range of it
    (A10), and nothing else changed."""
    if old == new or _bounded_domain(old, new):
        return True
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        return all(_only_domains_bounded(a, b) for a, b in zip(old, new))
    return False


def _bounded_domain(old: object, new: object) -> bool:
    if not (isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new) == 4 and old[0] == "apply"):
        return False
    if old[1:] == ("Nat", (), ()):
        return new[1] == ".." and _numeral(new[2][0]) == 0 and _numeral(new[2][1]) is not None
    if old[1:] == ("Int", (), ()):
        return new[1] == ".." and new[2][0][:2] == ("apply", "-.") and len(new[2][0][2]) == 1 \
            and _numeral(new[2][0][2][0]) == _numeral(new[2][1]) is not None
    if old[1] != "Seq" or len(old[2]) != 1 or new[1:2] != ("UNION",) or len(new[2]) != 1:
        return False
    # UNION {[1..k -> S] : k \in 0..L}
    setof = new[2][0]
    if setof[:2] != ("apply", "$SetOfAll") or len(setof[2]) != 1:
        return False
    functions, bound = setof[2][0], setof[3]
    if functions[:2] != ("apply", "$SetOfFcns") or len(functions[2]) != 2 or functions[2][1] != old[2][0]:
        return False
    (start, length), range_ = functions[2][0][2], bound
    return functions[2][0][1] == ".." and _numeral(start) == 1 and length[:3] == ("apply", length[1], ()) \
        and range_[0] == "boundSymbols" and range_[1][:2] == ("bound", ("name", length[1])) \
        and range_[1][2][1] == ".." and _numeral(range_[1][2][2][0]) == 0 and _numeral(range_[1][2][2][1]) is not None


def _numeral(node: object) -> int | None:
    if isinstance(node, tuple) and len(node) == 2 and node[0] == "NumeralNode" and isinstance(node[1], tuple):
        return int(node[1][1])
    return None


def _is_plain_spec(node: Node) -> bool:
    """``Init /\\ [][Next]_v`` for some Init, Next and v, and nothing more (no fairness)."""
    if node[0] != "apply" or node[1] != "\\land" or len(node[2]) != 2:
        return False
    init, always = node[2]
    if init[0] != "apply" or init[2] or always[0] != "apply" or always[1] != "[]" or len(always[2]) != 1:
        return False
    square = always[2][0]
    return square[0] == "apply" and square[1] == "$SquareAct" and len(square[2]) == 2 \
        and square[2][0][0] == "apply" and not square[2][0][2]
