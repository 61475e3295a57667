"""From a model's answer to a spec: find the TLA+ module and the TLC config in free text.

Answers arrive wrapped in markdown fences, with chatter before and after, several blocks,
or as a bare module.  Extraction never fails hard: it returns what it found together with
notes on what it did, and a *problem* when there is nothing a checker could look at, so
the cell records a specific outcome instead of crashing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..failures import looks_like_python
from ..tasks import IDENTIFIER
from ..tla import modules

_FENCE_OPEN = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)")
_CFG_START = re.compile(r"^[ \t]*(SPECIFICATION|INIT|CONSTANTS?)\b", re.MULTILINE)
TLA_TAGS = ("tla", "tla+", "tlaplus")


@dataclass(frozen=True)
class Extraction:
    tla: str | None
    cfg: str | None
    declared_module: str | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    problem: str | None = None
    #: Further modules of a multi-module answer, (name, source): the root EXTENDS or INSTANCEs them.
    extra_modules: tuple[tuple[str, str], ...] = ()


def _blocks(answer: str) -> list[tuple[str, str]]:
    """Fenced code blocks as (language, body), read line by line: linear in the answer, whatever
    it holds (a lazy regex over unclosed fences goes quadratic)."""
    blocks: list[tuple[str, str]] = []
    lang: str | None = None
    body: list[str] = []
    for line in answer.split("\n"):
        if not line.startswith("```"):
            if lang is not None:
                body.append(line)
        elif lang is None:
            opening = _FENCE_OPEN.match(line)
            lang, body = (opening.group(1).lower() if opening else ""), []
        elif not line[3:].strip(" \t"):
            blocks.append((lang, "\n".join(body) + "\n" if body else ""))
            lang = None
        else:
            body.append(line)
    return blocks


def _all_modules(answer: str, blocks: list[tuple[str, str]], notes: list[str]) -> list[tuple[str, str]]:
    """Every module of the answer: from ```tla blocks, else any block, else the bare text."""
    for candidates in ([b for lang, b in blocks if lang in TLA_TAGS], [b for _, b in blocks]):
        holding = [(body, found) for body in candidates if (found := modules.split_modules(body))]
        if holding:
            notes.append("spec taken from a fenced code block" if len(holding) == 1
                         else f"spec taken from {len(holding)} fenced code blocks")
            return [m for _, found in holding for m in found]
    found = modules.split_modules(answer)
    if found and blocks:
        notes.append("spec taken from the answer text outside fenced blocks")
    return found


def _pick_modules(found: list[tuple[str, str]], root_name: str | None,
                  notes: list[str]) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The root module (the task's module if present, else the first) and the others, once each."""
    unique: dict[str, str] = {}
    for name, text in found:
        if name in unique:
            notes.append(f"module {name} appears more than once; the first was used")
            continue
        unique[name] = text
    if not unique:
        return None, ()
    root = root_name if root_name in unique else next(iter(unique))
    extras = tuple((n, t) for n, t in unique.items() if n != root and IDENTIFIER.match(n))
    for name in unique:
        if name != root and not IDENTIFIER.match(name):
            notes.append(f"module {name!r} ignored: not a TLA+ module name")
    if extras:
        notes.append(f"{len(unique)} modules in the answer: {root} is the root, "
                     f"{', '.join(n for n, _ in extras)} are on its search path")
    return unique[root], extras


def _pick_cfg(answer: str, blocks: list[tuple[str, str]], notes: list[str]) -> str | None:
    tagged = [body for lang, body in blocks if lang in ("cfg", "tlc", "config", "ini")]
    if tagged:
        if len(tagged) > 1:
            notes.append(f"{len(tagged)} cfg blocks in the answer; the first was used")
        return tagged[0].strip() + "\n"
    for lang, body in blocks:
        if not modules.module_spans(body) and _CFG_START.search(body):
            notes.append("cfg taken from an untagged code block")
            return body.strip() + "\n"
    return None


def extract_spec(answer: str, module: str | None = None) -> Extraction:
    """Find the TLA+ module(s) and the cfg in a model's answer (or a replayed file).

    ``module`` is the name the task requires: when the answer holds several modules, that one
    is the root and the rest are kept beside it, nested modules staying inside their parent.
    """
    if not answer or not answer.strip():
        return Extraction(None, None, None, (), "the answer is empty")
    answer = modules.normalize_newlines(answer).lstrip("\ufeff")
    notes: list[str] = []
    blocks = _blocks(answer)
    tla, extras = _pick_modules(_all_modules(answer, blocks, notes), module, notes)
    cfg = _pick_cfg(answer, blocks, notes)
    if tla is None:
        problem = "no TLA+ module (a '---- MODULE Name ----' line) in the answer"
        if looks_like_python(answer):
            problem += "; it looks like Python"
        return Extraction(None, cfg, None, tuple(notes), problem)
    span = modules.module_spans(tla)[0]
    if not span.closed:
        notes.append("the module has no closing ==== line")
    return Extraction(tla, cfg, span.name, tuple(notes), None, extras)


def rename_module(tla: str, old: str, new: str) -> str:
    """Rename the module in its header line only (references inside are the model's business)."""
    pattern = re.compile(rf"^([ \t]*-{{4,}}[ \t]*MODULE[ \t]+){re.escape(old)}(?=[ \t]*-{{4,}})", re.MULTILINE)
    return pattern.sub(lambda m: m.group(1) + new, tla, count=1)
