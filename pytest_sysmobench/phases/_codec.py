"""A mapping made executable: canonical states of the traces written as spec states in TLA+,
the spec variables a mapping leaves out started at their initial values, and the mapping
checked against every traced state before a phase trusts it.  P3 checks its windows through
it; P4 checks it before its templates judge the spec through the mapping.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping as TMapping, Sequence

from ..cache import digest
from ..mapping import CANON, ActionCall, ActionMap, Mapping
from ..tla import modules
from ..tla.cfg import Config, Section, bound_name
from ..tla.expressions import indented
from ..tla.grammar import rename_references
from ..tla.messages import TlcResult, Verdict
from ..tla.values import Shared, format_value, record_literal, tla_literal
from ..traces import Corpus
from . import _fields, _work
from ._context import CellContext

BUDGET_S = 60.0
#: A spec variable that the mapping leaves out starts each window at one of its initial values;
#: a spec with more initial values than this must map it.
MAX_DEFAULT_VALUES = 16


ORDERED_NAME = "SysmoOrdered"
#: For a mapping's ``state``: a set as the sequence a spec's FIFO channel keeps, in the order a
#: strict total order gives (``SysmoOrdered(S, LAMBDA a, b : a.round < b.round)``).  Two
#: elements the order does not tell apart make it fail, as an error in the mapping.
ORDERED = f"""{ORDERED_NAME}(S, Before(_, _)) ==
    [k \\in 1..Cardinality(S) |-> CHOOSE x \\in S : Cardinality({{y \\in S : Before(y, x)}}) = k - 1]"""


@dataclass(frozen=True)
class Observed:
    """One thing a reached state must show: what it is (a spec variable or a canonical one), the
    spec's side in the reached state, and the record's side it must equal (or lie within)."""

    what: str
    spec: str
    expected: str
    relation: str = "="

    @property
    def check(self) -> str:
        return f"{self.spec} {self.relation} {self.expected}"


class MappingProblem(Exception):
    """The mapping cannot be used at all with this spec (the submission's failure, scored 0)."""


@dataclass(frozen=True)
class Codec:
    """The spec side of a mapping: how a canonical state becomes spec states in TLA+.

    States are written as records (a field per directly translated spec variable, plus the
    canonical state itself under ``canon`` when an expression needs it), gathered in a tuple
    and indexed by window or step, so each check costs a constant number of evaluations
    however many windows there are.
    """

    mapping: Mapping
    spec_variables: tuple[str, ...]
    defaults: tuple[tuple[str, str], ...] = ()  # spec variable -> TLA+ set of its initial values
    #: Where the mapping came from when an evaluator model proposed it (its name and token use).
    provenance: TMapping[str, Any] = field(default_factory=dict)
    #: Definitions of the spec constants a mapping binds to the traces (``spec_constants``).
    constants: tuple[str, ...] = ()
    #: ``SysmoStrip_<variable>``: how a variable with record fields the spec leaves out is read.
    strips: tuple[str, ...] = ()
    #: How many distinct trace states the mapping was checked against.
    checked: int = 0
    #: Trace states (as record literals) with no spec state that maps back onto them, and why.
    lost: frozenset[str] = frozenset()
    lost_reason: str = ""
    _memo: dict[tuple[str, int], tuple[TMapping[str, Any], str]] = field(default_factory=dict, compare=False,
                                                                         repr=False)
    _written: dict[tuple[str, str], str] = field(default_factory=dict, compare=False, repr=False)
    #: The long values its states are written with, each written once in a module that uses it.
    shared: Shared = field(default_factory=Shared, compare=False, repr=False)

    @property
    def uses_canon(self) -> bool:
        m = self.mapping
        return bool(m.state or m.filters() or m.internal
                    or any(c.args is not None or c.exists or c.stutter is not None for a in m.actions for c in a.calls))

    def record(self, state: TMapping[str, Any]) -> str:
        # A state is written for the window before it, the window after it and its whole trace,
        # and the same state recurs in many traces: write it once (trace states live as long as
        # the corpus, so their ids are stable; equal states share their text by content).
        return self._once(state, "record", lambda: self.shared(self._record(state)))

    def canonical(self, state: TMapping[str, Any]) -> str:
        """A canonical state as a TLA+ record over the canonical variables (written once, as ``record``)."""
        return self._once(state, "canonical", lambda: record_literal(state, self.shared))

    def _once(self, state: TMapping[str, Any], kind: str, write: Callable[[], str]) -> str:
        memo = self._memo
        key = (kind, id(state))
        hit = memo.get(key)
        if hit is not None and hit[0] is state:
            return hit[1]
        content = (kind, json.dumps(state, sort_keys=True, default=repr))
        text = self._written.get(content)
        if text is None:
            text = self._written[content] = write()
        memo[key] = (state, text)
        return text

    def _record(self, state: TMapping[str, Any]) -> str:
        fields = [f"{s.var} |-> {s.translate.canonical_to_spec(self._seen(state, s.translate.canonical), self.shared)}"
                  for s in self.mapping.spec_state() if s.translate is not None]
        if self.uses_canon:
            fields.append(f"{CANON} |-> {record_literal(state, self.shared)}")
        return "[" + ", ".join(fields) + "]" if fields else "[sysmo_empty |-> TRUE]"

    def _seen(self, state: TMapping[str, Any], canonical: str) -> Any:
        return _fields.strip(state[canonical], self.mapping.stripped(canonical))

    def canon_reading(self, record: str, canonical: str) -> str:
        """What a spec state must read as for a canonical variable of the record's ``canon``
        (the fields the spec leaves out taken out)."""
        return _fields.read(self.mapping, canonical, f"{record}.{CANON}.{canonical}")

    def definitions(self) -> list[str]:
        defs = list(self.strips)
        for s in self.mapping.state:
            if s.eq is not None:
                defs.append(f"SysmoState_{s.var}({CANON}) ==\n{indented(s.eq)}")
            else:
                defs.append(f"SysmoAmong_{s.var}({CANON}) ==\n{indented(s.among or '{}')}")
        for f in self.mapping.filters():
            defs.append(f"SysmoAbs_{f.canonical} ==\n{indented(f.spec_to_canonical())}")
        for k, call in enumerate(self.mapping.internal):
            defs.append(call_definition(f"SysmoInternal_{k}", call, ()))
        helpers = [ORDERED] if any(ORDERED_NAME in d for d in defs) else []
        return [*self.constants, *helpers, *defs]

    def bind(self, record: str, primed: bool, before: str | None = None) -> list[str]:
        """Conjuncts that set the spec state from a record: direct values first, then
        expressions, then candidates and defaults, and only then the filters that read the bound
        state back (an expression is never evaluated before what it reads).

        Primed, they check a reached state, and only what can be observed: each canonical
        variable must read back from it (a direct value, or a filter). The ``state`` entries say
        how to *build* a spec state from a canonical one, which for a variable the traces cannot
        see (a ring slot's stale entry, a history variable) is one choice among many; a step
        that reaches another is still the step the system took.

        A canonical history (``history`` in the mapping) is read from what a spec state shows
        of it: a state may show only part of it, and a step, from the record ``before``, adds
        what the reached state shows."""
        if primed:
            return [seen.check for seen in self.observed(record, before)]
        parts = []
        for s in self.mapping.spec_state():
            if s.translate is not None:
                parts.append(f"{s.var} = {record}.{s.var}")
            elif s.eq is not None:
                parts.append(f"{s.var} = SysmoState_{s.var}({record}.{CANON})")
        parts += [f"{s.var} \\in SysmoAmong_{s.var}({record}.{CANON})" for s in self.mapping.state if s.among]
        parts += [f"{var} \\in {values}" for var, values in self.defaults]
        for f in self.mapping.filters():
            seen = self.canon_reading(record, f.canonical)
            relation = "\\subseteq" if f.history else "="
            parts.append(f"SysmoAbs_{f.canonical} {relation} {seen}")
        return parts

    def observed(self, record: str, before: str | None = None) -> list[Observed]:
        """What a reached state must show, one item per thing observed."""
        items = []
        for s in self.mapping.spec_state():
            if s.translate is not None:
                items.append(Observed(s.var, f"{s.var}'", f"{record}.{s.var}"))
        for f in self.mapping.filters():
            seen = self.canon_reading(record, f.canonical)
            if not f.history:
                items.append(Observed(f.canonical, f"SysmoAbs_{f.canonical}'", seen))
            elif before is not None:
                items.append(Observed(f.canonical, f"{self.canon_reading(before, f.canonical)} \\cup SysmoAbs_{f.canonical}'",
                                      seen))
            else:
                items.append(Observed(f.canonical, f"SysmoAbs_{f.canonical}'", seen, "\\subseteq"))
        return items

    def assigned(self, record: str) -> list[str]:
        """The reached state's directly mapped spec variables, set from the record *before* the
        spec's step is evaluated.  They are the same equalities ``observed`` checks after it, but
        TLC then checks the step against them instead of enumerating every step the spec may
        take and discarding those that differ: a spec that may step anywhere costs a window one
        state, not thousands that no work bound counts."""
        return [f"{s.var}' = {record}.{s.var}" for s in self.mapping.spec_state() if s.translate is not None]

    def uncovered(self) -> list[str]:
        covered = {s.var for s in self.mapping.spec_state()}
        return [v for v in self.spec_variables if v not in covered]


def call_definition(name: str, call: ActionCall, params: Sequence[str], spec_variables: Sequence[str] = ()) -> str:
    """A mapped step as an operator of the window's canonical state and the canonical action's
    parameters.  The parameters and the names ``exists`` binds get names of the benchmark's
    own (``m`` becomes ``sysmo_p_m``): a spec may define ``m``, or a PlusCal label ``c``.  A
    stutter leaves ``spec_variables`` as they are."""
    own = {p: f"sysmo_p_{p}" for p in params} | {b: f"sysmo_b_{b}" for b, _ in call.exists}
    args = [rename_references(a, own) for a in call.args] if call.args is not None else [own[p] for p in params]
    body = call.action + (f"({', '.join(args)})" if args else "")
    if call.stutter is not None:
        body = f"({rename_references(call.stutter, own)}) /\\ UNCHANGED <<{', '.join(spec_variables)}>>"
    for bound, values in reversed(call.exists):
        body = f"\\E {own[bound]} \\in ({rename_references(values, own)}) :\n    {body}"
    head = f"{name}({', '.join([CANON, *(own[p] for p in params)])})"
    return f"{head} ==\n{indented(body)}"


def action_step(codec: Codec, action: ActionMap, params: Sequence[str], args: Sequence[str], canon: str,
                prefix: str, spec_next: bool) -> tuple[list[str], str]:
    """An action's mapped step from the canonical state ``canon`` with the arguments ``args``
    (TLA+ terms): the definitions it needs (named ``prefix`` and a number) and its formula."""
    defs: list[str] = []
    steps, stutters = [], []
    for k, call in enumerate(action.calls):
        if call.args is None and not call.exists and call.stutter is None:
            steps.append(call.action + (f"({', '.join(args)})" if args else ""))
        else:
            defs.append(call_definition(f"{prefix}{k}", call, params, codec.spec_variables))
            (steps if call.stutter is None else stutters).append(f"{prefix}{k}({', '.join([canon, *args])})")
    return defs, _mapped_step(steps, stutters, spec_next)


def _mapped_step(steps: Sequence[str], stutters: Sequence[str], spec_next: bool) -> str:
    """A step of one of the action's operators, which must be a step of the spec's next-state
    action too when it has one, or a stutter its mapping allows."""
    taken = " \\/ ".join(steps)
    if taken and spec_next:
        taken = f"({taken}) /\\ SysmoSpecNext"
    if not stutters:
        return taken or "FALSE"
    return " \\/ ".join(([f"({taken})"] if taken else []) + [f"({s})" for s in stutters])


def arguments_definition(name: str, call: ActionCall, params: Sequence[str]) -> str:
    """The arguments a mapped call (one without ``exists``) passes, as a tuple: an operator of the
    window's canonical state and the canonical action's parameters, named as in
    :func:`call_definition`."""
    own = {p: f"sysmo_p_{p}" for p in params}
    args = [rename_references(a, own) for a in call.args] if call.args is not None else [own[p] for p in params]
    head = f"{name}({', '.join([CANON, *(own[p] for p in params)])})"
    return f"{head} ==\n{indented('<<' + ', '.join(args) + '>>')}"


def conj(parts: Sequence[str], indent: str = "    ") -> str:
    if not parts:
        return "TRUE"
    return f"\n{indent}/\\ ".join(parts)


def tla_tuple(items: Sequence[str]) -> str:
    return "<<\n    " + ",\n    ".join(items) + "\n>>"


def constant_literal(value: Any) -> str:
    """A constant's value from a trace's meta as TLA+: a list is a set (``Threads``), else a value."""
    return "{" + ", ".join(tla_literal(v) for v in value) + "}" if isinstance(value, list) else tla_literal(value)


def constants_config(ctx: CellContext, mapping: Mapping, trace_constants: TMapping[str, Any]) -> Config:
    """The spec's CONSTANT bindings, with the constants the traces fix set to the traces' values."""
    spec_constants, _ = ctx.candidate.declared()
    overrides: dict[str, str] = {}
    bound_by: dict[str, str] = {}
    for canonical, expr in mapping.constants:
        if canonical in trace_constants and expr.strip() in spec_constants:
            value = constant_literal(trace_constants[canonical])
            name = expr.strip()
            if name in overrides and overrides[name] != value:
                # One spec constant cannot stand for two canonical ones the traces set apart.
                raise MappingProblem(f"mapping constants: {bound_by[name]} and {canonical} are both mapped to the "
                                     f"spec's constant {name}, but the traces give them different values "
                                     f"({bound_by[name]} = {overrides[name]}, {canonical} = {value}); map each to a "
                                     "constant of its own, or one to an expression of the other")
            overrides[name], bound_by[name] = value, canonical
    sections = []
    for section in ctx.config().sections:
        if section.canonical != "CONSTANT":
            continue
        kept = [line for line in section.body.split("\n") if bound_name(line) not in overrides]
        sections.append(Section(section.keyword, "\n".join(kept)))
    bindings = [f"    {n} = {v}" for n, v in overrides.items()]
    bindings += [f"    {name} <- SysmoConstant_{name}" for name, _ in mapping.spec_constants]
    if bindings:
        sections.append(Section("CONSTANTS", "\n" + "\n".join(bindings) + "\n"))
    return Config("", tuple(sections))


def constant_definitions(mapping: Mapping, trace_constants: TMapping[str, Any]) -> list[str]:
    """``spec_constants`` as definitions the generated module's cfg binds them to (``N <- Def``):
    each expression with the canonical constants replaced by the traces' values."""
    values = {name: constant_literal(value) for name, value in trace_constants.items()}
    return [f"SysmoConstant_{name} ==\n{indented(rename_references(expr, values))}" for name, expr in mapping.spec_constants]


@dataclass(frozen=True)
class CheckModule:
    """A generated check module: its name, text, and the mark its successes print."""

    name: str
    text: str
    mark: str


def work_files(ctx: CellContext) -> dict[str, str]:
    """The module a check module's work bound lives in."""
    return _work.module_files(ctx.module, "conformance")


def check_module(ctx: CellContext, name: str, body: str, codec: Codec | None = None,
                 generated: int | None = None, also: Codec | None = None, spec: bool = True,
                 second: str | None = None) -> CheckModule:
    """The module with its verdict mark: keyed by everything it checks, so cacheable.  Its
    work bound (``SysmoWorkBound``: ``generated`` states, by default the task's
    ``phases.conformance.generated``) ends a check by work, never by the machine's speed.  A
    body with states the ``codec`` (and ``also``) wrote gets the values they name.  Without
    ``spec`` the module does not extend the spec (a check of the task's reference alone).
    A module of two checks (the states where ``second`` holds are the second's) bounds each by
    its own count (``SysmoWorkBounds``), as if each ran alone."""
    if codec is not None:
        values = dict.fromkeys(codec.shared.definitions(body))
        if also is not None:
            values.update(dict.fromkeys(also.shared.definitions(body)))
        body = "\n".join([*values, body])
    generated = ctx.task.conformance.generated if generated is None else generated
    mark = ctx.toolchain.cache.mark(name, body if second is None else f"{body}\n{second}", ctx.spec_files(), generated)
    bound = (f"\n{_work.instance_lines(_work.module_name(ctx.module, 'conformance'))}\n"
             f'SysmoWorkBound == SysmoWork!Within({generated}, "{mark}")')
    if second is not None:
        bound += (f"\nSysmoWorkBounds == IF {second} THEN SysmoWork!WithinAt({_work.SECOND_REGISTER}, {generated}, "
                  f'"{mark}") ELSE SysmoWorkBound')
    needed = ("TLC", "Naturals", "FiniteSets") if ORDERED_NAME in body else ("TLC",)
    extends = ctx.mapping_extends(*needed) if spec else ("Naturals", "FiniteSets", "Sequences", "TLC")
    text = modules.module(name, body.replace("SYSMO_MARK", mark) + bound, extends)
    return CheckModule(name, text, mark)


def _states_module(ctx: CellContext, codec: Codec, name: str, states: Sequence[TMapping[str, Any]]) -> CheckModule:
    body = "\n".join(codec.definitions()) + f"""
VARIABLE sysmo_s
SysmoStates == {tla_tuple([codec.record(state) for state in states])}
SysmoInit ==
    /\\ sysmo_s \\in 1..{len(states)}
    /\\ {conj(codec.bind("SysmoStates[sysmo_s]", False))}
    /\\ PrintT(<<"SYSMO_MARK", sysmo_s>>)
SysmoStop == FALSE /\\ UNCHANGED sysmo_s"""
    return check_module(ctx, name, body, codec)


def _init_values_module(ctx: CellContext, name: str, variables: Sequence[str],
                        constants: Sequence[str] = ()) -> CheckModule:
    body = "\n".join(constants) + f"""
SysmoStop == FALSE /\\ UNCHANGED <<{', '.join(variables)}>>
SysmoDump == PrintT(<<"SYSMO_MARK", <<{', '.join(variables)}>>>>)"""
    return check_module(ctx, name, body)


def run_check(ctx: CellContext, job: str, module: CheckModule, config: Config, init: str, next_: str,
         invariants: Sequence[str] = ()) -> TlcResult:
    cfg = config.with_section("INIT", [init]).with_section("NEXT", [next_])
    cfg = cfg.with_section("CONSTRAINT", ["SysmoWorkBound"], first=True)
    if invariants:
        cfg = cfg.with_section("INVARIANT", list(invariants))
    files = {**ctx.spec_files(), **work_files(ctx), f"{module.name}.tla": module.text, f"{module.name}.cfg": cfg.render()}
    return ctx.tlc(ctx.job_dir("conformance", job), files, module.name,
                   ["-config", f"{module.name}.cfg", "-workers", "1", "-deadlock"], BUDGET_S,
                   work_bound=lambda result: _work.bound_reached(result, module.mark)).result


def marked_ids(result: TlcResult, mark: str) -> set[int]:
    return {v[1] for v in _work.marked(result, mark)
            if isinstance(v, tuple) and len(v) == 2 and v[0] == mark and isinstance(v[1], int)}


def mapping_fault(result: TlcResult, module: CheckModule, action: str | None = None) -> str | None:
    """An error raised inside the generated module's own (mapping) expressions, or a module the
    mapping made unparsable: the mapping's fault, not the spec's.  Said of the mapping's field
    the error is in, when it lies in one (``state.rv``), rather than of a generated line."""
    where = _mapping_field(result, module, action)
    if result.verdict is Verdict.PARSE_ERROR:
        return f"the mapping does not fit the spec{where}: {result.summary()}"
    if result.verdict in (Verdict.EVAL_ERROR, Verdict.ASSERT_FAILED, Verdict.UNKNOWN) and result.positions:
        if result.positions[-1].module == module.name:
            return f"error in a mapping expression{where}: {result.summary()}"
    if result.verdict in (Verdict.EVAL_ERROR,) and not result.positions and result.location is not None \
            and result.location.module == module.name:
        return f"error in a mapping expression{where}: {result.summary()}"
    return None


_AT_LINE = re.compile(r"line (\d+), col \d+ (?:to line \d+, col \d+ )?of module (\w+)")


def _mapping_field(result: TlcResult, module: CheckModule, action: str | None) -> str:
    """" (in <field>)" for the first place in the generated module the output names."""
    spans = [loc for loc in (*reversed(result.positions), result.location) if loc is not None]
    lines = [loc.line for loc in spans if loc.module == module.name]
    lines += [int(m.group(1)) for m in _AT_LINE.finditer(result.summary()) if m.group(2) == module.name]
    for line in lines:
        prefix, _, rest = (modules.definition_at(module.text, line) or "").partition("_")
        field = _FIELDS.get(prefix)
        if field and (action or "{action}" not in field):
            return f" (in the mapping's {field.format(rest=rest, action=action)})"
    return ""


#: The mapping field each kind of generated definition comes from.
_FIELDS = {"SysmoState": "state.{rest}", "SysmoAmong": "state.{rest}", "SysmoAbs": "variables.{rest}",
           "SysmoConstant": "spec_constants.{rest}", "SysmoInternal": "internal[{rest}]",
           "SysmoStep": "actions.{action}"}


def _defaults(ctx: CellContext, codec: Codec, config: Config) -> Codec:
    """Start values for the spec variables the mapping leaves out: their initial values."""
    missing = codec.uncovered()
    if not missing:
        return codec
    module = _init_values_module(ctx, f"{ctx.module}_SysmoInitValues", missing, codec.constants)
    result = run_check(ctx, "init-values", module, config, "Init", "SysmoStop", ["SysmoDump"])
    if result.verdict is not Verdict.OK:
        raise MappingProblem(f"spec variable(s) {', '.join(missing)} have no mapping, and their initial values could "
                             f"not be read from the spec's Init: {result.summary()}")
    seen: list[set[str]] = [set() for _ in missing]
    for value in _work.marked(result, module.mark):
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], tuple) and len(value[1]) == len(missing):
            for k, item in enumerate(value[1]):
                seen[k].add(format_value(item))
    for var, values in zip(missing, seen):
        if not values or len(values) > MAX_DEFAULT_VALUES:
            raise MappingProblem(f"spec variable {var} has no mapping and {len(values)} initial values "
                                 f"(at most {MAX_DEFAULT_VALUES} are tried): give it under 'state' in the mapping")
    defaults = tuple((var, "{" + ", ".join(sorted(values)) + "}") for var, values in zip(missing, seen))
    return dataclasses.replace(codec, defaults=defaults)


def _check_mapping(ctx: CellContext, codec: Codec, config: Config, corpus: Corpus) -> Codec:
    """Which states of the traces give no spec state that maps back onto them (the windows
    through them are steps the spec cannot take)."""
    if not codec.mapping.needs_check:
        return codec
    states: dict[str, TMapping[str, Any]] = {}
    for trace in corpus.traces:
        for state in trace.states:
            states.setdefault(record_literal(state), state)
    ordered = list(states.values())
    keys = list(states)
    module = _states_module(ctx, codec, f"{ctx.module}_SysmoMapCheck", ordered)
    result = run_check(ctx, "mapping-check", module, config, "SysmoInit", "SysmoStop")
    fault = mapping_fault(result, module)
    if fault is None and result.verdict not in (Verdict.OK, Verdict.VACUOUS):
        fault = f"the mapping could not be checked against the traces: {result.summary()}"
    codec = dataclasses.replace(codec, checked=len(ordered))
    if fault is not None:
        return dataclasses.replace(codec, lost=frozenset(keys), lost_reason=fault)
    found = marked_ids(result, module.mark)
    lost = [i for i in range(1, len(ordered) + 1) if i not in found]
    if not lost:
        return codec
    reason = (f"{len(lost)} of {len(ordered)} trace states have no spec state that maps back onto them; "
              f"first: {keys[lost[0] - 1][:600]}")
    return dataclasses.replace(codec, lost=frozenset(keys[i - 1] for i in lost), lost_reason=reason)


def _strips(mapping: Mapping, corpus: Corpus) -> tuple[str, ...]:
    try:
        return _fields.definitions(mapping, (state for trace in corpus.traces for state in trace.states))
    except ValueError as exc:
        raise MappingProblem(f"mapping unmodelled: the fields left out cannot be read: {exc}") from None


def prepare_codec(ctx: CellContext, mapping: Mapping, corpus: Corpus,
                  provenance: TMapping[str, Any] | None = None) -> tuple[Codec, Config]:
    """The mapping made ready for checks (defaults read, checked against the traces), or raise
    MappingProblem.  P4 calls this too before it trusts a mapping; the work is done once per
    spec, mapping and corpus in a process, cache or no cache."""
    key = digest(sorted(ctx.spec_files().items()), ctx.candidate.cfg, repr(mapping), corpus.sha256)
    memo = ctx.toolchain.memo
    if key not in memo:
        try:
            _, spec_variables = ctx.candidate.declared()
            config = constants_config(ctx, mapping, corpus.constants)
            constants = tuple(constant_definitions(mapping, corpus.constants))
            strips = _strips(mapping, corpus)
            codec = _defaults(ctx, Codec(mapping, tuple(spec_variables), constants=constants, strips=strips), config)
            memo[key] = (_check_mapping(ctx, codec, config, corpus), config)
        except MappingProblem as exc:
            memo[key] = exc
    found = memo[key]
    if isinstance(found, MappingProblem):
        raise found
    codec, config = found
    return dataclasses.replace(codec, provenance=dict(provenance or {})), config
