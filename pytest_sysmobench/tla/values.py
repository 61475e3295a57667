"""TLA+ values both ways: as TLC prints them, read into Python; and written as TLA+ source,
from Python values (``format_value``) and from a trace's JSON values (``tla_literal``).

TLC prints every state of a counterexample (and every ``Print``/``PrintT``) in
a small, regular value syntax.  The harness reads those values as Python data
(initial values of spec variables, marks, counterexample states), and writes the
traced states of the real system into generated TLA+ modules (trace windows and
the mapping check), with one list of the words TLA+ reserves.

Representation (``Value``):

* integers -> ``int``; ``TRUE``/``FALSE`` -> ``bool``; strings -> ``str``
* model values and other bare identifiers -> ``ModelValue(name)``.  This also
  covers the ``null`` TLC prints for a variable the next-state action did not
  assign.
* sets ``{...}`` -> ``frozenset``; an interval ``a..b`` (TLC prints ``1..3``
  as such) -> the ``frozenset`` of its integers
* sequences / tuples ``<<...>>`` -> ``tuple``
* records ``[a |-> 1]`` -> ``Record`` (immutable, hashable mapping str -> Value)
* functions ``(k :> v @@ ...)`` -> ``TlaFunction`` (immutable, hashable mapping)

TLA+ identities that Python cannot express, kept simple on purpose:

* TLC prints a function whose domain is ``1..n`` as a sequence and the empty
  function / record / sequence as ``<<>>`` (or ``<< >>``); those come back as
  tuples.  A ``TlaFunction`` with domain ``1..n`` is *not* normalised to a tuple,
  so ``TlaFunction({1: "a"}) != ("a",)`` although TLA+ considers them equal.
* TLC prints a function with a string domain as a record.  ``Record`` and
  ``TlaFunction`` with the same items compare (and hash) equal, as in TLA+.
* Python's ``True == 1`` means a set mixing ``TRUE`` and ``1`` collapses; TLC
  refuses to compare such values anyway.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, TypeAlias, TypeVar

Value: TypeAlias = (
    "bool | int | str | ModelValue | frozenset[Value] | tuple[Value, ...] | Record | TlaFunction"
)

__all__ = [
    "ModelValue",
    "Record",
    "TlaFunction",
    "Value",
    "ValueParseError",
    "format_value",
    "parse_value",
]

K = TypeVar("K")

_MAX_DEPTH = 200
_MAX_INTERVAL = 1_000_000
_MAX_STRING_CODEPOINT = 0xFF  # SANY 2.1's lexer rejects string characters above Latin-1.

_IDENT_RE = re.compile(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*")
_WORD_RE = re.compile(r"[A-Za-z0-9_]+")
RESERVED = frozenset(
    """ASSUME ASSUMPTION AXIOM BOOLEAN CASE CHOOSE CONSTANT CONSTANTS DOMAIN ELSE ENABLED
    EXCEPT EXTENDS FALSE IF IN INSTANCE LAMBDA LET LOCAL MODULE OTHER RECURSIVE STRING
    SUBSET THEN THEOREM TRUE UNCHANGED UNION VARIABLE VARIABLES WITH WF_ SF_""".split()
)
_ESCAPES_OUT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\f": "\\f"}
_ESCAPES_IN = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "f": "\f"}


@dataclass(frozen=True, order=True)
class ModelValue:
    """A TLC model value (``CONSTANT Procs = {p1, p2}``): equal only to itself."""

    name: str

    def __str__(self) -> str:
        return self.name


class _FrozenMapping(Mapping[K, "Value"], Generic[K]):
    """Shared base so records and functions are immutable, hashable and inter-comparable."""

    __slots__ = ("_data", "_hash")
    _data: dict[K, Value]
    _hash: int | None

    def __init__(self, items: Mapping[K, Value] | Iterable[tuple[K, Value]] = ()) -> None:
        object.__setattr__(self, "_data", dict(items))
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __getitem__(self, key: K) -> Value:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(frozenset(self._data.items())))
        assert self._hash is not None
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return self._data == dict(other.items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


class Record(_FrozenMapping[str]):
    """A TLA+ record ``[f |-> v, ...]``.

    Iteration follows TLC's printed field order (handy when reading a trace);
    equality ignores it, and ``format_value`` sorts fields so equal records
    always print alike.
    """

    __slots__ = ()

    def __init__(self, items: Mapping[str, Value] | Iterable[tuple[str, Value]] = ()) -> None:
        super().__init__(items)
        bad = [key for key in self._data if not isinstance(key, str)]
        if bad:
            raise TypeError(f"record field names must be strings, got {bad[0]!r}")


class TlaFunction(_FrozenMapping["Value"]):
    """A TLA+ function ``(k1 :> v1 @@ k2 :> v2)`` with an arbitrary finite domain."""

    __slots__ = ()


class ValueParseError(ValueError):
    """TLC value text that could not be read; carries where, so a caller can point at it."""

    def __init__(self, reason: str, text: str, position: int) -> None:
        self.reason = reason
        self.text = text
        self.position = position
        self.line = text.count("\n", 0, position) + 1
        self.column = position - (text.rfind("\n", 0, position) + 1) + 1
        snippet = text[position : position + 30]
        super().__init__(
            f"{reason} at line {self.line}, column {self.column} (offset {position}): {snippet!r}"
        )


# ---------------------------------------------------------------------------
# Parsing


def parse_value(text: str) -> Value:
    """Read one value printed by TLC; raises only ``ValueParseError``."""
    parser = _Parser(text)
    value = parser.value(0)
    parser.skip_space()
    if parser.pos != len(text):
        parser.fail("unexpected text after the value")
    return value


class _Parser:
    """Recursive-descent reader; depth is bounded so hostile input cannot blow the stack."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, reason: str) -> NoReturn:
        raise ValueParseError(reason, self.text, self.pos)

    def skip_space(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        self.pos = pos

    def peek(self, token: str) -> bool:
        self.skip_space()
        return self.text.startswith(token, self.pos)

    def accept(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            self.fail(f"expected {token!r}")

    def value(self, depth: int) -> Value:
        if depth > _MAX_DEPTH:
            self.fail(f"values nested deeper than {_MAX_DEPTH} levels")
        self.skip_space()
        if self.pos >= len(self.text):
            self.fail("expected a value but the text ended")
        char = self.text[self.pos]
        if char == "{":
            return self.set_value(depth)
        if self.text.startswith("<<", self.pos):
            return self.sequence(depth)
        if char == "[":
            return self.record(depth)
        if char == "(":
            return self.function(depth)
        if char == '"':
            return self.string()
        if char == "-" or char.isdigit() or char.isalpha() or char == "_":
            return self.word()
        self.fail("expected a value")

    def items(self, close: str, depth: int) -> list[Value]:
        """Comma-separated values up to ``close`` (the opening token is already consumed)."""
        found: list[Value] = []
        if self.accept(close):
            return found
        while True:
            found.append(self.value(depth + 1))
            if self.accept(close):
                return found
            self.expect(",")

    def set_value(self, depth: int) -> frozenset[Value]:
        self.pos += 1
        return frozenset(self.items("}", depth))

    def sequence(self, depth: int) -> tuple[Value, ...]:
        self.pos += 2
        return tuple(self.items(">>", depth))

    def record(self, depth: int) -> Record:
        self.pos += 1
        fields: dict[str, Value] = {}
        while True:
            name = self.field_name()
            self.expect("|->")
            value = self.value(depth + 1)
            fields.setdefault(name, value)
            if self.accept("]"):
                return Record(fields)
            self.expect(",")

    def field_name(self) -> str:
        self.skip_space()
        match = _WORD_RE.match(self.text, self.pos)
        if match is None or not _IDENT_RE.fullmatch(match.group()):
            self.fail("expected a record field name")
        self.pos = match.end()
        return match.group()

    def function(self, depth: int) -> Value:
        """``(k :> v @@ ...)``; a plain parenthesised value is accepted too."""
        self.pos += 1
        first = self.value(depth + 1)
        if self.accept(")"):
            return first
        pairs: dict[Value, Value] = {}
        key = first
        while True:
            self.expect(":>")
            pairs.setdefault(key, self.value(depth + 1))  # f @@ g: the left operand wins
            if self.accept(")"):
                return TlaFunction(pairs)
            self.expect("@@")
            key = self.value(depth + 1)

    def string(self) -> str:
        text, pos = self.text, self.pos + 1
        out: list[str] = []
        while pos < len(text):
            char = text[pos]
            if char == '"':
                self.pos = pos + 1
                return "".join(out)
            if char == "\\":
                escaped = _ESCAPES_IN.get(text[pos + 1 : pos + 2])
                if escaped is None:
                    self.pos = pos
                    self.fail("unknown escape in string")
                out.append(escaped)
                pos += 2
                continue
            out.append(char)
            pos += 1
        self.fail("unterminated string")

    def word(self) -> Value:
        """Integer (maybe negative), interval ``a..b``, boolean or model value."""
        start = self.pos
        negative = self.text.startswith("-", start)
        match = _WORD_RE.match(self.text, start + negative)
        if match is None:
            self.fail("expected a number or a name")
        word = match.group()
        self.pos = match.end()
        if word.isdigit():
            return self.maybe_interval(int(word) * (-1 if negative else 1), start)
        if negative or not _IDENT_RE.fullmatch(word):
            self.pos = start
            self.fail("malformed number or name")
        if word == "TRUE":
            return True
        if word == "FALSE":
            return False
        return ModelValue(word)

    def maybe_interval(self, low: int, start: int) -> Value:
        if not self.text.startswith("..", self.pos):
            return low
        self.pos += 2
        bound_start = self.pos
        high = self.word()
        if not isinstance(high, int) or isinstance(high, bool):
            self.pos = bound_start
            self.fail("interval bound must be an integer")
        if high - low >= _MAX_INTERVAL:
            self.pos = start
            self.fail(f"interval {low}..{high} has more than {_MAX_INTERVAL} elements")
        return frozenset(range(low, high + 1))


# ---------------------------------------------------------------------------
# Formatting


def format_value(value: object) -> str:
    """Write a Python value as TLA+ source; equal values give identical text.

    Generated modules are cached by their text, so sets, records and function
    domains are written in a canonical order.  Anything TLA+ cannot hold (float,
    None, strings beyond Latin-1, model values that are not identifiers) raises
    ``ValueError`` naming the offending value instead of producing a module
    that SANY would reject later with a less helpful message.
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _format_string(value)
    if isinstance(value, ModelValue):
        return _format_model_value(value)
    if isinstance(value, Mapping):
        return _format_mapping(value)
    if isinstance(value, (tuple, list)):
        return "<<" + ", ".join(format_value(item) for item in value) + ">>"
    if isinstance(value, Set):
        return "{" + ", ".join(_sorted_texts(value)) + "}"
    raise ValueError(
        f"cannot write {type(value).__name__} {value!r} as a TLA+ value: supported are "
        "bool, int, str, ModelValue, set/frozenset, tuple/list, dict/Record and TlaFunction"
    )


def _format_string(value: str) -> str:
    for char in value:
        if ord(char) > _MAX_STRING_CODEPOINT:
            raise ValueError(
                f"cannot write string {value!r} as TLA+: character {char!r} (U+{ord(char):04X}) "
                "is outside Latin-1, which SANY 2.1 rejects in string literals"
            )
    return '"' + "".join(_ESCAPES_OUT.get(char, char) for char in value) + '"'


def _format_model_value(value: ModelValue) -> str:
    if not _is_identifier(value.name):
        raise ValueError(f"cannot write model value {value.name!r}: not a TLA+ identifier")
    return value.name


def _is_identifier(name: object) -> bool:
    return isinstance(name, str) and bool(_IDENT_RE.fullmatch(name)) and name not in RESERVED


def _format_mapping(value: Mapping[object, object]) -> str:
    """Record syntax when every key is a usable field name, otherwise ``(k :> v @@ ...)``.

    The choice depends on the keys only, never on the Python type: a record and
    a function with the same items are the same TLA+ value and must print alike
    (TLC itself prints string-domain functions as records).
    """
    if not value:
        return "<<>>"
    if all(_is_identifier(key) for key in value):
        fields = sorted(value.items(), key=lambda item: str(item[0]))
        return "[" + ", ".join(f"{key} |-> {format_value(item)}" for key, item in fields) + "]"
    return _format_function(value)


def _format_function(value: Mapping[object, object]) -> str:
    if not value:
        return "<<>>"
    pairs = sorted(
        ((format_value(key), format_value(item), key) for key, item in value.items()),
        key=lambda triple: _order_key(triple[2], triple[0]),
    )
    return "(" + " @@ ".join(f"{key} :> {item}" for key, item, _ in pairs) + ")"


def _sorted_texts(values: Iterable[object]) -> list[str]:
    texts = [(format_value(item), item) for item in values]
    return [text for text, _ in sorted(texts, key=lambda pair: _order_key(pair[1], pair[0]))]


def _order_key(value: object, text: str) -> tuple[int, int, str]:
    """Numbers numerically, then strings, model values, and composites by their text."""
    if isinstance(value, bool):
        return (0, int(value), text)
    if isinstance(value, int):
        return (1, value, text)
    if isinstance(value, str):
        return (2, 0, value)
    if isinstance(value, ModelValue):
        return (3, 0, value.name)
    return (4, 0, text)


#: At most this many characters of a value in a description of where two values differ.
SHOWN_VALUE_CHARS = 240


def value_differences(path: str, system: object, spec: object, step: bool = False) -> list[str]:
    """Where the spec's value differs from the system's, as deep as both have the same shape:
    a function by its arguments, a set by the elements one has and the other lacks.  With
    ``step``, the two are a value before and after a step, and the changes are said as such."""
    if system == spec:
        return []
    if isinstance(system, Mapping) and isinstance(spec, Mapping) and set(system) == set(spec):
        return [d for key in system
                for d in value_differences(f"{path}[{format_value(key)}]", system[key], spec[key], step)]
    if isinstance(system, frozenset) and isinstance(spec, frozenset):
        lacks = [_shown(format_value(v)) for v in system - spec]
        extra = [_shown(format_value(v)) for v in spec - system]
        if step:
            return [f"{path}: " + ", ".join([*(f"+ {v}" for v in extra), *(f"- {v}" for v in lacks)])]
        return [f"{path}: the spec lacks {', '.join(lacks) or 'nothing'} and has {', '.join(extra) or 'nothing'} instead"]
    if step:
        return [f"{path}: {_shown(format_value(system))} -> {_shown(format_value(spec))}"]
    return [f"{path}: system {_shown(format_value(system))}, spec {_shown(format_value(spec))}"]


def _shown(text: str) -> str:
    return text if len(text) <= SHOWN_VALUE_CHARS else text[:SHOWN_VALUE_CHARS] + " ..."


# ---------------------------------------------------------------------------
# Trace values (JSON) written as TLA+: the states P3 and P4 check the spec against

_FIELD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


SET_TAG = "$set"


def tla_literal(value: Any, share: Shared | None = None) -> str:
    """JSON trace values as TLA+: objects are functions over their (string) keys, lists are tuples.

    JSON has no sets, so ``{"$set": [...]}`` stands for the TLA+ set of its items (order and
    repeats ignored): a network of in-flight messages or a set of granted votes is a set.
    With ``share``, a long composite value is written once and named where it is used.
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        text = "<<" + ", ".join(tla_literal(v, share) for v in value) + ">>"
    elif isinstance(value, dict):
        if set(value) == {SET_TAG} and isinstance(value[SET_TAG], list):
            text = "{" + ", ".join(sorted({tla_literal(v, share) for v in value[SET_TAG]})) + "}"
        else:
            text = function_literal({k: tla_literal(v, share) for k, v in value.items()})
    else:
        raise ValueError(f"no TLA+ reading for {type(value).__name__} value {value!r}")
    return share(text) if share is not None else text


#: Composite values at least this long are worth a name of their own (a name is 21 characters).
SHARE_AT = 28
_SHARED_NAME = re.compile(r"\bSysmoLit_[0-9a-f]{12}\b")


class Shared:
    """Composite values a generated module writes once, as definitions, and names where used.

    A trace's states repeat the same messages, logs and tables from one state to the next,
    and SANY's reading of a check module (most of a P3 check's time) grows with its text:
    an etcd window module shrinks several times.  Names are content hashes, so a text that
    names them is the same in every module that writes it, and cacheable."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # text -> name
        self._texts: dict[str, str] = {}  # name -> text, each after the names it uses

    def __call__(self, text: str) -> str:
        if len(text) < SHARE_AT:
            return text
        name = self._names.get(text)
        if name is None:
            name = f"SysmoLit_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
            if name in self._texts:  # two texts, one name: never let one stand for the other
                raise ValueError(f"two values share the name {name}")
            self._names[text], self._texts[name] = name, text
        return name

    def definitions(self, body: str) -> list[str]:
        """The definitions ``body`` names, directly or through one another, each before its uses."""
        needed: set[str] = set()
        pending = set(_SHARED_NAME.findall(body))
        while pending:
            name = pending.pop()
            if name not in needed and name in self._texts:
                needed.add(name)
                pending |= set(_SHARED_NAME.findall(self._texts[name]))
        return [f"{name} == {text}" for name, text in self._texts.items() if name in needed]


@functools.lru_cache(maxsize=4096)
def _field_name(key: str) -> bool:
    # Asked of every key of every value of every traced state: the keys are few.
    return bool(_FIELD_RE.fullmatch(key)) and key not in RESERVED and not key.startswith(("WF_", "SF_"))


def function_literal(entries: Mapping[str, str]) -> str:
    """A function from string keys to already-written TLA+ values.

    Written as a record when every key can be a field name: TLC treats a record and a function
    over the same strings as equal, and builds a record far faster than a chain of ``@@``.
    """
    if not entries:
        return "[sysmo_x \\in {} |-> 0]"
    if all(_field_name(k) for k in entries):
        return "[" + ", ".join(f"{k} |-> {v}" for k, v in sorted(entries.items())) + "]"
    return "(" + " @@ ".join(f"{tla_literal(k)} :> {v}" for k, v in sorted(entries.items())) + ")"


def record_literal(state: Mapping[str, Any], share: Shared | None = None) -> str:
    """A canonical state as a TLA+ record keyed by canonical variable name."""
    return "[" + ", ".join(f"{name} |-> {tla_literal(value, share)}" for name, value in sorted(state.items())) + "]"
