"""TLC ``-tool`` output -> a typed, classified result.

TLC's exit code is not enough to judge a run: it exits 0 when Init has no
states, when ``-Dtlc2.TLC.stopAfter`` cut the run short and when a temporal
property failed to evaluate, and 75 (not 14) for a failed ``Assert``.  So the
verdict is read from the ``-tool`` messages (``@!@!@STARTMSG code:severity @!@!@``
... ``@!@!@ENDMSG code @!@!@``), which nest: code 1000 ends with ``: `` and the
real error follows as a child message on the same line.  Text outside messages
is SANY's progress/error output (between messages 2220 and 2219) and the
spec's own ``Print``/``PrintT`` output.

The classifier follows the priority list measured on TLC 2.15 (see the captured
fixtures under ``tests/data/tool_output/tlc``), with one addition: in
``-simulate`` mode an unsatisfiable Init is reported as error 2118 (exit 255)
rather than as "0 distinct states", and is classified VACUOUS as in BFS mode.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from .sany import SanyResult, classify_sany
from .values import Value, ValueParseError, parse_value

__all__ = [
    "ActionCoverage",
    "Location",
    "Message",
    "TlcResult",
    "ToolOutput",
    "TraceState",
    "Verdict",
    "classify_tlc",
    "parse_messages",
    "parse_tool_output",
    "walk",
]

# Message codes (tlc2.output.EC in TLC 2.15).
GENERAL = 1000
OUT_OF_MEMORY_CODES = frozenset({1001, 1002})
USAGE_CODES = frozenset({1101, 1102})
TLC_INITIAL_STATE = 2102
NESTED_EXPRESSION = 2103
ASSUMPTION_FALSE = 2104
INVARIANT_CODES = frozenset({2107, 2110})
INVARIANT_INITIAL = 2107
PROPERTY_VIOLATED_INITIAL = 2108
ACTION_PROPERTY = 2112
DEADLOCK = 2114
TEMPORAL_VIOLATED = 2116
NO_INITIAL_STATES = 2118
BEHAVIOR_HEADER = 2121
BACK_TO_STATE = 2122
ASSERT_FAILED = 2132
SUCCESS = 2193
DEPTH = 2194
STATE = 2217
STUTTERING = 2218
SANY_FINISHED = 2219
SANY_STARTING = 2220
COUNTEREXAMPLE_HEADER = 2264
FINISHED = 2186
PARSE_FAILED = 3002
COVERAGE_INIT = 2773
COVERAGE_ACTION = 2772
CONFIG_CODES = frozenset(
    {2222, 2229, 2280, 2281} | set(range(2226, 2236)) | set(range(5001, 5007))
)
FINAL_STATS = frozenset({2199, 2204, 2210})
PROGRESS_STATS = frozenset({2200, 2206, 2209})
SIMULATION_CODES = frozenset({2188, 2209, 2210, 2269})
CONTEXT_CODES = frozenset({BEHAVIOR_HEADER, NESTED_EXPRESSION, COUNTEREXAMPLE_HEADER})

SEVERITY_ERROR = 1
SEVERITY_BUG = 2
SEVERITY_WARNING = 3

EXIT_MEANINGS = {
    0: "success",
    1: "bad command line or metadir exists",
    10: "assumption false",
    11: "deadlock",
    12: "safety violation",
    13: "liveness violation",
    75: "evaluation error in the spec",
    76: "evaluation error in safety checking",
    77: "evaluation error in liveness checking",
    150: "parse error",
    151: "configuration error",
    152: "state space too large",
    153: "system error",
    255: "other error",
}


# ---------------------------------------------------------------------------
# Message tree


@dataclass(frozen=True)
class Message:
    """One ``-tool`` message; ``text`` excludes nested messages, which are ``children``."""

    code: int
    severity: int
    text: str
    children: list[Message] = field(default_factory=list)

    def full_text(self) -> str:
        """Own text followed by the children's, for searches that must see both."""
        return "\n".join([self.text, *(child.full_text() for child in self.children)])


@dataclass(frozen=True)
class ToolOutput:
    """Messages plus the raw lines around them, split into SANY text and user prints."""

    messages: list[Message]
    raw_lines: list[str]
    sany_lines: list[str] = field(default_factory=list)
    print_lines: list[str] = field(default_factory=list)


def walk(messages: Iterable[Message]) -> Iterator[Message]:
    """Depth-first, in output order, so "the first error" means the first one printed."""
    for message in messages:
        yield message
        yield from walk(message.children)


_MARKER = re.compile(r"@!@!@(?:STARTMSG (\d+):(\d+)|ENDMSG (\d+)) @!@!@\n?")
_MAX_NESTING = 16
_SANY_PROGRESS = re.compile(r"^(Parsing file |Semantic processing of module )")


@dataclass
class _Open:
    code: int
    severity: int
    parts: list[str] = field(default_factory=list)
    children: list[Message] = field(default_factory=list)

    def close(self) -> Message:
        return Message(self.code, self.severity, "".join(self.parts).rstrip(), self.children)


class _Splitter:
    """Stack machine over the marker stream; tolerates truncated or unbalanced output."""

    def __init__(self) -> None:
        self.stack: list[_Open] = []
        self.messages: list[Message] = []
        self.raw: list[str] = []
        self.sany: list[str] = []
        self.prints: list[str] = []
        self.in_sany = False

    def text(self, chunk: str) -> None:
        if self.stack:
            self.stack[-1].parts.append(chunk)
            return
        pieces = chunk.split("\n")
        if chunk.endswith("\n"):
            pieces.pop()
        for line in pieces:
            self.raw_line(line)

    def raw_line(self, line: str) -> None:
        self.raw.append(line)
        if self.in_sany or _SANY_PROGRESS.match(line):
            self.sany.append(line)
        elif line.strip():
            self.prints.append(line)

    def start(self, code: int, severity: int, marker: str) -> None:
        if len(self.stack) >= _MAX_NESTING:  # TLC nests one level; deeper is garbage, keep it as text
            self.text(marker)
            return
        if code == SANY_FINISHED and not self.stack:
            self.in_sany = False
        self.stack.append(_Open(code, severity))

    def end(self, code: int) -> None:
        if all(frame.code != code for frame in self.stack):
            return  # stray ENDMSG: nothing sensible to close
        while self.stack:
            frame = self.stack.pop()
            self.attach(frame.close())
            if frame.code == code:
                break

    def attach(self, message: Message) -> None:
        if self.stack:
            self.stack[-1].children.append(message)
            return
        self.messages.append(message)
        if message.code == SANY_STARTING:
            self.in_sany = True

    def finish(self) -> ToolOutput:
        while self.stack:  # output cut off (timeout, crash): keep what was said
            self.attach(self.stack.pop().close())
        return ToolOutput(self.messages, self.raw, self.sany, self.prints)


def parse_tool_output(output: str) -> ToolOutput:
    """Split ``-tool`` output into the message tree and the raw lines; never raises."""
    splitter = _Splitter()
    text = output.replace("\r\n", "\n")
    position = 0
    for marker in _MARKER.finditer(text):
        if marker.start() > position:
            splitter.text(text[position : marker.start()])
        if marker.group(1) is not None:
            splitter.start(int(marker.group(1)), int(marker.group(2)), marker.group())
        else:
            splitter.end(int(marker.group(3)))
        position = marker.end()
    if position < len(text):
        splitter.text(text[position:])
    return splitter.finish()


def parse_messages(output: str) -> list[Message]:
    """Top-level messages of ``-tool`` output (nested ones are their ``children``)."""
    return parse_tool_output(output).messages


# ---------------------------------------------------------------------------
# Result types


class Verdict(str, Enum):
    """Outcome of one TLC run, as a scorer needs it."""

    OK = "OK"
    VACUOUS = "VACUOUS"
    INCOMPLETE = "INCOMPLETE"
    PARSE_ERROR = "PARSE_ERROR"
    CONFIG_ERROR = "CONFIG_ERROR"
    ASSUMPTION_FALSE = "ASSUMPTION_FALSE"
    INVARIANT_VIOLATION = "INVARIANT_VIOLATION"
    ACTION_PROPERTY_VIOLATION = "ACTION_PROPERTY_VIOLATION"
    LIVENESS_VIOLATION = "LIVENESS_VIOLATION"
    DEADLOCK = "DEADLOCK"
    ASSERT_FAILED = "ASSERT_FAILED"
    EVAL_ERROR = "EVAL_ERROR"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    USAGE_ERROR = "USAGE_ERROR"
    TIMEOUT = "TIMEOUT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:
        return self.value


#: A run a time limit stopped (TLC's stop-after, or the hard limit): it decided nothing.
UNFINISHED = frozenset({Verdict.INCOMPLETE, Verdict.TIMEOUT})


@dataclass(frozen=True)
class Location:
    """A source span as TLC prints it; ``str()`` gives the short human form."""

    line: int
    col: int
    module: str
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"line {self.line}, col {self.col} of module {self.module}"


@dataclass(frozen=True)
class TraceState:
    """One entry of an error trace.

    ``action`` is the action name TLC prints (None for ``<Initial predicate>``).
    ``values`` is None when the state could not be read (``raw`` keeps it), and
    for the two pseudo-states of a liveness counterexample: ``stuttering`` (the
    behaviour stutters forever from the previous state) and ``back_to`` (the
    loop returns to that earlier state index).
    """

    index: int
    action: str | None
    location: Location | None
    values: dict[str, Value] | None
    raw: str
    stuttering: bool = False
    back_to: int | None = None


@dataclass(frozen=True)
class ActionCoverage:
    """Per-action coverage (message 2772); in ``-simulate`` mode ``distinct`` is always 0."""

    name: str
    distinct: int
    generated: int
    locations: tuple[Location, ...] = ()


@dataclass(frozen=True)
class TlcResult:
    """Everything a scorer or a failure message needs from one TLC run."""

    verdict: Verdict
    message: str
    location: Location | None = None
    violated: str | None = None
    states_generated: int | None = None
    distinct_states: int | None = None
    states_left: int | None = None
    depth: int | None = None
    trace: list[TraceState] = field(default_factory=list)
    coverage: dict[str, ActionCoverage] = field(default_factory=dict)
    init_coverage: ActionCoverage | None = None
    print_lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit_code: int | None = None
    timed_out: bool = False
    error_code: int | None = None
    mode: str | None = None
    positions: list[Location] = field(default_factory=list)
    sany: SanyResult | None = None

    @property
    def ok(self) -> bool:
        """Only a complete, error-free, non-vacuous run counts as a pass."""
        return self.verdict is Verdict.OK

    def summary(self) -> str:
        """One line saying why the run ended the way it did."""
        return _summarise(self)


# ---------------------------------------------------------------------------
# Small parsers

_SPAN = re.compile(r"line (\d+), col (\d+) to line (\d+), col (\d+) of module (\w+)")
_SPAN_LINE = re.compile(r"^\s*" + _SPAN.pattern + r"\s*$")
_POSITION = re.compile(r"\d+\. Line (\d+), column (\d+) to line (\d+), column (\d+) in (\w+)")
_LABEL = re.compile(
    r"^(?P<name>.*?)\s*\bline (?P<line>\d+), col (?P<col>\d+) to line (?P<end_line>\d+), "
    r"col (?P<end_col>\d+) of module (?P<module>\w+)(?:\s*\((?P<sub>\d+ \d+ \d+ \d+)\))?\s*$"
)
_STATE_HEADER = re.compile(r"^\s*(\d+):\s*<(.*)>\s*$")
_BACK_TO = re.compile(r"^\s*(\d+):\s*Back to state(?::?\s*<(.*)>)?")
_STUTTER = re.compile(r"^\s*(\d+):\s*Stuttering")
_COVERAGE = re.compile(r"^\s*<(?P<label>.*)>:\s*(?P<distinct>-?\d+):(?P<generated>-?\d+)\s*$")
_COUNT = r"(-?\d[\d,]*)"
_GENERATED = re.compile(_COUNT + r" states generated|states generated: " + _COUNT)
_DISTINCT = re.compile(_COUNT + r" distinct states? found")
_LEFT = re.compile(_COUNT + r" states? left on queue")
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_INVARIANT_NAME = re.compile(r"Invariant (\S+) is violated")
_ACTION_PROPERTY_NAME = re.compile(r"Action property (\S+) is violated")
_EXCEPTION_PREAMBLE = re.compile(
    r"TLC threw an unexpected exception\..*?The exception was an? (?P<exc>[\w.$]+)\s*:?", re.S
)
_STATE_INTRO = re.compile(r"(?:violated by the initial state|While working on the initial state):?\s*\n")
_CONJUNCT = re.compile(r"^/\\ ", re.M)
_ASSIGNMENT = re.compile(r"^\s*([A-Za-z0-9_]+)\s*=\s*(.*)\Z", re.S)


def _span(match: re.Match[str]) -> Location:
    return Location(
        int(match.group(1)), int(match.group(2)), match.group(5), int(match.group(3)), int(match.group(4))
    )


def _first_span(text: str) -> Location | None:
    match = _SPAN.search(text)
    return _span(match) if match else None


def _number(text: str | None) -> int | None:
    """TLC's counts, with thousands separators; -1 means "not applicable"."""
    if text is None:
        return None
    value = int(text.replace(",", ""))
    return None if value < 0 else value


def _label(label: str) -> tuple[str, Location | None]:
    """``Next line 6, col 1 to ... of module M (6 12 6 30)`` -> name and the most precise span.

    The parenthesised suffix (coverage of an unnamed disjunct) is the disjunct's
    own span; the main span is then only the definition's name, so the disjunct is named
    ``Next at line 6, col 12``.
    """
    match = _LABEL.match(label)
    if match is None:
        return label.strip(), None
    module = match.group("module")
    numbers = match.group("sub") or " ".join(match.group("line", "col", "end_line", "end_col"))
    line, col, end_line, end_col = (int(part) for part in numbers.split())
    name = match.group("name").strip()
    if match.group("sub"):
        # A disjunct TLC could not name (``\E m \in msgs : Handle(m)`` over a variable) is an
        # action of its own: named by its place, so two of them are never counted as one.
        name = f"{name} at line {line}, col {col}"
    return name, Location(line, col, module, end_line, end_col)


def _state_values(body: str) -> dict[str, Value] | None:
    """``/\\ var = value`` conjuncts (or a lone ``var = value``); None if any is unreadable."""
    text = body.strip()
    if not text:
        return {}
    chunks = _CONJUNCT.split(text) if text.startswith("/\\ ") else [text]
    values: dict[str, Value] = {}
    for chunk in chunks:
        if not chunk.strip():
            continue
        match = _ASSIGNMENT.match(chunk)
        if match is None:
            return None
        try:
            values[match.group(1)] = parse_value(match.group(2))
        except ValueParseError:
            return None
    return values


_JAVA_FRAME = re.compile(r"^(at [\w$.]+\(.*\)|\.\.\. \d+ more)$")
CLEAN_LIMIT = 600


def _clean(text: str) -> str:
    """Drop TLC's exception boilerplate, spans and dumped states; one line of prose."""
    preamble = _EXCEPTION_PREAMBLE.search(text)
    exception = preamble.group("exc") if preamble else None
    if preamble:
        text = text[preamble.end() :]
    text = _STATE_INTRO.split(text, maxsplit=1)[0]
    lines = [line.strip() for line in text.split("\n")]
    kept = [line for line in lines if line and not _SPAN_LINE.match(line) and not _JAVA_FRAME.match(line)]
    cleaned = " ".join(kept).strip()
    if len(cleaned) > CLEAN_LIMIT:
        cleaned = cleaned[:CLEAN_LIMIT] + f"... ({len(cleaned) - CLEAN_LIMIT} more characters)"
    if cleaned.endswith(":"):
        cleaned = cleaned[:-1].rstrip()
    return cleaned or exception or ""


def _message_text(message: Message) -> str:
    """A message's prose; a 1000 wrapper yields its nested message's text instead."""
    own = _clean(message.text)
    children = [_message_text(child) for child in message.children]
    children = [text for text in children if text]
    if message.code == GENERAL and children:
        return " ".join(children)
    return " ".join([own, *children]).strip()


# ---------------------------------------------------------------------------
# Extraction


def _trace(flat: list[Message]) -> list[TraceState]:
    trace: list[TraceState] = []
    for message in flat:
        entry = _trace_entry(message, trace)
        if entry is not None:
            trace.append(entry)
    if not trace:
        trace = _initial_state_trace(flat)
    return trace


def _trace_entry(message: Message, trace: list[TraceState]) -> TraceState | None:
    if message.code == STATE:
        return _state_entry(message.text)
    if message.code == STUTTERING and (match := _STUTTER.match(message.text)):
        return TraceState(int(match.group(1)), None, None, None, message.text, stuttering=True)
    if message.code == BACK_TO_STATE and (match := _BACK_TO.match(message.text)):
        name, location = _label(match.group(2) or "")
        index = trace[-1].index + 1 if trace else int(match.group(1))
        return TraceState(index, name or None, location, None, message.text, back_to=int(match.group(1)))
    return None


def _state_entry(text: str) -> TraceState | None:
    header, _, body = text.partition("\n")
    match = _STATE_HEADER.match(header)
    if match is None:
        return TraceState(0, None, None, None, text)
    name, location = _label(match.group(2))
    action = None if name == "Initial predicate" else name
    return TraceState(int(match.group(1)), action, location, _state_values(body), text)


def _initial_state_trace(flat: list[Message]) -> list[TraceState]:
    """2107/2102 print the offending initial state inside the message itself."""
    for message in flat:
        if message.code not in (INVARIANT_INITIAL, TLC_INITIAL_STATE):
            continue
        parts = _STATE_INTRO.split(message.text, maxsplit=1)
        if len(parts) == 2:
            return [TraceState(1, None, None, _state_values(parts[1]), parts[1].strip())]
    return []


def _coverage(flat: list[Message], code: int) -> dict[str, ActionCoverage]:
    found: dict[str, ActionCoverage] = {}
    for message in flat:
        match = _COVERAGE.match(message.text) if message.code == code else None
        if match is None:
            continue
        name, location = _label(match.group("label"))
        before = found.get(name, ActionCoverage(name, 0, 0))
        found[name] = ActionCoverage(
            name,
            before.distinct + max(0, int(match.group("distinct"))),
            before.generated + max(0, int(match.group("generated"))),
            before.locations + ((location,) if location else ()),
        )
    return found


@dataclass(frozen=True)
class _Stats:
    generated: int | None = None
    distinct: int | None = None
    left: int | None = None
    depth: int | None = None


def _stats(flat: list[Message]) -> _Stats:
    """The last final statistics line, else the last progress report (a killed run has only those)."""
    final = [m for m in flat if m.code in FINAL_STATS]
    progress = [m for m in flat if m.code in PROGRESS_STATS]
    chosen = final[-1] if final else progress[-1] if progress else None
    depths = [match for m in flat if m.code == DEPTH and (match := _DEPTH.search(m.text))]
    depth = int(depths[-1].group(1)) if depths else None
    if chosen is None:
        return _Stats(depth=depth)
    generated = _GENERATED.search(chosen.text)
    distinct = _DISTINCT.search(chosen.text)
    left = _LEFT.search(chosen.text)
    return _Stats(
        _number(generated and (generated.group(1) or generated.group(2))),
        _number(distinct and distinct.group(1)),
        _number(left and left.group(1)),
        depth,
    )


def _mode(flat: list[Message]) -> str | None:
    codes = {message.code for message in flat}
    if codes & SIMULATION_CODES:
        return "simulate"
    if 2271 in codes:
        return "dfid"
    if 2187 in codes:
        return "bfs"
    return None


def _positions(flat: list[Message]) -> list[Location]:
    for message in flat:
        if message.code == NESTED_EXPRESSION:
            return [
                Location(int(m.group(1)), int(m.group(2)), m.group(5), int(m.group(3)), int(m.group(4)))
                for m in _POSITION.finditer(message.text)
            ]
    return []


# ---------------------------------------------------------------------------
# Classification


@dataclass(frozen=True)
class _Decision:
    verdict: Verdict
    message: str = ""
    source: Message | None = None
    violated: str | None = None
    location: Location | None = None
    sany: SanyResult | None = None


def classify_tlc(output: str, exit_code: int | None = None, timed_out: bool = False,
                 output_limited: bool = False) -> TlcResult:
    """Classify one TLC ``-tool`` run; never raises, whatever the text."""
    tool = parse_tool_output(output)
    flat = list(walk(tool.messages))
    stats = _stats(flat)
    mode = _mode(flat)
    trace = _trace(flat)
    positions = _positions(flat)
    if output_limited:
        # Stopped by us, not ended by TLC: what it printed is the spec's, the end is ours.
        decision = _Decision(Verdict.OUTPUT_LIMIT, "its output passed the harness's limit and the run was stopped "
                                                   "(the spec prints without bound)", None)
    else:
        decision = _decide(tool, flat, exit_code, timed_out, stats, mode)
    location = decision.location or _error_location(decision, positions, trace)
    coverage = _coverage(flat, COVERAGE_ACTION)
    return TlcResult(
        verdict=decision.verdict,
        message=decision.message,
        location=location,
        violated=decision.violated,
        states_generated=stats.generated,
        distinct_states=stats.distinct,
        states_left=stats.left,
        depth=stats.depth,
        trace=trace,
        coverage=coverage,
        init_coverage=next(iter(_coverage(flat, COVERAGE_INIT).values()), None),
        print_lines=tool.print_lines,
        warnings=[_clean(m.text) for m in flat if m.severity == SEVERITY_WARNING],
        exit_code=exit_code,
        timed_out=timed_out,
        error_code=decision.source.code if decision.source else None,
        mode=mode,
        positions=positions,
        sany=decision.sany,
    )


def _first(flat: list[Message], codes: Iterable[int]) -> Message | None:
    wanted = frozenset(codes)
    return next((message for message in flat if message.code in wanted), None)


def _decide(
    tool: ToolOutput,
    flat: list[Message],
    exit_code: int | None,
    timed_out: bool,
    stats: _Stats,
    mode: str | None,
) -> _Decision:
    """The priority list: the first rule that matches wins."""
    for rule in (_usage, _parse, _config):
        decision = rule(tool, flat, exit_code)
        if decision is not None:
            return decision
    decision = _violation(flat) or _error(flat)
    if decision is not None:
        return decision
    return _completion(flat, exit_code, timed_out, stats, mode)


def _usage(tool: ToolOutput, flat: list[Message], exit_code: int | None) -> _Decision | None:
    source = _first(flat, USAGE_CODES)
    if source is None:
        return None
    return _Decision(Verdict.USAGE_ERROR, _clean(source.text.split("\nUsage:")[0]), source)


def _parse(tool: ToolOutput, flat: list[Message], exit_code: int | None) -> _Decision | None:
    source = _first(flat, [PARSE_FAILED])
    if source is None and exit_code != 150:
        return None
    sany = classify_sany("\n".join(tool.sany_lines))
    first = sany.errors[0] if sany.errors else None
    location = None
    if first is not None and first.line is not None and first.module:
        location = Location(first.line, first.col or 0, first.module)
    message = sany.first_error_summary() if first else (
        _clean(source.text) if source else "exit code 150 (parse error) without SANY details"
    )
    return _Decision(Verdict.PARSE_ERROR, message, source, location=location, sany=sany)


def _config(tool: ToolOutput, flat: list[Message], exit_code: int | None) -> _Decision | None:
    # A config code raised while evaluating (e.g. 2280 "In evaluation, the identifier x is either
    # undefined...") is the spec's evaluation error, not a problem of the cfg file.
    source = next((m for m in flat if m.code in CONFIG_CODES and not m.text.lstrip().startswith("In evaluation")), None)
    if source is None and exit_code != 151:
        return None
    message = _message_text(source) if source else "exit code 151 (configuration error)"
    return _Decision(Verdict.CONFIG_ERROR, message, source)


_VIOLATIONS: tuple[tuple[frozenset[int], Verdict, re.Pattern[str] | None], ...] = (
    (frozenset({ASSUMPTION_FALSE}), Verdict.ASSUMPTION_FALSE, None),
    (INVARIANT_CODES, Verdict.INVARIANT_VIOLATION, _INVARIANT_NAME),
    (frozenset({ACTION_PROPERTY}), Verdict.ACTION_PROPERTY_VIOLATION, _ACTION_PROPERTY_NAME),
    (frozenset({TEMPORAL_VIOLATED, PROPERTY_VIOLATED_INITIAL}), Verdict.LIVENESS_VIOLATION, None),
    (frozenset({DEADLOCK}), Verdict.DEADLOCK, None),
    (frozenset({ASSERT_FAILED}), Verdict.ASSERT_FAILED, None),
    (OUT_OF_MEMORY_CODES, Verdict.OUT_OF_MEMORY, None),
)


def _violation(flat: list[Message]) -> _Decision | None:
    for codes, verdict, name_pattern in _VIOLATIONS:
        source = _first(flat, codes)
        if source is None:
            continue
        name = name_pattern.search(source.text) if name_pattern else None
        text = _message_text(source)
        location = _first_span(source.full_text()) if verdict is Verdict.ASSUMPTION_FALSE else None
        return _Decision(verdict, text, source, name.group(1) if name else None, location)
    return None


def _error(flat: list[Message]) -> _Decision | None:
    """2118 (no initial state, simulate mode) is vacuity; any other error is an evaluation error."""
    if (source := _first(flat, [NO_INITIAL_STATES])) is not None:
        return _Decision(Verdict.VACUOUS, _clean(source.text), source)
    errors = [m for m in flat if m.severity in (SEVERITY_ERROR, SEVERITY_BUG)]
    if not errors:
        return None
    source = next((m for m in errors if m.code not in CONTEXT_CODES), errors[0])
    full = source.full_text()
    if any(marker in full for marker in _OUT_OF_MEMORY_MARKERS):
        return _Decision(Verdict.OUT_OF_MEMORY, "TLC ran out of memory (Java heap space): the state space or a set "
                         "being enumerated is too large", source)
    message = _message_text(source)
    if "StackOverflowError" in full:
        message = ("java.lang.StackOverflowError: the evaluation recursed without end "
                   "(a recursive operator without a base case?)")
    return _Decision(Verdict.EVAL_ERROR, message, source, location=_first_span(full))


_OUT_OF_MEMORY_MARKERS = ("Java heap space", "OutOfMemoryError", "GC overhead limit exceeded")


def _completion(
    flat: list[Message], exit_code: int | None, timed_out: bool, stats: _Stats, mode: str | None
) -> _Decision:
    """No error message: finished (OK / VACUOUS / INCOMPLETE), timed out, or not understood."""
    codes = {message.code for message in flat}
    finished = SUCCESS in codes or (mode == "simulate" and FINISHED in codes)
    if timed_out:
        return _Decision(Verdict.TIMEOUT, "TLC was stopped by the harness time limit")
    if not finished:
        return _Decision(Verdict.UNKNOWN, _unknown_message(flat, exit_code))
    if exit_code not in (None, 0):
        meaning = EXIT_MEANINGS.get(exit_code, "unknown")
        return _Decision(
            Verdict.UNKNOWN, f"TLC reported no error but exited with code {exit_code} ({meaning})"
        )
    if stats.distinct == 0:
        return _Decision(Verdict.VACUOUS, "the initial predicate has no satisfying state")
    if stats.left:
        return _Decision(Verdict.INCOMPLETE, f"stopped with {stats.left} states left on the queue")
    return _Decision(Verdict.OK, "no error has been found")


def _unknown_message(flat: list[Message], exit_code: int | None) -> str:
    code_text = "no exit code" if exit_code is None else (
        f"exit code {exit_code} ({EXIT_MEANINGS.get(exit_code, 'unknown')})"
    )
    if not flat:
        return f"no TLC messages in the output, {code_text}"
    return f"TLC did not report completion, {code_text}; last message {flat[-1].code}"


def _error_location(
    decision: _Decision, positions: list[Location], trace: list[TraceState]
) -> Location | None:
    """For evaluation errors without a span: the innermost 2103 position, else the last action."""
    if decision.verdict not in (Verdict.EVAL_ERROR, Verdict.ASSERT_FAILED):
        return None
    if positions:
        return positions[-1]
    located = [state.location for state in trace if state.location is not None]
    return located[-1] if located and decision.verdict is Verdict.EVAL_ERROR else None


# ---------------------------------------------------------------------------
# Summaries


def _behaviour(result: TlcResult) -> str:
    states = [s for s in result.trace if not s.stuttering and s.back_to is None]
    if not states:
        return ""
    if len(states) == 1:
        return " in the initial state"
    return f" after {len(states) - 1} steps ({len(states)} states)"


def _at(location: Location | None) -> str:
    return f" at {location}" if location else ""


def _liveness(result: TlcResult) -> str:
    states = [s for s in result.trace if not s.stuttering and s.back_to is None]
    text = f"temporal property violated: counterexample of {len(states)} states"
    ending = result.trace[-1] if result.trace else None
    if ending is not None and ending.back_to is not None:
        return f"{text}, looping back to state {ending.back_to}"
    if ending is not None and ending.stuttering:
        return f"{text}, then stuttering forever"
    return text


def _counts(result: TlcResult) -> str:
    parts = []
    if result.states_generated is not None:
        parts.append(f"{result.states_generated} states generated")
    if result.distinct_states is not None:
        parts.append(f"{result.distinct_states} distinct")
    if result.depth is not None:
        parts.append(f"depth {result.depth}")
    return ", ".join(parts)


def _summarise(result: TlcResult) -> str:
    verdict = result.verdict
    counts = _counts(result)
    if verdict is Verdict.OK:
        what = "simulation finished without error" if result.mode == "simulate" else "no error found"
        return f"{what}: {counts}" if counts else what
    if verdict is Verdict.VACUOUS:
        return "vacuous: the initial predicate has no satisfying state"
    if verdict is Verdict.INCOMPLETE:
        return f"incomplete: {result.message}" + (f" ({counts})" if counts else "")
    if verdict is Verdict.TIMEOUT:
        return "timed out" + (f" after {counts}" if counts else " before TLC reported any states")
    if verdict is Verdict.OUTPUT_LIMIT:
        return f"TLC was stopped: {result.message}"
    if verdict is Verdict.INVARIANT_VIOLATION:
        return f"invariant {result.violated or '?'} violated{_behaviour(result)}"
    if verdict is Verdict.ACTION_PROPERTY_VIOLATION:
        return f"action property {result.violated or '?'} violated{_behaviour(result)}"
    if verdict is Verdict.LIVENESS_VIOLATION:
        return _liveness(result)
    if verdict is Verdict.DEADLOCK:
        return f"deadlock reached{_behaviour(result)}"
    if verdict is Verdict.ASSUMPTION_FALSE:
        return f"assumption{_at(result.location)} is false"
    if verdict is Verdict.ASSERT_FAILED:
        return f"assertion failed{_at(result.location)}: {result.message}"
    if verdict is Verdict.EVAL_ERROR:
        return f"evaluation error{_at(result.location)}: {result.message}"
    labels = {
        Verdict.PARSE_ERROR: "parse error",
        Verdict.CONFIG_ERROR: "configuration error",
        Verdict.OUT_OF_MEMORY: "out of memory",
        Verdict.USAGE_ERROR: "bad TLC command line",
        Verdict.UNKNOWN: "unrecognised TLC output",
    }
    return f"{labels[verdict]}: {result.message}"
