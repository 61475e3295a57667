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
The threads are daemons: an interrupted run stops asking, and its next run asks only what is
missing.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

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
    """Per model a queue of jobs and as many daemon threads as it may have requests in flight."""

    def __init__(self, jobs: Sequence[Job], connections: int) -> None:
        self.progress = Progress(cells=len(jobs))
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._queues: dict[str, queue.SimpleQueue[Job]] = {}
        self._limits: dict[str, int] = {}
        for job in jobs:
            name = job.source.name
            if name not in self._queues:
                self._queues[name] = queue.SimpleQueue()
                self._limits[name] = job.source.client.config.max_connections or connections
            self._queues[name].put(job)
        self._left = len(jobs)
        self._threads: list[threading.Thread] = []
        self._notes: dict[Job, Path | None] = {}

    def _release(self, job: Job) -> None:
        note = self._notes.pop(job, None)
        if note is not None:
            note.unlink(missing_ok=True)

    def start(self) -> Prefetcher:
        for jobs in self._queues.values():
            for job in list(_drained(jobs)):
                self._notes[job] = job.source.reserve(job.task, job.sample)
                jobs.put(job)
        for name, jobs in self._queues.items():
            for n in range(min(self._limits[name], jobs.qsize())):
                thread = threading.Thread(target=self._work, args=(jobs,), name=f"sysmobench-ask-{name}-{n}",
                                          daemon=True)
                thread.start()
                self._threads.append(thread)
        if not self._threads:
            self.progress.finished = time.monotonic()
        return self

    def stop(self) -> None:
        """Nothing more is sent; what is in flight finishes (or dies with the process), and a
        cell whose answer was not asked asks itself."""
        self._stopped.set()
        for jobs in self._queues.values():
            for job in _drained(jobs):
                self._release(job)

    def wait(self, timeout: float | None = None) -> bool:
        """Whether every job is done within ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    @property
    def busy(self) -> bool:
        return self.progress.finished is None

    def _work(self, jobs: queue.SimpleQueue[Job]) -> None:
        while not self._stopped.is_set():
            try:
                job = jobs.get_nowait()
            except queue.Empty:
                return
            self._run(job)

    def _run(self, job: Job) -> None:
        with self._lock:
            self.progress.in_flight += 1
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
                progress = self.progress
                progress.in_flight -= 1
                setattr(progress, outcome, getattr(progress, outcome) + 1)
                progress.requests += requests
                progress.cost_usd += cost
                self._left -= 1
                if self._left == 0:
                    progress.finished = time.monotonic()


def _drained(jobs: queue.SimpleQueue[Job]) -> Iterator[Job]:
    while True:
        try:
            yield jobs.get_nowait()
        except queue.Empty:
            return
