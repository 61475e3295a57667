"""Fresh traces of the tasks' real systems, captured once per test run and shared by the tests
that read them (on any xdist worker) and by the capture conftest runs ahead of them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]


def fresh_traces_root(shared_verdicts: Path) -> Path:
    root = shared_verdicts.parent / "fresh-traces"
    root.mkdir(parents=True, exist_ok=True)
    return root


def capture_fresh(root: Path, task: str, stop: threading.Event | None = None) -> subprocess.CompletedProcess[str] | None:
    """Traces of ``task`` captured from the real code once per test run (seeds 101 and 102),
    whoever asks first: a test's fixture on either xdist worker, or the capture run ahead of
    them. The others wait on the lock. None when they are there; else the capture's run, which
    wrote them when it exited 0. Setting ``stop`` ends a capture under way (its whole process
    group: the systems it runs too)."""
    out, captured = root / task, root / f"{task}.captured"
    with FileLock(str(root / f"{task}.lock")):
        if captured.exists():
            return None
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "-m", "pytest_sysmobench.cli", "traces", "capture", task, "--seed", "101",
                   "--runs", "2", "--out", str(out)]
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as process:
            ended = _ended(process, stop, deadline=time.monotonic() + CAPTURE_TIMEOUT_S)
            stdout, stderr = process.communicate()
        done = subprocess.CompletedProcess(command, process.returncode if ended else -1, stdout,
                                           stderr if ended else f"stopped: {stderr}")
        if done.returncode == 0:
            captured.write_text(done.stdout)
        return done


#: A capture that has not ended by then is stopped (a capture takes 5-130 s here).
CAPTURE_TIMEOUT_S = 900


def _ended(process: subprocess.Popen[str], stop: threading.Event | None, deadline: float) -> bool:
    """Waits for the capture; stops its process group when asked to, or at the deadline."""
    while True:
        try:
            process.wait(timeout=0.5)
            return True
        except subprocess.TimeoutExpired:
            if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                return False
