"""TLC configuration files: read the sections, strip what a model may not decide, add ours.

A model's own INVARIANT or PROPERTY line can make a correct spec fail, and its own
CONSTRAINT can make a wrong spec pass (it can prune the states that lead to a violation); P4
therefore removes them before adding the evaluator's checks, and a task bounds every spec's
search alike through its canonical constraint.  The scanner works on sections rather than lines, so multi-line
sections, comments before keywords and CRLF files are handled the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from .modules import strip_comments

KEYWORDS: tuple[str, ...] = (
    "ACTION_CONSTRAINTS",
    "ACTION_CONSTRAINT",
    "CHECK_DEADLOCK",
    "CONSTANTS",
    "CONSTANT",
    "CONSTRAINTS",
    "CONSTRAINT",
    "INIT",
    "INVARIANTS",
    "INVARIANT",
    "NEXT",
    "POSTCONDITIONS",
    "POSTCONDITION",
    "PROPERTIES",
    "PROPERTY",
    "SPECIFICATION",
    "SYMMETRY",
    "VIEW",
    "ALIAS",
)
ASSERTION_KEYWORDS = frozenset(
    {
        "INVARIANT",
        "INVARIANTS",
        "PROPERTY",
        "PROPERTIES",
        "CONSTRAINT",
        "CONSTRAINTS",
        "ACTION_CONSTRAINT",
        "ACTION_CONSTRAINTS",
        "POSTCONDITION",
        "POSTCONDITIONS",
    }
)
#: Directives that change which states TLC tells apart or what it reports: a VIEW can merge
#: a violating state into a harmless one, SYMMETRY is unsound for liveness, an ALIAS rewrites
#: traces.  No phase whose verdict the task decides keeps a model's own.
EXPLORATION_KEYWORDS = frozenset({"VIEW", "SYMMETRY", "ALIAS"})
#: Keywords TLC 2.15 does not know; a cfg that uses them fails with a config error.
UNSUPPORTED_IN_215 = frozenset({"ALIAS", "POSTCONDITION", "POSTCONDITIONS", "CHECK_DEADLOCK"})
_KEYWORD = re.compile(r"\b(" + "|".join(KEYWORDS) + r")\b")


@dataclass(frozen=True)
class Section:
    keyword: str
    body: str

    @property
    def canonical(self) -> str:
        """INVARIANTS and INVARIANT mean the same to TLC."""
        return self.keyword.rstrip("S") if self.keyword not in ("CONSTANTS", "PROPERTIES") else {
            "CONSTANTS": "CONSTANT",
            "PROPERTIES": "PROPERTY",
        }[self.keyword]

    def names(self) -> list[str]:
        return re.findall(r"[A-Za-z_][A-Za-z0-9_!]*", self.body)

    def text(self) -> str:
        return f"{self.keyword}{self.body}"


def masked(text: str) -> str:
    """Comments and strings blanked, offsets kept: keywords and names inside them are not the cfg's."""
    out = list(text)
    i = 0
    depth = 0
    while i < len(text):
        if depth:
            if text.startswith("*)", i):
                depth -= 1
                out[i] = out[i + 1] = " "
                i += 2
                continue
            if text.startswith("(*", i):
                depth += 1
                out[i] = out[i + 1] = " "
                i += 2
                continue
            if text[i] != "\n":
                out[i] = " "
            i += 1
        elif text.startswith("(*", i):
            depth = 1
            out[i] = out[i + 1] = " "
            i += 2
        elif text.startswith("\\*", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            for j in range(i, end):
                out[j] = " "
            i = end
        elif text[i] == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            for j in range(i + 1, min(end, len(text))):
                out[j] = " "
            i = end + 1
        else:
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Config:
    preamble: str
    sections: tuple[Section, ...]

    @classmethod
    def parse(cls, text: str) -> Config:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        starts = list(_KEYWORD.finditer(masked(text)))
        if not starts:
            return cls(text, ())
        sections = []
        for index, match in enumerate(starts):
            end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
            sections.append(Section(match.group(1), text[match.end() : end]))
        return cls(text[: starts[0].start()], tuple(sections))

    def render(self) -> str:
        body = self.preamble
        for section in self.sections:
            if body and not body[-1].isspace():
                body += "\n"
            body += section.text()
        return body if body.endswith("\n") else body + "\n"

    def keywords(self) -> set[str]:
        return {s.keyword for s in self.sections}

    def constants(self) -> dict[str, str]:
        """The constants the cfg gives a value (``N = 3``, ``Procs = {"a", "b"}``), as written;
        not those it binds to a definition (``N <- Def``)."""
        found: dict[str, str] = {}
        for section in self.sections:
            if section.canonical == "CONSTANT":
                found.update(_bindings(section.body))
        return found

    def with_constants(self, values: Mapping[str, str]) -> Config:
        """The cfg with these constants given these values instead (a line that bound one is
        dropped; the new bindings come last, in a section of their own)."""
        if not values:
            return self
        sections = []
        for section in self.sections:
            if section.canonical == "CONSTANT":
                kept = [line for line in section.body.split("\n") if bound_name(line) not in values]
                section = Section(section.keyword, "\n".join(kept))
            sections.append(section)
        bindings = "".join(f"    {name} = {value}\n" for name, value in values.items())
        return Config(self.preamble, (*sections, Section("CONSTANTS", "\n" + bindings)))

    def without(self, keywords: Iterable[str]) -> tuple[Config, list[str]]:
        drop = set(keywords)
        kept = tuple(s for s in self.sections if s.keyword not in drop)
        removed = [s.text().strip() for s in self.sections if s.keyword in drop]
        return Config(self.preamble, kept), removed

    def strip_assertions(self) -> tuple[Config, list[str]]:
        return self.without(ASSERTION_KEYWORDS)

    def with_section(self, keyword: str, names: Iterable[str], first: bool = False) -> Config:
        """``first``: before every other section, so that TLC evaluates it first (a work bound's
        count must see every successor, before another constraint can rule one out)."""
        listed = " ".join(names)
        if not listed:
            return self
        added = (Section(keyword, f" {listed}\n"),)
        return Config(self.preamble, added + self.sections if first else self.sections + added)


def bound_name(line: str) -> str:
    """The constant a cfg line binds (``N = 3`` or ``N <- Def``), else ''."""
    text = line.strip()
    for sep in ("<-", "="):
        if sep in text:
            return text.split(sep, 1)[0].strip()
    return ""


_BINDING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(<-|=)")


def _bindings(body: str) -> dict[str, str]:
    """``name = value`` pairs of a CONSTANT section (several may share a line)."""
    plain = masked(body)
    starts = [m for m in _BINDING.finditer(plain) if _depth(plain, m.start()) == 0]
    found = {}
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(body)
        if match.group(2) == "=":
            found[match.group(1)] = " ".join(strip_comments(body[match.end():end]).split())
    return found


_BRACKET = re.compile(r"<<|>>|[{}\[\]()]")


def _depth(text: str, at: int) -> int:
    """How many brackets are open at ``at`` (strings and comments already blanked)."""
    return sum(1 if b in ("<<", "{", "[", "(") else -1 for b in _BRACKET.findall(text[:at]))


def default_config(constants: Mapping[str, str], spec: str = "Spec") -> str:
    """A cfg for a spec that came without one: the task's small constant values."""
    lines = [f"SPECIFICATION {spec}"]
    if constants:
        lines.append("CONSTANTS")
        lines += [f"    {name} = {value}" for name, value in constants.items()]
    return "\n".join(lines) + "\n"
