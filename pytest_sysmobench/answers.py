"""Every model answer paid for once: generation and the evaluator alike.

An answer is stored (atomically, keyed by the content hash of route, generation parameters,
rendered prompt, stage and sample index) the moment it arrives, before extraction or any
checker can fail, so an interrupted run never asks for it again.  ``refresh`` asks anew and
overwrites (once per run).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

from .cache import atomic_write_text, digest
from .llm import Answer, Client, GenerationError, ModelConfig


@dataclass
class StoreStats:
    requests: int = 0
    hits: int = 0


@dataclass
class AnswerStore:
    """Answers on disk under ``root/<key[:2]>/<key>.json``, shared by all workers and threads.

    A run's id is written with each answer it asked for, so that ``refresh`` asks once per run
    (a sweep asking ahead and the cell that uses the answer are one request), and a request
    that failed in this run leaves a note that the cell reads instead of asking again."""

    root: Path
    refresh: bool = False
    run_id: str = ""
    stats: StoreStats = field(default_factory=StoreStats)
    _count: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def key(self, config: ModelConfig, prompt: str, sample: int, stage: str, json_mode: bool) -> str:
        return digest("answer-v1", config.route, config.generation_parameters(), prompt, sample, stage, json_mode)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _load(self, path: Path) -> tuple[Answer, bool] | None:
        """The stored answer, and whether this run asked for it ahead (its first use is then
        this run's request, not a cached answer)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError):
            return None
        if not isinstance(data, dict):
            return None
        ours = bool(self.run_id) and data.get("run_id") == self.run_id
        if self.refresh and not ours:
            return None  # with refresh, only what this run asked counts
        try:
            return Answer.from_json(data), ours and bool(data.get("asked_ahead"))
        except TypeError:
            return None

    def _failure(self, path: Path) -> GenerationError | None:
        """This run's failed request for the key, if one was made (and not answered since)."""
        try:
            data = json.loads(path.with_suffix(".failed").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not self.run_id or data.get("run_id") != self.run_id:
            return None
        return GenerationError(str(data.get("error")), attempts=0, transient=bool(data.get("transient")))

    def has(self, client: Client, prompt: str, sample: int, stage: str, json_mode: bool = False) -> bool:
        """Whether this request's answer is stored (and would be used: with --sysmobench-refresh,
        only one this run asked for)."""
        return self._load(self._path(self.key(client.config, prompt, sample, stage, json_mode))) is not None

    def answer(self, client: Client, prompt: str, sample: int, stage: str, json_mode: bool = False, *,
               ahead: bool = False) -> tuple[Answer, bool]:
        """The stored answer, or a new one (stored before it is returned); True if it came from
        the store.  ``ahead``: asked for a cell that will read it later (a sweep asking ahead),
        which counts it as its own request."""
        path = self._path(self.key(client.config, prompt, sample, stage, json_mode))
        if (found := self._found(path, ahead)) is not None:
            return found
        if not ahead and (found := self._awaited(path, _patience(client.config))) is not None:
            return found
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            if (found := self._found(path, ahead)) is not None:
                return found
            if (failed := self._failure(path)) is not None:
                raise failed
            try:
                fresh = client.complete(prompt, json_mode=json_mode)
            except GenerationError as exc:
                # Counted only when it reached the endpoint: a missing key sends nothing.
                self._counted(requests=1 if exc.attempts and not ahead else 0)
                if exc.attempts:
                    atomic_write_text(path.with_suffix(".failed"), json.dumps(
                        {"run_id": self.run_id, "error": str(exc), "transient": exc.transient}))
                raise
            self._counted(requests=0 if ahead else 1)
            stored = {**fresh.to_json(), "run_id": self.run_id, **({"asked_ahead": True} if ahead else {})}
            atomic_write_text(path, json.dumps(stored, sort_keys=True, indent=1))
            return fresh, False

    def reserve(self, client: Client, prompt: str, sample: int, stage: str, json_mode: bool = False) -> Path | None:
        """Says that this run asks for the answer ahead: a cell that needs it waits for it
        rather than asking too (so that the sweep's limit of requests in flight holds over
        every worker).  The note, or None when the answer is stored already."""
        path = self._path(self.key(client.config, prompt, sample, stage, json_mode))
        if self._load(path) is not None:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        note = path.with_suffix(".ahead")
        atomic_write_text(note, self.run_id)
        return note

    def _awaited(self, path: Path, patience: float) -> tuple[Answer, bool] | None:
        """The answer a sweep is asking for, once it has it; None when no sweep of this run is
        asking (or it stopped before it asked), or when it has been asking for longer than a
        request can take (``patience``), so that the cell asks itself.  Another process may be
        the one asking: the note on disk is all there is to watch, read less often as time passes."""
        note = path.with_suffix(".ahead")
        pause = _FIRST_PAUSE_S
        while True:
            asking, since = self._asking(note)
            if (found := self._found(path, False)) is not None:
                return found
            if (failed := self._failure(path)) is not None:
                raise failed
            if not asking or (since is not None and time.time() - since > patience):
                return None
            time.sleep(pause)
            pause = min(pause * 2, _LAST_PAUSE_S)

    def _asking(self, note: Path) -> tuple[bool, float | None]:
        """Whether this run's sweep says it asks for the answer, and since when it is being asked
        (None while it waits its turn)."""
        try:
            lines = note.read_text(encoding="utf-8").splitlines()
        except OSError:
            return False, None
        if not self.run_id or not lines or lines[0] != self.run_id:
            return False, None
        try:
            return True, float(lines[1]) if len(lines) > 1 else None
        except ValueError:
            return True, None

    def _found(self, path: Path, ahead: bool) -> tuple[Answer, bool] | None:
        loaded = self._load(path)
        if loaded is None:
            return None
        answer, asked_ahead = loaded
        if not ahead:
            self._counted(**({"requests": 1} if asked_ahead else {"hits": 1}))
        return answer, not asked_ahead

    def _counted(self, requests: int = 0, hits: int = 0) -> None:
        with self._count:
            self.stats.requests += requests
            self.stats.hits += hits


#: How often a cell looks for an answer a sweep is asking for: soon, then every half second.
_FIRST_PAUSE_S = 0.02
_LAST_PAUSE_S = 0.5


def asking_since(note: Path) -> None:
    """Marks an answer asked ahead as being asked now (a cell waits for it that long at most)."""
    try:
        run_id = note.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return
    atomic_write_text(note, f"{run_id}\n{time.time():.3f}")


def _patience(config: ModelConfig) -> float:
    """The longest a request can take: every attempt to its timeout and the longest pause between."""
    return config.attempts * (config.timeout_s + config.max_backoff_s)
