"""P3: can the spec take every step the real system took?

Windows are cut from traces of the running system.  A window passes if the spec, started in
a spec state that the mapping gives for the window's pre-state, takes a step of the mapped
action (with up to the mapping's internal steps around it) that reaches a spec state whose
canonical reading is the post-state.  All windows of an action are checked in one TLC run: Init
ranges over window ids, and each window that conforms prints its id behind a mark that only
this installation can write (the spec cannot forge it).  Identical windows are checked once.
Per action the score is 1 iff all its windows pass; P3 is the mean over the actions that have
windows.

Before any window, the mapping itself is checked against every state of the traces: each
canonical state must give at least one spec state that maps back onto it.  A window with a
state the spec cannot represent under its mapping is a step the spec cannot take: it fails,
as do the windows of a target action the spec does not have, and the windows of an action
whose mapped step does not even evaluate.  All of that is the submission's doing (the spec
and the mapping that came with it, or that its evaluator proposed), so the phase is scored;
only the benchmark's own faults leave it without a score.  P4 uses the same check before it
trusts the mapping.

Whole-trace validation is recorded as a stricter diagnostic: the longest prefix of each trace
that the spec's Init and Next accept, with an explicit step counter.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping as TMapping, Sequence

from ..cache import digest
from ..evaluator import EvaluatorError
from ..mapping import CANON, ActionCall, Mapping, record_literal, tla_literal
from ..scoring import Cause, PhaseResult, Status
from ..tla import modules
from ..tla.cfg import Config, Section
from ..tla.expressions import indented
from ..tla.messages import UNFINISHED, TlcResult, Verdict
from ..tla.values import ValueParseError, format_value, parse_value
from ..traces import Corpus, Trace, Window, load_corpus
from . import _work
from ._context import CellContext, evaluator_failure, no_mapping
from ._infer import given_or_inferred

HARD_LIMIT_MARGIN_S = 60.0
BUDGET_S = 60.0
#: A spec variable that the mapping leaves out starts each window at one of its initial values;
#: a spec with more initial values than this must map it.
MAX_DEFAULT_VALUES = 16


class MappingProblem(Exception):
    """The mapping cannot be used at all with this spec (the submission's failure, scored 0)."""


@dataclass(frozen=True)
class _Codec:
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
    #: Trace states (as record literals) with no spec state that maps back onto them, and why.
    lost: frozenset[str] = frozenset()
    lost_reason: str = ""
    _memo: dict[int, tuple[TMapping[str, Any], str]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def uses_canon(self) -> bool:
        m = self.mapping
        return bool(m.state or m.filters() or m.internal
                    or any(c.args is not None or c.exists for a in m.actions for c in a.calls))

    def record(self, state: TMapping[str, Any]) -> str:
        # A state is written for the window before it, the window after it and its whole trace:
        # write it once (trace states live as long as the corpus, so their ids are stable).
        memo = self._memo
        key = id(state)
        hit = memo.get(key)
        if hit is not None and hit[0] is state:
            return hit[1]
        text = self._record(state)
        memo[key] = (state, text)
        return text

    def _record(self, state: TMapping[str, Any]) -> str:
        fields = [f"{s.var} |-> {s.translate.canonical_to_spec(state[s.translate.canonical])}"
                  for s in self.mapping.spec_state() if s.translate is not None]
        if self.uses_canon:
            fields.append(f"{CANON} |-> {record_literal(state)}")
        return "[" + ", ".join(fields) + "]" if fields else "[sysmo_empty |-> TRUE]"

    def definitions(self) -> list[str]:
        defs = []
        for s in self.mapping.state:
            if s.eq is not None:
                defs.append(f"SysmoState_{s.var}({CANON}) ==\n{indented(s.eq)}")
            else:
                defs.append(f"SysmoAmong_{s.var}({CANON}) ==\n{indented(s.among or '{}')}")
        for f in self.mapping.filters():
            defs.append(f"SysmoAbs_{f.canonical} ==\n{indented(f.spec_to_canonical())}")
        for k, call in enumerate(self.mapping.internal):
            defs.append(_call_definition(f"SysmoInternal_{k}", call, ()))
        return defs

    def bind(self, record: str, primed: bool) -> list[str]:
        """Conjuncts that set the spec state from a record: direct values first, then
        expressions, then candidates and defaults, and only then the filters that read the bound
        state back (an expression is never evaluated before what it reads).

        Primed, they check a reached state, and only what can be observed: each canonical
        variable must read back from it (a direct value, or a filter). The ``state`` entries say
        how to *build* a spec state from a canonical one, which for a variable the traces cannot
        see (a ring slot's stale entry, a history variable) is one choice among many; a step
        that reaches another is still the step the system took."""
        tick = "'" if primed else ""
        parts = []
        for s in self.mapping.spec_state():
            if s.translate is not None:
                parts.append(f"{s.var}{tick} = {record}.{s.var}")
            elif s.eq is not None and not primed:
                parts.append(f"{s.var} = SysmoState_{s.var}({record}.{CANON})")
        if not primed:
            parts += [f"{s.var} \\in SysmoAmong_{s.var}({record}.{CANON})" for s in self.mapping.state if s.among]
            parts += [f"{var} \\in {values}" for var, values in self.defaults]
        parts += [f"SysmoAbs_{f.canonical}{tick} = {record}.{CANON}.{f.canonical}" for f in self.mapping.filters()]
        return parts

    def uncovered(self) -> list[str]:
        covered = {s.var for s in self.mapping.spec_state()}
        return [v for v in self.spec_variables if v not in covered]


def _call_definition(name: str, call: ActionCall, params: Sequence[str]) -> str:
    args = call.args if call.args is not None else tuple(params)
    body = call.action + (f"({', '.join(args)})" if args else "")
    for bound, values in reversed(call.exists):
        body = f"\\E {bound} \\in ({values}) :\n    {body}"
    head = f"{name}({', '.join([CANON, *params])})"
    return f"{head} ==\n{indented(body)}"


def _conj(parts: Sequence[str], indent: str = "    ") -> str:
    if not parts:
        return "TRUE"
    return f"\n{indent}/\\ ".join(parts)


def _tuple(items: Sequence[str]) -> str:
    return "<<\n    " + ",\n    ".join(items) + "\n>>"


def _constants_config(ctx: CellContext, mapping: Mapping, trace_constants: TMapping[str, Any]) -> Config:
    """The spec's CONSTANT bindings, with the constants the traces fix set to the traces' values."""
    spec_constants, _ = ctx.candidate.declared()
    overrides: dict[str, str] = {}
    for canonical, expr in mapping.constants:
        if canonical in trace_constants and expr.strip() in spec_constants:
            value = trace_constants[canonical]
            text = "{" + ", ".join(tla_literal(v) for v in value) + "}" if isinstance(value, list) else tla_literal(value)
            overrides[expr.strip()] = text
    sections = []
    for section in ctx.config().sections:
        if section.canonical != "CONSTANT":
            continue
        kept = [line for line in section.body.split("\n") if _bound_name(line) not in overrides]
        sections.append(Section(section.keyword, "\n".join(kept)))
    if overrides:
        sections.append(Section("CONSTANTS", "\n" + "\n".join(f"    {n} = {v}" for n, v in overrides.items()) + "\n"))
    return Config("", tuple(sections))


def _bound_name(line: str) -> str:
    """The constant a cfg line binds (``N = 3`` or ``N <- Def``), else ''."""
    text = line.strip()
    for sep in ("<-", "="):
        if sep in text:
            return text.split(sep, 1)[0].strip()
    return ""


@dataclass(frozen=True)
class _Module:
    """A generated check module: its name, text, and the mark its successes print."""

    name: str
    text: str
    mark: str


def _generated(ctx: CellContext, name: str, body: str) -> _Module:
    """The module with its verdict mark: keyed by everything it checks, so cacheable."""
    mark = ctx.toolchain.cache.mark(name, body, ctx.spec_files())
    return _Module(name, modules.module(name, body.replace("SYSMO_MARK", mark), (ctx.module, "TLC")), mark)


def _window_module(ctx: CellContext, codec: _Codec, name: str, action: str, windows: Sequence[Window]) -> _Module:
    amap = codec.mapping.action(action)
    params = next((a.params for a in ctx.task.vocabulary.actions if a.name == action), ())
    arity = len(windows[0].args)
    args = [f"SysmoArgs[sysmo_w][{k}]" for k in range(1, arity + 1)]
    defs = codec.definitions()
    steps = []
    for k, call in enumerate(amap.calls):
        if call.args is None and not call.exists:
            steps.append(call.action + (f"({', '.join(args)})" if args else ""))
        else:
            defs.append(_call_definition(f"SysmoStep_{k}", call, params[:arity]))
            steps.append(f"SysmoStep_{k}({', '.join(['SysmoPre[sysmo_w].' + CANON, *args])})")
    pre = "SysmoPre[sysmo_w]"
    post_ok = _conj(codec.bind("SysmoPost[sysmo_w]", True), "        ")
    internal = " \\/ ".join(f"SysmoInternal_{k}({pre}.{CANON})" for k in range(len(codec.mapping.internal)))
    step = " \\/ ".join(steps)
    branches = [f"""/\\ ~sysmo_main
          /\\ {step}
          /\\ sysmo_main' = TRUE""" + ("" if amap.after else """
          /\\ SysmoPostOk
          /\\ PrintT(<<"SYSMO_MARK", sysmo_w>>)""")]
    if amap.before:
        branches.insert(0, f"/\\ ~sysmo_main /\\ sysmo_k < {amap.before} /\\ ({internal}) /\\ UNCHANGED sysmo_main")
    if amap.after:
        branches.append(f"/\\ sysmo_main /\\ sysmo_k < {amap.before + 1 + amap.after} /\\ ({internal}) /\\ UNCHANGED sysmo_main")
    choice = "\n       \\/ ".join(branches)
    late_print = """
    /\\ IF sysmo_main' /\\ SysmoPostOk THEN PrintT(<<"SYSMO_MARK", sysmo_w>>) ELSE TRUE""" if amap.after else ""
    body = "\n".join(defs) + f"""
VARIABLES sysmo_w, sysmo_k, sysmo_main
SysmoArgs == {_tuple(["<<" + ", ".join(tla_literal(a) for a in w.args) + ">>" for w in windows])}
SysmoPre == {_tuple([codec.record(w.pre) for w in windows])}
SysmoPost == {_tuple([codec.record(w.post) for w in windows])}
SysmoInit ==
    /\\ sysmo_w \\in 1..{len(windows)}
    /\\ sysmo_k = 0
    /\\ sysmo_main = FALSE
    /\\ {_conj(codec.bind(pre, False))}
SysmoPostOk ==
        /\\ {post_ok}
SysmoNext ==
    /\\ sysmo_k' = sysmo_k + 1
    /\\ UNCHANGED sysmo_w
    /\\ \\/ {choice}{late_print}"""
    return _generated(ctx, name, body)


def _trace_module(ctx: CellContext, codec: _Codec, name: str, trace: Trace) -> _Module:
    body = "\n".join(codec.definitions()) + f"""
VARIABLE sysmo_i
SysmoTrace == {_tuple([codec.record(state) for state in trace.states])}
SysmoTraceInit ==
    /\\ sysmo_i = 1
    /\\ Init
    /\\ {_conj(codec.bind("SysmoTrace[1]", False))}
SysmoTraceNext ==
    /\\ sysmo_i < {len(trace.states)}
    /\\ Next
    /\\ {_conj(codec.bind("SysmoTrace[sysmo_i + 1]", True))}
    /\\ sysmo_i' = sysmo_i + 1"""
    return _generated(ctx, name, body)


def _states_module(ctx: CellContext, codec: _Codec, name: str, states: Sequence[TMapping[str, Any]]) -> _Module:
    body = "\n".join(codec.definitions()) + f"""
VARIABLE sysmo_s
SysmoStates == {_tuple([codec.record(state) for state in states])}
SysmoInit ==
    /\\ sysmo_s \\in 1..{len(states)}
    /\\ {_conj(codec.bind("SysmoStates[sysmo_s]", False))}
    /\\ PrintT(<<"SYSMO_MARK", sysmo_s>>)
SysmoStop == FALSE /\\ UNCHANGED sysmo_s"""
    return _generated(ctx, name, body)


def _init_values_module(ctx: CellContext, name: str, variables: Sequence[str]) -> _Module:
    body = f"""SysmoStop == FALSE /\\ UNCHANGED <<{', '.join(variables)}>>
SysmoDump == PrintT(<<"SYSMO_MARK", <<{', '.join(variables)}>>>>)"""
    return _generated(ctx, name, body)


def _run(ctx: CellContext, job: str, module: _Module, config: Config, init: str, next_: str,
         invariants: Sequence[str] = ()) -> TlcResult:
    cfg = config.with_section("INIT", [init]).with_section("NEXT", [next_])
    if invariants:
        cfg = cfg.with_section("INVARIANT", list(invariants))
    return ctx.toolchain.tlc(
        ctx.job_dir("conformance", job),
        {**ctx.spec_files(), f"{module.name}.tla": module.text, f"{module.name}.cfg": cfg.render()},
        module.name,
        ["-config", f"{module.name}.cfg", "-workers", "1", "-deadlock"],
        timeout_s=BUDGET_S + HARD_LIMIT_MARGIN_S,
        stop_after_s=BUDGET_S,
    ).result


def _marked_ids(result: TlcResult, mark: str) -> set[int]:
    return {v[1] for v in _work.marked(result, mark)
            if isinstance(v, tuple) and len(v) == 2 and v[0] == mark and isinstance(v[1], int)}


def _mapping_fault(result: TlcResult, module: str) -> str | None:
    """An error raised inside the generated module's own (mapping) expressions, or a module the
    mapping made unparsable: the mapping's fault, not the spec's."""
    if result.verdict is Verdict.PARSE_ERROR:
        return f"the mapping does not fit the spec: {result.summary()}"
    if result.verdict in (Verdict.EVAL_ERROR, Verdict.ASSERT_FAILED, Verdict.UNKNOWN) and result.positions:
        if result.positions[-1].module == module:
            return f"error in a mapping expression: {result.summary()}"
    if result.verdict in (Verdict.EVAL_ERROR,) and not result.positions and result.location is not None \
            and result.location.module == module:
        return f"error in a mapping expression: {result.summary()}"
    return None


@dataclass
class _ActionOutcome:
    action: str
    windows: int
    passed: int
    error: str = ""
    first_failure: str = ""
    #: Windows failed without a step being tried: a state the mapping cannot represent.
    unrepresentable: int = 0

    @property
    def score(self) -> float:
        return 1.0 if self.windows and self.passed == self.windows and not self.error else 0.0


def _failed_action(action: str, windows: list[Window], why: str) -> _ActionOutcome:
    """Every window of an action the spec cannot take at all, with the reason."""
    return _ActionOutcome(action, len(windows), 0, why, windows[0].describe() if windows else "")


def _check_action(ctx: CellContext, codec: _Codec, config: Config, action: str, windows: list[Window]) -> _ActionOutcome:
    if action in ctx.missing_actions(codec.mapping):
        calls = ", ".join(c.action for c in codec.mapping.action(action).calls)
        return _failed_action(action, windows, f"the spec has no action for {action} (no operator {calls} in it)")
    representable = [w for w in windows if not codec.lost
                     or (record_literal(w.pre) not in codec.lost and record_literal(w.post) not in codec.lost)]
    unique: dict[str, Window] = {}
    for window in representable:
        unique.setdefault(window.key(), window)
    distinct = list(unique.values())
    outcome = _ActionOutcome(action, len(windows), 0, unrepresentable=len(windows) - len(representable))
    if outcome.unrepresentable:
        outcome.first_failure = next(w for w in windows if w not in representable).describe()
    if not distinct:
        outcome.error = f"every window has a state the spec cannot represent under its mapping ({codec.lost_reason})"
        return outcome
    module = _window_module(ctx, codec, f"{ctx.module}_SysmoWin_{action}", action, distinct)
    result = _run(ctx, f"windows-{action}", module, config, "SysmoInit", "SysmoNext")
    fault = _mapping_fault(result, module.name)
    if fault is not None:
        return _failed_action(action, windows, f"its mapped step cannot be checked: {fault}")
    ok_ids = _marked_ids(result, module.mark)
    ok_keys = {distinct[i - 1].key() for i in ok_ids if 0 < i <= len(distinct)}
    outcome.passed = sum(1 for w in representable if w.key() in ok_keys)
    if result.verdict in UNFINISHED and len(ok_keys) < len(distinct):
        outcome.error = (f"{len(distinct) - len(ok_keys)} of {len(distinct)} distinct windows not accepted: "
                         + _work.charged_stop(ctx, "TLC", BUDGET_S, ctx.candidate.tla or ""))
    elif result.verdict is not Verdict.OK and result.verdict not in UNFINISHED:
        outcome.error = result.summary()
    failing = next((w for w in representable if w.key() not in ok_keys), None)
    if failing is not None and not outcome.first_failure:
        outcome.first_failure = failing.describe()
    return outcome


def _check_trace(ctx: CellContext, codec: _Codec, config: Config, index: int, trace: Trace) -> dict[str, Any]:
    module = _trace_module(ctx, codec, f"{ctx.module}_SysmoTrace_{index}", trace)
    result = _run(ctx, f"trace-{index}", module, config, "SysmoTraceInit", "SysmoTraceNext")
    accepted = result.depth if result.depth is not None else 0
    if result.verdict is Verdict.VACUOUS:
        accepted = 0
    return {
        "trace": trace.name,
        "states": len(trace.states),
        "accepted_prefix": accepted,
        "accepted": accepted == len(trace.states),
        "verdict": result.verdict.value,
    }


def _defaults(ctx: CellContext, codec: _Codec, config: Config) -> _Codec:
    """Start values for the spec variables the mapping leaves out: their initial values."""
    missing = codec.uncovered()
    if not missing:
        return codec
    module = _init_values_module(ctx, f"{ctx.module}_SysmoInitValues", missing)
    result = _run(ctx, "init-values", module, config, "Init", "SysmoStop", ["SysmoDump"])
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


def _check_mapping(ctx: CellContext, codec: _Codec, config: Config, corpus: Corpus) -> _Codec:
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
    result = _run(ctx, "mapping-check", module, config, "SysmoInit", "SysmoStop")
    fault = _mapping_fault(result, module.name)
    if fault is None and result.verdict not in (Verdict.OK, Verdict.VACUOUS):
        fault = f"the mapping could not be checked against the traces: {result.summary()}"
    if fault is not None:
        return dataclasses.replace(codec, lost=frozenset(keys), lost_reason=fault)
    found = _marked_ids(result, module.mark)
    lost = [i for i in range(1, len(ordered) + 1) if i not in found]
    if not lost:
        return codec
    reason = (f"{len(lost)} of {len(ordered)} trace states have no spec state that maps back onto them; "
              f"first: {keys[lost[0] - 1][:600]}")
    return dataclasses.replace(codec, lost=frozenset(keys[i - 1] for i in lost), lost_reason=reason)


def prepare_codec(ctx: CellContext, mapping: Mapping, corpus: Corpus,
                  provenance: TMapping[str, Any] | None = None) -> tuple[_Codec, Config]:
    """The mapping made ready for checks (defaults read, checked against the traces), or raise
    MappingProblem.  P4 calls this too before it trusts a mapping; the work is done once per
    spec, mapping and corpus in a process, cache or no cache."""
    key = digest(sorted(ctx.spec_files().items()), ctx.candidate.cfg, repr(mapping), corpus.sha256)
    memo = ctx.toolchain.memo
    if key not in memo:
        try:
            _, spec_variables = ctx.candidate.declared()
            config = _constants_config(ctx, mapping, corpus.constants)
            codec = _defaults(ctx, _Codec(mapping, tuple(spec_variables)), config)
            memo[key] = (_check_mapping(ctx, codec, config, corpus), config)
        except MappingProblem as exc:
            memo[key] = exc
    found = memo[key]
    if isinstance(found, MappingProblem):
        raise found
    codec, config = found
    return dataclasses.replace(codec, provenance=dict(provenance or {})), config


def _prepare(ctx: CellContext) -> tuple[Corpus | None, _Codec | None, Config | None, PhaseResult | None]:
    corpus = load_corpus(ctx.traces_dir / ctx.task.name, ctx.task)
    if not corpus.traces and not corpus.errors:
        return None, None, None, PhaseResult("conformance", Status.SKIPPED, None, f"skipped: no traces for task {ctx.task.name}",
                                             cause=Cause.NO_TRACES)
    if corpus.errors:
        return None, None, None, PhaseResult("conformance", Status.ERROR, None, f"corrupt trace: {corpus.errors[0]}",
                                             {"trace_errors": list(corpus.errors)}, cause=Cause.HARNESS)
    clash = ctx.harness_name_clash("conformance")
    if clash is not None:
        return None, None, None, clash
    mapping, provenance = given_or_inferred(ctx)
    if mapping is None and ctx.evaluator is not None and ctx.candidate.tla is not None:
        try:
            mapping, use = ctx.evaluator.mapping(ctx.task, ctx.candidate.tla)
        except EvaluatorError as exc:
            return None, None, None, evaluator_failure("conformance", exc)
        provenance = {"evaluator": ctx.evaluator.name, "evaluator_use": use.as_dict()}
    if mapping is None:
        return None, None, None, no_mapping("conformance", ctx.candidate.mapping_problem)
    try:
        codec, config = prepare_codec(ctx, mapping, corpus, provenance)
    except MappingProblem as exc:
        return None, None, None, _mapping_error(exc, mapping, provenance)
    return corpus, codec, config, None


def _mapping_error(exc: MappingProblem, mapping: Mapping, provenance: TMapping[str, Any]) -> PhaseResult:
    return PhaseResult("conformance", Status.FAILED, 0.0, f"the mapping does not fit the spec: {exc}; scored 0, "
                       "charged to the spec and its mapping",
                       {"mapping": mapping.describe(), "mapping_error": str(exc), "failure_class": "mapping_does_not_fit",
                        **provenance})


def check_conformance(ctx: CellContext) -> PhaseResult:
    corpus, codec, config, early = _prepare(ctx)
    if early is not None:
        return early
    assert corpus is not None and codec is not None and config is not None
    windows: dict[str, list[Window]] = {}
    for trace in corpus.traces:
        for window in trace.windows():
            windows.setdefault(window.action, []).append(window)
    targets = [a for a in (ctx.task.target_actions or tuple(windows)) if windows.get(a)]
    outcomes = [_check_action(ctx, codec, config, action, windows[action]) for action in targets]
    whole = [_check_trace(ctx, codec, config, i, trace) for i, trace in enumerate(corpus.traces, start=1)]
    return _verdict(outcomes, whole, corpus, codec)


def _verdict(outcomes: list[_ActionOutcome], whole: list[dict[str, Any]], corpus: Corpus, codec: _Codec) -> PhaseResult:
    total = sum(o.windows for o in outcomes)
    passed = sum(o.passed for o in outcomes)
    score = sum(o.score for o in outcomes) / len(outcomes) if outcomes else 0.0
    details: dict[str, Any] = {
        "actions": {o.action: {"windows": o.windows, "passed": o.passed, "score": o.score, "error": o.error,
                               "first_failure": o.first_failure, "unrepresentable": o.unrepresentable}
                    for o in outcomes},
        "unrepresentable_states": len(codec.lost),
        "window_pass_rate": round(passed / total, 6) if total else None,
        "windows": total,
        "traces": whole,
        "trace_corpus_sha256": corpus.sha256,
        "mapping": codec.mapping.describe(),
        "defaults": dict(codec.defaults),
        **codec.provenance,
    }
    if not outcomes:
        return PhaseResult("conformance", Status.SKIPPED, None, "skipped: the traces have no windows of target actions",
                           details, cause=Cause.NO_TRACES)
    failing = [o for o in outcomes if o.score < 1.0]
    if not failing:
        return PhaseResult("conformance", Status.PASSED, 1.0, f"all {total} windows of {len(outcomes)} actions conform", details)
    first = failing[0]
    names = ", ".join(f"{o.action} ({o.passed}/{o.windows})" for o in failing)
    reason = f"{len(outcomes) - len(failing)}/{len(outcomes)} actions conform; failing: {names}"
    if codec.lost:
        reason += f"\nstates the spec cannot represent under its mapping: {codec.lost_reason}"
    if first.error:
        reason += f"\n{first.action}: {first.error}"
    if first.first_failure:
        reason += f"\nfirst failing window of {first.action}: {first.first_failure}"
    reason += f"\nmapping: {codec.mapping.describe()}"
    return PhaseResult("conformance", Status.FAILED, round(score, 6), reason, {**details, "failure_class": "steps_rejected"})
