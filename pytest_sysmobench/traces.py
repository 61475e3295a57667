"""Traces of the real system, and the (pre, post) windows P3 cuts from them.

A trace file is NDJSON: a ``{"meta": {...}}`` line, an ``{"step": 0, "action": "Init",
"state": {...}}`` line with the initial state, then one line per event with the action, its
actor (and ``args`` for further parameters) and the canonical state *after* the event.
Every line is validated against the task's vocabulary; a bad line is reported with its file
and line number, never skipped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .tasks import Task, enumerated_values
from .tla.values import SET_TAG

JsonValue = Any
#: Traces are input like any other: a line, a string or a nesting past these is a corrupt trace.
MAX_TRACE_BYTES = 64 << 20
MAX_LINE_BYTES = 1 << 20
MAX_STRING_CHARS = 1024
MAX_DEPTH = 32


class TraceError(ValueError):
    """A trace file is malformed; the message names the file and the line."""


@dataclass(frozen=True)
class Window:
    """One step the real system took: from ``pre``, action(args) reached ``post``."""

    trace: str
    step: int
    action: str
    args: tuple[JsonValue, ...]
    pre: Mapping[str, JsonValue]
    post: Mapping[str, JsonValue]

    def key(self) -> str:
        """Identical windows are checked once."""
        return json.dumps([self.action, self.args, self.pre, self.post], sort_keys=True)

    def describe(self, also: str = "") -> str:
        """The window for a failure message: what the step changed (and ``also``, what the spec
        did instead) before the states, which are cut short: the trace file has them whole."""
        args = ", ".join(json.dumps(a) for a in self.args)
        changes = step_changes(self.pre, self.post)
        return (
            f"{self.trace} step {self.step}: {self.action}({args})\n"
            f"  the system's step: {'; '.join(changes) if changes else 'changes nothing'}{also}\n"
            f"  pre:  {_cut(json.dumps(self.pre, sort_keys=True))}\n"
            f"  post: {_cut(json.dumps(self.post, sort_keys=True))}"
        )


#: How much of a state a window's description shows.
SHOWN_STATE_CHARS = 400


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_STATE_CHARS else f"{text[:SHOWN_STATE_CHARS]} ... ({len(text)} characters)"


#: How many changes a window's description lists (a step of etcd's can move dozens of fields).
SHOWN_CHANGES = 8
_ABSENT = object()


def step_changes(pre: Mapping[str, JsonValue], post: Mapping[str, JsonValue], limit: int = SHOWN_CHANGES) -> list[str]:
    """What a step changed, field by field (``pc["t1"]: "idle" -> "locked"``) and, for sets, bags
    and sequences, the elements it added and removed: what a user otherwise diffs by eye when
    the spec cannot take the step."""
    found: list[str] = []
    _changes(found, "", dict(pre), dict(post))
    return found[:limit] + ([f"... {len(found) - limit} more"] if len(found) > limit else [])


def _changes(found: list[str], path: str, a: JsonValue, b: JsonValue) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict) and SET_TAG not in a and SET_TAG not in b:
        for key in sorted(set(a) | set(b), key=str):
            _changes(found, f"{path}[{json.dumps(key)}]" if path else str(key), a.get(key, _ABSENT), b.get(key, _ABSENT))
        return
    items_a, items_b = _elements(a), _elements(b)
    if items_a is not None and items_b is not None:
        added = [x for x in items_b if not _take(items_a, x)]
        removed = items_a  # what is left once every element still there was taken out
        found.append(f"{path}: " + ", ".join([f"+ {json.dumps(x, sort_keys=True)}" for x in added]
                                             + [f"- {json.dumps(x, sort_keys=True)}" for x in removed]))
        return
    show = lambda v: "absent" if v is _ABSENT else json.dumps(v, sort_keys=True)  # noqa: E731
    found.append(f"{path}: {show(a)} -> {show(b)}")


def _elements(value: JsonValue) -> list[JsonValue] | None:
    """A set's, bag's or sequence's elements (a copy), or None for anything else."""
    if isinstance(value, dict) and SET_TAG in value and isinstance(value[SET_TAG], list):
        return list(value[SET_TAG])
    return list(value) if isinstance(value, list) else None


def _take(items: list[JsonValue], item: JsonValue) -> bool:
    """Removes one occurrence of item from items; whether there was one."""
    for i, candidate in enumerate(items):
        if candidate == item:
            del items[i]
            return True
    return False

@dataclass(frozen=True)
class Trace:
    name: str
    meta: Mapping[str, JsonValue]
    states: tuple[Mapping[str, JsonValue], ...]
    events: tuple[tuple[str, tuple[JsonValue, ...]], ...]  # (action, args) leading to states[i + 1]
    sha256: str = ""

    @property
    def constants(self) -> Mapping[str, JsonValue]:
        return self.meta.get("constants") or {}

    def windows(self) -> list[Window]:
        return [
            Window(self.name, i + 1, action, args, self.states[i], self.states[i + 1])
            for i, (action, args) in enumerate(self.events)
        ]


@dataclass
class _Validator:
    task: Task
    path: Path
    variables: set[str] = field(init=False)
    actions: dict[str, tuple[str, ...]] = field(init=False)
    #: Canonical variables whose type is an enumeration: (function-shaped?, the allowed literals).
    enumerated: dict[str, tuple[bool, set[str]]] = field(init=False)

    def __post_init__(self) -> None:
        self.variables = {v.name for v in self.task.vocabulary.variables}
        self.actions = {a.name: a.params for a in self.task.vocabulary.actions}
        self.enumerated = {}
        for variable in self.task.vocabulary.variables:
            function = variable.type.strip().startswith("[")
            allowed = enumerated_values(variable.type, "function" if function else "scalar")
            if allowed is not None:
                self.enumerated[variable.name] = (function, allowed)

    def typed(self, line: int, name: str, value: JsonValue) -> None:
        """A value outside an enumerated canonical type is the trace's fault: no spec could take it."""
        if name not in self.enumerated:
            return
        function, allowed = self.enumerated[name]
        if not function:
            items: Iterable[JsonValue] = [value]
        elif isinstance(value, dict):
            items = value.values()
        elif isinstance(value, list):  # a function on 1..n, written as a tuple
            items = value
        else:
            raise self.fail(line, f"state.{name}: expected a function (a JSON object, or a list for one on 1..n), "
                                  f"got {type(value).__name__}")
        for item in items:
            literal = ("TRUE" if item else "FALSE") if isinstance(item, bool) else json.dumps(item)
            if literal not in allowed:
                raise self.fail(line, f"state.{name}: {literal[:60]} is not a value of its type {self.task.vocabulary_type(name)}")

    def fail(self, line: int, message: str) -> TraceError:
        return TraceError(f"{self.path}:{line}: {message}")

    def record(self, line: int, text: str) -> dict[str, JsonValue]:
        if len(text) > MAX_LINE_BYTES:
            raise self.fail(line, f"line of {len(text):,} characters, over the {MAX_LINE_BYTES:,} a trace line may have")
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.fail(line, f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
        except RecursionError as exc:
            raise self.fail(line, f"JSON nested more than {MAX_DEPTH} levels deep") from exc
        if not isinstance(value, dict):
            raise self.fail(line, f"expected a JSON object, got {type(value).__name__}")
        return value

    def state(self, line: int, record: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
        state = record.get("state")
        if not isinstance(state, dict):
            raise self.fail(line, "missing 'state' object")
        missing = sorted(self.variables - set(state))
        extra = sorted(set(state) - self.variables)
        if missing:
            raise self.fail(line, f"state lacks canonical variable(s) {', '.join(missing)}")
        if extra:
            raise self.fail(line, f"state has unknown variable(s) {', '.join(extra)}")
        for name, value in state.items():
            check_value(value, lambda m: self.fail(line, f"state.{name}: {m}"))
            self.typed(line, name, value)
        return state

    def event(self, line: int, record: Mapping[str, JsonValue], step: int) -> tuple[str, tuple[JsonValue, ...]]:
        if record.get("step") != step:
            raise self.fail(line, f"expected step {step}, got {record.get('step')!r}")
        action = record.get("action")
        if action not in self.actions:
            raise self.fail(line, f"unknown action {action!r} (known: {', '.join(sorted(self.actions))})")
        params = self.actions[action]
        given = dict(record.get("args") or {})
        if params and params[0] not in given and "actor" in record:
            given[params[0]] = record["actor"]
        missing = [p for p in params if p not in given]
        if missing:
            raise self.fail(line, f"action {action} needs parameter(s) {', '.join(missing)} ('actor' or 'args')")
        for name in params:
            check_value(given[name], lambda m: self.fail(line, f"args.{name}: {m}"))
        return action, tuple(given[p] for p in params)


def check_value(value: JsonValue, fail: Any, depth: int = 0) -> None:
    """Trace values must have a TLA+ reading (no floats, no nulls) and stay small enough to be
    written into a TLA+ module: short printable strings, bounded integers, bounded nesting."""
    if depth > MAX_DEPTH:
        raise fail(f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not -(2**31) <= value < 2**31:
            raise fail(f"integer {value} is outside TLC's 32-bit range")
        return
    if isinstance(value, str):
        _check_string(value, fail)
        return
    if isinstance(value, list):
        for item in value:
            check_value(item, fail, depth + 1)
        return
    if isinstance(value, dict):
        if SET_TAG in value and (len(value) != 1 or not isinstance(value[SET_TAG], list)):
            raise fail(f'a set is written {{"{SET_TAG}": [items]}} and nothing else')
        for key, item in value.items():
            _check_string(key, fail)
            check_value(item, fail, depth + 1)
        return
    raise fail(f"{type(value).__name__} values have no TLA+ reading")


def _check_string(text: str, fail: Any) -> None:
    if len(text) > MAX_STRING_CHARS:
        raise fail(f"a string of {len(text):,} characters (at most {MAX_STRING_CHARS:,})")
    if not text.isprintable() or not text.isascii():
        raise fail(f"string {text[:40]!r} has a control or non-ASCII character (TLA+ strings are printable ASCII)")


def load_trace(path: Path, task: Task) -> Trace:
    validator = _Validator(task, path)
    try:
        size = path.stat().st_size
        if size > MAX_TRACE_BYTES:
            raise TraceError(f"{path}: {size:,} bytes, over the {MAX_TRACE_BYTES:,} a trace file may have")
        raw = path.read_bytes()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) < 2:
        raise TraceError(f"{path}: a trace needs a meta line and an initial state")
    (meta_line, meta_text), (init_line, init_text), *rest = lines
    meta = validator.record(meta_line, meta_text).get("meta")
    if not isinstance(meta, dict):
        raise validator.fail(meta_line, "the first line must be {\"meta\": {...}}")
    constants = meta.get("constants") or {}
    if not isinstance(constants, dict):
        raise validator.fail(meta_line, "meta.constants must be an object")
    for name, value in constants.items():
        check_value(value, lambda m, name=name: validator.fail(meta_line, f"meta.constants.{name}: {m}"))
    init = validator.record(init_line, init_text)
    if init.get("step") != 0 or init.get("action") != "Init":
        raise validator.fail(init_line, "the second line must be the initial state {\"step\": 0, \"action\": \"Init\", ...}")
    states = [validator.state(init_line, init)]
    events = []
    for step, (number, line) in enumerate(rest, start=1):
        record = validator.record(number, line)
        events.append(validator.event(number, record, step))
        states.append(validator.state(number, record))
    return Trace(path.name, meta, tuple(states), tuple(events), hashlib.sha256(raw).hexdigest())


@dataclass(frozen=True)
class Corpus:
    traces: tuple[Trace, ...]
    errors: tuple[str, ...]

    @property
    def constants(self) -> dict[str, JsonValue]:
        """Constants for checking every trace at once: a numeric bound takes its largest value
        (each trace sets it to what that trace reaches), anything else the first trace's value."""
        merged: dict[str, JsonValue] = {}
        for trace in self.traces:
            for name, value in trace.constants.items():
                known = merged.get(name)
                numeric = isinstance(value, int) and not isinstance(value, bool)
                if known is None or (numeric and isinstance(known, int) and value > known):
                    merged[name] = value
        return merged

    def of_seeds(self, seeds: Iterable[int]) -> Corpus:
        """The traces captured with these seeds (a trace's ``meta.seed``)."""
        wanted = set(seeds)
        return Corpus(tuple(t for t in self.traces if t.meta.get("seed") in wanted), self.errors)

    @property
    def sha256(self) -> str:
        digest = hashlib.sha256()
        for trace in self.traces:
            digest.update(trace.name.encode() + b"\0" + trace.sha256.encode() + b"\0")
        return digest.hexdigest()


def load_corpus(directory: Path, task: Task) -> Corpus:
    traces = []
    errors = []
    for path in sorted(directory.glob("*.ndjson")) if directory.is_dir() else []:
        try:
            traces.append(load_trace(path, task))
        except TraceError as exc:
            errors.append(str(exc))
    return Corpus(tuple(traces), tuple(errors))
