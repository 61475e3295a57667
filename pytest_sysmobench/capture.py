"""Capturing traces from the real system: build the task's harness, run it per seed, validate.

The harness is task data (commands in task.yaml, source under tasks/<name>/harness/); this
module only runs it, retries runs the harness itself declares unusable (e.g. too little
contention), and refuses to keep a trace the loader rejects.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .tasks import Harness, Task
from .traces import Trace, TraceError, load_trace

HARNESS_TIMEOUT_S = 600


class CaptureError(RuntimeError):
    """The harness could not be built or run; the message says what to install or fix."""


@dataclass(frozen=True)
class Captured:
    path: Path
    trace: Trace
    attempts: int

    def counts(self) -> Counter[str]:
        return Counter(action for action, _ in self.trace.events)


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path.home() / ".cargo" / "bin"))
    if found is None:
        raise CaptureError(f"'{name}' is not installed; the harness needs it (see the task's harness.requires)")
    return found


def _command(template: str, harness: Harness, **values: object) -> list[str]:
    argv = shlex.split(template.format(**{k: str(v) for k, v in values.items()}))
    if argv and argv[0] in harness.requires:
        argv[0] = _tool(argv[0])
    return argv


def _check_packages(harness: Harness) -> None:
    missing = [p for p in harness.packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing and shutil.which("dpkg"):
        raise CaptureError(f"Debian package(s) {', '.join(missing)} missing: apt-get install -y {' '.join(missing)}")


def _run(argv: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + os.pathsep + str(Path.home() / ".cargo" / "bin")}
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=HARNESS_TIMEOUT_S, env=env)
    except FileNotFoundError as exc:
        raise CaptureError(f"{what}: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise CaptureError(f"{what}: did not finish within {HARNESS_TIMEOUT_S} s") from exc


def build(task: Task) -> None:
    harness = _require(task)
    for tool in harness.requires:
        _tool(tool)
    _check_packages(harness)
    if harness.build:
        done = _run(_command(harness.build, harness), harness.directory, f"building the {task.name} harness")
        if done.returncode != 0:
            raise CaptureError(f"building the {task.name} harness failed (exit {done.returncode}):\n{done.stderr[-2000:]}")


def _require(task: Task) -> Harness:
    if task.harness is None:
        raise CaptureError(f"task {task.name} has no trace harness")
    return task.harness


def capture_one(task: Task, seed: int, out_dir: Path, ops: int | None = None) -> Captured:
    harness = _require(task)
    out_dir = out_dir.resolve()  # the harness runs in its own folder, so a relative path would miss
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"seed-{seed}.ndjson"
    partial = out_dir / f".seed-{seed}.ndjson.partial"
    for attempt in range(1, harness.attempts + 1):
        partial.unlink(missing_ok=True)
        argv = _command(harness.run, harness, seed=seed, ops=ops or harness.ops, out=partial)
        done = _run(argv, harness.directory, f"running the {task.name} harness")
        if done.returncode == 0:
            break
        if done.returncode not in harness.retry_exit_codes or attempt == harness.attempts:
            partial.unlink(missing_ok=True)
            raise CaptureError(f"the {task.name} harness failed for seed {seed} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    try:
        trace = load_trace(partial, task)
    except TraceError as exc:
        partial.unlink(missing_ok=True)
        raise CaptureError(f"the {task.name} harness wrote an invalid trace: {exc}") from exc
    os.replace(partial, target)
    return Captured(target, trace, attempt)


def capture(task: Task, seeds: Sequence[int], out_dir: Path, ops: int | None = None) -> list[Captured]:
    build(task)
    return [capture_one(task, seed, out_dir, ops) for seed in seeds]
