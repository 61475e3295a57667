"""A mapping inferred without a model: the same spec text gets the same score whatever label it
is submitted under.

A spec that models the task's variables under other names, or writes their values in other
words ("spin" for "spinning"), needs no evaluator when exactly one renaming of variables and
recoding of enumerated values carries every state of the real traces onto a state the spec
reaches.  The spec's states come from one bounded BFS (each distinct state printed behind the
run's mark); candidates are every assignment of canonical variables to distinct spec variables
of the same shape, with every bijection of an enumerated type's values.  Only a unique fit is
taken; anything else leaves the spec without a mapping, as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping as AbstractMapping
from typing import Any, Iterator, Sequence

from ..cache import digest
from ..mapping import ActionCall, ActionMap, Mapping, VariableMap
from ..tasks import enumerated_values
from ..tla.values import tla_literal
from ..tasks import Variable
from ..tla import modules
from ..tla.cfg import ASSERTION_KEYWORDS, EXPLORATION_KEYWORDS, UNSUPPORTED_IN_215
from ..tla.messages import Verdict
from ..tla.values import ValueParseError, parse_value
from ..traces import Corpus
from . import _work
from ._context import CellContext

#: The spec's states are read from a BFS of at most this many distinct states (the traces must
#: fall inside them) and this many generated ones.
MAX_STATES = 5_000
MAX_GENERATED = 200_000
#: Enumerated types recoded by trying every bijection: up to this many values (5! = 120).
MAX_RECODED_VALUES = 5
MAX_CANDIDATES = 20_000
BUDGET_S = 60.0
#: How a candidate says the mapping submitted with it could not be read (models/_sources.py).
INVALID_MAPPING = "invalid mapping:"


def given_or_inferred(ctx: CellContext) -> tuple[Mapping | None, dict[str, Any]]:
    """The spec's own mapping (or the identity), else the inferred one (with a note saying so)."""
    if ctx.candidate.mapping is not None or ctx.candidate.tla is None:
        return ctx.candidate.mapping, {}
    if (ctx.candidate.mapping_problem or "").startswith(INVALID_MAPPING):
        return None, {}  # a mapping was submitted: its failure is the submission's, not ours to mend
    corpus = ctx.corpus()
    if corpus.errors:
        return None, {}
    inferred = infer_mapping(ctx, corpus)
    return inferred, ({"mapping_inferred": inferred.describe()} if inferred is not None else {})


def infer_mapping(ctx: CellContext, corpus: Corpus) -> Mapping | None:
    """The unique renaming and recoding that fits the traces, or None (memoized per spec)."""
    key = digest("inferred-mapping", sorted(ctx.spec_files().items()), ctx.candidate.cfg, corpus.sha256)
    memo = ctx.toolchain.memo
    if key not in memo:
        memo[key] = _infer(ctx, corpus)
    return memo[key]  # type: ignore[return-value]


def _infer(ctx: CellContext, corpus: Corpus) -> Mapping | None:
    task = ctx.task
    constants, spec_vars = ctx.candidate.declared()
    defined = {u.name for text in ctx.spec_files().values() for u in modules.top_level_units(text)}
    canonical = task.vocabulary.variables
    if any(c.name not in constants and c.name not in defined for c in task.vocabulary.constants):
        return None
    if len(spec_vars) != len(canonical) or not corpus.traces:
        return None
    reachable = _reachable(ctx, spec_vars)
    if not reachable:
        return None
    traced = {_freeze(_parsed(state)) for trace in corpus.traces for state in trace.states}
    fits = [c for c in _candidates(canonical, spec_vars, reachable) if _fits(c, canonical, traced, reachable)]
    if len(fits) != 1:
        return None
    return _mapping(task, fits[0], canonical)


# ------------------------------------------------------------------ the spec's reachable states


def _reachable(ctx: CellContext, spec_vars: Sequence[str]) -> list[dict[str, Any]]:
    """Every distinct state of a bounded BFS of the spec, as {variable: value}; [] when the BFS
    did not finish inside its bounds (the traces could then fall outside what was read)."""
    name = f"{ctx.module}_SysmoInfer"
    work = f"{ctx.module}_SysmoInferWork"
    mark = ctx.toolchain.cache.mark("infer", ctx.spec_files())
    body = (f"{_work.instance_lines(work)}\n"
            f"SysmoBound == SysmoWork!Within({MAX_GENERATED}, \"{mark}\") /\\ TLCGet(\"distinct\") <= {MAX_STATES}\n"
            f"SysmoDump == PrintT(<<\"{mark}\", <<{', '.join(spec_vars)}>>>>)")
    config, _ = ctx.config().without({"PROPERTY", "PROPERTIES", *ASSERTION_KEYWORDS, *EXPLORATION_KEYWORDS,
                                      *UNSUPPORTED_IN_215})
    config = config.with_section("CONSTRAINT", ["SysmoBound"]).with_section("INVARIANT", ["SysmoDump"])
    files = {**ctx.spec_files(), f"{work}.tla": _work.bound_module(work),
             f"{name}.tla": modules.module(name, body, (ctx.module, "TLC")), f"{name}.cfg": config.render()}
    run = ctx.tlc(ctx.job_dir("mapping-inference"), files, name, ["-config", f"{name}.cfg", "-workers", "1", "-deadlock"],
                  BUDGET_S, work_bound=lambda result: _work.bound_reached(result, mark))
    result = run.result
    if result.verdict is not Verdict.OK or (result.distinct_states or 0) > MAX_STATES:
        return []
    states = []
    for value in _work.marked(result, mark):
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], tuple) and len(value[1]) == len(spec_vars):
            states.append(dict(zip(spec_vars, value[1])))
    return states


# ------------------------------------------------------------------ candidates


def _parsed(state: AbstractMapping[str, Any]) -> dict[str, Any]:
    """A trace state with its values read as TLC would print them (one representation for both)."""
    out = {}
    for name, value in state.items():
        try:
            out[name] = parse_value(tla_literal(value))
        except ValueParseError:
            out[name] = value
    return out


def _freeze(value: Any) -> Any:
    if isinstance(value, AbstractMapping):
        return ("fn", tuple(sorted(((_freeze(k), _freeze(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_freeze(v) for v in value)
    return value


def _shape(variable: Variable) -> str:
    text = variable.type.strip()
    return "function" if text.startswith("[") and "->" in text and "|->" not in text else "scalar"


def _observed(reachable: list[dict[str, Any]], var: str, shape: str) -> set[Any] | None:
    """The values a spec variable takes (a function's range for shape function), or None when
    its values do not have that shape."""
    seen: set[Any] = set()
    for state in reachable:
        value = state[var]
        if shape == "function":
            if not isinstance(value, AbstractMapping):
                return None
            seen.update(_freeze(v) for v in value.values())
        else:
            if isinstance(value, AbstractMapping):
                return None
            seen.add(_freeze(value))
    return seen


Choice = tuple[str, tuple[tuple[Any, Any], ...]]  # (spec variable, (canonical value, spec value) pairs)


def _options(variable: Variable, spec_vars: Sequence[str], reachable: list[dict[str, Any]]) -> list[Choice]:
    shape = _shape(variable)
    literals = enumerated_values(variable.type, shape)
    values = None if literals is None else {_freeze(parse_value(v)) for v in literals}
    options: list[Choice] = []
    for var in spec_vars:
        observed = _observed(reachable, var, shape)
        if observed is None:
            continue
        if values is None or observed <= values:
            options.append((var, ()))  # the values as they are
        if values is not None and observed - values and len(observed) == len(values) <= MAX_RECODED_VALUES:
            canon = sorted(values, key=repr)
            for image in itertools.permutations(sorted(observed, key=repr)):
                options.append((var, tuple(zip(canon, image))))
    return options


def _candidates(canonical: Sequence[Variable], spec_vars: Sequence[str],
                reachable: list[dict[str, Any]]) -> Iterator[tuple[Choice, ...]]:
    per_variable = [_options(v, spec_vars, reachable) for v in canonical]
    count = 0
    for combo in itertools.product(*per_variable):
        if len({var for var, _ in combo}) != len(combo):
            continue
        count += 1
        if count > MAX_CANDIDATES:
            return
        yield combo


def _translate(value: Any, table: dict[Any, Any], shape: str) -> Any:
    if shape == "function" and isinstance(value, tuple) and value and value[0] == "fn":
        return ("fn", tuple((k, table.get(v, v)) for k, v in value[1]))
    return table.get(value, value)


def _fits(combo: tuple[Choice, ...], canonical: Sequence[Variable], traced: set[Any], reachable_states: list[dict[str, Any]]) -> bool:
    """Every trace state, renamed and recoded, is a state the spec reaches."""
    names = [var for var, _ in combo]
    reachable = {tuple(_freeze(state[n]) for n in names) for state in reachable_states}
    tables = [dict(table) for _, table in combo]
    shapes = [_shape(v) for v in canonical]
    index = {v.name: k for k, v in enumerate(canonical)}
    for state in traced:
        fields = dict(state[1]) if isinstance(state, tuple) and state and state[0] == "fn" else None
        if fields is None:
            return False
        image = tuple(_translate(fields[v.name], tables[index[v.name]], shapes[index[v.name]]) for v in canonical)
        if image not in reachable:
            return False
    return True


def _mapping(task: Any, combo: tuple[Choice, ...], canonical: Sequence[Variable]) -> Mapping:
    variables = []
    for variable, (var, table) in zip(canonical, combo):
        values = tuple((_text(c), _text(s)) for c, s in table)
        variables.append(VariableMap(variable.name, var=var, shape=_shape(variable), values=values))
    return Mapping(
        constants=tuple((c.name, c.name) for c in task.vocabulary.constants),
        variables=tuple(variables),
        actions=tuple(ActionMap(a.name, (ActionCall(a.name),)) for a in task.vocabulary.actions),
        source="inferred (the unique renaming and recoding that carries every traced state onto a state the spec reaches)",
        version=2,
    )


def _text(value: Any) -> str:
    """A frozen scalar value as TLA+ text."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return tla_literal(value)
