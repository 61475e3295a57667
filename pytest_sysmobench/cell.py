"""One benchmark cell (task x model x sample): its candidate spec and its four phase results.

Phases are computed lazily and once: asking for P4 computes P1 and P2 first, because the
gates need them, and every result is kept for the other items of the same cell.  The cell
writes what it sees into its run directory as it goes, so a human can tell why a score is
what it is even when the session is interrupted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .cache import atomic_write_text
from .sources import Candidate, SpecSource
from .feedback import Judged
from .phases import CHECKS, CellContext, check_conformance, check_invariants, gate_results
from .record import CellId, PhaseSummary, RepairSummary, jsonable, slug
from .scoring import (PHASES, REPAIRED_PHASES, Cause, PhaseResult, RepairStatus, Status, composite, gate, phase_of,
                      repaired_composite)
from .tasks import Task
from .tla.driver import DriverError
from .tla.jar import ToolchainMissing
from .tla.toolchain import CellBudget, CellBudgetSpent, Toolchain

if TYPE_CHECKING:
    from .evaluator import Evaluator
    from .repair import Mender, Repair


@dataclass(frozen=True)
class CellRepair:
    """A cell's mechanical repair (None when its spec was usable as written, or absent), the
    phases of the repaired spec (None unless the repair made it usable) and the repaired
    composite."""

    repair: Repair | None
    results: dict[str, PhaseResult] | None
    composite: float | None

    @property
    def status(self) -> str:
        return self.repair.status if self.repair is not None else RepairStatus.NONE


class Cell:
    def __init__(
        self,
        task: Task,
        source: SpecSource,
        sample: int,
        toolchain: Callable[[], Toolchain],
        run_root: Path,
        traces_dir: Path,
        evaluator: Evaluator | None = None,
        mender: Mender | None = None,
    ) -> None:
        self.task = task
        self.source = source
        self.id = CellId(task.name, source.name, sample)
        self._toolchain = toolchain
        self.run_dir = run_root / task.name / slug(source.name) / f"s{sample}"
        self.traces_dir = traces_dir
        self.evaluator = evaluator
        self.mender = mender
        self._candidate: Candidate | None = None
        self._budget: CellBudget | None = None
        self.results: dict[str, PhaseResult] = {}
        self._repair: Repair | None = None
        self._repair_done = False
        self._repaired_results: dict[str, PhaseResult] = {}
        #: Files of the run folder that could not be written (read-only or full disk): the
        #: results still stand and reach the report; the loss is said, not raised.
        self.write_errors: list[str] = []

    def candidate(self) -> Candidate:
        if self._candidate is None:
            if self.source.uses_checker:  # agent_based, feedback, agents: answers checked as the phases will
                self._candidate = self.source.candidate(self.task, self.id.sample, check=self._attempt, judge=self._judge)
            else:
                self._candidate = self.source.candidate(self.task, self.id.sample)
            self._saving(self._record_candidate, self._candidate)
        return self._candidate

    def _attempt(self, candidate: Candidate, attempt: int) -> tuple[PhaseResult, ...]:
        """P1 and P2 of one answer (agent_based) or one call of an agent's check tool, in
        ``attempts/<n>/``; the cell's budget counts them (they are the spec's work).  () when the
        budget is spent."""
        toolchain = self._toolchain().bounded(self._start_budget())
        context = CellContext(self.task, candidate, toolchain, self.run_dir / "attempts" / str(attempt),
                              self.traces_dir)
        try:
            return gate_results(context)
        except CellBudgetSpent:
            return ()

    def _judge(self, candidate: Candidate, attempt: int) -> Judged | None:
        """P3 on the feedback seeds (what a correction may show), P3 on the held-out seeds (what
        the cell is scored on) and P4, of one answer P1 and P2 accepted, in ``attempts/<n>/``;
        None when the cell's budget is spent."""
        toolchain = self._toolchain().bounded(self._start_budget())
        where = self.run_dir / "attempts" / str(attempt)
        harness = self.task.harness
        shown, held = (harness.feedback_seeds, harness.held_out) if harness is not None else ((), ())

        def context(folder: str, seeds: tuple[int, ...]) -> CellContext:
            return CellContext(self.task, candidate, toolchain, where / folder, self.traces_dir, self.evaluator, seeds)

        try:
            return Judged(check_conformance(context("shown", shown)), check_conformance(context("held-out", held)),
                          check_invariants(context("invariants", ())))
        except CellBudgetSpent:
            return None

    def _saving(self, write: Callable[..., None], *args: Any) -> None:
        try:
            write(*args)
        except OSError as exc:
            self.write_errors.append(f"{self.run_dir}: {exc.strerror or exc}")

    def _record_candidate(self, candidate: Candidate) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if candidate.tla is not None:
            for name, text in candidate.files().items():
                atomic_write_text(self.run_dir / name, text)
        if candidate.cfg is not None:
            atomic_write_text(self.run_dir / f"{self.task.module}.cfg", candidate.cfg)
        for stage, prompt, answer in candidate.transcript:
            atomic_write_text(self.run_dir / f"prompt-{stage}.md", prompt)
            atomic_write_text(self.run_dir / f"answer-{stage}.md", answer)
        info = asdict(candidate)
        info.pop("tla"), info.pop("cfg"), info.pop("transcript")
        info["extra_modules"] = [name for name, _ in candidate.extra_modules]
        info["mapping"] = candidate.mapping.describe() if candidate.mapping else None
        atomic_write_text(self.run_dir / "candidate.json", json.dumps(info, indent=2, default=str))

    def result(self, phase: str) -> PhaseResult:
        if phase not in self.results:
            self.results[phase] = self._guarded(phase)
            self._saving(self._record_results)
        return self.results[phase]

    def _guarded(self, phase: str) -> PhaseResult:
        """A phase always ends in a result.  A fault of the harness (or of the machine: a read-only
        or full disk, a dead JVM) is an *error*, outside the means, never the spec's failure."""
        try:
            return self._compute(phase)
        except CellBudgetSpent as exc:
            return self._out_of_time(phase, exc)
        except (DriverError, ToolchainMissing):
            raise  # the plugin reports these as pytest errors with their own message
        except Exception as exc:  # noqa: BLE001 - whatever it is, the cell records it and goes on
            return PhaseResult(phase, Status.ERROR, None, f"harness error: {type(exc).__name__}: {exc}",
                               {"exception": type(exc).__name__})

    def _compute(self, phase: str) -> PhaseResult:
        candidate = self.candidate()
        if candidate.absent:
            return PhaseResult(phase, Status.SKIPPED, None, f"skipped: {candidate.absent}", cause=Cause.NO_SPEC)
        if candidate.generation_error:
            # A request that failed after its retries says nothing of the model's spec: no score.
            return PhaseResult(phase, Status.BLOCKED, None, f"blocked: generation failed: {candidate.generation_error}",
                               cause=Cause.GENERATION)
        earlier = [self.result(p) for p in PHASES[: PHASES.index(phase)] if phase_of(p).gates_later]
        budget = self._start_budget()
        if budget.remaining() <= 0:
            raise CellBudgetSpent(f"the cell budget of {budget.seconds:g} s (task.yaml cell_budget_s) was spent "
                                  "before this phase ran")
        blocked = gate(phase, earlier)
        if blocked is not None:
            return blocked
        toolchain = self._toolchain().bounded(budget)
        context = CellContext(self.task, candidate, toolchain, self.run_dir, self.traces_dir, self.evaluator,
                              candidate.scored_seeds)
        return CHECKS[phase](context)

    def _out_of_time(self, phase: str, spent: CellBudgetSpent) -> PhaseResult:
        """The whole cell's safety net in seconds ran out.  Work bounds end every check long
        before it on any machine, so only a spec whose evaluation never finishes gets here: it is
        charged to the spec, unless a known-good check right after fails too."""
        details = {"cell_budget_s": self.task.cell_budget_s, "failure_class": "timeout"}
        if not self._toolchain().harness_sound(self.run_dir / "harness-check"):
            return PhaseResult(phase, Status.ERROR, None, f"harness error: {spent}, and a known-good check run right "
                               "after failed too", details, cause=Cause.HARNESS)
        return PhaseResult(phase, Status.FAILED, 0.0, f"{spent}; this phase was not finished, and a known-good check "
                           "right after finished normally: charged to the spec", details)

    def _start_budget(self) -> CellBudget:
        if self._budget is None:
            self._budget = CellBudget(self.task.cell_budget_s)
        return self._budget

    def evaluate(self) -> dict[str, PhaseResult]:
        """All four phases, in order."""
        return {phase: self.result(phase) for phase in PHASES}

    def composite(self) -> float | None:
        return composite(self.results)

    def repair(self) -> Repair | None:
        """The mechanical repair of a spec that P1 or P2 leaves unusable, made once; None when
        there is nothing to repair (usable as written, no spec, or a gate the benchmark could not
        score, which no repair of the spec can change).  The cell's own (strict) results never
        change; the repair's files go to ``<run dir>/repaired/``."""
        if not self._repair_done:
            self._repair_done = True
            self._repair = self._repaired_spec()
            if self._repair is not None:
                self._saving(self._record_repair)
        return self._repair

    def _repaired_spec(self) -> Repair | None:
        candidate = self.candidate()
        gates = [self.result(p) for p in PHASES if phase_of(p).gates_later]
        if candidate.tla is None or all(r.usable for r in gates) or any(r.score is None for r in gates):
            return None
        from .repair import Repair, Repairer

        toolchain = self._toolchain().bounded(self._start_budget())
        try:
            # The cell's own P1 and P2 are the repair's starting point: not checked again.
            known = tuple(gates) if gates[0].usable else (gates[0],)
            return Repairer(toolchain, self.task, self.traces_dir, self.run_dir / "repaired" / "rounds",
                            self.mender).repair(candidate, known)
        except CellBudgetSpent as exc:
            # As for a phase: the safety net in seconds is the spec's doing unless a known-good
            # check right after fails too (then the repair is ours to finish: raised).
            if not self._toolchain().harness_sound(self.run_dir / "harness-check"):
                raise
            return Repair.refused(candidate.tla, f"{exc}, and a known-good check right after finished normally: "
                                                 "no repair could be tried; charged to the spec")

    def repaired_result(self, phase: str) -> PhaseResult | None:
        """A later phase (P3, P4) of the repaired spec, computed once; None unless a repair made
        the spec usable (then the repaired composite takes the phase as written)."""
        repair = self.repair()
        if repair is None or not repair.repaired:
            return None
        if phase not in self._repaired_results:
            fixed = replace(self.candidate(), tla=repair.spec, cfg=repair.cfg or self.candidate().cfg)
            toolchain = self._toolchain().bounded(self._start_budget())
            context = CellContext(self.task, fixed, toolchain, self.run_dir / "repaired", self.traces_dir,
                                  self.evaluator, fixed.scored_seeds)
            try:
                self._repaired_results[phase] = CHECKS[phase](context)
            except CellBudgetSpent as exc:
                self._repaired_results[phase] = self._out_of_time(phase, exc)
            self._saving(self._record_repair)
        return self._repaired_results[phase]

    def repair_record(self, phase: str, result: PhaseResult) -> dict[str, RepairSummary | PhaseSummary]:
        """What a P3 or P4 item's record says of the repair (``repair``, and ``repaired``: this
        phase of the repaired spec), for the repaired composite; never the item's outcome.  A
        fault while repairing leaves the repaired composite unknown and the strict one as it is."""
        if phase not in REPAIRED_PHASES or result.score is None:
            return {}
        try:
            repair = self.repair()
            fixed = self.repaired_result(phase)
        except Exception as exc:  # noqa: BLE001 - the strict result stands; the repair's loss is recorded
            from .repair import RepairModelError

            why = str(exc) if isinstance(exc, RepairModelError) else f"harness error: {type(exc).__name__}: {exc}"
            return {"repair": RepairSummary(RepairStatus.ERROR, 0, f"not repaired: {why}")}
        declared = self.candidate().declared_repair
        summary = RepairSummary(RepairStatus.NONE) if repair is None else RepairSummary(
            repair.status, len(repair.edits), repair.reason, use=repair.model_use)
        summary = replace(summary, declared=jsonable(declared) if declared else None)
        return {"repair": summary, **({"repaired": PhaseSummary.of(fixed)} if fixed is not None else {})}

    def repaired(self) -> CellRepair:
        """The repair, every phase of the repaired spec (P1 and P2 from the repair's last round)
        and the repaired composite."""
        strict = {p: self.result(p) for p in PHASES}
        repair = self.repair()
        if repair is None or not repair.repaired:
            return CellRepair(repair, None, repaired_composite(strict, None))
        results: dict[str, PhaseResult] = {r.phase: r for r in repair.after}
        for phase in REPAIRED_PHASES:
            results[phase] = self.repaired_result(phase)  # type: ignore[assignment]  (a repaired spec has them)
        return CellRepair(repair, results, repaired_composite(strict, results))

    def _record_repair(self) -> None:
        repair = self._repair
        assert repair is not None
        folder = self.run_dir / "repaired"
        folder.mkdir(parents=True, exist_ok=True)
        if repair.spec:
            atomic_write_text(folder / f"{self.task.module}.tla", repair.spec)
        if repair.cfg is not None and repair.cfg != self.candidate().cfg:
            atomic_write_text(folder / f"{self.task.module}.cfg", repair.cfg)
        atomic_write_text(folder / "repair.diff", repair.diff(self.candidate().tla or "", self.candidate().cfg,
                                                              self.task.module))
        manifest = {**repair.manifest(), "diff": "repair.diff"}
        if self._repaired_results:
            manifest["repaired_phases"] = {p: r.to_json() for p, r in self._repaired_results.items()}
        known = {p: r for p, r in self.results.items() if p not in REPAIRED_PHASES}
        if len(known) == 2 and len(self._repaired_results) == len(REPAIRED_PHASES):
            manifest["repaired_composite"] = repaired_composite(known, self._repaired_results)
        atomic_write_text(folder / "repair_manifest.json", json.dumps(manifest, indent=2, default=str))

    def _record_results(self) -> None:
        data: dict[str, Any] = {
            "task": self.id.task,
            "model": self.id.model,
            "sample": self.id.sample,
            "phases": {p: r.to_json() for p, r in self.results.items()},
        }
        atomic_write_text(self.run_dir / "result.json", json.dumps(data, indent=2, default=str))
