"""Light text-level reading of a TLA+ module.

SANY is the judge of syntax; this only finds what the harness needs before or around SANY:
the module's name, its EXTENDS, declared constants and variables, and the top-level
definitions that P1's partial credit checks one by one.  It must never raise on garbage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Matched against one line at a time, anchored at its start: linear in the text however
#: hostile (``^\s*`` over MULTILINE text crosses blank lines and goes quadratic).
_HEADER_LINE = re.compile(r"[ \t]*-{4,}[ \t]*MODULE[ \t]+(\S+)")
_FOOTER_LINE = re.compile(r"[ \t]*={4,}[ \t]*$")
#: A header whose name a comment pushed onto a later line (``---- MODULE (* ... *)``).
_HEADER_OPEN = re.compile(r"[ \t]*-{4,}[ \t]*MODULE[ \t]*$")
_DEFINITION = re.compile(
    r"^(?:LOCAL\s+)?(?:RECURSIVE\s+\S.*\n)?([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]\n]*\]|\([^)\n]*\))?\s*(?:==|\u225c)",
    re.MULTILINE,
)
_KEYWORD_LINE = re.compile(
    r"^(?:EXTENDS|CONSTANTS?|VARIABLES?|ASSUME|ASSUMPTION|THEOREM|LEMMA|INSTANCE|LOCAL\s+INSTANCE|RECURSIVE|-{4,}|={4,})\b"
)
_DECL = re.compile(r"^[ \t]*(CONSTANTS?|VARIABLES?)\b(.*?)(?=^\S|\Z)", re.MULTILINE | re.DOTALL)


_OUTSIDE_COMMENT = re.compile(r'\(\*|\\\*|"')
_INSIDE_COMMENT = re.compile(r"\(\*|\*\)")


def strip_comments(text: str) -> str:
    """Remove (* *) (nested) and \\* comments, keeping line structure and strings.

    One left-to-right pass that jumps from one comment or string delimiter to the next (the
    patterns are plain alternatives of literals: linear, no backtracking).
    """
    out: list[str] = []
    i, n, depth = 0, len(text), 0
    while i < n:
        if depth:
            found = _INSIDE_COMMENT.search(text, i)
            stop = n if found is None else found.start()
            out.append("\n" * text.count("\n", i, stop))
            if found is None:
                break
            depth += 1 if found.group() == "(*" else -1
            i = found.end()
            continue
        found = _OUTSIDE_COMMENT.search(text, i)
        if found is None:
            out.append(text[i:])
            break
        start = found.start()
        out.append(text[i:start])
        if found.group() == "(*":
            depth, i = 1, found.end()
        elif found.group() == '"':
            end = start + 1
            while end < n and text[end] not in '"\n':
                end += 2 if text[end] == "\\" else 1
            out.append(text[start : end + 1])
            i = end + 1
        else:  # \* to the end of the line
            end = text.find("\n", start)
            i = n if end < 0 else end
    return "".join(out)


def normalize_newlines(text: str) -> str:
    """SANY accepts \\r\\n and lone \\r line ends; everything here reads \\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class ModuleSpan:
    """Where one top-level module lies in a text: lines ``start`` to ``end`` inclusive (0-based)."""

    name: str
    start: int
    end: int
    closed: bool
    nested: tuple[tuple[int, int], ...] = ()  # line ranges of modules nested inside it


def module_spans(text: str) -> list[ModuleSpan]:
    """Every top-level module in text, with the modules nested inside each.

    Read line by line on the comment-free text (a ``====`` inside a comment closes nothing),
    counting nesting: a module ends at the footer that brings the depth back to zero.
    """
    return _spans(strip_comments(normalize_newlines(text)).split("\n"))


def _spans(lines: list[str]) -> list[ModuleSpan]:
    spans: list[ModuleSpan] = []
    depth, start, name = 0, 0, ""
    nested: list[tuple[int, int]] = []
    inner_start: list[int] = []
    for number, line in enumerate(lines):
        header = _header_name(lines, number) if "MODULE" in line else None
        if header is not None:
            if depth == 0:
                start, name, nested = number, header.rstrip("-") or header, []
            else:
                inner_start.append(number)
            depth += 1
        elif depth and _FOOTER_LINE.match(line):
            depth -= 1
            if depth == 0:
                spans.append(ModuleSpan(name, start, number, True, tuple(nested)))
            elif inner_start:
                first = inner_start.pop()
                if depth == 1:
                    nested.append((first, number))
    if depth:
        spans.append(ModuleSpan(name, start, len(lines) - 1, False, tuple(nested)))
    return spans


def _header_name(lines: list[str], number: int) -> str | None:
    """The module name a header line opens, or None; the name may follow on a later line when a
    comment stood between it and ``MODULE`` (SANY reads that header too)."""
    header = _HEADER_LINE.match(lines[number])
    if header is not None:
        return header.group(1)
    if _HEADER_OPEN.match(lines[number]):
        return next((later.split()[0] for later in lines[number + 1:] if later.strip()), None)
    return None


def split_modules(text: str) -> list[tuple[str, str]]:
    """(name, source) of each top-level module in text, nested modules kept inside their parent."""
    raw = normalize_newlines(text).split("\n")
    return [(span.name, "\n".join(raw[span.start : span.end + 1]).rstrip("\n") + "\n") for span in module_spans(text)]


def body(text: str) -> str:
    """The first module's own body: after its header line, before its closing ====, without
    comments and without the modules nested in it (their declarations are not its own)."""
    clean = strip_comments(normalize_newlines(text)).split("\n")
    spans = _spans(clean)
    if not spans:
        return "\n".join(clean)
    span = spans[0]
    lines = clean[span.start + 1 : span.end if span.closed else span.end + 1]
    for first, last in span.nested:
        for k in range(first, last + 1):
            lines[k - span.start - 1] = ""
    return "\n".join(lines)


def extends(text: str) -> list[str]:
    match = re.search(r"^\s*EXTENDS\b(.*?)(?=^\S|\Z)", body(text), re.MULTILINE | re.DOTALL)
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", match.group(1)) if match else []


def _names(declaration: str) -> list[str]:
    """Names in a CONSTANTS list; parameterised constants like F(_, _) keep just F."""
    declaration = re.sub(r"\([^)]*\)", "", declaration)
    return [n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", declaration)]


def declared(text: str) -> tuple[list[str], list[str]]:
    """Declared (constants, variables) of the module itself."""
    constants: list[str] = []
    variables: list[str] = []
    for match in _DECL.finditer(body(text)):
        target = constants if match.group(1).startswith("CONSTANT") else variables
        target += _names(match.group(2))
    return constants, variables


def declared_with(text: str, others: dict[str, str]) -> tuple[list[str], list[str]]:
    """Declared (constants, variables) of a module and of the modules it EXTENDS among others
    (a spec split over files declares its state where it likes)."""
    constants: list[str] = []
    variables: list[str] = []
    seen: set[str] = set()
    pending = [text]
    while pending:
        current = pending.pop(0)
        c, v = declared(current)
        constants += [n for n in c if n not in constants]
        variables += [n for n in v if n not in variables]
        for name in extends(current):
            if name in others and name not in seen:
                seen.add(name)
                pending.append(others[name])
    return constants, variables


@dataclass(frozen=True)
class Unit:
    """One top-level definition, as P1's partial credit counts them."""

    name: str
    text: str
    line: int


def top_level_units(text: str) -> list[Unit]:
    """Split the body at non-indented definitions; continuation lines belong to the last one."""
    lines = body(text).split("\n")
    units: list[Unit] = []
    current: list[str] = []
    name: str | None = None
    start = 0

    def flush() -> None:
        if name is not None and current:
            units.append(Unit(name, "\n".join(current).rstrip(), start))

    plain = strip_comments("\n".join(lines)).split("\n")
    for number, line in enumerate(lines):
        match = _head(plain, number) if line and not line[0].isspace() else None
        if match:
            flush()
            name, current, start = match.group(1), [line], number
        elif line and not line[0].isspace() and _KEYWORD_LINE.match(line):
            flush()
            name, current = None, []
        elif name is not None:
            current.append(line)
    flush()
    return units


def _head(plain: list[str], number: int) -> re.Match[str] | None:
    """A definition's head on this (comment-free) line, or begun here and broken over the next
    lines by a comment (``Post(box, (* ... *)`` then ``out) ==``)."""
    line = plain[number]
    match = _DEFINITION.match(line)
    if match is not None or "==" in line or _KEYWORD_LINE.match(line) or not re.match(r"[A-Za-z_]\w*\b", line):
        return match
    joined = " ".join(plain[number:number + 4])
    return _DEFINITION.match(joined)


def definition_at(text: str, line: int) -> str | None:
    """The top-level definition whose text holds the given (1-based) line of the module."""
    best = None
    for match in _DEFINITION.finditer(text):
        if text.count("\n", 0, match.start()) + 1 > line:
            break
        best = match.group(1)
    return best


def module(name: str, lines: str, extends_: list[str] | tuple[str, ...] = ()) -> str:
    """Source text of a generated module, its long lines wrapped."""
    head = f"---- MODULE {name} ----"
    ext = f"EXTENDS {', '.join(extends_)}\n" if extends_ else ""
    return f"{head}\n{ext}{wrap_long_lines(lines.rstrip())}\n====\n"


#: Generated lines longer than this are wrapped: TLC's PlusCal check reads every module it
#: loads in time that grows with the square of a line's length, and a line of trace states
#: runs to thousands of characters (2 s of a 2.5 s check, wrapped 0.15 s).
WRAP_AT = 100
_OPENERS = frozenset({"<<", "[", "{", "("})
_CLOSERS = frozenset({">>", "]", "}", ")"})
#: The pieces of a line the wrapper looks at: strings whole, brackets, junctions, a line
#: comment's start, commas, and runs of anything else.
_PIECES = re.compile(r'"(?:[^"\\\n]|\\.)*"?|<<|>>|\\\*|/\\|\\/|[\[\]{}(),]|[^"\[\]{}(),<>\\/]+|.')


def wrap_long_lines(text: str, width: int | None = None) -> str:
    width = width or WRAP_AT
    return "\n".join(line if len(line) <= width else "\n".join(_wrapped(line, width)) for line in text.split("\n"))


def _wrapped(line: str, width: int) -> list[str]:
    """Breaks after commas inside brackets opened on this line, outside strings and comments;
    each piece goes on indented just past the line's first bracket, so past any junction
    bullet before it.  A line with a conjunction or disjunction after that bracket is left
    alone (a piece indented less than a bullet would end its list): only white space between
    tokens ever moves."""
    if "(*" in line:
        return [line]
    pieces: list[str] = []
    depth, indent, piece = 0, 0, []
    length, at_comma = 0, False
    for match in _PIECES.finditer(line):
        token = match.group()
        if token == "\\*":
            piece.append(line[match.start():])
            break
        if at_comma and token.startswith(" ") and length > width:
            pieces.append("".join(piece))
            token = " " * indent + token[1:]
            piece, length = [], 0
        at_comma = False
        if indent and token in ("/\\", "\\/"):
            return [line]
        piece.append(token)
        length += len(token)
        if token in _OPENERS:
            depth += 1
            indent = indent or length
        elif token in _CLOSERS and depth:
            depth -= 1
        elif token == "," and depth:
            at_comma = True
    return [*pieces, "".join(piece)]


#: What the benchmark's generated modules name their own definitions, variables and parameters.
#: A spec that defines such a name would collide with them, so P3 and P4 refuse it up front
#: (as the spec's fault: otherwise a collision would turn a verdict into "not evaluable").
HARNESS_PREFIX = "sysmo"
HARNESS_NAMES = frozenset({"canon"})


def harness_names_defined(files: dict[str, str]) -> list[str]:
    """Top-level names of the spec's modules that belong to the harness's namespace."""
    found: list[str] = []
    for text in files.values():
        constants, variables = declared(text)
        for name in [*constants, *variables, *(unit.name for unit in top_level_units(text))]:
            if (name.lower().startswith(HARNESS_PREFIX) or name in HARNESS_NAMES) and name not in found:
                found.append(name)
    return found


#: The named operators of the standard modules a mapping expression may use whatever the spec
#: extends (infix operators cannot meet a spec's names).
STANDARD_NAMES: dict[str, frozenset[str]] = {
    "Naturals": frozenset({"Nat"}),
    "Integers": frozenset({"Int"}),
    "Sequences": frozenset({"Seq", "Len", "Append", "Head", "Tail", "SubSeq", "SelectSeq"}),
    "FiniteSets": frozenset({"IsFiniteSet", "Cardinality"}),
    "TLC": frozenset({"Print", "PrintT", "Assert", "JavaTime", "TLCGet", "TLCSet", "Permutations", "SortSeq",
                      "RandomElement", "Any", "ToString", "TLCEval"}),
}


def standard_modules_beside(files: dict[str, str]) -> tuple[str, ...]:
    """The standard modules a module generated around a spec can extend besides it: each one
    none of whose names the spec's modules define or declare themselves (a spec that extends
    the module already is no clash; one that defines its own ``Cardinality`` is)."""
    own: set[str] = set()
    for text in files.values():
        own |= {unit.name for unit in top_level_units(text)}
        constants, variables = declared(text)
        own |= set(constants) | set(variables)
    return tuple(name for name, names in STANDARD_NAMES.items() if not names & own)
