"""From a model's answer to a spec: find the TLA+ module and the TLC config in free text.

Answers arrive wrapped in markdown fences, with chatter before and after, several blocks,
or as a bare module.  Extraction never fails hard: it returns what it found together with
notes on what it did, and a *problem* when there is nothing a checker could look at, so
the cell records a specific outcome instead of crashing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .tasks import Task

_FENCE = re.compile(r"^```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_MODULE = re.compile(r"^[ \t]*-{4,}[ \t]*MODULE[ \t]+(\S+)[ \t]*-{4,}", re.MULTILINE)
_FOOTER = re.compile(r"^[ \t]*={4,}[ \t]*$", re.MULTILINE)
_CFG_START = re.compile(r"^\s*(SPECIFICATION|INIT|CONSTANTS?)\b", re.MULTILINE)


@dataclass(frozen=True)
class Extraction:
    tla: str | None
    cfg: str | None
    declared_module: str | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    problem: str | None = None


def _blocks(answer: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(answer)]


def _module_text(text: str) -> str | None:
    """The first complete module in text: header line through the closing ==== line."""
    header = _MODULE.search(text)
    if header is None:
        return None
    start = text.rfind("\n", 0, header.start()) + 1
    footer = _FOOTER.search(text, header.end())
    end = footer.end() if footer else len(text)
    return text[start:end].strip("\n") + "\n"


def _pick_tla(answer: str, blocks: list[tuple[str, str]], notes: list[str]) -> str | None:
    tagged = [body for lang, body in blocks if lang in ("tla", "tla+", "tlaplus")]
    with_module = [body for body in tagged if _MODULE.search(body)]
    if not with_module:
        with_module = [body for lang, body in blocks if _MODULE.search(body)]
    if with_module:
        if len(with_module) > 1:
            notes.append(f"{len(with_module)} TLA+ blocks in the answer; the first was used")
        notes.append("spec taken from a fenced code block")
        return _module_text(with_module[0])
    module = _module_text(answer)
    if module is not None and blocks:
        notes.append("spec taken from the answer text outside fenced blocks")
    return module


def _pick_cfg(answer: str, blocks: list[tuple[str, str]], tla: str | None, notes: list[str]) -> str | None:
    tagged = [body for lang, body in blocks if lang in ("cfg", "tlc", "config", "ini")]
    if tagged:
        if len(tagged) > 1:
            notes.append(f"{len(tagged)} cfg blocks in the answer; the first was used")
        return tagged[0].strip() + "\n"
    for lang, body in blocks:
        if not _MODULE.search(body) and _CFG_START.search(body):
            notes.append("cfg taken from an untagged code block")
            return body.strip() + "\n"
    return None


def extract_spec(answer: str) -> Extraction:
    """Find the TLA+ module and the cfg in a model's answer (or a replayed file)."""
    if not answer or not answer.strip():
        return Extraction(None, None, None, (), "the answer is empty")
    answer = answer.replace("\r\n", "\n").lstrip("\ufeff")
    notes: list[str] = []
    blocks = _blocks(answer)
    tla = _pick_tla(answer, blocks, notes)
    cfg = _pick_cfg(answer, blocks, tla, notes)
    if tla is None:
        return Extraction(None, cfg, None, tuple(notes), "no TLA+ module (a '---- MODULE Name ----' line) in the answer")
    if not _FOOTER.search(tla):
        notes.append("the module has no closing ==== line")
    name_match = _MODULE.search(tla)
    declared = name_match.group(1) if name_match else None
    return Extraction(tla, cfg, declared, tuple(notes), None)


def rename_module(tla: str, old: str, new: str) -> str:
    """Rename the module in its header line only (references inside are the model's business)."""
    pattern = re.compile(rf"^([ \t]*-{{4,}}[ \t]*MODULE[ \t]+){re.escape(old)}(?=[ \t]*-{{4,}})", re.MULTILINE)
    return pattern.sub(lambda m: m.group(1) + new, tla, count=1)


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
        parts.append(f"===== FILE: {item.path} =====\nDESCRIPTION: {item.description}\n\n{text.rstrip()}\n")
    return "\n".join(parts)


def render_prompt(task: Task) -> str:
    """The direct-method prompt: the task's template with the real source and the vocabulary filled in."""
    from .methods import render, stages

    return render(task, stages("direct")[0])
