"""A sweep asks ahead: after collection every answer the selected cells will need is requested,
many at once, so that the run waits for the model API about ``latency x requests /
connections`` instead of ``latency x requests``, and TLC works on each cell while the rest are
still being written.

One process asks ahead for the whole run (the pytest process, or the xdist controller), so
``--sysmobench-max-connections`` (or a model's ``max_connections``) is the limit per model over
all workers.  What it asks is what the cell would ask (``GeneratedSource.conversation``, every
stage of the method), through the same answer store: an answer is stored the moment it
arrives, a cell that needs one still in flight waits for it (the store's lock), and a request
that failed leaves a note the cell reads instead of asking again.  What only a cell can ask
(an ``agent_based`` correction, which needs the cell's own P1 and P2; the evaluator's mapping;
the repair model) is asked by the cell, one at a time per process, under the same ``rpm``.
An interrupted run stops asking (what is in flight finishes, within the model's timeout), and
its next run asks only what is missing.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .answers import asking_since
from .sources import GeneratedSource
from .tasks import Task


@dataclass(frozen=True, eq=False)
class Job:
    """One cell's answer: every stage its source's method asks for."""

    source: GeneratedSource
    task: Task
    sample: int


@dataclass
class Progress:
    """What the sweep has asked so far, for the progress line and the summary."""

    cells: int = 0
    done: int = 0
    stored: int = 0
    failed: int = 0
    in_flight: int = 0
    requests: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    def line(self) -> str:
        elapsed = (self.finished or time.monotonic()) - self.started
        waiting = self.cells - self.done - self.stored - self.failed - self.in_flight
        return (f"sysmobench generation: {self.done + self.stored + self.failed} of {self.cells} cells' answers "
                f"({self.requests} request(s) answered, {self.stored} already stored), {self.in_flight} in flight, "
                f"{waiting} waiting, {self.failed} failed, ${self.cost_usd:.4f} spent, {elapsed:.0f} s")


class Prefetcher:
    """Per model a pool of as many threads as it may have requests in flight, each job a future."""

    def __init__(self, jobs: Sequence[Job], connections: int) -> None:
        self.progress = Progress(cells=len(jobs))
        self._lock = threading.Lock()
        self._jobs = list(jobs)
        self._connections = connections
        self._pools: list[ThreadPoolExecutor] = []
        self._futures: list[Future[None]] = []
        self._notes: dict[Job, Path | None] = {}
        self._left = len(jobs)

    def start(self) -> Prefetcher:
        by_model: dict[str, list[Job]] = {}
        for job in self._jobs:
            by_model.setdefault(job.source.name, []).append(job)
            self._notes[job] = job.source.reserve(job.task, job.sample)
        for name, jobs in by_model.items():
            limit = jobs[0].source.client.config.max_connections or self._connections
            pool = ThreadPoolExecutor(max_workers=min(limit, len(jobs)), thread_name_prefix=f"sysmobench-ask-{name}")
            self._pools.append(pool)
            for job in jobs:
                future = pool.submit(self._run, job)
                future.add_done_callback(lambda done, job=job: self._cancelled(done, job))
                self._futures.append(future)
        if not self._futures:
            self.progress.finished = time.monotonic()
        return self

    def stop(self) -> None:
        """Nothing more is sent: what waits is cancelled (its cell asks itself) and what is in
        flight finishes, within the model's own timeout."""
        for pool in self._pools:
            pool.shutdown(wait=False, cancel_futures=True)

    def wait(self, timeout: float | None = None) -> bool:
        """Whether every job is done within ``timeout`` seconds."""
        return not wait(self._futures, timeout).not_done

    @property
    def busy(self) -> bool:
        return self.progress.finished is None

    def _cancelled(self, future: Future[None], job: Job) -> None:
        if future.cancelled():
            self._release(job)
            self._count("cancelled")

    def _release(self, job: Job) -> None:
        with self._lock:
            note = self._notes.pop(job, None)
        if note is not None:
            note.unlink(missing_ok=True)

    def _run(self, job: Job) -> None:
        with self._lock:
            self.progress.in_flight += 1
        note = self._notes.get(job)
        if note is not None:
            asking_since(note)
        outcome, requests, cost = "failed", 0, 0.0
        try:
            _, entries = job.source.conversation(job.task, job.sample, ahead=True)
            fresh = [e for e in entries if not e["cached"]]
            requests, cost = len(fresh), sum(e.get("cost_usd") or 0.0 for e in fresh)
            outcome = "done" if fresh else "stored"
        except Exception:  # noqa: BLE001 - the cell reads the failure (the store's note) or meets it itself, and says why
            pass
        finally:
            self._release(job)
            with self._lock:
                self.progress.in_flight -= 1
            self._count(outcome, requests, cost)

    def _count(self, outcome: str, requests: int = 0, cost: float = 0.0) -> None:
        with self._lock:
            progress = self.progress
            if outcome != "cancelled":
                setattr(progress, outcome, getattr(progress, outcome) + 1)
            progress.requests += requests
            progress.cost_usd += cost
            self._left -= 1
            if self._left == 0:
                progress.finished = time.monotonic()
