"""Per-process benchmark state: the tasks, the spec sources, the cells, and the toolchain.

Each pytest-xdist worker has its own (cells of one cell group all land on the same worker);
the controller only collects records from reports.  The toolchain, with its Java driver, is
started lazily, so a session whose items are all skipped never starts a JVM.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import __version__
from .cache import Cache
from .cell import Cell
from .record import CellId
from .evaluator import Evaluator
from .hints import close_matches
from .llm import Client, ModelCatalog, ModelConfigError, load_catalog, missing_key, route_problem
from .prompts import MethodError
from .answers import AnswerStore
from .prefetch import Job, Prefetcher
from .sources import AgentSource, GeneratedSource, SpecSource, UnknownModel, resolve_source
from .scoring import PHASES
from .repair.model import Mender
from .settings import CACHE_ENV, DEFAULT_CORRECTIONS, DEFAULT_REPAIR, repair_model
from .tasks import Task, TaskLoad, load_tasks
from .tla.driver import ToolRunner
from .tla.jar import find_jar, find_java
from .tla.toolchain import Toolchain


@dataclass(frozen=True)
class Options:
    models: tuple[str, ...]
    tasks_dir: Path
    traces_dir: Path
    output: Path
    samples: int
    jar: str | None
    use_cache: bool
    rootdir: Path
    model_config: Path | None = None
    method: str = "direct"
    refresh: bool = False
    evaluator: str | None = None
    cache_dir: Path | None = None
    repair: str = DEFAULT_REPAIR
    #: ``agent_based``: how many times a spec P1 or P2 rejects is sent back.
    corrections: int = DEFAULT_CORRECTIONS
    #: The named preset the options came from (``--sysmobench-profile``), recorded on the board.
    profile: str | None = None


@dataclass(frozen=True)
class PhaseCase:
    """What one test item checks: a phase of a cell, or a task/model that failed to load."""

    task: str
    model: str
    sample: int
    phase: str
    error: str | None = None
    #: Why the task cannot be run here (a system no registry serves): the item is skipped.
    unavailable: str | None = None

    @property
    def id(self) -> str:
        return self.cell.item_id(self.phase)

    @property
    def cell(self) -> CellId:
        return CellId(self.task, self.model, self.sample)


def _cache_dir(output: Path) -> Path:
    """The verdict cache: the folder ``SYSMOBENCH_CACHE`` names, else ``<output>/cache``."""
    given = os.environ.get(CACHE_ENV)
    return Path(given).expanduser().resolve() if given else output / "cache"


class Scorer:
    """Scores candidate specs outside pytest too: one toolchain (one JVM), one cache, one run root.

    Used by the plugin's session and directly by tests and scripts::

        with Scorer(Path("out")) as scorer:
            cell = scorer.cell(task, ReferenceSource())
            results = cell.evaluate()
    """

    def __init__(self, output: Path, *, run_id: str = "adhoc", jar: str | None = None, use_cache: bool = True,
                 traces_dir: Path | None = None, evaluator: Evaluator | None = None,
                 cache_dir: Path | None = None, mender: Mender | None = None) -> None:
        self.output = output
        self.cache_dir = cache_dir or _cache_dir(output)
        self.evaluator = evaluator
        self.mender = mender
        self.run_id = run_id
        self.jar = jar
        self.use_cache = use_cache
        self.traces_dir = traces_dir or output / "no-traces"
        self._toolchain: Toolchain | None = None
        self._work_dir: Path | None = None

    @property
    def run_root(self) -> Path:
        return self.output / "runs" / self.run_id

    def cell(self, task: Task, source: SpecSource, sample: int = 0, traces_dir: Path | None = None) -> Cell:
        return Cell(task, source, sample, self.toolchain, self.run_root, traces_dir or self.traces_dir, self.evaluator,
                    self.mender)

    def toolchain(self) -> Toolchain:
        if self._toolchain is None:
            jar = find_jar(self.jar)
            java = find_java()
            self.output.mkdir(parents=True, exist_ok=True)
            self._work_dir = Path(tempfile.mkdtemp(prefix=f"work-{os.getpid()}-", dir=self.output))
            runner = ToolRunner(jar.path, java=java.java, javac=java.javac, work_dir=self._work_dir)
            cache = Cache(self.cache_dir if self.use_cache else None)
            self._toolchain = Toolchain(jar, java, runner, cache)
        return self._toolchain

    def tool_counters(self) -> dict[str, int]:
        if self._toolchain is None:
            return {"sany": 0, "tlc": 0, "cache_hits": 0}
        return {**self._toolchain.runs, "cache_hits": self._toolchain.cache.stats.hits}

    def provenance(self) -> dict[str, Any]:
        base: dict[str, Any] = {"package_version": __version__}
        if self._toolchain is not None:
            base.update(self._toolchain.provenance())
        return base

    def close(self) -> None:
        if self._toolchain is not None:
            self._toolchain.runner.close()
            self._toolchain = None
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            self._work_dir = None

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Models:
    """The model side of a session: configuration, the answer store, clients, the evaluator."""

    def __init__(self, options: Options, run_id: str) -> None:
        self.options = options
        self._catalog: ModelCatalog | None = None
        self.store = AnswerStore(options.output / "answers", refresh=options.refresh, run_id=run_id)
        self.cooldown_dir = options.output / "answers" / "cooldown"

    @property
    def catalog(self) -> ModelCatalog:
        if self._catalog is None:
            self._catalog = load_catalog(self.options.model_config)
        return self._catalog

    @property
    def evaluator_name(self) -> str | None:
        if self.options.evaluator:
            return self.options.evaluator
        try:
            return self.catalog.evaluator
        except ModelConfigError:
            return None

    def client(self, name: str) -> Client:
        return Client(self.catalog.get(name), self.cooldown_dir)

    def source(self, entry: str) -> GeneratedSource:
        method = self.options.method
        label = entry if method == "direct" else f"{entry}@{method}"
        return GeneratedSource(label, self.client(entry), self.store, method, self.options.traces_dir,
                               self.options.corrections)

    def agent(self, name: str) -> SpecSource:
        """``agent:NAME``: the agent the model configuration's ``agents:`` names."""
        config = self.catalog.agents.get(name)
        if config is None:
            known = sorted(self.catalog.agents)
            close = close_matches(name, known, n=1)
            raise UnknownModel(f"--sysmobench-models agent:{name}: no agent {name!r} under 'agents:' in the model "
                               f"configuration ({self.catalog.source or 'none found'})"
                               + (f"; did you mean agent:{close[0]}?" if close else
                                  f"; known: {', '.join(known)}" if known else ""))
        return AgentSource(config, self.options.traces_dir,
                           self.catalog.get(config.model) if config.model is not None else None)

    def evaluator(self) -> Evaluator:
        assert self.evaluator_name is not None
        return Evaluator(self.evaluator_name, self.client(self.evaluator_name), self.store)

    def mender(self) -> Mender | None:
        """The repair model of ``--sysmobench-repair mechanical+MODEL``, if one is named."""
        name = repair_model(self.options.repair)
        return Mender(name, self.client(name), self.store) if name else None


@functools.lru_cache(maxsize=64)
def task_fingerprint(folder: Path, traces: Path) -> str:
    """A digest of what a task's verdicts are computed from: its files (the harness aside, which
    only makes traces) and its traces."""
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and "harness" not in p.relative_to(folder).parts]
    files += sorted(traces.glob("*.ndjson")) if traces.is_dir() else []
    hashed = hashlib.sha256()
    for path in files:
        hashed.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return hashed.hexdigest()[:16]


@dataclass
class BenchmarkSession:
    options: Options
    run_id: str
    tasks: TaskLoad
    sources: dict[str, SpecSource]
    source_errors: dict[str, str]
    scorer: Scorer
    models: _Models | None = None
    cells: dict[CellId, Cell] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    #: The repair model named by --sysmobench-repair, when it cannot be asked.
    repair_error: str | None = None

    @classmethod
    def start(cls, options: Options, run_id: str) -> BenchmarkSession:
        models = _Models(options, run_id)
        sources: dict[str, SpecSource] = {}
        errors: dict[str, str] = {}
        labels: list[str] = []
        for entry in options.models:
            try:
                source = resolve_source(entry, options.rootdir, models.source, models.agent, options.traces_dir)
                sources[source.name] = source
                labels.append(source.name)
            except (UnknownModel, ModelConfigError, MethodError) as exc:
                errors[entry] = str(exc)
        evaluator = None
        if models.evaluator_name:
            try:
                evaluator = models.evaluator()
            except ModelConfigError as exc:
                errors[f"evaluator:{models.evaluator_name}"] = str(exc)
        mender, repair_error = None, None
        try:
            mender = models.mender()
        except ModelConfigError as exc:
            repair_error = f"--sysmobench-repair {options.repair}: {exc}"
        unroutable = (route_problem(mender.client.config) or missing_key(mender.client.config)) if mender else None
        if unroutable:
            repair_error = f"--sysmobench-repair {options.repair}: {unroutable}"
        scorer = Scorer(options.output, run_id=run_id, jar=options.jar, use_cache=options.use_cache,
                        traces_dir=options.traces_dir, evaluator=evaluator, cache_dir=options.cache_dir, mender=mender)
        return cls(options, run_id, load_tasks(options.tasks_dir), sources, errors, scorer, models=models,
                   labels=tuple(labels), repair_error=repair_error)

    @property
    def run_root(self) -> Path:
        return self.scorer.run_root

    def usage_problems(self, routes: bool = True) -> list[str]:
        """What makes the session's own request wrong (a typo must not pass as a skip): unknown
        or unroutable models, a mutant no task has, a replay folder with no spec for any task,
        two sources under one label.  Without ``routes``, models are not put to litellm (whose
        import costs seconds): for an xdist worker whose controller did it with the same options."""
        problems = [f"{entry}: {error}" for entry, error in self.source_errors.items()]
        problems += [self.repair_error] if self.repair_error else []
        labels = [resolved for resolved in self.labels]
        problems += [f"two spec sources would share the label {label!r} (rename one of the folders)"
                     for label in sorted({x for x in labels if labels.count(x) > 1})]
        for source in self.sources.values():
            problems += source.problems(self.tasks.tasks, self.options.samples, routes)
        problems += self._evaluator_key_problem()
        return problems

    def _evaluator_key_problem(self) -> list[str]:
        """The evaluator is asked only for specs without a mapping: models' and replayed ones."""
        evaluator = self.scorer.evaluator
        if evaluator is None or not any(s.may_lack_mapping for s in self.sources.values()):
            return []
        missing = missing_key(evaluator.client.config)
        return [f"evaluator {evaluator.name}: {missing} (it maps specs that come without mapping.yaml; set it, or "
                "any value when every answer it would give is stored)"] if missing else []

    def cases(self) -> list[PhaseCase]:
        """Deterministic order: xdist requires every worker to collect the same list."""
        cases: list[PhaseCase] = []
        unavailable = {t.name: f"unavailable offline: {t.reason}" for t in self.tasks.unavailable}
        task_names = sorted([t.name for t in self.tasks.tasks] + [name for name, _ in self.tasks.errors]
                            + list(unavailable))
        broken = dict(self.tasks.errors)
        models = sorted(list(self.sources) + list(self.source_errors))
        for task in task_names:
            for model in models:
                error = broken.get(task) or self.source_errors.get(model)
                for sample in range(self.options.samples):
                    cases += [PhaseCase(task, model, sample, phase, error, unavailable.get(task)) for phase in PHASES]
        return cases

    def task(self, name: str) -> Task:
        return next(t for t in self.tasks.tasks if t.name == name)

    def asking_ahead(self, cells: Iterable[CellId], connections: int) -> Prefetcher | None:
        """The model answers these cells need, asked ahead (started), or None when none is
        asked of a model (references, replays, mutants, agents) or ``connections`` is 0."""
        loaded = {t.name: t for t in self.tasks.tasks}
        jobs, seen = [], set()
        for cell in cells:
            source, task = self.sources.get(cell.model), loaded.get(cell.task)
            if source is not None and source.asked_ahead and task is not None and cell not in seen:
                seen.add(cell)
                jobs.append(Job(source, task, cell.sample))
        return Prefetcher(jobs, connections).start() if jobs and connections > 0 else None

    def cell(self, case: PhaseCase) -> Cell:
        if case.cell not in self.cells:
            self.cells[case.cell] = self.scorer.cell(self.task(case.task), self.sources[case.model], case.sample)
        return self.cells[case.cell]

    def tool_counters(self) -> dict[str, int]:
        counters = self.scorer.tool_counters()
        if self.models is not None:
            counters["model_requests"] = self.models.store.stats.requests
            counters["answers_cached"] = self.models.store.stats.hits
        return counters

    def provenance(self) -> dict[str, Any]:
        """What decides a verdict besides the spec: the toolchain, the method, and each task's
        data (its files and its traces), so that boards made otherwise are told apart."""
        return {**self.scorer.provenance(), "method": self.options.method,
                **({"profile": self.options.profile} if self.options.profile else {}),
                "tasks_sha256": {task.name: task_fingerprint(task.directory, self.options.traces_dir / task.name)
                                 for task in self.tasks.tasks}}

    def close(self) -> None:
        self.scorer.close()
