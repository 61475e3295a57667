"""Bad input of every kind gets a specific, recorded outcome, and nothing escapes the run directory.

Each folder of ``tests/data/bad_inputs/`` is one case: ``answer.txt`` is what a model answered
(it lands in ``<replay>/spin/Spin.tla``), with an optional ``Spin.cfg`` and ``mapping.yaml``
beside it, and ``expect.yaml`` says what a demanding user would call the right outcome::

    description: what the case is
    xfail: why the current behaviour is wrong      # optional: strict xfail until the code is fixed
    task: {runtime: {budget_s: 1}, invariants: {budget_s: 1}}   # optional overrides of the spin task
    hard_limit_margin_s: 3                         # optional: shorter hard limit over the budget
    max_seconds: 30                                # optional: the whole cell must end within this
    notes: [substring, ...]                        # optional: in the candidate's extraction notes
    phases:
      syntax:
        status: failed                             # passed|failed|blocked|skipped|not_evaluable
        reason: substring, or a list of them (a nested list = any one of its items)
        reason_excludes: [substring, ...]          # optional
        score: 0.5 or [low, high] or null          # optional (null: the phase has no score)
        details: [substring, ...]                  # optional: in the JSON of the phase's details

A case may also bring its own task files or traces:

    task_files/<relative path>                     # laid over a copy of tasks/spin (a broken task file)
    traces/<name>.ndjson                           # the traces P3 and P4 see (default: none)
    traces: spin                                   # in expect.yaml: the captured spin traces of data/traces
    task_error: substring                          # instead of phases: loading the task must fail so

Every case is also held to rules that hold everywhere: all four phases have a result, never a
harness error unless the case brings its own (broken) task files or traces, and every reason is non-empty and
short enough to read (MAX_REASON_CHARS).

All cases share one module-scoped Scorer (one driver JVM).  Cells are evaluated lazily and
memoised, so the confinement test sees every case however the tests are ordered or selected.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from pytest_sysmobench import PHASES, Cell, Status, load_task
from pytest_sysmobench.scoring import Cause
from pytest_sysmobench.tasks import TaskError, load_tasks
from pytest_sysmobench.sources import ReplaySource
from pytest_sysmobench.phases import _context as phase_context
from pytest_sysmobench.session import Scorer

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "data" / "bad_inputs"
TASK = load_task(ROOT / "tasks" / "spin")
STATUSES = {s.value for s in Status}
#: The only reasons a bad spec's phase may be left without a score: the benchmark has nothing to
#: check it against here (the corpus brings no traces), or the phase needs an earlier one that has none.
BENCHMARK_CAUSES = {Cause.NO_TRACES, Cause.UPSTREAM}
#: A reason is read by humans in pytest output, JUnit and the leaderboard: it must stay short.
MAX_REASON_CHARS = 2000
#: Names that a spec steering the tools would leave behind (MODULE ../../../tmp/evil, /etc/passwd, IOExec).
SUSPICIOUS = ("evil", "passwd", "sysmobench-pwned")


def _load(case_dir: Path) -> dict[str, Any]:
    data = yaml.safe_load((case_dir / "expect.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{case_dir}/expect.yaml: not a mapping"
    assert isinstance(data.get("phases"), dict) != bool(data.get("task_error")), \
        f"{case_dir}/expect.yaml: give either phases or task_error"
    return data


CASES = {d.name: _load(d) for d in sorted(CORPUS.iterdir()) if d.is_dir()}
SPEC_CASES = [name for name, expect in CASES.items() if "phases" in expect]
TASK_ERROR_CASES = [name for name, expect in CASES.items() if "task_error" in expect]
CAPTURED_TRACES = ROOT / "data" / "traces"


def _param(name: str) -> Any:
    reason = CASES[name].get("xfail")
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, id=name, marks=marks)


# ------------------------------------------------------------------ snapshots of the world outside


def _walk(root: Path, skip: Path | None = None) -> set[str]:
    """Every path under root, not descending into ``skip``."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root, onerror=lambda _e: None):
        if skip is not None:
            dirs[:] = [d for d in dirs if os.path.join(folder, d) != str(skip)]
        for name in dirs + files:
            found.add(os.path.join(folder, name))
    return found


def _fingerprints() -> tuple[str, ...]:
    """Path parts only this process's scoring can produce: its work dir and the cells' run dirs.

    Others work in the repo and in /tmp in parallel, so "anything new" would be flaky; anything
    new that carries one of these marks, or an attack's name, was written by these cells.
    """
    return (f"work-{os.getpid()}-", *(f"replay_{name}" for name in CASES))


def _leaks_in(root: Path, skip: Path | None = None) -> set[str]:
    marks = _fingerprints()
    found = set()
    for path in _walk(root, skip):
        name = os.path.basename(path).lower()
        if any(s in name for s in SUSPICIOUS) or any(m in path for m in marks):
            found.add(path)
    return found


def _git_untracked() -> set[str] | None:
    """Untracked and ignored paths of the repo (others may edit tracked files in parallel)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all", "--ignored"],
            capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    paths = set()
    for line in done.stdout.splitlines():
        if line[:2] in ("??", "!!"):
            path = line[3:].strip('"')
            if "__pycache__" not in path and not path.endswith(".pyc"):
                paths.add(path)
    return paths


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@dataclasses.dataclass
class World:
    root: Path  # this module's private tmp dir: replay inputs and the scorer's output dir
    out: Path
    tmp_leaks: set[str]
    root_paths: set[str]
    git: set[str] | None
    passwd: str | None


# ------------------------------------------------------------------ the shared scorer


@dataclasses.dataclass
class Outcome:
    results: dict[str, Any]
    notes: tuple[str, ...]
    elapsed: float
    #: What went wrong repairing the spec, if anything did.
    repair_problem: str | None = None


class Corpus:
    def __init__(self, scorer: Scorer, replay: Path) -> None:
        self.scorer = scorer
        self.replay = replay
        self.outcomes: dict[str, Outcome] = {}

    def task_for(self, name: str, expect: dict[str, Any]):
        overrides = dict(expect.get("task") or {})
        task = TASK if not (CORPUS / name / "task_files").is_dir() else load_task(_patched_task(name, self.replay.parent))
        top = {k: v for k, v in overrides.items() if k not in ("runtime", "invariants")}
        if top:
            task = dataclasses.replace(task, **top)
        if "runtime" in overrides:
            task = dataclasses.replace(task, runtime=dataclasses.replace(task.runtime, **overrides["runtime"]))
        if "invariants" in overrides:
            task = dataclasses.replace(task, invariants=dataclasses.replace(task.invariants, **overrides["invariants"]))
        return task

    def outcome(self, name: str) -> Outcome:
        if name not in self.outcomes:
            expect = CASES[name]
            margin = expect.get("hard_limit_margin_s")
            with pytest.MonkeyPatch.context() as patch:
                if margin is not None:
                    # The hard limit is budget + a fixed margin (60 s): shortened so the never-ending
                    # case costs seconds, not minutes.  What is tested is that it ends, and how.
                    patch.setattr(phase_context, "HARD_LIMIT_MARGIN_S", float(margin))
                cell = self.scorer.cell(self.task_for(name, expect), ReplaySource(self.replay / name),
                                        traces_dir=_traces_for(name, expect, self.replay.parent))
                start = time.monotonic()
                results = cell.evaluate()
                elapsed = time.monotonic() - start
                repair = _repair_of(cell)
            self.outcomes[name] = Outcome(results, cell.candidate().notes, elapsed, repair)
        return self.outcomes[name]


def _repair_of(cell: Cell) -> str | None:
    """The run repairs every spec P1 or P2 leaves unusable: hostile input must be contained there
    too (a raised exception is what the run would record as a harness error)."""
    try:
        outcome = cell.repaired()
    except Exception as exc:  # noqa: BLE001 - named in the case's problems
        return f"repair raised {type(exc).__name__}: {exc}"
    if outcome.repair is not None and not outcome.repair.reason.strip() and not outcome.repair.repaired:
        return f"repair {outcome.repair.status} without a reason"
    return None


def _brings_own_data(name: str) -> bool:
    """A broken task file or trace is the data's fault: reported as an error, which a spec never causes."""
    return (CORPUS / name / "task_files").is_dir() or (CORPUS / name / "traces").is_dir()


def _patched_task(name: str, root: Path) -> Path:
    """A copy of tasks/spin with the case's task_files laid over it (made once per case)."""
    target = root / "tasks" / name / TASK.name
    if not target.is_dir():
        shutil.copytree(TASK.directory, target)
        overlay = CORPUS / name / "task_files"
        for path in sorted(overlay.rglob("*")):
            if path.is_file():
                destination = target / path.relative_to(overlay)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, destination)
    return target


def _traces_for(name: str, expect: dict[str, Any], root: Path) -> Path | None:
    """The traces folder for the case (holding ``spin/*.ndjson``), or None for no traces."""
    if expect.get("traces") == "spin":
        return CAPTURED_TRACES
    own = CORPUS / name / "traces"
    if not own.is_dir():
        return None
    target = root / "traces" / name
    if not target.is_dir():
        shutil.copytree(own, target / TASK.name)
    return target


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("bad_inputs")
    replay = root / "replay"
    for name in SPEC_CASES:
        target = replay / name / TASK.name
        target.mkdir(parents=True)
        shutil.copyfile(CORPUS / name / "answer.txt", target / f"{TASK.module}.tla")
        for extra in (f"{TASK.module}.cfg", "mapping.yaml"):
            if (CORPUS / name / extra).is_file():
                shutil.copyfile(CORPUS / name / extra, target / extra)
    for name, expect in CASES.items():  # made up front, so that they count as inputs, not as output
        if (CORPUS / name / "task_files").is_dir():
            _patched_task(name, root)
        _traces_for(name, expect, root)
    yield World(
        root=root,
        out=root / "out",
        tmp_leaks=_leaks_in(Path(tempfile.gettempdir()), skip=root),
        root_paths=_walk(root),
        git=_git_untracked(),
        passwd=_sha(Path("/etc/passwd")),
    )


@pytest.fixture(scope="module")
def corpus(world: World) -> Iterator[Corpus]:
    # A verdict cache of the corpus's own, inside its output dir: the many cases that share the
    # reference spec (a bad trace, a bad mapping) check it once; nothing is read from elsewhere.
    with Scorer(world.out, cache_dir=world.out / "verdicts") as scorer:
        yield Corpus(scorer, world.root / "replay")
    problems = _leaks(world, everywhere=True)
    if problems:
        pytest.fail("the bad inputs scored on this worker wrote outside the output dir:\n" + "\n".join(problems))


# ------------------------------------------------------------------ checks


def _check_reason(phase: str, reason: str, expected: Any, excluded: list[str]) -> list[str]:
    problems = []
    wanted = expected if isinstance(expected, list) else [expected]
    for item in wanted:
        options = item if isinstance(item, list) else [item]
        if not any(str(o).lower() in reason.lower() for o in options):
            problems.append(f"{phase}: reason lacks {' or '.join(map(repr, options))}")
    for item in excluded:
        if item.lower() in reason.lower():
            problems.append(f"{phase}: reason should not contain {item!r}")
    return problems


def _check_score(phase: str, score: float | None, expected: Any) -> list[str]:
    if expected is None:  # `score: null`: the phase has no score (it says nothing about the spec)
        return [] if score is None else [f"{phase}: score {score}, expected none"]
    if isinstance(expected, list):
        low, high = expected
        if score is None or not low <= score <= high:
            return [f"{phase}: score {score} not in [{low}, {high}]"]
    elif score is None or abs(score - float(expected)) > 1e-9:
        return [f"{phase}: score {score}, expected {expected}"]
    return []


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text)} chars]"


def test_corpus_is_well_formed() -> None:
    assert len(CASES) >= 80
    for name, expect in CASES.items():
        if "task_error" in expect:
            assert (CORPUS / name / "task_files").is_dir(), f"{name}: a task_error case brings task_files"
            continue
        assert (CORPUS / name / "answer.txt").is_file(), name
        assert set(expect["phases"]) == set(PHASES), f"{name}: expect.yaml must give all four phases"
        for phase, spec in expect["phases"].items():
            assert spec.get("status") in STATUSES, f"{name}/{phase}: unknown status {spec.get('status')!r}"
            assert spec.get("reason"), f"{name}/{phase}: no reason substring"


@pytest.mark.parametrize("case", [_param(name) for name in TASK_ERROR_CASES])
def test_broken_task_file_is_refused_with_file_and_field(world: World, case: str) -> None:
    """A broken task file stops that task with a message naming where, and only that task."""
    expect = CASES[case]
    directory = _patched_task(case, world.root)
    start = time.monotonic()
    with pytest.raises(TaskError) as caught:
        load_task(directory)
    assert time.monotonic() - start < 10, "refusing a task file must not take long"
    message = str(caught.value)
    wanted = expect["task_error"] if isinstance(expect["task_error"], list) else [expect["task_error"]]
    for item in wanted:
        assert item in message, f"{message!r} lacks {item!r}"
    assert str(directory) in message, f"the message does not name the file: {message!r}"
    load = load_tasks(directory.parent)
    assert [name for name, _ in load.errors] == [TASK.name] and not load.tasks


@pytest.mark.parametrize("case", [_param(name) for name in SPEC_CASES])
def test_bad_input(world: World, corpus: Corpus, case: str) -> None:
    expect = CASES[case]
    outcome = corpus.outcome(case)
    results = outcome.results
    problems: list[str] = _leaks(world)
    assert set(results) == set(PHASES), f"missing phases: {set(PHASES) - set(results)}"
    for phase in PHASES:
        result = results[phase]
        want = expect["phases"][phase]
        if result.status is Status.ERROR and not _brings_own_data(case):
            problems.append(f"{phase}: harness error (a spec must never cause one): {_short(result.reason)}")
        if result.score is None and result.cause not in BENCHMARK_CAUSES and not _brings_own_data(case):
            problems.append(f"{phase}: no score, but charged to nobody ({result.cause}): a spec must not be able to "
                            f"make its cell undecidable: {_short(result.reason)}")
        if result.status.value != want["status"]:
            problems.append(f"{phase}: status {result.status.value}, expected {want['status']}")
        if not result.reason.strip():
            problems.append(f"{phase}: empty reason")
        if len(result.reason) > MAX_REASON_CHARS:
            problems.append(f"{phase}: reason is {len(result.reason)} characters long (limit {MAX_REASON_CHARS})")
        problems += _check_reason(phase, result.reason, want["reason"], want.get("reason_excludes") or [])
        if "score" in want:
            problems += _check_score(phase, result.score, want["score"])
        details = json.dumps(result.details, default=str)
        for item in want.get("details") or []:
            if item not in details:
                problems.append(f"{phase}: details lack {item!r}")
    if outcome.repair_problem:
        problems.append(outcome.repair_problem)
    notes = " | ".join(outcome.notes)
    for item in expect.get("notes") or []:
        if item not in notes:
            problems.append(f"notes lack {item!r} (notes: {notes})")
    if "max_seconds" in expect and outcome.elapsed > expect["max_seconds"]:
        problems.append(f"took {outcome.elapsed:.1f}s, limit {expect['max_seconds']}s")
    summary = "\n".join(f"  {p}: {results[p].status.value} {results[p].score} :: {_short(results[p].reason)}" for p in PHASES)
    assert not problems, "\n".join(problems) + f"\nactual:\n{summary}"


def _leaks(world: World, everywhere: bool = False) -> list[str]:
    """What the cells scored so far wrote outside the output dir (``MODULE ../../../tmp/evil``,
    ``MODULE /etc/passwd`` and IOExec among them).  Checked after every case, so that each case
    is scored once and an attack is named by the first case after which its trace shows; the
    walks of the whole tmp dir and of the repository, once all of a worker's cases are done."""
    problems = []
    # 1. This module's private tmp tree: besides the replay inputs, only the output dir may grow.
    outside = sorted(p for p in _walk(world.root, skip=world.out) - world.root_paths if not Path(p).is_relative_to(world.out))
    if outside:
        problems.append(f"written next to the output dir: {outside[:10]}")
    # 2. Inside the output dir, no file named after an attack.
    named = sorted(p for p in _walk(world.out) if any(s in os.path.basename(p).lower() for s in SUSPICIOUS))
    if named:
        problems.append(f"files named after an attack in the output dir: {named[:10]}")
    for path in ("/tmp/evil", "/tmp/sysmobench-pwned", str(world.root / "tmp" / "evil")):
        if os.path.lexists(path):
            problems.append(f"{path} exists")
    if _sha(Path("/etc/passwd")) != world.passwd:
        problems.append("/etc/passwd changed")
    if not everywhere:
        return problems
    # 3. Anywhere else in the system tmp dir: nothing named after an attack, nothing from these cells.
    # Under pytest-xdist the other workers' private trees (same run) hold their own output dirs.
    run_base = world.root.parent.parent if world.root.parent.name.startswith("popen-gw") else world.root
    new = sorted(_leaks_in(Path(tempfile.gettempdir()), skip=run_base) - world.tmp_leaks)
    if new:
        problems.append(f"written in the tmp dir outside the output dir: {new[:10]}")
    # 4. The repository (git status): no new untracked or ignored file from these cells or an attack.
    after = _git_untracked()
    if world.git is not None and after is not None:
        marks = _fingerprints()
        leaked = sorted(
            p for p in after - world.git
            if any(s in os.path.basename(p).lower() for s in SUSPICIOUS) or any(m in p for m in marks)
        )
        if leaked:
            problems.append(f"new files in the repository: {leaked[:10]}")
    return problems
