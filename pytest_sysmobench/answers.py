"""Every model answer paid for once: generation and the evaluator alike.

An answer is stored (atomically, keyed by the content hash of route, generation parameters,
rendered prompt, stage and sample index) the moment it arrives, before extraction or any
checker can fail, so an interrupted run never asks for it again.  ``refresh`` asks anew and
overwrites.
"""

from __future__ import annotations

import json
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
    """Answers on disk under ``root/<key[:2]>/<key>.json``, shared by all workers."""

    root: Path
    refresh: bool = False
    stats: StoreStats = field(default_factory=StoreStats)

    def key(self, config: ModelConfig, prompt: str, sample: int, stage: str, json_mode: bool) -> str:
        return digest("answer-v1", config.route, config.generation_parameters(), prompt, sample, stage, json_mode)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _load(self, path: Path) -> Answer | None:
        try:
            return Answer.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def has(self, client: Client, prompt: str, sample: int, stage: str, json_mode: bool = False) -> bool:
        """Whether this request's answer is stored (and would be used: not with --sysmobench-refresh)."""
        path = self._path(self.key(client.config, prompt, sample, stage, json_mode))
        return not self.refresh and self._load(path) is not None

    def answer(self, client: Client, prompt: str, sample: int, stage: str, json_mode: bool = False) -> tuple[Answer, bool]:
        """The stored answer, or a new one (stored before it is returned); True if it was stored."""
        path = self._path(self.key(client.config, prompt, sample, stage, json_mode))
        if not self.refresh and (found := self._load(path)) is not None:
            self.stats.hits += 1
            return found, True
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            if not self.refresh and (found := self._load(path)) is not None:
                self.stats.hits += 1
                return found, True
            try:
                fresh = client.complete(prompt, json_mode=json_mode)
            except GenerationError as exc:
                # Counted only when it reached the endpoint: a missing key sends nothing.
                self.stats.requests += 1 if exc.attempts else 0
                raise
            self.stats.requests += 1
            atomic_write_text(path, json.dumps(fresh.to_json(), sort_keys=True, indent=1))
            return fresh, False
