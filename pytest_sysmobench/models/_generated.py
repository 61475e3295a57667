"""Specs written by a model through litellm, and the answer store that keeps them paid for once.

An answer is stored (atomically, keyed by the content hash of route, generation parameters,
rendered prompt, stage and sample index) the moment it arrives, before extraction or any
checker can fail, so an interrupted run never asks for it again.  ``refresh`` asks anew and
overwrites.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..cache import atomic_write_text, digest
from ..generation import SourceMissing
from ..llm import Answer, Client, GenerationError, ModelConfig
from ..methods import MethodError, render, stages
from ..tasks import Task
from ._base import Candidate
from ._sources import _with_spec

from filelock import FileLock


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
            self.stats.requests += 1
            fresh = client.complete(prompt, json_mode=json_mode)
            atomic_write_text(path, json.dumps(fresh.to_json(), sort_keys=True, indent=1))
            return fresh, False


def _usage(entries: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [e["cost_usd"] for e in entries if e.get("cost_usd") is not None]
    return {
        "prompt_tokens": sum(e["prompt_tokens"] for e in entries),
        "completion_tokens": sum(e["completion_tokens"] for e in entries),
        "cost_usd": round(sum(costs), 8) if len(costs) == len(entries) and entries else None,
        "requests": sum(0 if e["cached"] else 1 for e in entries),
        "cached": sum(1 for e in entries if e["cached"]),
    }


class GeneratedSource:
    """Asks a model for each cell's spec with one of the generation methods."""

    def __init__(self, name: str, client: Client, store: AnswerStore, method: str, traces_dir: Path) -> None:
        stages(method)  # an unknown method fails when the session starts, not per cell
        self.name = name
        self.client = client
        self.store = store
        self.method = method
        self.traces_dir = traces_dir

    def route_problem(self) -> str | None:
        from ..llm import route_problem

        return route_problem(self.client.config)

    def _describe(self, stage: str, prompt: str, answer: Answer, cached: bool) -> dict[str, Any]:
        return {
            "stage": stage,
            "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
            "cached": cached,
            **{k: v for k, v in answer.to_json().items() if k != "text"},
        }

    def conversation(self, task: Task, sample: int) -> tuple[list[tuple[str, str, Answer]], list[dict[str, Any]]]:
        """Every stage's prompt and answer, earlier answers feeding later prompts."""
        earlier: dict[str, str] = {}
        turns: list[tuple[str, str, Answer]] = []
        entries: list[dict[str, Any]] = []
        for stage in stages(self.method):
            prompt = render(task, stage, self.traces_dir, earlier)
            answer, cached = self.store.answer(self.client, prompt, sample, stage.name)
            earlier[stage.name] = answer.text
            turns.append((stage.name, prompt, answer))
            entries.append(self._describe(stage.name, prompt, answer, cached))
        return turns, entries

    def candidate(self, task: Task, sample: int) -> Candidate:
        base = Candidate(task.name, self.name, sample, task.module, origin=f"{self.client.config.route} ({self.method})")
        info: dict[str, Any] = {"route": self.client.config.route, "method": self.method}
        try:
            turns, entries = self.conversation(task, sample)
        except (GenerationError, SourceMissing, MethodError) as exc:
            return replace(base, generation_error=str(exc), generation=info)
        info.update(stages=entries, **_usage(entries))
        last = turns[-1][2]
        candidate = _with_spec(base, task, last.text, None, None)
        return replace(candidate, generation=info, transcript=tuple((s, p, a.text) for s, p, a in turns))
