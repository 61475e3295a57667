"""Specs written by a model through litellm, each answer paid for once (``answers.py``)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ..answers import AnswerStore
from ..llm import Answer, Client, GenerationError
from ..feedback import Judge, evidence, fits_feedback
from ..prompts import MethodError, SourceMissing, correction, feedback_correction, render, stages
from ..scoring import PhaseResult, Status
from ..tasks import Task
from ._candidate import Candidate, SpecSource, with_spec

#: Checks a candidate as P1 and P2 would (the cell's own gate), for the attempt numbered; () when
#: it could not be checked (the cell's budget is spent): then nothing more is asked.
Checker = Callable[[Candidate, int], tuple[PhaseResult, ...]]


def _usage(entries: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [e["cost_usd"] for e in entries if e.get("cost_usd") is not None]
    return {
        "prompt_tokens": sum(e["prompt_tokens"] for e in entries),
        "completion_tokens": sum(e["completion_tokens"] for e in entries),
        "cost_usd": round(sum(costs), 8) if len(costs) == len(entries) and entries else None,
        "requests": sum(0 if e["cached"] else 1 for e in entries),
        "cached": sum(1 for e in entries if e["cached"]),
    }


class GeneratedSource(SpecSource):
    """Asks a model for each cell's spec with one of the generation methods."""

    may_lack_mapping = True
    asked_ahead = True

    def __init__(self, name: str, client: Client, store: AnswerStore, method: str, traces_dir: Path,
                 corrections: int = 0) -> None:
        stages(method)  # an unknown method fails when the session starts, not per cell
        self.name = name
        self.client = client
        self.store = store
        self.method = method
        self.traces_dir = traces_dir
        #: ``agent_based``: how many times a rejected spec is sent back with the tools' errors;
        #: ``feedback``: also a usable one, with what P3 and P4 find.
        self.corrections = corrections if method in ("agent_based", "feedback") else 0

    @property  # type: ignore[override]
    def uses_checker(self) -> bool:
        """Whether this source checks its answers (the cell then hands it a checker)."""
        return self.corrections > 0

    def problems(self, tasks: Sequence[Task], samples: int, routes: bool) -> list[str]:
        """A model litellm cannot route; one without its key, for the cells with no stored
        answer to score instead (a model without its key can still be scored from them)."""
        if not routes:
            return []
        from ..llm import missing_key, route_problem

        unroutable = route_problem(self.client.config)
        found = [f"{self.name}: {unroutable}"] if unroutable else []
        missing = missing_key(self.client.config)
        unstored = self.unstored(list(tasks), samples) if missing is not None else 0
        if unstored:
            found.append(f"{self.name}: {missing}, and {unstored} of its {len(tasks) * samples} cell(s) have no stored "
                         f"answer to score instead: set it, or run where the answer store ({self.store.root}) has them")
        return found

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

    def reserve(self, task: Task, sample: int) -> Path | None:
        """Says that the cell's first request is being asked ahead (``AnswerStore.reserve``)."""
        first = stages(self.method)[0]
        try:
            prompt = render(task, first, self.traces_dir, {})
        except (SourceMissing, MethodError):
            return None
        return self.store.reserve(self.client, prompt, sample, first.name)

    def _describe(self, stage: str, prompt: str, answer: Answer, cached: bool) -> dict[str, Any]:
        return {
            "stage": stage,
            "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
            "cached": cached,
            **{k: v for k, v in answer.to_json().items() if k != "text"},
        }

    def conversation(self, task: Task, sample: int, *,
                     ahead: bool = False) -> tuple[list[tuple[str, str, Answer]], list[dict[str, Any]]]:
        """Every stage's prompt and answer, earlier answers feeding later prompts (``ahead``:
        asked for the cell by a sweep asking ahead, which the cell then counts as its own)."""
        earlier: dict[str, str] = {}
        turns: list[tuple[str, str, Answer]] = []
        entries: list[dict[str, Any]] = []
        for stage in stages(self.method):
            prompt = render(task, stage, self.traces_dir, earlier)
            answer, cached = self.store.answer(self.client, prompt, sample, stage.name, ahead=ahead)
            earlier[stage.name] = answer.text
            turns.append((stage.name, prompt, answer))
            entries.append(self._describe(stage.name, prompt, answer, cached))
        return turns, entries

    def candidate(self, task: Task, sample: int, check: Checker | None = None, judge: Judge | None = None) -> Candidate:
        base = Candidate(task.name, self.name, sample, task.module, origin=f"{self.client.config.route} ({self.method})")
        info: dict[str, Any] = {"route": self.client.config.route, "method": self.method}
        if self.method == "feedback":
            held = task.harness.held_out if task.harness is not None else ()
            if not held:
                return replace(base, generation_error=f"method 'feedback' needs held-out traces: task {task.name} "
                                                      "declares no harness.held_out seeds", generation=info)
            # Scored on the traces no feedback shows.
            base = replace(base, scored_seeds=held)
        try:
            turns, entries = self.conversation(task, sample)
        except (GenerationError, SourceMissing, MethodError) as exc:
            return replace(base, generation_error=str(exc), generation=info)
        candidate = with_spec(base, task, turns[-1][2].text, None, None)
        if check is not None and self.uses_checker:
            try:
                candidate = self._corrected(task, sample, base, candidate, turns, entries, info, check,
                                            judge if self.method == "feedback" else None)
            except GenerationError as exc:
                # The endpoint failed mid-way: the last answer stands, and the board says why.
                info["correction_error"] = str(exc)
        info.update(stages=entries, **_usage(entries))
        return replace(candidate, generation=info, transcript=tuple((s, p, a.text) for s, p, a in turns))

    def _corrected(self, task: Task, sample: int, base: Candidate, candidate: Candidate,
                   turns: list[tuple[str, str, Answer]], entries: list[dict[str, Any]], info: dict[str, Any],
                   check: Checker, judge: Judge | None = None) -> Candidate:
        """Send the spec back with the tools' errors while P1 or P2 rejects it, and (with a
        ``judge``) with what P3 and P4 find on the feedback traces while they find something,
        up to the limit; every round's answer is stored like the first.  ``info`` keeps each
        attempt's verdict and which attempt is scored (the last one asked)."""
        rounds: list[dict[str, Any]] = []
        info.update(attempts=rounds, corrections_allowed=self.corrections)
        task_prompt = turns[0][1]
        for attempt in range(1, self.corrections + 2):
            results = check(candidate, attempt)
            failing = next((r for r in results if r.status is not Status.PASSED), None)
            entry: dict[str, Any] = {"attempt": attempt, "passed": bool(results) and failing is None,
                                     "phases": {r.phase: r.score for r in results}}
            rounds.append(entry)
            info["scored_attempt"] = attempt
            info.pop("fits_feedback", None)
            if not results:
                return candidate
            if failing is not None:
                if attempt > self.corrections:
                    return candidate
                stage, prompt = correction(task, attempt, self.corrections, turns[-1][2].text,
                                           _errors(candidate, results), task_prompt)
            elif judge is None:
                return candidate
            else:
                judged = judge(candidate, attempt)
                if judged is None:
                    return candidate
                entry.update(judged.figures(results))
                info["fits_feedback"] = fits_feedback(task, entry)
                if judged.complete or attempt > self.corrections:
                    return candidate
                stage, prompt = feedback_correction(task, attempt, self.corrections, turns[-1][2].text,
                                                    evidence(task, judged), task_prompt)
            answer, cached = self.store.answer(self.client, prompt, sample, stage.name)
            turns.append((stage.name, prompt, answer))
            entries.append(self._describe(stage.name, prompt, answer, cached))
            candidate = with_spec(base, task, answer.text, None, None)
        return candidate


def _errors(candidate: Candidate, results: tuple[PhaseResult, ...]) -> str:
    """What the tools said, phase by phase, as the board says it (P2's reason names the actions
    that never fired; a TLC error comes with its trace)."""
    lines = ["- P1 syntax (SANY) and P2 runtime (TLC), as the benchmark checks them:"]
    for result in results:
        lines.append(f"  - {result.phase}: {result.status.value}, score {result.score}: {result.reason}")
    if candidate.problem:
        lines.append(f"- reading your answer: {candidate.problem}")
    return "\n".join(lines)
