"""Mechanical repair: the rules applied in rounds, each round judged by the benchmark's own P1 and
P2, until the spec is usable (what P3 and P4 need) or no rule applies.

The original's repair is a coding agent following a guide, and nothing checks that its edits kept
the model's meaning.  Here a program makes only the edits a rule allows, from the tools' own
messages, the same on every machine; every repaired spec is then judged against the spec as
written on SANY's reading of both (``intent``), and a repair that changed what the spec models
is refused, whatever rule it cites.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..phases import gate_results
from ..phases._context import CellContext
from ..scoring import PhaseResult, RepairStatus
from ..sources import Candidate
from ..tasks import Task
from ..tla.toolchain import Toolchain
from ..tla.tree import SpecTree, TreeError, exported_names, read_tree, xml_part
from ..evaluator import EvaluatorUse
from .intent import Intent, judge
from .model import MODEL_ROUNDS, Mender, apply
from .rules import STANDARD_MODULES, Edit, Fix, Problem, first_fix

#: How many rounds of rules a repair may take before it gives up.
MAX_ROUNDS = 6
#: Edits per status, as the original's board counts them (one edit = one rule on one definition).
MINOR, MODERATE = 3, 10
#: Bumped when a rule is added or changed: the repair of a spec is cached by it.
RULES_VERSION = 4


@dataclass(frozen=True)
class Repair:
    """What the repair of one spec did, and what it left."""

    status: RepairStatus
    reason: str
    spec: str
    edits: tuple[Edit, ...]
    rounds: int
    usable: bool
    intent: Intent | None
    before: tuple[PhaseResult, ...]
    after: tuple[PhaseResult, ...]
    #: The cfg the repaired spec is checked with (the original's, unless a rule bound a constant).
    cfg: str | None = None
    #: The repair model's name and use (requests, tokens, cost), when one was asked.
    model: str | None = None
    model_use: dict[str, Any] | None = None

    @classmethod
    def refused(cls, spec: str, reason: str) -> Repair:
        """Unrepairable before any rule was tried."""
        return cls(RepairStatus.UNREPAIRABLE, reason, spec, (), 0, False, None, (), ())

    def diff(self, spec: str, cfg: str | None, module: str) -> str:
        """The repair as a unified diff of the spec (and of the cfg, when a rule bound a constant)."""
        lines = list(difflib.unified_diff(spec.splitlines(keepends=True), (self.spec or spec).splitlines(keepends=True),
                                          f"a/{module}.tla", f"b/{module}.tla"))
        if self.cfg is not None and self.cfg != cfg:
            lines += difflib.unified_diff((cfg or "").splitlines(keepends=True), self.cfg.splitlines(keepends=True),
                                          f"a/{module}.cfg", f"b/{module}.cfg")
        return "".join(lines)

    @property
    def repaired(self) -> bool:
        return self.status.repaired

    def manifest(self) -> dict[str, Any]:
        """Everything a reviewer needs to audit the repair (a superset of the original's)."""
        return {
            "schema": 1, "rules_version": RULES_VERSION, "applied": bool(self.edits), "status": self.status.value,
            "reason": self.reason, "edit_count": len(self.edits), "rounds": self.rounds, "usable": self.usable,
            "p1_passed": _passed(self.after, "syntax"), "p2_passed": _passed(self.after, "runtime"),
            "repairer": {"mechanical": True, "model": self.model, "usage": self.model_use}, "cfg_edited": any(e.check == "cfg-only" or e.rule == "A11"
                                                                              for e in self.edits),
            "ops": [e.to_json() for e in self.edits],
            "intent": self.intent.to_json() if self.intent is not None else None,
            "before": {r.phase: {"status": r.status.value, "score": r.score, "reason": r.reason} for r in self.before},
            "after": {r.phase: {"status": r.status.value, "score": r.score, "reason": r.reason} for r in self.after},
        }


def _passed(results: tuple[PhaseResult, ...], phase: str) -> bool:
    return any(r.phase == phase and r.usable for r in results)


def status_of(edits: int) -> RepairStatus:
    """The original's repair status for a usable spec, by its edit count."""
    if edits == 0:
        return RepairStatus.NONE
    return RepairStatus.MINOR if edits <= MINOR else RepairStatus.MODERATE if edits <= MODERATE else RepairStatus.HEAVY


class Repairer:
    """Repairs candidates of one task with one toolchain; ``run_dir`` keeps every round's logs."""

    def __init__(self, toolchain: Toolchain, task: Task, traces_dir: Path, run_dir: Path,
                 mender: Mender | None = None) -> None:
        self.toolchain = toolchain
        self.task = task
        self.traces_dir = traces_dir
        self.run_dir = run_dir
        self.mender = mender

    def repair(self, candidate: Candidate, before: tuple[PhaseResult, ...] | None = None) -> Repair:
        """Rules first, round by round; where none applies, the repair model (if any) proposes
        edits, at most ``MODEL_ROUNDS`` times.  ``before``: the spec's own P1 (and P2, when P1
        passed), when the caller has them (a cell does): not checked again.  Raises
        ``RepairModelError`` when the model's endpoint does not answer (the benchmark's loss, not
        the spec's)."""
        use = EvaluatorUse()
        repair = self._repair(candidate, use, before)
        if self.mender is None or not (use.requests or use.cached):
            return repair
        return dataclasses.replace(repair, model=self.mender.name, model_use=use.as_dict())

    def _repair(self, candidate: Candidate, use: EvaluatorUse, known: tuple[PhaseResult, ...] | None) -> Repair:
        if candidate.tla is None:
            return Repair.refused("", f"no spec to repair: {candidate.problem or 'none'}")
        original = candidate
        before = known if known is not None else self._gate(candidate, "before")
        if all(r.usable for r in before) and len(before) == 2:
            return Repair(RepairStatus.NONE, "usable as written: nothing to repair", candidate.tla, (), 0, True, None, before,
                          before)
        # The first reading of the spec to judge later edits against, and the edits made before it
        # (they made the spec parse, so there is nothing to compare them with).
        first_tree: Reading = (self.tree(candidate, "before"), 0)
        edits: list[Edit] = []
        seen = {(candidate.tla, candidate.cfg)}
        results = before
        asked = 0
        for round_ in range(1, MAX_ROUNDS + 1):
            fix: Fix | str | None = self._fix(candidate, results, round_)
            if fix is None and self.mender is not None and asked < MODEL_ROUNDS:
                asked += 1
                fix = self._ask(candidate, results, use)
            if isinstance(fix, str):
                return self._finish(original, candidate, edits, round_ - 1, results, before, first_tree,
                                    f"no rule applies ({_first_failure(results)}), and the repair model's edits were "
                                    f"not applied: {fix}")
            if fix is None:
                return self._finish(original, candidate, edits, round_ - 1, results, before, first_tree,
                                    f"no rule applies: {_first_failure(results)}")
            cfg = fix.cfg if fix.cfg is not None else candidate.cfg
            if (fix.text, cfg) in seen:
                return self._finish(original, candidate, edits, round_, results, before, first_tree,
                                    f"a rule repeated itself without progress ({fix.edits[0].rule})")
            seen.add((fix.text, cfg))
            edits += fix.edits
            candidate = dataclasses.replace(candidate, tla=fix.text, cfg=cfg)
            results = self._gate(candidate, f"round-{round_}")
            if first_tree[0] is None and results[0].usable:
                first_tree = (self.tree(candidate, f"round-{round_}-reading"), len(edits))
            if len(results) == 2 and all(r.usable for r in results):
                return self._finish(original, candidate, edits, round_, results, before, first_tree, "")
        return self._finish(original, candidate, edits, MAX_ROUNDS, results, before, first_tree,
                            f"still not usable after {MAX_ROUNDS} rounds: {_first_failure(results)}")

    def _finish(self, original: Candidate, candidate: Candidate, edits: list[Edit], rounds: int,
                results: tuple[PhaseResult, ...], before: tuple[PhaseResult, ...], first: Reading,
                problem: str) -> Repair:
        usable = len(results) == 2 and all(r.usable for r in results)
        spec, cfg = candidate.tla or "", candidate.cfg
        if not usable:
            return Repair(RepairStatus.UNREPAIRABLE, problem, spec, tuple(edits), rounds, False, None, before, results, cfg)
        last = self.tree(candidate, "after")
        if last is None:
            return Repair(RepairStatus.UNREPAIRABLE, "the repaired spec has no semantic tree to check its intent on",
                          spec, tuple(edits), rounds, False, None, before, results, cfg)
        intent = _judged(first, last, edits, self._next_name(original))
        if not intent.kept:
            return Repair(RepairStatus.UNREPAIRABLE, f"refused: {intent.violations[0]}", spec, tuple(edits), rounds, False,
                          intent, before, results, cfg)
        return Repair(status_of(len(edits)), f"usable after {len(edits)} edit(s)", spec, tuple(edits), rounds, True,
                      intent, before, results, cfg)

    def _ask(self, candidate: Candidate, results: tuple[PhaseResult, ...], use: EvaluatorUse) -> Fix | str:
        assert self.mender is not None and candidate.tla is not None
        failing = next(r for r in results if not r.usable)
        proposed = self.mender.propose(self.task, candidate.tla, candidate.cfg or "",
                                       f"{failing.phase}: {failing.reason}", use)
        return proposed if isinstance(proposed, str) else apply(candidate.tla, proposed)

    def _next_name(self, candidate: Candidate) -> str:
        return self._context(candidate, "intent").next_action() or "Next"

    def _context(self, candidate: Candidate, stage: str) -> CellContext:
        return CellContext(self.task, candidate, self.toolchain, self.run_dir / stage, self.traces_dir)

    def _gate(self, candidate: Candidate, stage: str) -> tuple[PhaseResult, ...]:
        """P1, then P2 if P1 passed: the benchmark's own gate before P3 and P4."""
        return gate_results(self._context(candidate, stage))

    def tree(self, candidate: Candidate, stage: str) -> SpecTree | None:
        ctx = self._context(candidate, stage)
        raw = self.toolchain.sany_xml(ctx.job_dir("tree"), ctx.spec_files(), ctx.module)
        xml = xml_part(raw.output) if raw.exit_code == 0 else None
        if xml is None:
            return None
        try:
            return read_tree(xml)
        except TreeError:
            return None

    def _fix(self, candidate: Candidate, results: tuple[PhaseResult, ...], round_: int) -> Fix | None:
        ctx = self._context(candidate, f"round-{round_}-rules")
        text = candidate.tla or ""
        if not results[0].usable:
            sany = self.toolchain.sany(ctx.job_dir("sany"), ctx.spec_files(), ctx.module).result
            return first_fix(text, Problem(self.task.module, sany=sany, standard=self.standard_names()), "sany")
        problem = Problem(self.task.module, runtime=results[1].reason, tree=self.tree(candidate, f"round-{round_}"),
                          cfg=candidate.cfg or "", constants=self._constants(candidate),
                          bounds=self.task.repair_bounds)
        return first_fix(text, problem, "tlc")

    def _constants(self, candidate: Candidate) -> dict[str, str]:
        """The task's constant values under the names the spec declares: the task's own, and a
        name the mapping binds to a task constant (``constants: {Threads: T}`` binds ``T``)."""
        values = dict(self.task.default_constants)
        mapping = candidate.mapping
        if mapping is not None:
            values.update((expr.strip(), values[name]) for name, expr in mapping.constants
                          if name in values and re.fullmatch(r"\w+", expr.strip()))
        return values

    @functools.cache
    def standard_names(self) -> dict[str, frozenset[str]]:
        """Which standard module defines which operator, as SANY reads them (not a table by hand)."""
        body = f"---- MODULE SysmoStandard ----\nEXTENDS {', '.join(STANDARD_MODULES)}\n====\n"
        raw = self.toolchain.sany_xml(self.run_dir / "standard-modules", {"SysmoStandard.tla": body}, "SysmoStandard")
        xml = xml_part(raw.output)
        return exported_names(xml) if xml else {}


#: A reading of the spec (None until it parses) and how many edits came before it.
Reading = tuple["SpecTree | None", int]


def _judged(first: Reading, last: SpecTree, edits: list[Edit], next_name: str) -> Intent:
    """The edits made after the spec first parsed, judged against that reading; the ones that
    made it parse are token rewrites with nothing to compare, and the intent says so."""
    tree, before = first
    intent = judge(tree, last, edits[before:], next_name)
    if tree is None or not before:
        return intent
    rules = ", ".join(sorted({e.rule for e in edits[:before]}))
    note = (f"the first {before} edit(s) ({rules}) made the spec parse: there is no reading before them to compare, "
            "so they are checked token by token only; the later ones are checked on SANY's reading")
    return dataclasses.replace(intent, unverified=(note, *intent.unverified))


def _first_failure(results: tuple[PhaseResult, ...]) -> str:
    failing = next((r for r in results if not r.usable), None)
    return f"{failing.phase}: {failing.reason.splitlines()[0] if failing.reason else failing.status.value}" \
        if failing else "the spec is usable"
