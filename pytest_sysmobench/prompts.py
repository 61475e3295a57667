"""The four ways a model is asked for a spec, each a sequence of prompts rendered from data.

- ``direct``: the task's own prompt (source code and the task definition), one request.
- ``translate``: source only, translated statement by statement, then assembled into a
  module in a second request that sees the first answer.
- ``traces``: no source at all; sampled traces of the real system and their format.
- ``agent_based``: the ``direct`` request (the same answer, asked once for both), then, while
  P1 or P2 rejects the spec, a correction prompt with the tools' errors and the last answer
  (``correction``), up to a limit.
- ``feedback``: ``agent_based``, then, while P3 or P4 finds a fault on the task's feedback
  traces, a correction prompt with what they found (``feedback_correction``), within the same
  limit.

Templates are Markdown files with ``{placeholder}`` fields.  A task may bring its own
(``tasks/<task>/prompts/<template>.md``); otherwise the shared default in this package is
used.  Only the known placeholders are replaced, so source code full of braces is safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .settings import METHODS
from .tasks import Task

DEFAULT_TEMPLATES = Path(__file__).parent / "prompts"
MAX_TRACE_BYTES = 256 * 1024


class MethodError(ValueError):
    """An unknown method, or a method that cannot be used for a task (e.g. no traces)."""


@dataclass(frozen=True)
class Stage:
    """One request of a method: the template it renders and the answers it builds on."""

    name: str
    template: str


_STAGES: dict[str, tuple[Stage, ...]] = {
    "direct": (Stage("direct", ""),),
    "translate": (Stage("statements", "translate-statements"), Stage("assemble", "translate-assemble")),
    "traces": (Stage("traces", "traces"),),
    "agent_based": (Stage("direct", ""),),
    "feedback": (Stage("direct", ""),),
}
#: The request that sends a rejected spec back (``agent_based``); its stage is named per attempt.
CORRECTION = "correct"
#: The request that sends a usable spec back with what P3 and P4 found (``feedback``).
FEEDBACK = "feedback"


def stages(method: str) -> tuple[Stage, ...]:
    if method not in _STAGES:
        raise MethodError(f"unknown generation method {method!r} (known: {', '.join(METHODS)})")
    return _STAGES[method]


def correction(task: Task, attempt: int, corrections: int, previous: str, errors: str,
               task_prompt: str) -> tuple[Stage, str]:
    """The ``attempt``-th correction request: the stage it is stored under and its prompt."""
    return _sent_back(task, CORRECTION, attempt, corrections, previous, task_prompt, errors=errors)


def feedback_correction(task: Task, attempt: int, corrections: int, previous: str, evidence: str,
                        task_prompt: str) -> tuple[Stage, str]:
    """The ``attempt``-th correction of a usable spec, with P3's and P4's evidence."""
    return _sent_back(task, FEEDBACK, attempt, corrections, previous, task_prompt, evidence=evidence)


def _sent_back(task: Task, template: str, attempt: int, corrections: int, previous: str, task_prompt: str,
               **found: str) -> tuple[Stage, str]:
    stage = Stage(f"{template}-{attempt}", template)
    values = {"module": task.module, "attempt": str(attempt), "corrections": str(corrections), "previous": previous,
              "task_prompt": task_prompt, **found}
    # One pass: a field filled in (the model's own answer, the source code) is never read again.
    text = template_path(task, stage).read_text(encoding="utf-8")
    return stage, re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def template_path(task: Task, stage: Stage) -> Path:
    if not stage.template:
        return task.prompt_file
    own = task.directory / "prompts" / f"{stage.template}.md"
    return own if own.is_file() else DEFAULT_TEMPLATES / f"{stage.template}.md"


def sample_traces(task: Task, traces_dir: Path, limit: int = MAX_TRACE_BYTES) -> str:
    """Whole lines of the task's traces, trace after trace, up to ``limit`` bytes."""
    files = sorted((traces_dir / task.name).glob("*.ndjson"))
    if not files:
        raise MethodError(f"method 'traces' needs traces of task {task.name} in {traces_dir / task.name}")
    out: list[str] = []
    used = 0
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = f"### {path.name}"
        for line in [header, *lines]:
            if used + len(line) + 1 > limit:
                out.append(f"... (traces cut at {limit // 1024} KiB)")
                return "\n".join(out)
            out.append(line)
            used += len(line) + 1
    return "\n".join(out)


def _constants_example(task: Task) -> str:
    return ", ".join(f"{c.name} = {c.value}" for c in task.vocabulary.constants) or "none"


def placeholders(task: Task, traces_dir: Path | None, earlier: dict[str, str]) -> dict[str, Callable[[], str]]:
    """Values are computed only if the template asks for them (reading sources is not free)."""
    return {
        "module": lambda: task.module,
        "title": lambda: task.title,
        "description": lambda: task.description.strip(),
        "source_code": lambda: source_code(task),
        "vocabulary": lambda: task.vocabulary.render(),
        "actions": lambda: ", ".join(task.target_actions or tuple(a.name for a in task.vocabulary.actions)),
        "constants": lambda: _constants_example(task),
        "traces": lambda: sample_traces(task, traces_dir or Path("data/traces")),
        "translation": lambda: earlier.get("statements", ""),
    }


def render(task: Task, stage: Stage, traces_dir: Path | None = None, earlier: dict[str, str] | None = None) -> str:
    text = template_path(task, stage).read_text(encoding="utf-8")
    for name, value in placeholders(task, traces_dir, earlier or {}).items():
        token = "{" + name + "}"
        if token in text:
            text = text.replace(token, value())
    return text


class SourceMissing(RuntimeError):
    """The system's source is not installed; the message names the package to install."""


def source_code(task: Task) -> str:
    """The task's source files, read from the installed package at run time."""
    parts = []
    for item in task.source.files:
        path = task.source.root / item.path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            install = task.source.install or f"install the package {task.source.package}"
            raise SourceMissing(
                f"the source of task {task.name} is not installed: {path} is missing "
                f"({exc.strerror or exc}); {install}"
            ) from exc
        parts.append(f"===== FILE: {item.path} =====\nDESCRIPTION: {item.description}\n\n{_excerpt(text, item.lines)}\n")
    return "\n".join(parts)


def _excerpt(text: str, ranges: tuple[tuple[int, int], ...]) -> str:
    """The whole file, or only the given line ranges, each headed by where it comes from."""
    if not ranges:
        return text.rstrip()
    lines = text.splitlines()
    return "\n".join(
        f"// ----- lines {first}-{min(last, len(lines))} -----\n" + "\n".join(lines[first - 1 : last]).rstrip()
        for first, last in ranges
    )
