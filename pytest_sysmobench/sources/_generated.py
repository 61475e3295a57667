"""Specs written by a model through litellm, each answer paid for once (``answers.py``)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..answers import AnswerStore
from ..llm import Answer, Client, GenerationError
from ..prompts import MethodError, SourceMissing, render, stages
from ..tasks import Task
from ._candidate import Candidate, with_spec


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

    def unstored(self, tasks: list[Task], samples: int) -> int:
        """How many cells' first request is not in the answer store (and so must be sent)."""
        first = stages(self.method)[0]
        missing = 0
        for task in tasks:
            try:
                prompt = render(task, first, self.traces_dir, {})
            except (SourceMissing, MethodError):
                continue  # the cell records why it has no prompt
            missing += sum(1 for sample in range(samples) if not self.store.has(self.client, prompt, sample, first.name))
        return missing

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
        candidate = with_spec(base, task, last.text, None, None)
        return replace(candidate, generation=info, transcript=tuple((s, p, a.text) for s, p, a in turns))
