"""How a spec's own names relate to the task's canonical vocabulary.

Invariant templates (P4) and traces (P3) speak the task's canonical vocabulary; a spec
speaks its own.  A mapping is declarative data so it can be validated, printed in failure
messages, and read in both directions: canonical -> spec for P3 pre/post states, and
spec -> canonical (a TLA+ refinement mapping, used as INSTANCE substitutions) for P4.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping as TMapping

import yaml

from . import untrusted_yaml
from .tasks import IDENTIFIER, Task, enumerated_values
from .tla.values import Shared, function_literal, tla_literal
from .tla.expressions import ExpressionError, check_expression


class MappingError(ValueError):
    """A mapping file is malformed or does not fit the spec."""


@dataclass(frozen=True)
class VariableMap:
    """A canonical variable in terms of the spec (how P4 reads the spec): a spec variable (``var``, read
    through an optional value table) or an expression over the spec's names (``expr``)."""

    canonical: str
    var: str | None = None
    expr: str | None = None
    shape: str = "scalar"  # "scalar" | "function"
    values: tuple[tuple[str, str], ...] = ()  # (canonical value text, spec value text), both TLA+
    #: ``expr`` is what a spec state shows of a history (the messages in flight of a spec whose
    #: channels consume them); the canonical value is its union over the run so far.
    history: bool = False

    @property
    def history_variable(self) -> str:
        """The variable the generated modules keep the history in."""
        return f"sysmo_hist_{self.canonical}"

    def reading(self) -> str:
        """What the canonical variable is, read in a state of the spec run P4 checks."""
        return self.history_variable if self.history else self.spec_to_canonical()

    @property
    def computed(self) -> bool:
        """Its value is built from the spec's state (not one of the run's variables as it is)."""
        return self.reading() not in (self.var, self.history_variable)

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
        arms = " [] ".join(f"{term} = ({spec}) -> ({canon})" for canon, spec in self.values)
        return f"(CASE {arms} [] OTHER -> {term})"

    def canonical_to_spec(self, value: Any, share: Shared | None = None) -> str:
        """The spec variable's value (TLA+ text) for a canonical value read from a trace."""
        table = {canon: f"({spec})" for canon, spec in self.values}

        def written(item: Any) -> str:
            text = tla_literal(item) if table or share is None else None
            if text is not None and (text in table or share is None):
                return table.get(text, text)
            return tla_literal(item, share)

        if self.shape == "function" and isinstance(value, dict):
            text = function_literal({k: written(v) for k, v in value.items()})
            return share(text) if share is not None else text
        return written(value)

    def describe(self) -> str:
        if self.history:
            return f"{self.canonical} <- every value ever in {self.expr}"
        if self.expr is not None:
            return f"{self.canonical} <- {self.expr}"
        values = ", ".join(f"{c}->{s}" for c, s in self.values)
        suffix = f" ({self.shape}; {values})" if values else ""
        return f"{self.canonical} <- {self.var}{suffix}"


@dataclass(frozen=True)
class SpecState:
    """P3: how one spec variable's value follows from a canonical state of a trace.

    ``eq`` is a TLA+ expression giving the value; ``among`` a set of candidate values (the
    check tries each); ``translate`` reads one canonical variable through a value table (v1's
    ``var``).  Expressions see the window's canonical state as the record ``canon``.
    """

    var: str
    eq: str | None = None
    among: str | None = None
    translate: VariableMap | None = None

    def describe(self) -> str:
        if self.translate is not None:
            return f"{self.var} <- {self.translate.canonical}" + (" (value table)" if self.translate.values else "")
        return f"{self.var} = {self.eq}" if self.eq is not None else f"{self.var} \\in {self.among}"


@dataclass(frozen=True)
class ActionCall:
    """One spec action a canonical step may be: ``\\E bound \\in set : action(args)``."""

    action: str
    args: tuple[str, ...] | None = None  # None: the canonical parameters, in order
    exists: tuple[tuple[str, str], ...] = ()
    #: A step that changes nothing, taken where this condition (over the spec's state and the
    #: canonical parameters) holds: a failed non-blocking call in a spec whose threads wait instead.
    stutter: str | None = None

    @property
    def operator(self) -> str | None:
        """The spec operator the call takes (none for a stutter)."""
        return None if self.stutter is not None else self.action

    def describe(self) -> str:
        if self.stutter is not None:
            return f"a step that changes nothing where {self.stutter}"
        call = self.action + (f"({', '.join(self.args)})" if self.args else "")
        bound = ", ".join(f"{n} \\in {s}" for n, s in self.exists)
        return f"\\E {bound} : {call}" if bound else call


@dataclass(frozen=True)
class ActionMap:
    """A canonical action as one or more spec actions (a disjunction), with up to
    ``before``/``after`` internal (unobserved) spec steps around it."""

    canonical: str
    calls: tuple[ActionCall, ...]
    before: int = 0
    after: int = 0

    def operators(self) -> set[str]:
        """The spec operators that stand for the canonical action."""
        return {c.operator for c in self.calls if c.operator is not None}

    def describe(self) -> str:
        text = " \\/ ".join(c.describe() for c in self.calls)
        around = f" (internal steps: {self.before} before, {self.after} after)" if self.before or self.after else ""
        return f"{self.canonical} -> {text}{around}"


@dataclass(frozen=True)
class Mapping:
    constants: tuple[tuple[str, str], ...]
    variables: tuple[VariableMap, ...]
    actions: tuple[ActionMap, ...]
    identity: bool = False
    source: str = ""
    state: tuple[SpecState, ...] = ()  # P3: spec variable <- canonical state
    internal: tuple[ActionCall, ...] = ()  # spec actions that may take unobserved steps
    version: int = 1
    #: Canonical variables the spec does not model (listed under ``unmodelled``, or left out):
    #: P3 judges the windows on the others, and a P4 template that reads one fails.
    unmodelled: tuple[str, ...] = ()
    #: P3: spec constants outside the canonical vocabulary, as expressions over the canonical
    #: constants, so they follow each trace's values (``NumProcs: Cardinality(Threads)``).
    spec_constants: tuple[tuple[str, str], ...] = ()
    #: Canonical actions the spec does not have, though it may define an operator of the same
    #: name (its own ``TryRead`` a blocking request): no operator is taken for them.
    absent: tuple[str, ...] = ()
    #: Record fields a mapped canonical variable holds that the spec's values lack
    #: (``unmodelled: [messages.lastLog]``): every reading of the variable is compared with the
    #: field taken out of each record in it, at any depth.
    unmodelled_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def stripped(self, canonical: str) -> tuple[str, ...]:
        """The fields a canonical variable's readings are compared without."""
        return next((f for v, f in self.unmodelled_fields if v == canonical), ())

    @property
    def left_out(self) -> tuple[str, ...]:
        """Every field left out, as the mapping names it (``messages.lastLog``)."""
        return tuple(f"{var}.{f}" for var, fields in self.unmodelled_fields for f in fields)

    def substitutions(self, given: TMapping[str, str] | None = None, every: bool = False) -> str:
        """The WITH clause of an INSTANCE of the canonical module inside the spec.  An unmodelled
        variable gets a value no template that is checked reads (those that read it are not).
        ``given`` substitutes a name (an instance parameter) for some canonical variables
        (``every``: for the unmodelled ones too)."""
        given = given or {}
        subs = [f"{name} <- ({expr})" for name, expr in self.constants]
        subs += [f"{v.canonical} <- {given.get(v.canonical) or v.reading()}" for v in self.variables]
        subs += [f"{name} <- {given[name]}" if every and name in given else f'{name} <- "{UNMODELLED}"'
                 for name in self.unmodelled]
        return ",\n    ".join(subs)

    def describe(self) -> str:
        if self.identity:
            return "identity mapping (the spec uses the canonical names)"
        parts = [f"{n} <- {e}" for n, e in self.constants] + [v.describe() for v in self.variables]
        parts += [f"{name} unmodelled" for name in self.unmodelled]
        parts += [f"{name} unmodelled" for name in self.left_out]
        parts += [f"{name} absent" for name in self.absent]
        parts += [s.describe() for s in self.state]
        parts += [a.describe() for a in self.actions if a.calls != (ActionCall(a.canonical),)]
        return "; ".join(parts)

    def histories(self) -> tuple[VariableMap, ...]:
        return tuple(v for v in self.variables if v.history)

    def action(self, canonical: str) -> ActionMap:
        """How the spec takes a canonical action: as mapped, by its operator of the same name
        when not mapped, and by no operator when declared absent (no calls)."""
        if canonical in self.absent:
            return ActionMap(canonical, ())
        found = next((a for a in self.actions if a.canonical == canonical), None)
        return found or ActionMap(canonical, (ActionCall(canonical),))

    def spec_state(self) -> tuple[SpecState, ...]:
        """Every spec variable P3 sets from a canonical state: the ``state`` entries, and each
        spec variable that a canonical one maps onto directly (``var``)."""
        given = {s.var for s in self.state}
        direct = tuple(SpecState(v.var, translate=v) for v in self.variables
                       if v.var is not None and v.var not in given)
        return direct + self.state

    def filters(self) -> tuple[VariableMap, ...]:
        """Canonical variables that the bound spec state must map back to (checked after binding):
        all but those a direct ``var`` entry already sets."""
        direct = {s.var for s in self.spec_state() if s.translate is not None}
        return tuple(v for v in self.variables if not (v.var is not None and v.var in direct))

    @property
    def needs_check(self) -> bool:
        """Whether the mapping can disagree with itself (and is checked against the traces)."""
        return not self.identity and bool(self.state or self.filters())


def _literal(value: Any) -> str:
    """Canonical values are written plainly in YAML; text that already reads as a TLA+ literal stays."""
    text = str(value)
    if isinstance(value, str) and (text.startswith('"') or text in ("TRUE", "FALSE") or text.lstrip("-").isdigit()):
        return check_expression(text)
    return tla_literal(value)


def _expression(raw: Any, where: str) -> str:
    if isinstance(raw, bool):
        raw = "TRUE" if raw else "FALSE"
    elif isinstance(raw, int):
        raw = str(raw)
    try:
        return check_expression(raw)
    except ExpressionError as exc:
        raise MappingError(f"{where}: {exc}") from exc


def _identifier(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not IDENTIFIER.match(raw):
        raise MappingError(f"{where}: {raw!r} is not a TLA+ identifier")
    return raw


def _mapping_of(raw: Any, where: str) -> TMapping[Any, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, TMapping):
        raise MappingError(f"{where}: expected a mapping, got {type(raw).__name__}")
    return raw


def _unknown(fields: TMapping[Any, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(map(str, fields)) - known)
    if unknown:
        raise MappingError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")


def _variable(canonical: str, raw: Any, where: str, task: Task) -> VariableMap:
    if isinstance(raw, str):
        raw = {"var": raw}
    fields = _mapping_of(raw, where)
    _unknown(fields, {"var", "expr", "history", "shape", "values"}, where)
    var = _identifier(fields["var"], f"{where}.var") if fields.get("var") is not None else None
    expr = _expression(fields["expr"], f"{where}.expr") if fields.get("expr") is not None else None
    history = fields.get("history") is not None
    if history:
        expr = _expression(fields["history"], f"{where}.history")
        _history_type(canonical, where, task)
    if sum(x is not None for x in (var, fields.get("expr"), fields.get("history"))) != 1:
        raise MappingError(f"{where}: give exactly one of 'var', 'expr' or 'history'")
    if history and (fields.get("values") or fields.get("shape")):
        raise MappingError(f"{where}: a 'history' entry takes no 'values' or 'shape'")
    shape = fields.get("shape", "scalar")
    if shape not in ("scalar", "function"):
        raise MappingError(f"{where}.shape: expected 'scalar' or 'function', got {shape!r}")
    try:
        values = tuple((_literal(k), _expression(v, f"{where}.values.{k}"))
                       for k, v in _mapping_of(fields.get("values"), f"{where}.values").items())
    except (ValueError, ExpressionError) as exc:
        raise MappingError(f"{where}.values: {exc}") from exc
    _check_value_types(canonical, values, shape, where, task)
    return VariableMap(canonical, var, expr, shape, values, history)


def _history_type(canonical: str, where: str, task: Task) -> None:
    """A history is a set that only grows: only a canonical variable of a set type can be one."""
    declared = next((v.type for v in task.vocabulary.variables if v.name == canonical), "")
    if not declared.strip().startswith("SUBSET"):
        raise MappingError(f"{where}.history: {canonical} is not a set (type {declared}); "
                           "only a set of everything seen so far can be read as a history")


def _check_value_types(canonical: str, values: tuple[tuple[str, str], ...], shape: str, where: str, task: Task) -> None:
    """A value table's canonical side must hold values of the canonical variable's type."""
    declared = next((v.type for v in task.vocabulary.variables if v.name == canonical), "")
    allowed = enumerated_values(declared, shape) if values else None
    for canon, _ in values if allowed is not None else ():
        if canon not in allowed:
            raise MappingError(f"{where}.values: {canon} is not a value of {canonical} "
                               f"(type {declared}: {', '.join(sorted(allowed))})")


def _spec_state(var: str, raw: Any, where: str) -> SpecState:
    _identifier(var, where)
    if isinstance(raw, str):
        return SpecState(var, eq=_expression(raw, where))
    fields = _mapping_of(raw, where)
    _unknown(fields, {"eq", "in"}, where)
    if len(fields) != 1:
        raise MappingError(f"{where}: give exactly one of 'eq' (an expression) or 'in' (a set of candidates)")
    if "eq" in fields:
        return SpecState(var, eq=_expression(fields["eq"], f"{where}.eq"))
    return SpecState(var, among=_expression(fields["in"], f"{where}.in"))


def _call(raw: Any, where: str, params: tuple[str, ...], stutter: bool = True) -> ActionCall:
    if isinstance(raw, str):
        return ActionCall(_identifier(raw, where))
    fields = _mapping_of(raw, where)
    if "stutter" in fields and stutter:
        _unknown(fields, {"stutter"}, where)
        return ActionCall("", stutter=_expression(fields["stutter"], f"{where}.stutter"))
    _unknown(fields, {"action", "args", "exists"}, where)
    action = _identifier(fields.get("action"), f"{where}.action")
    args_raw = fields.get("args")
    if args_raw is not None and not isinstance(args_raw, list):
        raise MappingError(f"{where}.args: expected a list of TLA+ expressions")
    args = None if args_raw is None else tuple(_expression(a, f"{where}.args[{k}]") for k, a in enumerate(args_raw))
    exists = []
    for name, values in _mapping_of(fields.get("exists"), f"{where}.exists").items():
        bound = _identifier(name, f"{where}.exists")
        if bound in params or bound == CANON:
            raise MappingError(f"{where}.exists.{bound}: the name is taken (a canonical parameter, or {CANON})")
        exists.append((bound, _expression(values, f"{where}.exists.{bound}")))
    return ActionCall(action, args, tuple(exists))


def _steps(raw: Any, where: str, most: int) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= most:
        raise MappingError(f"{where}: expected a number of internal steps from 0 to {most} (the task's "
                           f"phases.conformance.max_internal_steps), got {raw!r}")
    return raw


def _action(name: str, raw: Any, where: str, params: tuple[str, ...], most: int) -> ActionMap:
    """``Name``, ``{action, args, exists}``, a list of those (a disjunction), or
    ``{any: [...], before: k, after: k}``."""
    before = after = 0
    if isinstance(raw, TMapping) and {"any", "before", "after"} & set(map(str, raw)):
        _unknown(raw, {"any", "before", "after", "action", "args", "exists"}, where)
        before, after = _steps(raw.get("before"), f"{where}.before", most), _steps(raw.get("after"), f"{where}.after", most)
        raw = raw["any"] if "any" in raw else {k: v for k, v in raw.items() if k in ("action", "args", "exists")}
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise MappingError(f"{where}: names no spec action")
    calls = tuple(_call(item, f"{where}[{k}]" if isinstance(raw, list) else where, params)
                  for k, item in enumerate(items))
    return ActionMap(name, calls, before, after)


#: The name under which mapping expressions see the window's canonical state.
CANON = "canon"
MAX_MAPPING_BYTES = 256_000


def load_mapping(path: Path, task: Task) -> Mapping:
    try:
        size = path.stat().st_size
        if size > MAX_MAPPING_BYTES:
            raise MappingError(f"{path}: {size:,} bytes, over the {MAX_MAPPING_BYTES:,}-byte limit for a mapping")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MappingError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = untrusted_yaml.load(text)
    except untrusted_yaml.AliasRefused as exc:
        raise MappingError(f"{path}: YAML aliases are not allowed in a mapping (line {exc.line})") from exc
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise MappingError(f"{path}: invalid YAML{where}: {getattr(exc, 'problem', None) or type(exc).__name__}") from exc
    return mapping_from_data(data, task, str(path))


_TOP_LEVEL = {"version", "constants", "spec_constants", "variables", "actions", "state", "internal", "auxiliary",
              "unmodelled", "absent"}
#: What an unmodelled canonical variable stands for in the generated modules.
UNMODELLED = "sysmo: unmodelled"


def mapping_from_data(data: Any, task: Task, path: str) -> Mapping:
    """A mapping from already-parsed YAML or JSON (a file, or an evaluator model's answer).

    Version 1 gives canonical variables and actions in terms of the spec (``var``/``expr``,
    ``action``, ``auxiliary``); version 2 adds ``state`` (each spec variable from the canonical
    state), actions with arguments, alternatives and internal steps, and ``internal``.  Every
    expression is screened before use; errors name the file and the field.
    """
    where = f"{path}:"
    fields = _mapping_of(data, f"{where} the top level")
    _unknown(fields, _TOP_LEVEL, where)
    version = fields.get("version", 1)
    if version not in (1, 2) or isinstance(version, bool):
        raise MappingError(f"{where} version must be 1 or 2, got {version!r}")
    canonical_vars = {v.name for v in task.vocabulary.variables}
    canonical_consts = {c.name for c in task.vocabulary.constants}
    params = {a.name: a.params for a in task.vocabulary.actions}
    variables_raw = _mapping_of(fields.get("variables"), f"{where} variables")
    constants_raw = _mapping_of(fields.get("constants"), f"{where} constants")
    for name in variables_raw:
        if name not in canonical_vars:
            raise MappingError(f"{where} variables.{name} is not a canonical variable of task {task.name}")
    listed = fields.get("unmodelled")
    unmodelled_fields = _unmodelled_fields(listed, where, variables_raw)
    if isinstance(listed, list):
        listed = [n for n in listed if not (isinstance(n, str) and "." in n)]
    unmodelled = _canonical_names(listed, where, "unmodelled", canonical_vars, set(variables_raw),
                                  "variable", "the spec does not model", "variables")
    # Left out is unmodelled too; the list says so on purpose (and the board shows both alike).
    unmodelled += tuple(sorted(canonical_vars - set(variables_raw) - set(unmodelled)))
    for name in constants_raw:
        if name not in canonical_consts:
            raise MappingError(f"{where} constants.{name} is not a canonical constant of task {task.name}")
    variables = tuple(_variable(str(n), r, f"{where} variables.{n}", task) for n, r in variables_raw.items())
    constants = tuple((str(n), _expression(e, f"{where} constants.{n}")) for n, e in constants_raw.items())
    constants += tuple((c, c) for c in sorted(canonical_consts - set(constants_raw)))
    actions = []
    for name, raw in _mapping_of(fields.get("actions"), f"{where} actions").items():
        if name not in params:
            raise MappingError(f"{where} actions.{name} is not a canonical action of task {task.name}")
        actions.append(_action(str(name), raw, f"{where} actions.{name}", params[name],
                               task.conformance.max_internal_steps))
    absent = _canonical_names(fields.get("absent"), where, "absent", params, {a.canonical for a in actions},
                              "action", "the spec does not have", "actions")
    state = [_spec_state(str(n), r, f"{where} state.{n}")
             for n, r in _mapping_of(fields.get("state"), f"{where} state").items()]
    for name, values in _mapping_of(fields.get("auxiliary"), f"{where} auxiliary").items():
        state.append(SpecState(_identifier(name, f"{where} auxiliary"), among=_expression(values, f"{where} auxiliary.{name}")))
    if len({s.var for s in state}) != len(state):
        raise MappingError(f"{where} a spec variable is given twice under state/auxiliary")
    internal_raw = fields.get("internal") or []
    if not isinstance(internal_raw, list):
        raise MappingError(f"{where} internal must be a list of spec actions")
    internal = tuple(_call(item, f"{where} internal[{k}]", (), stutter=False) for k, item in enumerate(internal_raw))
    if any(a.before or a.after for a in actions) and not internal:
        raise MappingError(f"{where} an action allows internal steps but 'internal' names no spec action for them")
    spec_constants = tuple((_identifier(n, f"{where} spec_constants"), _expression(e, f"{where} spec_constants.{n}"))
                           for n, e in _mapping_of(fields.get("spec_constants"), f"{where} spec_constants").items())
    return Mapping(constants, variables, tuple(actions), identity=False, source=path, state=tuple(state),
                   internal=internal, version=int(version), unmodelled=unmodelled, spec_constants=spec_constants,
                   absent=absent, unmodelled_fields=unmodelled_fields)


def _unmodelled_fields(raw: Any, where: str, mapped: TMapping[Any, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The ``variable.field`` entries of ``unmodelled``: a record field the spec's values of a
    mapped variable lack (raft.tla's answers carry no ``lastLog``)."""
    if not isinstance(raw, list):
        return ()
    found: dict[str, list[str]] = {}
    for k, entry in enumerate(raw):
        if not isinstance(entry, str) or "." not in entry:
            continue
        var, _, name = entry.partition(".")
        if var not in mapped:
            raise MappingError(f"{where} unmodelled[{k}]: {entry!r:.80}: {var!r:.40} is not a canonical variable "
                               "mapped under variables (a field can be left out only of a variable the spec models)")
        if not IDENTIFIER.fullmatch(name):
            raise MappingError(f"{where} unmodelled[{k}]: {entry!r:.80}: {name!r:.40} is not a record field name")
        found.setdefault(var, [])
        if name not in found[var]:
            found[var].append(name)
    return tuple((var, tuple(names)) for var, names in found.items())


def _canonical_names(raw: Any, where: str, field: str, known: Iterable[str], mapped: set[str], kind: str,
                     means: str, section: str) -> tuple[str, ...]:
    """A list of canonical names (``unmodelled`` variables, ``absent`` actions), each one the task
    has and none also mapped under ``section``."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise MappingError(f"{where} {field}: expected a list of canonical {kind}s {means}")
    names = []
    for k, name in enumerate(raw):
        if not isinstance(name, str) or name not in known:
            raise MappingError(f"{where} {field}[{k}]: {name!r:.80} is not a canonical {kind}")
        if name in mapped:
            raise MappingError(f"{where} {field}[{k}]: {name} is also mapped under {section}")
        names.append(str(name))
    return tuple(dict.fromkeys(names))
