"""How a spec's own names relate to the task's canonical vocabulary.

Invariant templates (P4) and traces (P3) speak the task's canonical vocabulary; a spec
speaks its own.  A mapping is declarative data so it can be validated, printed in failure
messages, and read in both directions: canonical -> spec for P3 pre/post states, and
spec -> canonical (a TLA+ refinement mapping, used as INSTANCE substitutions) for P4.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping as TMapping

from .tasks import IDENTIFIER, Task, TaskError, _Fields, read_yaml
from .tla import modules


class MappingError(ValueError):
    """A mapping file is malformed or does not fit the spec."""


@dataclass(frozen=True)
class VariableMap:
    canonical: str
    var: str | None = None
    expr: str | None = None
    shape: str = "scalar"  # "scalar" | "function"
    values: tuple[tuple[str, str], ...] = ()  # (canonical value text, spec value text), both TLA+

    def spec_to_canonical(self) -> str:
        """A TLA+ expression over the spec's names giving the canonical variable's value."""
        if self.expr is not None:
            return f"({self.expr})"
        assert self.var is not None
        if not self.values:
            return self.var
        if self.shape == "function":
            return f"[sysmo_x \\in DOMAIN {self.var} |-> {self._translate(f'{self.var}[sysmo_x]')}]"
        return self._translate(self.var)

    def _translate(self, term: str) -> str:
        arms = " [] ".join(f"{term} = {spec} -> {canon}" for canon, spec in self.values)
        return f"(CASE {arms} [] OTHER -> {term})"

    def canonical_to_spec(self, value: Any) -> str:
        """The spec variable's value (TLA+ text) for a canonical value read from a trace."""
        table = dict(self.values)
        if self.shape == "function" and isinstance(value, dict):
            return function_literal({k: table.get(tla_literal(v), tla_literal(v)) for k, v in value.items()})
        text = tla_literal(value)
        return table.get(text, text)

    def describe(self) -> str:
        if self.expr is not None:
            return f"{self.canonical} <- {self.expr}"
        values = ", ".join(f"{c}->{s}" for c, s in self.values)
        suffix = f" ({self.shape}; {values})" if values else ""
        return f"{self.canonical} <- {self.var}{suffix}"


@dataclass(frozen=True)
class Mapping:
    constants: tuple[tuple[str, str], ...]
    variables: tuple[VariableMap, ...]
    actions: tuple[tuple[str, str], ...]
    identity: bool = False
    source: str = ""
    auxiliary: tuple[tuple[str, str], ...] = ()  # spec variable -> TLA+ set of values to start from (P3)

    def substitutions(self) -> str:
        """The WITH clause of an INSTANCE of the canonical module inside the spec."""
        subs = [f"{name} <- {expr}" for name, expr in self.constants]
        subs += [f"{v.canonical} <- {v.spec_to_canonical()}" for v in self.variables]
        return ",\n    ".join(subs)

    def describe(self) -> str:
        if self.identity:
            return "identity mapping (the spec uses the canonical names)"
        parts = [f"{n} <- {e}" for n, e in self.constants] + [v.describe() for v in self.variables]
        return "; ".join(parts)

    def spec_action(self, canonical: str) -> str:
        return dict(self.actions).get(canonical, canonical)


SET_TAG = "$set"


def tla_literal(value: Any) -> str:
    """JSON trace values as TLA+: objects are functions over their (string) keys, lists are tuples.

    JSON has no sets, so ``{"$set": [...]}`` stands for the TLA+ set of its items (order and
    repeats ignored): a network of in-flight messages or a set of granted votes is a set.
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "<<" + ", ".join(tla_literal(v) for v in value) + ">>"
    if isinstance(value, dict):
        if set(value) == {SET_TAG} and isinstance(value[SET_TAG], list):
            return "{" + ", ".join(sorted({tla_literal(v) for v in value[SET_TAG]})) + "}"
        return function_literal({k: tla_literal(v) for k, v in value.items()})
    raise ValueError(f"no TLA+ reading for {type(value).__name__} value {value!r}")


def function_literal(entries: TMapping[str, str]) -> str:
    """A function from string keys to already-written TLA+ values."""
    if not entries:
        return "[sysmo_x \\in {} |-> 0]"
    return "(" + " @@ ".join(f"{tla_literal(k)} :> {v}" for k, v in sorted(entries.items())) + ")"


def _literal(value: Any) -> str:
    """Canonical values are written plainly in YAML; text that already reads as a TLA+ literal stays."""
    text = str(value)
    if isinstance(value, str) and (text.startswith('"') or text in ("TRUE", "FALSE") or text.lstrip("-").isdigit()):
        return text
    return tla_literal(value)


def _variable(canonical: str, raw: Any, where: str) -> VariableMap:
    if isinstance(raw, str):
        raw = {"var": raw}
    fields = _Fields(raw, where)
    var = fields.str("var", "") or None
    expr = fields.str("expr", "") or None
    if (var is None) == (expr is None):
        raise MappingError(f"{where}: give exactly one of 'var' or 'expr'")
    if var is not None and not IDENTIFIER.match(var):
        raise MappingError(f"{where}.var: {var!r} is not a TLA+ identifier")
    shape = fields.str("shape", "scalar")
    if shape not in ("scalar", "function"):
        raise MappingError(f"{where}.shape: expected 'scalar' or 'function', got {shape!r}")
    values_raw = fields.data.get("values") or {}
    if not isinstance(values_raw, TMapping):
        raise MappingError(f"{where}.values: expected a mapping of canonical value -> spec value")
    try:
        values = tuple((_literal(k), str(v) if isinstance(v, str) else _literal(v)) for k, v in values_raw.items())
    except ValueError as exc:
        raise MappingError(f"{where}.values: {exc}") from exc
    return VariableMap(canonical, var, expr, shape, values)


def load_mapping(path: Path, task: Task) -> Mapping:
    try:
        data = read_yaml(path)
    except TaskError as exc:
        raise MappingError(str(exc)) from exc
    return mapping_from_data(data, task, str(path))


def mapping_from_data(data: Any, task: Task, path: str) -> Mapping:
    """A mapping from already-parsed YAML or JSON (a file, or an evaluator model's answer)."""
    try:
        fields = _Fields(data, path)
    except TaskError as exc:
        raise MappingError(str(exc)) from exc
    canonical_vars = {v.name for v in task.vocabulary.variables}
    canonical_consts = {c.name for c in task.vocabulary.constants}
    variables_raw = fields.data.get("variables") or {}
    constants_raw = fields.data.get("constants") or {}
    actions_raw = fields.data.get("actions") or {}
    for name in variables_raw:
        if name not in canonical_vars:
            raise MappingError(f"{path}: variables.{name} is not a canonical variable of task {task.name}")
    missing = sorted(canonical_vars - set(variables_raw))
    if missing:
        raise MappingError(f"{path}: no mapping for canonical variable(s) {', '.join(missing)}")
    for name in constants_raw:
        if name not in canonical_consts:
            raise MappingError(f"{path}: constants.{name} is not a canonical constant of task {task.name}")
    variables = tuple(_variable(str(n), r, f"{path}: variables.{n}") for n, r in variables_raw.items())
    constants = tuple((str(n), str(e)) for n, e in constants_raw.items())
    constants += tuple((c, c) for c in sorted(canonical_consts - set(constants_raw)))
    actions = []
    for name, raw in actions_raw.items():
        target = raw.get("action") if isinstance(raw, TMapping) else raw
        if not isinstance(target, str) or not IDENTIFIER.match(target):
            raise MappingError(f"{path}: actions.{name} must name a spec action operator")
        actions.append((str(name), target))
    auxiliary_raw = fields.data.get("auxiliary") or {}
    if not isinstance(auxiliary_raw, TMapping):
        raise MappingError(f"{path}: auxiliary must map spec variables to TLA+ sets of start values")
    auxiliary = []
    for name, values in auxiliary_raw.items():
        if not IDENTIFIER.match(str(name)):
            raise MappingError(f"{path}: auxiliary.{name} is not a TLA+ identifier")
        auxiliary.append((str(name), str(values)))
    return Mapping(constants, variables, tuple(actions), identity=False, source=path, auxiliary=tuple(auxiliary))


@dataclass(frozen=True)
class IdentityCheck:
    mapping: Mapping | None
    missing: tuple[str, ...] = field(default_factory=tuple)


def identity_mapping(task: Task, spec_text: str) -> IdentityCheck:
    """The identity mapping applies only when the spec declares every canonical name."""
    constants, variables = modules.declared(spec_text)
    defined = {u.name for u in modules.top_level_units(spec_text)}
    missing = [v.name for v in task.vocabulary.variables if v.name not in variables]
    missing += [c.name for c in task.vocabulary.constants if c.name not in constants and c.name not in defined]
    if missing:
        return IdentityCheck(None, tuple(missing))
    return IdentityCheck(
        Mapping(
            constants=tuple((c.name, c.name) for c in task.vocabulary.constants),
            variables=tuple(VariableMap(v.name, var=v.name) for v in task.vocabulary.variables),
            actions=tuple((a.name, a.name) for a in task.vocabulary.actions),
            identity=True,
            source="identity",
        )
    )
