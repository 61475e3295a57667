"""P3's other half: does the spec take steps the system cannot?

The task's reference, validated against the real traces and the seeded mutants, is the oracle of
what the system may do.  From every distinct state the traces show (read as a state of the
spec through its mapping), the spec takes every step of every canonical action instance (an
action with arguments from the task's parameter domains) and every step of its next-state
relation that is no mapped action's; each step is read back as a canonical state.  A step of
an action instance is *extra* when the reference cannot reach that canonical state by the same
instance (or an action the mapping sends to the same spec operator, which the spec cannot tell
apart) from the same state; any other step is extra when the reference cannot reach it by any
action and it is not a stutter.  Enabledness counts: a no-op step (a failed ``try_lock``) where
the reference has none is extra.

The reference runs inside the same TLC run: a renamed copy of it is INSTANCEd with variables of
its own, started in its own state for the same canonical state.  The search takes every
reference step first (level 1 of the BFS, before any state's successors are explored) and the
spec's after; under a VIEW that keeps only (traced state, instance signature, canonical
reading), a spec step that reads like a reference step is no new state and is not explored, so
TLC's own set of seen states answers "can the reference take this step?" and the work grows
with the steps taken, not with their product.  An explored spec step is extra and says so, once
per state and action (a register remembers it), so a spec that allows anything still prints
little.  Steps the task declares beyond its reference (``phases.conformance.precision.narrower``:
the bounds of its search) are not counted.  The run is bounded by work like every check: a
pre-state whose steps were not all judged within the bound is not shown precise, charged to the
spec.  P3's whole-trace diagnostic shares the first run (``Beside``): one start of TLC and one
copy of the traced states instead of two.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping as TMapping, Sequence

from ..cache import digest
from ..mapping import Mapping
from ..sources.extract import rename_module
from ..tasks import Task
from ..tla import modules
from ..tla.cfg import Config
from ..tla.grammar import declared_names, next_parts, rename_names, rename_references
from ..tla.messages import UNFINISHED, TlcResult, Verdict
from ..tla.values import format_value, record_literal, tla_literal, value_differences
from ..traces import Corpus, Window
from . import _fields, _work
from ._codec import (BUDGET_S, Codec, CheckModule, action_step, arguments_definition, check_module, conj,
                     constant_literal, mapping_fault, prepare_codec, tla_tuple, work_files)
from ._context import CellContext

#: The name steps of no mapped action are reported under.
OTHER = "(steps of no action)"
#: The first TLC register of the ones that remember an extra step was printed (P4's are below).
REGISTER = 10_000
EXTRA = "extra"
REPRESENTED = "represented"


@dataclass
class Beside:
    """Another check of the cell that shares the extra-step check's first TLC run: one start of
    TLC instead of two, each part bounded by its own count.  ``body`` declares ``variables`` of
    its own and defines ``init`` and ``next_`` over the spec's.  When the shared run finished
    without an error or a bound, ``result`` and ``mark`` are what its own run would have shown
    (its states are its own: the precision check's steps never reach them, nor it theirs);
    otherwise they stay empty and it runs alone."""

    body: str
    variables: tuple[str, ...]
    init: str
    next_: str
    result: TlcResult | None = None
    mark: str = ""


#: The value of ``sysmo_phase`` in the states of the check beside the precision check.
BESIDE = "beside"


class ReferenceUnfit(Exception):
    """The task's reference cannot serve as the oracle (a task defect, never the spec's)."""


@dataclass
class ActionPrecision:
    """Where one action (or the steps of no action) took a step the system cannot."""

    states: int
    #: Indices of the pre-states with an extra step.
    extra: set[int] = field(default_factory=set)
    first: str = ""
    #: The first extra step as found (pre-state index, action number, arguments, the spec's reading).
    found: tuple[int, int, Any, Any] | None = None
    #: Why its steps could not all be judged (an error, the work bound): not shown precise.
    unjudged: str = ""

    @property
    def precise(self) -> int:
        return 0 if self.unjudged else self.states - len(self.extra)

    @property
    def complete(self) -> bool:
        return not self.unjudged and not self.extra

    def as_dict(self) -> dict[str, Any]:
        return {"states": self.states, "precise": self.precise, "first_extra": self.first,
                "not_judged": self.unjudged}


@dataclass(frozen=True)
class Precision:
    """The precision of each target action and of the steps of no action (``OTHER``)."""

    states: int
    actions: TMapping[str, ActionPrecision]
    #: The task's declared narrowings, as they were applied.
    narrower: tuple[str, ...] = ()
    #: Where the pre-states come from, in words, and the phase whose job directories the runs use.
    origin: str = "a traced state"
    phase: str = "conformance"


# ---------------------------------------------------------------------------------------------
# Which states, and which action instances


def pre_states(corpus: Corpus, lost: frozenset[str], cap: int = 0) -> list[TMapping[str, Any]]:
    """The distinct states the real system took a step from, that the spec can represent; at
    most ``cap`` (0: all; the task's ``precision.states``), taken from each action's pre-states in turn, smallest
    first (the cheapest to judge; the order is fixed by the states' content, the same choice on
    every machine)."""
    by_action: dict[str, dict[str, TMapping[str, Any]]] = {}
    keys = _StateKeys(lost)
    for trace in corpus.traces:
        for window in trace.windows():
            key = keys(window.pre)
            if key is not None:
                by_action.setdefault(window.action, {}).setdefault(key, window.pre)
    everything: dict[str, TMapping[str, Any]] = {}
    for states in by_action.values():
        everything.update(states)
    if not cap or len(everything) <= cap:
        return [everything[k] for k in sorted(everything, key=_stable)]
    chosen: dict[str, TMapping[str, Any]] = {}
    queues = [sorted(states, key=_stable) for _, states in sorted(by_action.items())]
    while len(chosen) < cap and any(queues):
        for queue in queues:
            while queue and queue[0] in chosen:
                queue.pop(0)
            if queue and len(chosen) < cap:
                key = queue.pop(0)
                chosen[key] = everything[key]
    return [chosen[k] for k in sorted(chosen, key=_stable)]


#: At most this many of an action's own windows are asked whether its mapped steps move.
OWN_WINDOWS = 24


def own_moving_windows(corpus: Corpus, lost: frozenset[str], actions: Sequence[str]) -> list[Window]:
    """Per action, its distinct windows that change the state, from states the spec can
    represent; at most ``OWN_WINDOWS`` each, smallest first (the same on every machine)."""
    chosen: dict[str, dict[str, Window]] = {a: {} for a in actions}
    keys = _StateKeys(lost)
    for trace in corpus.traces:
        for window in trace.windows():
            if window.action not in chosen or window.pre == window.post:
                continue
            pre = keys(window.pre)
            if pre is not None:
                chosen[window.action].setdefault(pre + repr(window.args), window)
    return [own[k] for _, own in sorted(chosen.items()) for k in sorted(own, key=_stable)[:OWN_WINDOWS]]


class _StateKeys:
    """A traced state's key: its JSON text (keys sorted), exact for JSON trace values and far
    cheaper than its TLA+ record, which is written only to ask whether the mapping lost the
    state (``lost`` holds records) and only when it lost any.  The traces repeat few states
    many times: each is keyed once."""

    def __init__(self, lost: frozenset[str]) -> None:
        self._lost = lost
        self._by_id: dict[int, tuple[TMapping[str, Any], str | None]] = {}
        self._by_text: dict[str, str | None] = {}

    def __call__(self, state: TMapping[str, Any]) -> str | None:
        """The state's key, or None where the spec cannot represent it."""
        known = self._by_id.get(id(state))
        if known is None or known[0] is not state:
            text = json.dumps(state, sort_keys=True)
            if text not in self._by_text:
                self._by_text[text] = None if self._lost and record_literal(state) in self._lost else text
            known = self._by_id[id(state)] = (state, self._by_text[text])
        return known[1]


def _stable(key: str) -> tuple[int, str]:
    return len(key), hashlib.sha256(key.encode()).hexdigest()


def _domain(task: Task, constants: TMapping[str, Any], parameter: str) -> str:
    """Where a parameter ranges, as TLA+ over the window's canonical state ``SysmoCanon[sysmo_w]``."""
    domain = task.vocabulary.domain(parameter)
    if domain in constants:
        return constant_literal(constants[domain])
    if any(v.name == domain for v in task.vocabulary.variables):
        return f"SysmoCanon[sysmo_w].{domain}"
    return next(c.value for c in task.vocabulary.constants if c.name == domain)


def _instances(task: Task, constants: TMapping[str, Any], numbered: Sequence[tuple[int, str]]) -> str:
    """Every instance ``<<k, <<args>>>>`` of the numbered actions from window ``sysmo_w``'s state."""
    params = {a.name: a.params for a in task.vocabulary.actions}
    sets = []
    for k, action in numbered:
        own = [f"sysmo_q_{p}" for p in params[action]]
        if not own:
            sets.append(f"{{<<{k}, <<>>>>}}")
            continue
        bounds = ", ".join(f"{o} \\in {_domain(task, constants, p)}" for o, p in zip(own, params[action]))
        sets.append(f"{{<<{k}, <<{', '.join(own)}>>>> : {bounds}}}")
    return " \\cup ".join(sets) if sets else "{}"


def _step(codec: Codec, action: str, params: Sequence[str], number: int, canon: str, prefix: str,
          spec_next: bool = False) -> tuple[list[str], str]:
    """The mapped step of instance ``sysmo_x`` of an action (its definitions, its formula)."""
    args = [f"sysmo_x[2][{j}]" for j in range(1, len(params) + 1)]
    return action_step(codec, codec.mapping.action(action), params, args, canon, f"{prefix}Step_{number}_", spec_next)


def _operators(mapping: Mapping, action: str) -> set[str]:
    return mapping.action(action).operators()


def _signature(codec: Codec, action: str, params: Sequence[str], number: int) -> tuple[list[str], str]:
    """What the spec is asked to do for an instance ``sysmo_x`` of an action, as a value: the set
    of its mapped calls, each an operator and its arguments.  Two instances with the same
    signature are one step to the spec (``TryLock: Try`` and ``TryLockFail: Try``; a message whose
    ends the spec's packets do not name), so a step of one may be the other's.  An action with
    an existential call is its own (``<<action, args>>``): its calls' arguments are not values;
    so is one with a stutter, which no other action's step can be."""
    calls = codec.mapping.action(action).calls
    if any(call.exists or call.stutter is not None for call in calls):
        return [], f'{{<<"{action}", sysmo_x[2]>>}}'
    defs: list[str] = []
    items = []
    args = [f"sysmo_x[2][{j}]" for j in range(1, len(params) + 1)]
    for c, call in enumerate(calls):
        if call.args is None:
            items.append(f'<<"{call.action}", <<{", ".join(args)}>>>>')
            continue
        name = f"SysmoArgs_{number}_{c}"
        defs.append(arguments_definition(name, call, params))
        items.append(f'<<"{call.action}", {name}(SysmoCanon[sysmo_w]{"".join(", " + a for a in args)})>>')
    return defs, "{" + ", ".join(items) + "}"


# ---------------------------------------------------------------------------------------------
# The reference, as a module the check INSTANCEs


@dataclass(frozen=True)
class _Reference:
    """The task's reference as the check instances it: its codec, the name of its view module,
    the modules to write beside the spec, and the instance's substitutions."""

    codec: Codec
    view: str
    files: TMapping[str, str]
    #: INSTANCE substitutions (constants, then variables).
    substitutions: tuple[str, ...]
    variables: tuple[str, ...]


def _reference(ctx: CellContext, corpus: Corpus, codec: Codec, modelled: Sequence[str],
               numbered: Sequence[tuple[int, str]]) -> _Reference:
    task = ctx.task
    candidate = _reference_candidate(ctx)
    if candidate.tla is None or candidate.mapping is None or candidate.extra_modules:
        raise ReferenceUnfit(f"task {task.name}: its reference is no single module with a mapping")
    rctx = CellContext(task, candidate, ctx.toolchain, ctx.run_dir / "conformance" / "reference", ctx.traces_dir)
    rcodec, rconfig = prepare_codec(rctx, candidate.mapping, corpus)
    if rcodec.defaults or rcodec.lost or any(s.among is not None for s in rcodec.mapping.state):
        raise ReferenceUnfit(f"task {task.name}: its reference does not give one state for every traced state")
    name = f"{task.module}_SysmoRef"
    renamed = rename_module(candidate.tla, task.module, name)
    params = {a.name: a.params for a in task.vocabulary.actions}
    defs = rcodec.definitions()
    arms = []
    for k, action in numbered:
        sdefs, step = _step(rcodec, action, params[action], k, "sysmo_c", "SysmoR")
        defs += sdefs
        arms.append(f"\\/ sysmo_x[1] = {k} /\\ ({step})")
    steps_text = ["SysmoRStep(sysmo_x, sysmo_c) ==\n    " + ("\n    ".join(arms) if arms else "FALSE")]
    # The reference's readings as the spec's are: without the fields the spec leaves out.
    readings = {v.canonical: _fields.read(codec.mapping, v.canonical, v.spec_to_canonical())
                for v in rcodec.mapping.variables}
    missing = [v for v in modelled if v not in readings]
    if missing:
        raise ReferenceUnfit(f"task {task.name}: its reference's mapping does not read {', '.join(missing)}")
    next_ = rctx.next_action()
    if next_ is None:
        raise ReferenceUnfit(f"task {task.name}: its reference's next-state action is not named")
    body = "\n".join([*codec.strips, *defs, *steps_text]) + f"""
SysmoRBind(sysmo_r) ==
    /\\ {conj(rcodec.bind("sysmo_r", False))}
SysmoRRead == {_reading_record(modelled, readings)}
SysmoRNext ==
    {next_}"""
    extends = (name, *modules.standard_modules_beside({f"{name}.tla": renamed}), "TLC")
    view = f"{task.module}_SysmoRefView"
    view_text = modules.module(view, body, tuple(dict.fromkeys(extends)))
    # A name of the reference's spelled like a variable of the spec could be read as that
    # variable inside the instance (TLC 2.15): the reference's own names are given others.
    own_constants, own_variables = modules.declared(candidate.tla)
    clashes = ((declared_names(renamed) | declared_names(view_text)) & set(codec.spec_variables)) \
        - set(own_constants) - set(own_variables)
    names = {n: f"sysmo_ref_{n}" for n in clashes}
    files = {f"{name}.tla": rename_names(renamed, names), f"{view}.tla": rename_names(view_text, names)}
    values = _constant_values(candidate.mapping, rconfig, corpus.constants)
    unbound = [c for c in own_constants if c not in values]
    if unbound:
        raise ReferenceUnfit(f"task {task.name}: no value for the reference's constant(s) {', '.join(unbound)}")
    substitutions = tuple([f"{c} <- {values[c]}" for c in own_constants] + [f"{v} <- sysmo_r_{v}" for v in own_variables])
    return _Reference(rcodec, view, files, substitutions, tuple(own_variables))


def _reference_candidate(ctx: CellContext) -> Any:
    """The task's reference as a candidate, read once per process (every cell of the task asks)."""
    from ..sources import ReferenceSource

    task = ctx.task
    key = "precision-reference:" + digest(str(task.reference_spec), task.reference_spec.read_bytes(),
                                          task.reference_cfg.read_bytes() if task.reference_cfg else b"",
                                          task.reference_mapping.read_bytes() if task.reference_mapping else b"")
    memo = ctx.toolchain.memo
    if key not in memo:
        memo[key] = ReferenceSource().candidate(task, 0)
    return memo[key]


def _constant_values(mapping: Mapping, config: Config, trace: TMapping[str, Any]) -> dict[str, str]:
    """The reference's constants at the traces' values (its own cfg's for the others)."""
    values = config.constants()
    for canonical, expr in mapping.constants:
        if canonical in trace:
            values[expr.strip()] = constant_literal(trace[canonical])
    return values


def _reading_record(modelled: Sequence[str], readings: TMapping[str, str]) -> str:
    if not modelled:
        return "[sysmo_none |-> TRUE]"
    return "[" + ", ".join(f"{v} |-> {readings[v]}" for v in modelled) + "]"


# ---------------------------------------------------------------------------------------------
# The check


@dataclass(frozen=True)
class _Plan:
    """One precision run: the numbered actions whose steps it judges (those the task does not
    score count with the rest), every action the spec has (the reference takes their steps
    too: an instance of one may be another's to the spec), and whether it judges the steps of
    no action."""

    numbered: tuple[tuple[int, str], ...]
    everyone: tuple[tuple[int, str], ...]
    rest: bool
    tag: str = "all"


def check_precision(ctx: CellContext, codec: Codec, config: Config, corpus: Corpus,
                    judged: Sequence[str], states: Sequence[TMapping[str, Any]] | None = None,
                    origin: str = "a traced state", phase: str = "conformance",
                    beside: Beside | None = None) -> Precision:
    """The precision of every ``judged`` target action (those the spec has, whose windows the
    spec can represent) and of the steps of no action, from every chosen pre-state (the traced
    ones unless ``states`` are given: P4 asks it of states the traces never reached).  A check
    ``beside`` it shares its first run where it can."""
    task = ctx.task
    if states is None:
        states = pre_states(corpus, codec.lost, task.conformance.precision_states)
    defined = {u.name for text in ctx.spec_modules() for u in modules.top_level_units(text)}
    vocabulary = [a.name for a in task.vocabulary.actions]
    # Every action of the vocabulary the spec has is judged: the steps of one the task does not
    # score (raftkvs's Crash) count with the steps of no action.
    mapped = [a for a in vocabulary if a not in codec.mapping.absent and _operators(codec.mapping, a) <= defined]
    undeclared = sorted({p for a in task.vocabulary.actions if a.name in mapped for p in a.params
                         if not task.vocabulary.domain(p)})
    if undeclared:
        raise ReferenceUnfit(f"{task.directory / 'task.yaml'}: vocabulary.parameters gives no domain for "
                             f"{', '.join(undeclared)}: the spec's extra steps cannot be looked for")
    everyone = tuple((k, a) for k, a in enumerate(vocabulary, start=1) if a in mapped)
    numbered = tuple((k, a) for k, a in everyone if a in judged)
    unscored = tuple((k, a) for k, a in everyone if a not in judged)
    modelled = [v.canonical for v in codec.mapping.variables]
    result = Precision(len(states), {a: ActionPrecision(len(states)) for a in [*judged, OTHER]},
                       tuple(n.why for n in task.conformance.narrower), origin, phase)
    if not states:
        return result
    reference = _reference(ctx, corpus, codec, modelled, everyone)
    named = {op for a in mapped for op in _operators(codec.mapping, a)}
    if not _run(ctx, codec, config, corpus, reference, states, _Plan(everyone, everyone, True), named, modelled, result,
                beside):
        # Each action alone: one action's error decides nothing about another's.
        # Each alone beside every other action's steps (an instance of one may be another's to the
        # spec); where that errs too, the fault may be another action's: alone with its own steps.
        plans = [(action, ((k, action),), False, action) for k, action in numbered] + [(OTHER, unscored, True, "rest")]
        for owner, own, rest, tag in plans:
            for beside in (everyone, own):
                result.actions[owner].unjudged = ""
                if _run(ctx, codec, config, corpus, reference, states, _Plan(own, beside, rest, tag), named, modelled,
                        result):
                    break
                tag += "-alone"
    _explain(ctx, reference, states, dict(everyone), result, modelled, codec.mapping)
    return result


def _run(ctx: CellContext, codec: Codec, config: Config, corpus: Corpus, reference: _Reference,
         states: Sequence[TMapping[str, Any]], plan: _Plan, named: set[str], modelled: Sequence[str],
         result: Precision, beside: Beside | None = None) -> bool:
    """One run of the plan (with the check ``beside`` it); records what it shows in ``result``.
    Whether it finished without an error (a bound reached is a finish: what it did not judge is
    not shown precise)."""
    text, rest = _module_body(ctx, codec, corpus, reference, states, plan, named, modelled)
    second = None
    if beside is not None:
        text += _beside_part(codec, reference, beside)
        second = f'sysmo_phase = "{BESIDE}"'
    module = check_module(ctx, f"{ctx.module}_SysmoPrec", text, codec, also=reference.codec, second=second)
    result_tlc = _tlc(ctx, f"precision-{plan.tag}", module, config, reference.files, phase=result.phase,
                      shared=beside is not None)
    if beside is not None:
        if result_tlc.verdict is not Verdict.OK or _work.bound_reached(result_tlc, module.mark):
            # Which part erred or was bounded the run cannot say: each runs alone, as it would have.
            own = dataclasses.replace(plan, tag=f"{plan.tag}-own")
            return _run(ctx, codec, config, corpus, reference, states, own, named, modelled, result)
        beside.result, beside.mark = result_tlc, module.mark
    charged = {k: a if a in result.actions else OTHER for k, a in plan.numbered}
    owned = set(charged.values()) | ({OTHER} if rest else set())
    bound = _work.bound_reached(result_tlc, module.mark)
    if result_tlc.verdict in UNFINISHED and not bound:
        # Only seconds (or the spec itself) stopped it: each action alone would be stopped too.
        why = "not every step was judged: " + _work.charged_stop(ctx, "TLC", BUDGET_S, ctx.candidate.tla or "")
        for action in owned:
            result.actions[action].unjudged = why
        return True
    if result_tlc.verdict is not Verdict.OK and not bound:
        why = mapping_fault(result_tlc, module) or f"the check of its steps ended in an error: {result_tlc.summary()}"
        for action in owned:
            result.actions[action].unjudged = why
        return False
    marks = _work.marked(result_tlc, module.mark)
    # A state the mapping leaves open is several spec states: the spec is charged at it only
    # when every one of them takes a step the system cannot (which of them the spec is in, the
    # traces cannot say).
    open_reps: dict[int, set[Any]] = {}
    for value in marks:
        if isinstance(value, tuple) and len(value) == 4 and value[1] == REPRESENTED:
            open_reps.setdefault(value[2], set()).add(value[3])
    offending: dict[tuple[str, int], set[Any]] = {}
    for value in marks:
        if not (isinstance(value, tuple) and len(value) == 7 and value[1] == EXTRA and isinstance(value[2], int)):
            continue
        _, _, w, k, args, reading, rep = value
        if not 0 < w <= len(states):
            continue
        action = charged.get(k, OTHER)
        reps = offending.setdefault((action, w), set())
        reps.add(rep)
        if reps < open_reps.get(w, {rep}):
            continue
        found = result.actions[action]
        if found.found is None:
            found.found = (w - 1, k, args, reading)
        found.extra.add(w - 1)
    if bound:
        for action in owned:
            result.actions[action].unjudged = (
                f"not every step was judged within the work bound of {ctx.task.conformance.generated:,} generated "
                "states (the task's phases.conformance.generated): the spec's steps branch too much to show it "
                "takes none the system cannot; charged to the spec")
    return True


def _tlc(ctx: CellContext, job: str, module: CheckModule, config: Config, files: TMapping[str, str],
         view: bool = True, phase: str = "conformance", shared: bool = False) -> Any:
    """The run of a check module; ``shared``, of the precision check with a check beside it."""
    both = "All" if shared else ""
    cfg = config.with_section("INIT", [f"Sysmo{both}Init"]).with_section("NEXT", [f"Sysmo{both}Next"])
    if view:
        cfg = cfg.with_section("VIEW", [f"Sysmo{both}View"])
    cfg = cfg.with_section("CONSTRAINT", ["SysmoWorkBounds" if shared else "SysmoWorkBound"], first=True)
    all_files = {**ctx.spec_files(), **work_files(ctx), **files, f"{module.name}.tla": module.text,
                 f"{module.name}.cfg": cfg.render()}
    return ctx.tlc(ctx.job_dir(phase, job), all_files, module.name,
                   ["-config", f"{module.name}.cfg", "-workers", "1", "-deadlock"], BUDGET_S,
                   work_bound=lambda r: _work.bound_reached(r, module.mark)).result


def _module_body(ctx: CellContext, codec: Codec, corpus: Corpus, reference: _Reference,
                 states: Sequence[TMapping[str, Any]], plan: _Plan, named: set[str],
                 modelled: Sequence[str]) -> tuple[str, bool]:
    """The check module's body, and whether it judges the steps of no action."""
    task = ctx.task
    canon = "SysmoCanon[sysmo_w]"
    spec_next = ctx.next_action()
    parts = next_parts(ctx.spec_modules(), spec_next, named) if spec_next is not None else None
    defs = list(codec.definitions())
    if spec_next is not None:
        defs.append(f"SysmoSpecNext ==\n    {spec_next}")
    internal = " \\/ ".join(f"SysmoInternal_{k}({canon})" for k in range(len(codec.mapping.internal)))
    if internal and spec_next is not None:
        internal = f"({internal}) /\\ SysmoSpecNext"
    params = {a.name: a.params for a in task.vocabulary.actions}
    step_defs, steps, longest = _steps(codec, params, plan, canon, parts, spec_next is not None, internal)
    defs += step_defs
    rest = None
    if plan.rest and parts is not None and parts.rest is not None:
        defs += list(parts.definitions)
        rest = parts.rest
    spec_vars = ", ".join(codec.spec_variables)
    ref_vars = ", ".join(f"sysmo_r_{v}" for v in reference.variables)
    # The spec variables a canonical state leaves open (candidates, initial values): each of
    # their choices is a spec state of its own, judged on its own (``_run``).
    varying = _varying(codec)
    rep_print = f'\n    /\\ PrintT(<<"SYSMO_MARK", "{REPRESENTED}", sysmo_w, sysmo_rep>>)' if varying else ""
    width = len(task.vocabulary.actions) + 1
    readings = {v.canonical: _reading(codec, v, canon) for v in codec.mapping.variables}
    substitutions = ",\n    ".join(reference.substitutions)
    # Level 1 (every initial state is taken before any of its successors): the reference's steps,
    # each seen as (state, instance, canonical reading).  Level 2 on: the spec's.  A step of the
    # spec whose reading the reference has is no new state under the VIEW and is not explored;
    # one that is new is a step the reference cannot take, and says so when it is explored.
    signature_defs, signatures = _signatures(codec, params, plan)
    defs += signature_defs
    taking = [f"""\\/ /\\ sysmo_phase = "init" /\\ sysmo_phase' = "ref"
       /\\ \\E sysmo_inst \\in SysmoEveryInstance :
            /\\ sysmo_i' = SysmoSignature(sysmo_inst)
            /\\ SysmoR!SysmoRStep(sysmo_inst, {canon})
       /\\ UNCHANGED <<sysmo_w, sysmo_rep, sysmo_main, sysmo_k, {spec_vars}>>""",
              f"""\\/ /\\ sysmo_phase = "init" /\\ sysmo_phase' = "spec"
       /\\ UNCHANGED <<sysmo_w, sysmo_rep, sysmo_i, sysmo_main, sysmo_k, {spec_vars}, {ref_vars}>>""",
              f"""\\/ /\\ sysmo_phase \\in {{"spec", "step"}} /\\ ~sysmo_main
       /\\ \\E sysmo_inst \\in IF sysmo_phase = "spec" THEN SysmoInstances ELSE {{sysmo_i}} :
            /\\ sysmo_i' = sysmo_inst
            /\\ SysmoStep(sysmo_inst)
       /\\ sysmo_phase' = "step" /\\ sysmo_k' = sysmo_k + 1
       /\\ UNCHANGED <<sysmo_w, sysmo_rep, {ref_vars}>>"""]
    if longest > 1:
        taking.append(f"""\\/ /\\ sysmo_phase = "step" /\\ sysmo_main /\\ sysmo_i[1] # 0
       /\\ sysmo_i' = sysmo_i /\\ sysmo_phase' = "step" /\\ sysmo_k' = sysmo_k + 1
       /\\ UNCHANGED <<sysmo_w, sysmo_rep, {ref_vars}>>
       /\\ SysmoStep(sysmo_i)""")
    if rest is not None:
        taking += [f"""\\/ /\\ sysmo_phase = "init" /\\ sysmo_phase' = "ref" /\\ sysmo_i' = {REST_KEY}
       /\\ UNCHANGED <<sysmo_w, sysmo_rep, sysmo_main, sysmo_k, {spec_vars}>>
       /\\ SysmoR!SysmoRNext \\/ UNCHANGED <<{ref_vars}>>""",
                   f"""\\/ /\\ sysmo_phase = "spec" /\\ sysmo_phase' = "step" /\\ sysmo_i' = <<0, <<>>>>
       /\\ sysmo_main' = TRUE /\\ sysmo_k' = 1 /\\ UNCHANGED <<sysmo_w, sysmo_rep, {ref_vars}>>
       /\\ {rest}"""]
    taking.append(f"""\\/ /\\ sysmo_phase = "step" /\\ SysmoJudged /\\ ~SysmoBeyond({canon}, SysmoPost)
       /\\ SysmoMarks!SeenFor({REGISTER} + (sysmo_w - 1) * {width} + sysmo_i[1], sysmo_rep,
             <<"SYSMO_MARK", "{EXTRA}", sysmo_w, sysmo_i[1], sysmo_i[2], SysmoRead, sysmo_rep>>)
       /\\ FALSE""")
    body = "\n".join(defs) + f"""
VARIABLES sysmo_w, sysmo_rep, sysmo_phase, sysmo_i, sysmo_main, sysmo_k, {ref_vars}
SysmoR == INSTANCE {reference.view} WITH
    {substitutions}
SysmoMarks == INSTANCE {_work.module_name(ctx.module, "conformance")}
SysmoPre == {tla_tuple([codec.record(s) for s in states])}
SysmoRPre == {tla_tuple([reference.codec.record(s) for s in states])}
SysmoCanon == {tla_tuple([codec.canonical(s) for s in states])}
SysmoInstances == {_instances(task, corpus.constants, plan.numbered)}
SysmoEveryInstance == {_instances(task, corpus.constants, plan.everyone)}
SysmoSignature(sysmo_x) ==
    {signatures}
SysmoStep(sysmo_x) ==
    {steps}
SysmoRead == {_reading_record(modelled, readings)}
SysmoPost == [sysmo_f \\in DOMAIN {canon} |-> IF sysmo_f \\in DOMAIN SysmoRead THEN SysmoRead[sysmo_f] ELSE {canon}[sysmo_f]]
SysmoBeyond(sysmo_pre, sysmo_post) == {_narrower(task, corpus.constants)}
SysmoJudged == sysmo_main /\\ {_final(codec, plan, internal)}
SysmoView ==
    CASE sysmo_phase = "ref" -> <<sysmo_w, sysmo_rep, sysmo_i, SysmoR!SysmoRRead>>
      [] sysmo_phase = "step" /\\ SysmoJudged ->
            <<sysmo_w, sysmo_rep, IF sysmo_i[1] = 0 THEN {REST_KEY} ELSE SysmoSignature(sysmo_i), SysmoRead>>
      [] OTHER -> <<sysmo_phase, sysmo_w, sysmo_rep, sysmo_i, sysmo_main, sysmo_k, <<{spec_vars}>>, <<{ref_vars}>>>>
ASSUME SysmoMarks!EmptyAll({REGISTER}, {REGISTER + len(states) * width})
SysmoInit ==
    /\\ sysmo_w \\in 1..{len(states)}
    /\\ sysmo_phase = "init"
    /\\ sysmo_i = <<>>
    /\\ sysmo_main = FALSE
    /\\ sysmo_k = 0
    /\\ {conj(codec.bind("SysmoPre[sysmo_w]", False))}
    /\\ sysmo_rep = <<{", ".join(varying)}>>
    /\\ SysmoR!SysmoRBind(SysmoRPre[sysmo_w]){rep_print}
SysmoNext ==
    """ + "\n    ".join(taking)
    return body, rest is not None


def _beside_part(codec: Codec, reference: _Reference, beside: Beside) -> str:
    """The check beside the precision check, in the same module: its states (``sysmo_phase`` is
    ``BESIDE``) hold the precision check's variables still, the precision check's hold its."""
    theirs = ", ".join(beside.variables)
    own = ["sysmo_w", "sysmo_rep", "sysmo_i", "sysmo_main", "sysmo_k", *(f"sysmo_r_{v}" for v in reference.variables)]
    still = {"sysmo_w": "0", "sysmo_rep": "<<>>", "sysmo_i": "<<>>", "sysmo_main": "FALSE", "sysmo_k": "0"}
    held = " /\\ ".join(f"{v} = {still.get(v, '0')}" for v in own)
    unset = " /\\ ".join(f"{v} = 0" for v in beside.variables)
    return f"""
{beside.body}
SysmoAllInit ==
    \\/ SysmoInit /\\ {unset}
    \\/ {beside.init} /\\ sysmo_phase = "{BESIDE}" /\\ {held}
SysmoAllNext ==
    \\/ SysmoNext /\\ UNCHANGED <<{theirs}>>
    \\/ sysmo_phase = "{BESIDE}" /\\ {beside.next_} /\\ UNCHANGED <<sysmo_phase, {", ".join(own)}>>
SysmoAllView == IF sysmo_phase = "{BESIDE}" THEN <<sysmo_phase, {theirs}, <<{", ".join(codec.spec_variables)}>>>> ELSE SysmoView"""


def _varying(codec: Codec) -> list[str]:
    """The spec variables a canonical state does not fix: chosen among candidates, or left to
    their initial values."""
    return [st.var for st in codec.mapping.state if st.among is not None] + [var for var, _ in codec.defaults]


#: The key the steps of no action are seen under (an instance's key is its signature, a set).
REST_KEY = '{<<"(rest)">>}'


def _signatures(codec: Codec, params: TMapping[str, Sequence[str]], plan: _Plan) -> tuple[list[str], str]:
    """``SysmoSignature(sysmo_x)``: the signature of an instance of any action the spec has."""
    defs: list[str] = []
    arms = []
    for k, action in plan.everyone:
        sdefs, signature = _signature(codec, action, params[action], k)
        defs += sdefs
        arms.append(f"sysmo_x[1] = {k} -> {signature}")
    return defs, ("CASE " + "\n      [] ".join(arms)) if arms else "{}"


def _steps(codec: Codec, params: TMapping[str, Sequence[str]], plan: _Plan, canon: str, parts: Any,
           have_next: bool, internal: str) -> tuple[list[str], str, int]:
    """``SysmoStep(sysmo_x)``'s arms, one per action of the plan: its internal steps before,
    the observed step, its internal steps after.  Also the most steps one instance takes."""
    defs: list[str] = []
    arms = []
    longest = 1
    transparent = parts.transparent if parts is not None else frozenset()
    for k, action in plan.numbered:
        sdefs, step = _step(codec, action, params[action], k, canon, "Sysmo",
                            have_next and not _operators(codec.mapping, action) <= transparent)
        defs += sdefs
        amap = codec.mapping.action(action)
        limit = amap.before + 1 + amap.after
        longest = max(longest, limit)
        branches = []
        if amap.before:
            branches.append(f"~sysmo_main /\\ sysmo_k < {amap.before} /\\ ({internal}) /\\ UNCHANGED sysmo_main")
        branches.append(f"~sysmo_main /\\ ({step}) /\\ sysmo_main' = TRUE")
        if amap.after:
            branches.append(f"sysmo_main /\\ sysmo_k < {limit} /\\ ({internal}) /\\ UNCHANGED sysmo_main")
        arms.append(f"\\/ sysmo_x[1] = {k} /\\ (" + " \\/ ".join(f"({b})" for b in branches) + ")")
    return defs, "\n    ".join(arms) if arms else "FALSE", longest


def _final(codec: Codec, plan: _Plan, internal: str) -> str:
    """Whether a state after the observed step is one the step ends in: its internal steps after
    it all taken, or none left to take."""
    after = [(k, codec.mapping.action(a)) for k, a in plan.numbered if codec.mapping.action(a).after]
    if not after:
        return "TRUE"
    arms = [f"(sysmo_i[1] = {k} /\\ (sysmo_k = {m.before + 1 + m.after} \\/ ~ENABLED ({internal})))" for k, m in after]
    others = " /\\ ".join(f"sysmo_i[1] # {k}" for k, _ in after)
    return f"({others}) \\/ " + " \\/ ".join(arms)


def _reading(codec: Codec, variable: Any, canon: str) -> str:
    """The canonical variable read from the spec's state (a history: all it has shown so far)."""
    if variable.history:
        shown = _fields.read(codec.mapping, variable.canonical, f"{canon}.{variable.canonical}")
        return f"({shown} \\cup {variable.spec_to_canonical()})"
    return variable.spec_to_canonical()


def _narrower(task: Task, constants: TMapping[str, Any]) -> str:
    """The task's narrowings over ``sysmo_pre`` and ``sysmo_post``, at the traces' constants."""
    values = {name: constant_literal(value) for name, value in constants.items()}
    for c in task.vocabulary.constants:
        values.setdefault(c.name, f"({c.value})")
    values |= {"pre": "sysmo_pre", "post": "sysmo_post"}
    whens = [f"({rename_references(n.when, values)})" for n in task.conformance.narrower]
    return " \\/ ".join(whens) if whens else "FALSE"


# ---------------------------------------------------------------------------------------------
# What an extra step is, in words


#: How many of the reference's steps an extra step is compared with, at most.
COMPARED_STEPS = 64
WHY = "why"


def _explain(ctx: CellContext, reference: _Reference, states: Sequence[TMapping[str, Any]],
             names: TMapping[int, str], result: Precision, modelled: Sequence[str], mapping: Mapping) -> None:
    """Says, for each action's first extra step, what the system does instead from the same
    state: one small run of the reference alone, which takes the same instance's steps (or any
    step, for a step of no action) and prints what each reads as."""
    asked = [(action, found.found) for action, found in result.actions.items() if found.found is not None]
    if not asked:
        return
    canon = "SysmoCanon[sysmo_j]"
    ref_vars = ", ".join(f"sysmo_r_{v}" for v in reference.variables)
    instances = [f"<<{k}, {format_value(args) if isinstance(args, tuple) else '<<>>'}>>" for _, (_, k, args, _) in asked]
    body = f"""VARIABLES sysmo_j, sysmo_done, {ref_vars}
SysmoR == INSTANCE {reference.view} WITH
    {(',' + chr(10) + '    ').join(reference.substitutions)}
SysmoRPre == {tla_tuple([reference.codec.record(states[w]) for _, (w, _, _, _) in asked])}
SysmoCanon == {tla_tuple([reference.codec.canonical(states[w]) for _, (w, _, _, _) in asked])}
SysmoAsked == {tla_tuple(instances)}
ASSUME \\A sysmo_r \\in 1..{len(asked)} : TLCSet({REGISTER} + sysmo_r, 0)
SysmoInit ==
    /\\ sysmo_j \\in 1..{len(asked)}
    /\\ sysmo_done = FALSE
    /\\ SysmoR!SysmoRBind(SysmoRPre[sysmo_j])
SysmoNext ==
    /\\ ~sysmo_done /\\ sysmo_done' = TRUE /\\ UNCHANGED sysmo_j
    /\\ IF SysmoAsked[sysmo_j][1] = 0 THEN SysmoR!SysmoRNext ELSE SysmoR!SysmoRStep(SysmoAsked[sysmo_j], {canon})
    /\\ IF TLCGet({REGISTER} + sysmo_j) < {COMPARED_STEPS}
       THEN TLCSet({REGISTER} + sysmo_j, TLCGet({REGISTER} + sysmo_j) + 1)
            /\\ PrintT(<<"SYSMO_MARK", "{WHY}", sysmo_j, SysmoR!SysmoRRead'>>)
       ELSE TRUE"""
    module = check_module(ctx, f"{ctx.module}_SysmoWhy", body, reference.codec, spec=False)
    run = _tlc(ctx, "precision-why", module, Config("", ()), reference.files, view=False, phase=result.phase)
    steps: dict[int, list[Any]] = {}
    if run.verdict is Verdict.OK:
        for value in _work.marked(run, module.mark):
            if isinstance(value, tuple) and len(value) == 4 and value[1] == WHY and isinstance(value[2], int):
                steps.setdefault(value[2], []).append(value[3])
    for j, (action, (w, k, args, reading)) in enumerate(asked, start=1):
        result.actions[action].first = _describe(_fields.stripped_state(states[w], mapping), names.get(k, OTHER), args, reading, modelled,
                                                 steps.get(j, []) if run.verdict is Verdict.OK else None,
                                                 result.origin)


def _describe(pre: TMapping[str, Any], action: str, args: Any, reading: Any, modelled: Sequence[str],
              system: list[Any] | None, origin: str = "a traced state") -> str:
    """An extra step in words: from which state, what the spec reached, and where that differs
    from the system's closest step there (or that the system has no such step)."""
    call = f"{action}({', '.join(format_value(a) for a in args)})" if isinstance(args, tuple) and args else action
    if action == OTHER:
        call = "a step of no action"
    reached = _changes(pre, reading, modelled)
    text = (f"from {origin}, the spec's {call} reaches a state the system cannot reach by it"
            f"\n  the spec's step: {'; '.join(reached) if reached else 'changes nothing'}")
    if system is not None and not system:
        text += f"\n  the system: no step of {call} from this state"
    elif system:
        closest = min(system, key=lambda r: len(_differences(r, reading)))
        differs = _differences(closest, reading)
        shown = "; ".join(differs[:6]) + (f"; ... {len(differs) - 6} more" if len(differs) > 6 else "")
        text += (f"\n  the system's closest step ({len(system)} possible{'+' if len(system) >= COMPARED_STEPS else ''}) "
                 f"differs: {shown}")
    return text + f"\n  pre:  {_cut(pre)}"


def _differences(system: Any, spec: Any) -> list[str]:
    """Where two readings differ, variable by variable."""
    if not isinstance(system, TMapping) or not isinstance(spec, TMapping):
        return value_differences("the state", system, spec)
    return [d for name in system for d in value_differences(name, system[name], spec.get(name))]


def _changes(pre: TMapping[str, Any], reading: Any, modelled: Sequence[str]) -> list[str]:
    """What the spec's step changed, read canonically."""
    if not isinstance(reading, TMapping):
        return [f"reads as {_short(format_value(reading))}"]
    found = [d for name in modelled if name in reading
             for d in value_differences(name, _as_value(pre.get(name)), reading[name], step=True)]
    return found[:8] + ([f"... {len(found) - 8} more"] if len(found) > 8 else [])


def _as_value(value: Any) -> Any:
    """A trace's JSON value as the value TLC prints for it (to compare their texts)."""
    from ..tla.values import parse_value

    try:
        return parse_value(tla_literal(value))
    except Exception:  # noqa: BLE001 - a value with no reading is shown as it is
        return value


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + " ..."


def _cut(state: TMapping[str, Any]) -> str:
    import json

    text = json.dumps(state, sort_keys=True)
    return text if len(text) <= 400 else f"{text[:400]} ... ({len(text)} characters)"


# ---------------------------------------------------------------------------------------------
# Which actions ever change the state (P2)


MOVES = "moves"


def moving(ctx: CellContext, codec: Codec, config: Config, corpus: Corpus, actions: Sequence[str],
           own_windows: bool = False) -> set[str] | None:
    """Which of ``actions`` (target actions the spec has) change the canonical state by some
    step of theirs from some traced state, read through the mapping; with ``own_windows``, only
    from the states where the system took that action and changed the state, with the system's
    arguments (an operator mapped to an unrelated action never moves there).  None when that
    could not be found out (the check did not finish), which then charges nobody."""
    task = ctx.task
    numbered = tuple((k, a) for k, a in enumerate((a.name for a in task.vocabulary.actions), start=1) if a in actions)
    params = {a.name: a.params for a in task.vocabulary.actions}
    if own_windows:
        chosen = own_moving_windows(corpus, codec.lost, [a for _, a in numbered])
        states = [w.pre for w in chosen]
        number = {a: k for k, a in numbered}
        literal = [f"<<{number[w.action]}, <<{', '.join(tla_literal(v, codec.shared) for v in w.args)}>>>>"
                   for w in chosen]
        instances, listed = "{SysmoInst[sysmo_w]}", f"SysmoInst == {tla_tuple(literal)}"
    else:
        states = pre_states(corpus, codec.lost)
        if any(not task.vocabulary.domain(p) for _, a in numbered for p in params[a]):
            return None  # no domains to try the arguments in (P3 reports it as the task's error)
        instances, listed = "SysmoInstances", f"SysmoInstances == {_instances(task, corpus.constants, numbered)}"
    if not states or not numbered:
        return set()
    canon = "SysmoCanon[sysmo_w]"
    spec_next = ctx.next_action()
    defs = list(codec.definitions())
    if spec_next is not None:
        defs.append(f"SysmoSpecNext ==\n    {spec_next}")
    arms = []
    for k, action in numbered:
        sdefs, step = _step(codec, action, params[action], k, canon, "Sysmo", spec_next is not None)
        defs += sdefs
        arms.append(f"\\/ sysmo_x[1] = {k} /\\ ({step})")
    modelled = [v.canonical for v in codec.mapping.variables]
    readings = {v.canonical: _reading(codec, v, canon) for v in codec.mapping.variables}
    before = _reading_record(modelled, {v: f"{canon}.{v}" for v in modelled})
    body = "\n".join(defs) + f"""
VARIABLES sysmo_w, sysmo_i
SysmoMarks == INSTANCE {_work.module_name(ctx.module, "conformance")}
SysmoPre == {tla_tuple([codec.record(s) for s in states])}
SysmoCanon == {tla_tuple([codec.canonical(s) for s in states])}
{listed}
SysmoStep(sysmo_x) ==
    {(chr(10) + '    ').join(arms)}
SysmoRead == {_reading_record(modelled, readings)}
ASSUME SysmoMarks!ForgetAll({REGISTER}, {REGISTER + len(task.vocabulary.actions)})
SysmoInit ==
    /\\ sysmo_w \\in 1..{len(states)}
    /\\ sysmo_i = <<>>
    /\\ {conj(codec.bind("SysmoPre[sysmo_w]", False))}
SysmoNext ==
    /\\ sysmo_i = <<>>
    /\\ \\E sysmo_inst \\in {instances} : SysmoMarks!Unseen({REGISTER} + sysmo_inst[1]) /\\ sysmo_i' = sysmo_inst /\\ SysmoStep(sysmo_inst)
    /\\ UNCHANGED sysmo_w
    /\\ SysmoRead' # {before}
    /\\ SysmoMarks!Seen({REGISTER} + sysmo_i'[1], <<"SYSMO_MARK", "{MOVES}", sysmo_i'[1]>>)"""
    module = check_module(ctx, f"{ctx.module}_SysmoMoves", body, codec)
    result = _tlc(ctx, "moves-own" if own_windows else "moves", module, config, {}, view=False, phase="runtime")
    if result.verdict is not Verdict.OK:
        return None
    names = dict(numbered)
    return {names[v[2]] for v in _work.marked(result, module.mark)
            if isinstance(v, tuple) and len(v) == 3 and v[1] == MOVES and v[2] in names}
