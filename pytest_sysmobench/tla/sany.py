"""SANY's text output -> typed errors.

SANY 2.1 cannot be trusted by exit code: it exits 0 on semantic errors, and the
in-process front end returns 0 for parse errors too.  The text is the only
reliable signal, so everything here is decided from it.  The formats (measured
on SANY2 2.1, see the captured fixtures under ``tests/data/tool_output/sany``):

* parse errors: ``***Parse Error***`` or ``Lexical error at line L, column C.``,
  then ``Fatal errors while parsing`` and ``*** Abort messages: N`` whose items
  (``Could not parse module X ...``, ``Cannot find source file for module M
  imported in module X.``, ``File name 'F' does not match the name 'M' ...``)
  each follow a location line (``In module X`` / ``Unknown location``);
* semantic errors: ``Semantic errors:`` then ``*** Errors: N`` and, per error, a
  ``line L, col C to line L2, col C2 of module M`` line and a message
  (``Unknown operator: `Foo'.``, ``The operator F requires 2 arguments.``, ...);
  ``*** Warnings: N`` blocks use the same layout but are not errors.

The partial-credit scorer stubs the names reported here, hence the helpers
``unknown_operators`` and ``arity_errors``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

__all__ = [
    "SanyError",
    "SanyErrorKind",
    "SanyResult",
    "arity_errors",
    "classify_sany",
    "unknown_operators",
]


class SanyErrorKind(str, Enum):
    """What went wrong, coarse enough for scoring and for messages."""

    LEXICAL = "lexical"
    SYNTAX = "syntax"
    MISSING_MODULE = "missing_module"
    MODULE_NAME_MISMATCH = "module_name_mismatch"
    UNKNOWN_OPERATOR = "unknown_operator"
    ARITY = "arity"
    REDEFINITION = "redefinition"
    LEVEL = "level"
    SEMANTIC = "semantic"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SanyError:
    """One SANY complaint; ``name`` is the operator or module it is about, when SANY says."""

    kind: SanyErrorKind
    message: str
    line: int | None = None
    col: int | None = None
    module: str | None = None
    name: str | None = None

    def where(self) -> str:
        """``line 5, col 14 of module X`` with whatever parts are known."""
        parts = []
        if self.line is not None:
            parts.append(f"line {self.line}" + (f", col {self.col}" if self.col is not None else ""))
        if self.module:
            parts.append(f"of module {self.module}" if parts else f"in module {self.module}")
        return " ".join(parts)

    def summary(self) -> str:
        """``syntax error at line 6, col 1 of module Syn: Encountered ...``."""
        prefix = self.kind.value.replace("_", " ") + " error"
        where = self.where()
        if where:
            prefix += (" at " if self.line is not None else " ") + where
        return f"{prefix}: {_readable(self.message)}"


@dataclass(frozen=True)
class SanyResult:
    """SANY's verdict; ``ok`` needs positive evidence (the root module was semantically processed)."""

    ok: bool
    errors: list[SanyError] = field(default_factory=list)
    warnings: list[SanyError] = field(default_factory=list)

    def first_error_summary(self) -> str:
        """One line for a test failure message: the first error, or that there is none."""
        if self.errors:
            return self.errors[0].summary()
        return "SANY found no errors" if self.ok else "SANY failed without a recognisable error"


def unknown_operators(result: SanyResult) -> list[str]:
    """Names SANY could not resolve, first occurrence order, without duplicates."""
    names = (e.name for e in result.errors if e.kind is SanyErrorKind.UNKNOWN_OPERATOR and e.name)
    return list(dict.fromkeys(names))


def arity_errors(result: SanyResult) -> dict[str, int]:
    """Operator -> the argument count SANY says it requires."""
    found: dict[str, int] = {}
    for error in result.errors:
        if error.kind is not SanyErrorKind.ARITY or not error.name:
            continue
        match = _ARITY.search(error.message)
        if match:
            found.setdefault(error.name, int(match.group(2)))
    return found


# ---------------------------------------------------------------------------
# Patterns

_BANNER = re.compile(r"^\*+ SANY2? Version")
_PARSING_FILE = re.compile(r"^Parsing file (?:.*[/\\])?([^/\\]+?)(?:\.tla)?$")
_SEMANTIC_PROCESSING = re.compile(r"^Semantic processing of module (\S+)")
_LEXICAL = re.compile(r"^Lexical error at line (\d+), column (\d+)\.\s*(.*)$")
_PARSE_ERROR = "***Parse Error***"
_SPAN = re.compile(r"^line (\d+), col (\d+) to line (\d+), col (\d+) of module (\S+)$")
_IN_MODULE = re.compile(r"^In module (\S+)$")
_UNKNOWN_LOCATION = "Unknown location"
_BLOCK_HEADER = re.compile(r"^\*\*\* (Errors|Warnings|Abort messages): \d+")
_SECTION_END = re.compile(
    r"^(\*+ SANY2? Version|Parsing file |Semantic processing of module |Semantic errors:"
    r"|Fatal errors while parsing|\*\*\* (Errors|Warnings|Abort messages):|\*\*\*Parse Error\*\*\*"
    r"|Lexical error at|@!@!@)"
)
_AT_LINE_COLUMN = re.compile(r"at line (\d+), column (\d+)")
_PRECEDENCE = re.compile(r"in block line (\d+), col (\d+) to line \d+, col \d+ of module (\S+)")
_UNKNOWN_OP = re.compile(r"Unknown operator: `(.+?)'")
_ARITY = re.compile(r"The operator (\S+) requires (\d+) arguments?")
_REDEFINED = re.compile(
    r"(?:Operator (\S+) already defined or declared"
    r"|Multiple declarations or definitions for symbol (\S+?)\.?(?:\s|$)"
    r"|Multiply-defined symbol '?([^'\s]+))"
)
_LEVEL = re.compile(r"[Ll]evel|not of form|used where only|non-constant|is not a state function")
_MISSING = re.compile(r"Cannot find source file for module (\S+) imported in module (\S+?)\.?$")
_MISMATCH = re.compile(r"File name '([^']*)' does not match the name '([^']*)'")
_COULD_NOT_PARSE = re.compile(r"Could not parse module (\S+)")


# ---------------------------------------------------------------------------
# Classification


_ENCOUNTERED_CODE = re.compile(r'Encountered: "(\\u[0-9a-fA-F]{4}|[^"]{1,2})" \((\d+)\)')
MESSAGE_LIMIT = 300


def _readable(message: str) -> str:
    """Name a non-ASCII character SANY choked on, and keep the message short.

    A lexical error quotes the whole token it was reading, which can be an unterminated string
    running on for kilobytes; TLA+ tools 2.15 read ASCII operators only, so a Unicode operator
    such as U+225C (the definition sign) is the commonest lexical error in model answers.
    """
    match = _ENCOUNTERED_CODE.search(message)
    if match and int(match.group(2)) > 127:
        char = chr(int(match.group(2)))
        message = (
            f"non-ASCII character '{char}' (U+{ord(char):04X}); TLA+ tools 2.15 read ASCII operators only "
            f"(e.g. == for \u225c, /\\ for \u2227, \\in for \u2208). SANY: {message}"
        )
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT] + f"... ({len(message) - MESSAGE_LIMIT} more characters)"
    return message


def classify_sany(output: str) -> SanyResult:
    """Read SANY's stdout (standalone or as TLC's raw lines); never raises."""
    scan = _Scan(output.replace("\r\n", "\n").split("\n"))
    scan.run()
    errors = scan.errors
    if scan.failed and not errors:
        errors.append(SanyError(SanyErrorKind.OTHER, scan.failure_text, module=scan.last_module))
    if not errors and not scan.processed:
        errors.append(SanyError(SanyErrorKind.OTHER, _no_evidence_message(output)))
    return SanyResult(ok=not errors, errors=errors, warnings=scan.warnings)


def _no_evidence_message(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return "SANY printed nothing"
    return (
        "unrecognised SANY output (the root module was never semantically processed); "
        f"last line: {lines[-1][:200]}"
    )


class _Scan:
    """Line cursor over SANY output that collects errors and warnings in order."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.index = 0
        self.errors: list[SanyError] = []
        self.warnings: list[SanyError] = []
        self.last_module: str | None = None
        self.processed = False
        self.failed = False
        self.failure_text = "SANY reported a fatal error"
        self.section_has_parse_error = False
        self.root: str | None = None

    def run(self) -> None:
        while self.index < len(self.lines):
            line = self.lines[self.index].strip()
            self.index += 1
            self.step(line)

    def step(self, line: str) -> None:
        if _BANNER.match(line):
            self.section_has_parse_error = False
            self.root = None
        elif match := _PARSING_FILE.match(line):
            self.last_module = match.group(1)
            self.root = self.root or self.last_module
        elif match := _SEMANTIC_PROCESSING.match(line):
            # Standard modules are processed first; only the root module proves success.
            self.processed = self.processed or match.group(1) == self.root
        elif match := _LEXICAL.match(line):
            self.add_parse_error(
                SanyErrorKind.LEXICAL, line, int(match.group(1)), int(match.group(2)), None
            )
        elif line == _PARSE_ERROR:
            self.parse_error_block()
        elif match := _BLOCK_HEADER.match(line):
            self.block(match.group(1))
        elif line.startswith("Fatal errors while parsing") or _COULD_NOT_PARSE.search(line):
            self.failed = True
            self.failure_text = line

    def add_parse_error(
        self, kind: SanyErrorKind, message: str, line: int | None, col: int | None, module: str | None
    ) -> None:
        self.section_has_parse_error = True
        self.failed = True
        self.errors.append(SanyError(kind, message, line, col, module or self.last_module))

    def parse_error_block(self) -> None:
        """``***Parse Error***`` text up to the residual stack trace."""
        message_lines = []
        while self.index < len(self.lines):
            line = self.lines[self.index].strip()
            if line.startswith("Residual stack trace") or _SECTION_END.match(line):
                break
            if line:
                message_lines.append(line)
            self.index += 1
        message = " ".join(message_lines) or "parse error"
        line_no = col = None
        module = None
        if match := _PRECEDENCE.search(message):
            line_no, col, module = int(match.group(1)), int(match.group(2)), match.group(3)
        elif match := _AT_LINE_COLUMN.search(message):
            line_no, col = int(match.group(1)), int(match.group(2))
        self.add_parse_error(SanyErrorKind.SYNTAX, message, line_no, col, module)

    def block(self, header: str) -> None:
        """``*** Errors/Warnings/Abort messages: N`` followed by (location, message) items."""
        for location, message in self.items():
            if header == "Warnings":
                self.warnings.append(_semantic_error(location, message))
            elif header == "Errors":
                self.errors.append(_semantic_error(location, message))
            else:
                self.abort_item(location, message)

    def items(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        location: str | None = None
        message: list[str] = []
        while self.index < len(self.lines):
            line = self.lines[self.index].strip()
            if _SECTION_END.match(line):
                break
            self.index += 1
            if _is_location(line):
                if location is not None or message:
                    found.append((location or "", " ".join(message)))
                location, message = line, []
            elif line:
                message.append(line)
        if location is not None or message:
            found.append((location or "", " ".join(message)))
        return found

    def abort_item(self, location: str, message: str) -> None:
        module = _module_of(location) or self.last_module
        if match := _MISSING.search(message):
            self.failed = True
            self.errors.append(
                SanyError(SanyErrorKind.MISSING_MODULE, message, module=match.group(2), name=match.group(1))
            )
        elif match := _MISMATCH.search(message):
            self.failed = True
            self.errors.append(
                SanyError(
                    SanyErrorKind.MODULE_NAME_MISMATCH, message, module=match.group(1), name=match.group(2)
                )
            )
        elif _COULD_NOT_PARSE.search(message) and self.section_has_parse_error:
            return  # the specific lexical/syntax error was already recorded
        elif message:
            self.failed = True
            error = _semantic_error(location, message)
            kind = SanyErrorKind.OTHER if error.kind is SanyErrorKind.SEMANTIC else error.kind
            self.errors.append(
                SanyError(kind, message, error.line, error.col, error.module or module, error.name)
            )


def _is_location(line: str) -> bool:
    return bool(_SPAN.match(line) or _IN_MODULE.match(line)) or line == _UNKNOWN_LOCATION


def _module_of(location: str) -> str | None:
    match = _SPAN.match(location) or _IN_MODULE.match(location)
    if match is None:
        return None
    return match.group(match.lastindex or 1)


def _semantic_error(location: str, message: str) -> SanyError:
    """Kind and subject of one semantic message, with its ``line .. of module`` location."""
    span = _SPAN.match(location)
    line = int(span.group(1)) if span else None
    col = int(span.group(2)) if span else None
    module = _module_of(location)
    kind, name = _semantic_kind(message)
    return SanyError(kind, message or "semantic error", line, col, module, name)


def _semantic_kind(message: str) -> tuple[SanyErrorKind, str | None]:
    if match := _UNKNOWN_OP.search(message):
        return SanyErrorKind.UNKNOWN_OPERATOR, match.group(1)
    if match := _ARITY.search(message):
        return SanyErrorKind.ARITY, match.group(1)
    if match := _REDEFINED.search(message):
        return SanyErrorKind.REDEFINITION, next(g for g in match.groups() if g)
    if match := _MISSING.search(message):
        return SanyErrorKind.MISSING_MODULE, match.group(1)
    if _LEVEL.search(message):
        return SanyErrorKind.LEVEL, None
    return SanyErrorKind.SEMANTIC, None
