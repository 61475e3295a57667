from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping as TMapping, Sequence

from ..mapping import Mapping
from ..sources import Candidate
from ..scoring import Cause, PhaseResult, Status
from ..tasks import Task
from ..tla.cfg import Config
from ..tla.messages import TlcResult
from ..tla.toolchain import TlcRun, Toolchain
from ..traces import Corpus, load_corpus

if TYPE_CHECKING:
    from ..evaluator import Evaluator, EvaluatorError

#: How long past its safety net in seconds a TLC run is given to stop by itself and report what
#: it explored, before its JVM is killed.
HARD_LIMIT_MARGIN_S = 60.0
#: What a user can do when a spec in its own names has no mapping (said wherever that costs).
HOW_TO_MAP = ("add a mapping.yaml beside the spec (docs/mappings.md), write the spec in the task's canonical "
              "names (`sysmobench prompt <task>` lists them), or name an evaluator model (--sysmobench-evaluator)")


def evaluator_failure(phase: str, exc: EvaluatorError) -> PhaseResult:
    """An evaluator that did not answer is the benchmark's loss; one whose answer is unusable
    failed to propose a mapping for this spec, which the spec is charged for (scored 0)."""
    if exc.unanswered:
        return PhaseResult(phase, Status.ERROR, None, str(exc), cause=Cause.EVALUATOR)
    return PhaseResult(phase, Status.FAILED, 0.0, f"{exc}; charged to the spec (the evaluator's proposal for it failed)",
                       {"failure_class": "mapping_unusable"})


def no_mapping(phase: str, problem: str | None) -> PhaseResult:
    """A spec in its own names with no mapping and no evaluator to ask: nothing can be checked,
    and that is charged to the spec (0), with what to do about it."""
    reason = problem or "not evaluable: no mapping to the canonical vocabulary"
    return PhaseResult(phase, Status.NOT_EVALUABLE, 0.0, f"{reason}; scored 0, charged to the spec; to score it, {HOW_TO_MAP}",
                       {"failure_class": "no_mapping"})


@dataclass(frozen=True)
class CellContext:
    """Everything a phase needs to check one candidate spec of one task."""

    task: Task
    candidate: Candidate
    toolchain: Toolchain
    run_dir: Path
    traces_dir: Path
    evaluator: Evaluator | None = None
    #: The seeds whose traces P3 scores the spec on (none given: every trace).  A spec corrected
    #: on some seeds' evidence is scored on the held-out ones, which it never saw.
    seeds: tuple[int, ...] = ()

    @property
    def module(self) -> str:
        return self.task.module

    @property
    def spec_file(self) -> str:
        return f"{self.module}.tla"

    @property
    def cfg_file(self) -> str:
        return f"{self.module}.cfg"

    def corpus(self) -> Corpus:
        """The task's traces, read and validated once per session while their files stay as they
        are: every phase of every cell of the task reads them (P2 up to three times)."""
        directory = (self.traces_dir / self.task.name).resolve()
        stats = [(p.name, p.stat()) for p in sorted(directory.glob("*.ndjson"))] if directory.is_dir() else []
        files = tuple((name, st.st_size, st.st_mtime_ns) for name, st in stats)
        key = f"corpus:{directory}:{files}:{id(self.task)}"
        known = self.toolchain.memo.get(key)
        if not (isinstance(known, tuple) and known[0] is self.task):  # the task kept: an id is reused once freed
            known = self.toolchain.memo[key] = (self.task, load_corpus(directory, self.task))
        return known[1]

    def scored_corpus(self) -> Corpus:
        """The traces P3 scores the spec on: those of ``seeds``, or all of them."""
        corpus = self.corpus()
        return corpus.of_seeds(self.seeds) if self.seeds else corpus

    def spec_files(self) -> dict[str, str]:
        """The spec as files: the root module and the other modules of a multi-file spec."""
        return self.candidate.files()

    def spec_modules(self) -> list[str]:
        """The text of every module of the spec."""
        return [text for name, text in self.spec_files().items() if name.endswith(".tla")]

    def mapping_extends(self, *needed: str) -> tuple[str, ...]:
        """What a generated module that evaluates mapping expressions extends: the spec, and
        every standard module that cannot clash with it, so that a mapping may count with
        ``Cardinality`` whatever the spec itself extends (and the ``needed`` ones in any case)."""
        from ..tla.modules import standard_modules_beside

        return (self.module, *dict.fromkeys([*standard_modules_beside(self.spec_files()), *needed]))

    def harness_name_clash(self, phase: str) -> PhaseResult | None:
        """The spec's fault, scored 0: it defines a name the generated modules need."""
        from ..tla.modules import harness_names_defined

        names = harness_names_defined(self.spec_files())
        if not names:
            return None
        return PhaseResult(phase, Status.FAILED, 0.0,
                           f"the spec defines {', '.join(names[:5])}: names beginning with 'Sysmo' and the name "
                           "'canon' are reserved for the modules the benchmark generates around a spec",
                           {"reserved_names": names})

    def missing_actions(self, mapping: Mapping | None = None) -> dict[str, str]:
        """Target actions of the task that the spec does not have, directly or through its
        mapping (an action the mapping sends to an operator no module of the spec defines), and
        why.  That a defined operator is a step of the spec, P3 checks by conjoining ``Next``."""
        from ..tla.modules import top_level_units

        mapping = mapping or self.candidate.mapping
        if mapping is None or self.candidate.tla is None:
            return {}
        units = {unit.name for text in self.spec_modules() for unit in top_level_units(text)}
        targets = self.task.target_actions or tuple(a.name for a in self.task.vocabulary.actions)
        missing = {}
        for action in targets:
            if action in mapping.absent:
                missing[action] = "its mapping declares it absent"
                continue
            undefined = sorted(mapping.action(action).operators() - units)
            if undefined:
                missing[action] = f"no operator {', '.join(undefined)} in it"
        return missing

    def config(self) -> Config:
        return Config.parse(self.candidate.cfg or "")

    def next_action(self) -> str | None:
        """The spec's next-state action: its cfg's NEXT, or the ``[][N]_v`` of its SPECIFICATION
        (through the definitions it names).  None when the cfg names neither, or the
        specification has another shape."""
        from ..tla.grammar import spec_parts

        sections = self.config().sections
        named = next((s.names() for s in sections if s.canonical == "NEXT" and s.names()), None)
        if named:
            return named[0]
        formula = next((s.names()[0] for s in sections if s.canonical == "SPECIFICATION" and s.names()), None)
        parts = spec_parts(self.spec_modules(), formula) if formula else None
        return parts.next if parts else None

    def job_dir(self, *parts: str) -> Path:
        path = self.run_dir.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def tlc(self, workdir: Path, files: TMapping[str, str], module: str, args: Sequence[str], budget_s: float,
            work_bound: Callable[[TlcResult], bool] | None = None) -> TlcRun:
        """One TLC run of a phase: stopped by its work bound, or else by the safety net of
        ``budget_s`` seconds (and killed if it does not stop by itself soon after)."""
        return self.toolchain.tlc(workdir, files, module, args, timeout_s=budget_s + HARD_LIMIT_MARGIN_S,
                                  stop_after_s=budget_s, work_bound=work_bound)
