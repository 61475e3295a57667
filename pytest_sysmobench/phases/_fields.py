"""Record fields a spec leaves out (``unmodelled: [messages.lastLog]``).

A raft.tla-style spec's answers carry no ``lastLog``, where the task's messages do: without a
way to say so, no state with such a message in flight could be represented, whatever the spec
does.  A canonical variable with fields left out is compared with them taken out of every record
in its value, at any depth: in Python for the traced states (P3's windows, P4's traced readings),
and in TLA+ for the states a check reads (the mapping's round trip, the reference's readings in
the extra-step check).  TLA+ cannot ask a value whether it is a record, so the TLA+ side follows
the shape the traces show the variable's values to have (a set of records, a function to
sequences of records, ...).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..mapping import Mapping
from ..tla.values import SET_TAG

#: A shape: None (nothing below to take out), ("set" | "seq", item shape) or
#: ("map", fields taken out here, ((key, shape), ...) for the keys with something below, every
#: key seen).
Shape = Any


def strip(value: Any, fields: Sequence[str]) -> Any:
    """A trace value (JSON) with ``fields`` taken out of every record in it."""
    if not fields:
        return value
    if isinstance(value, list):
        return [strip(v, fields) for v in value]
    if isinstance(value, dict):
        if set(value) == {SET_TAG} and isinstance(value[SET_TAG], list):
            return {SET_TAG: [strip(v, fields) for v in value[SET_TAG]]}
        return {k: strip(v, fields) for k, v in value.items() if k not in fields}
    return value


def stripped_state(state: dict[str, Any] | Any, mapping: Mapping) -> Any:
    """A canonical state with each variable's left-out fields taken out."""
    if not mapping.unmodelled_fields:
        return state
    return {k: strip(v, mapping.stripped(k)) for k, v in state.items()}


def writes_left_out(before: Any, after: Any, fields: Sequence[str]) -> bool:
    """Whether a step writes what the spec leaves out of a variable: a record it adds carries a
    left-out field with a value other than zero (0, FALSE, "", empty), or the variable changed in
    those fields alone.  The spec cannot show that part of the step, as it cannot show a change
    to a variable it does not model: its window fails, or leaving out a field the spec gets wrong
    would raise its score."""
    if not fields or before == after:
        return False
    if strip(before, fields) == strip(after, fields):
        return True
    old = {_key(r) for r in _records(before, fields)}
    return any(_key(r) not in old and any(not _zero(r[f]) for f in fields if f in r)
               for r in _records(after, fields))


def _records(value: Any, fields: Sequence[str]) -> list[dict[str, Any]]:
    """The records in a value that carry a left-out field."""
    if isinstance(value, list):
        return [r for v in value for r in _records(v, fields)]
    if isinstance(value, dict):
        if set(value) == {SET_TAG} and isinstance(value[SET_TAG], list):
            return [r for v in value[SET_TAG] for r in _records(v, fields)]
        own = [value] if any(f in value for f in fields) else []
        return own + [r for v in value.values() for r in _records(v, fields)]
    return []


def _key(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, default=repr)


def _zero(value: Any) -> bool:
    return value in (0, False, "", [], {}) or value == {SET_TAG: []}


def shape_of(values: Iterable[Any], fields: Sequence[str]) -> Shape:
    """The shape of a variable's values, as far as it leads to records with ``fields``."""
    shape: Shape = None
    for value in values:
        shape = _merge(shape, _shape(value, frozenset(fields)))
    return shape


def _shape(value: Any, fields: frozenset[str]) -> Shape:
    if isinstance(value, list):
        inner = shape_of(value, fields)
        return ("seq", inner) if inner is not None else None
    if isinstance(value, dict):
        if set(value) == {SET_TAG} and isinstance(value[SET_TAG], list):
            inner = shape_of(value[SET_TAG], fields)
            return ("set", inner) if inner is not None else None
        dropped = frozenset(value) & fields
        below = {k: s for k, v in value.items() if k not in fields and (s := _shape(v, fields)) is not None}
        return ("map", dropped, tuple(sorted(below.items())), frozenset(value)) if dropped or below else None
    return None


def _merge(a: Shape, b: Shape) -> Shape:
    if a is None or b is None:
        return a if b is None else b
    if a[0] != b[0]:
        raise ValueError(f"values of two shapes ({a[0]} and {b[0]}) hold the fields left out")
    if a[0] in ("set", "seq"):
        return (a[0], _merge(a[1], b[1]))
    below = dict(a[2])
    for key, shape in b[2]:
        below[key] = _merge(below.get(key), shape)
    return ("map", a[1] | b[1], tuple(sorted(below.items())), a[3] | b[3])


def expression(shape: Shape, value: str, depth: int = 0) -> str:
    """TLA+ for ``value`` with the fields taken out, following ``shape``."""
    if shape is None:
        return value
    x = f"sysmo_fx{depth}"
    if shape[0] == "set":
        return f"{{{expression(shape[1], x, depth + 1)} : {x} \\in {value}}}"
    if shape[0] == "seq":
        return f"[{x} \\in DOMAIN {value} |-> {expression(shape[1], f'{value}[{x}]', depth + 1)}]"
    _, dropped, below, seen = shape
    keys = f"DOMAIN {value}" + (f" \\ {{{', '.join(_string(f) for f in sorted(dropped))}}}" if dropped else "")
    item = f"{value}[{x}]"
    shapes = {s for _, s in below}
    if len(shapes) == 1 and {k for k, _ in below} == seen - dropped:
        # Every key holds values of one shape: a function (each server's messages), so a key
        # the traces never filled is read the same way.
        item = expression(next(iter(shapes)), item, depth + 1)
    elif below:
        arms = [f"{x} = {_string(k)} -> {expression(s, item, depth + 1)}" for k, s in below]
        item = "(CASE " + " [] ".join([*arms, f"OTHER -> {item}"]) + ")"
    return f"[{x} \\in {keys} |-> {item}]"


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def operator_name(canonical: str) -> str:
    return f"SysmoStrip_{canonical}"


def definitions(mapping: Mapping, states: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """``SysmoStrip_<variable>(x)`` for each variable with fields left out, shaped by the traced
    values of it (a value of no record the traces show has nothing to take out)."""
    listed = list(states)
    defs = []
    for var, fields in mapping.unmodelled_fields:
        shape = shape_of((s[var] for s in listed if var in s), fields)
        defs.append(f"{operator_name(var)}(sysmo_fv) ==\n    {expression(shape, 'sysmo_fv')}")
    return tuple(defs)


def read(mapping: Mapping, canonical: str, value: str) -> str:
    """A canonical variable's value as the spec's readings are compared with it."""
    return f"{operator_name(canonical)}({value})" if mapping.stripped(canonical) else value
