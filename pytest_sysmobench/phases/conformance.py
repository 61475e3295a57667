"""P3: can the spec take every step the real system took?

Windows are cut from traces of the running system.  A window passes if the spec, started in
a spec state that the mapping gives for the window's pre-state, takes a step of the mapped
action (with up to the mapping's internal steps around it) that reaches a spec state whose
canonical reading is the post-state.  The windows of every action are checked in one TLC run:
Init ranges over window ids, a window takes only its own action's steps, and each window that
conforms prints its id behind a mark that only this installation can write (the spec cannot
forge it).  That run decides only when it finishes within its work bound without an error;
otherwise each action's windows are checked in a run of their own, so that one action's error
or branching decides nothing about another's.  Identical windows are checked once.
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

A mapping may leave canonical variables unmodelled (a coarser spec).  Windows are then judged on
the variables it models, but a step that changes an unmodelled variable is one the spec cannot
show, and fails: so leaving out a variable the spec gets wrong never raises its score.

Every check is bounded by work (the task's ``phases.conformance.generated`` successor states,
counted in a TLC register): windows a check has not shown to conform when the bound ends it
fail, charged to the spec, the same on every machine.  Seconds stop only what no work bound
can (an evaluation that never ends).

Whole-trace validation is recorded as a stricter diagnostic: the longest prefix of each trace
that the spec's Init and Next accept, with an explicit step counter.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Mapping as TMapping, Sequence

from .. import trace_coverage
from ..evaluator import EvaluatorError
from ..mapping import CANON, Mapping
from ..tla.values import record_literal, tla_literal, value_differences
from ..scoring import Cause, PhaseResult, Status
from ..tla.cfg import Config
from ..tla.messages import UNFINISHED, TlcResult, Verdict
from ..traces import Corpus, Trace, Window
from . import _work
from ._fields import writes_left_out
from ._codec import (BUDGET_S, CheckModule, Codec, MappingProblem, action_step, check_module, conj, mapping_fault,
                     marked_ids, prepare_codec, run_check, tla_tuple)
from ._context import CellContext, evaluator_failure, no_mapping
from ._infer import given_or_inferred
from ._precision import OTHER, ActionPrecision, Beside, Precision, ReferenceUnfit, check_precision

def window_module(ctx: CellContext, codec: Codec, name: str, action: str, windows: Sequence[Window],
                  nearest: bool = False) -> CheckModule:
    """The check of an action's windows: each window's id is printed when some step of the
    action (with the internal steps its mapping allows) reaches the window's post-state.  With
    ``nearest``, every step of the action is taken instead, and each prints what it shows wrong
    (``NEAREST``), so that a failing window can say where the spec's closest step differs."""
    defs, choice, late_print = _action_step(ctx, codec, action, len(windows[0].args), nearest)
    body = "\n".join(codec.definitions() + defs + _spec_next(ctx)) + _windows_variables(codec, windows) \
        + _post_ok(codec, _nearest_definitions(codec) if nearest else "") + _next(f"\\/ {choice}{late_print}")
    return check_module(ctx, name, body, codec)


def together_module(ctx: CellContext, codec: Codec, name: str, actions: Sequence[tuple[str, Sequence[Window]]]) -> CheckModule:
    """The windows of several actions in one run: a window's steps are those of its own action
    (``SysmoAct``), so each window is checked exactly as in its action's own module, and the run
    costs one start of TLC instead of one per action.  Its work bound is one action's share of
    the task's: past it, each action's own run decides (a spec whose steps branch that much
    pays for at most one share more)."""
    defs = _spec_next(ctx)
    branches: list[str] = []
    owner: list[str] = []
    every: list[Window] = []
    for k, (action, windows) in enumerate(actions, start=1):
        action_defs, choice, late_print = _action_step(ctx, codec, action, len(windows[0].args), tag=f"{k}_")
        defs += action_defs
        branches.append(f"SysmoAction_{k} ==\n    /\\ \\/ {choice}{late_print}")
        owner += [str(k)] * len(windows)
        every += windows
    dispatch = "\n       ".join(f"\\/ SysmoAct[sysmo_w] = {k} /\\ SysmoAction_{k}" for k in range(1, len(actions) + 1))
    body = "\n".join(codec.definitions() + defs) + _windows_variables(codec, every) \
        + f"\nSysmoAct == <<{', '.join(owner)}>>" + _post_ok(codec) + "\n" + "\n".join(branches) + _next(dispatch)
    return check_module(ctx, name, body, codec, generated=max(1, ctx.task.conformance.generated // len(actions)))


def _action_step(ctx: CellContext, codec: Codec, action: str, arity: int, nearest: bool = False,
                 tag: str = "") -> tuple[list[str], str, str]:
    """An action's mapped step from window ``sysmo_w``'s pre-state, with the internal steps its
    mapping allows around it: the definitions it needs, its branches, and the print that follows
    them when internal steps come after the action."""
    amap = codec.mapping.action(action)
    params = next((a.params for a in ctx.task.vocabulary.actions if a.name == action), ())
    args = [f"SysmoArgs[sysmo_w][{k}]" for k in range(1, arity + 1)]
    pre = "SysmoPre[sysmo_w]"
    spec_next = ctx.next_action()
    # A step of the mapped action that is no step of the spec does not count.
    defs, step = action_step(codec, amap, params[:arity], args, f"{pre}.{CANON}", f"SysmoStep_{tag}", spec_next is not None)
    internal = " \\/ ".join(f"SysmoInternal_{k}({pre}.{CANON})" for k in range(len(codec.mapping.internal)))
    if spec_next is not None and internal:
        internal = f"({internal}) /\\ SysmoSpecNext"
    reached = ("" if amap.after else """
          /\\ SysmoPostOk
          /\\ PrintT(<<"SYSMO_MARK", sysmo_w>>)""") if not nearest else """
          /\\ PrintT(<<"SYSMO_MARK", "nearest", SysmoShown, SysmoWrong>>)"""
    # Where the action's step must reach the window's post-state itself, that state is set
    # first and the spec's step checked against it (``Codec.assigned``).
    first = "" if nearest or amap.after else "\n          /\\ SysmoPostFirst"
    branches = [f"""/\\ ~sysmo_main{first}
          /\\ {step}
          /\\ sysmo_main' = TRUE""" + reached]
    if amap.before:
        branches.insert(0, f"/\\ ~sysmo_main /\\ sysmo_k < {amap.before} /\\ ({internal}) /\\ UNCHANGED sysmo_main")
    if amap.after:
        branches.append(f"/\\ sysmo_main /\\ sysmo_k < {amap.before + 1 + amap.after} /\\ ({internal}) /\\ UNCHANGED sysmo_main")
    choice = "\n       \\/ ".join(branches)
    late_print = """
    /\\ IF sysmo_main' /\\ SysmoPostOk THEN PrintT(<<"SYSMO_MARK", sysmo_w>>) ELSE TRUE""" if amap.after else ""
    return defs, choice, late_print


def _spec_next(ctx: CellContext) -> list[str]:
    spec_next = ctx.next_action()
    return [] if spec_next is None else [f"SysmoSpecNext ==\n    {spec_next}"]


def _post_ok(codec: Codec, also: str = "") -> str:
    """Whether the state reached reads, under the mapping, as window ``sysmo_w``'s post-state."""
    return f"""
SysmoPostFirst ==
        /\\ {conj(codec.assigned("SysmoPost[sysmo_w]"), "        ")}
SysmoPostOk ==
        /\\ {conj(codec.bind("SysmoPost[sysmo_w]", True, "SysmoPre[sysmo_w]"), "        ")}{also}"""


def _next(step: str) -> str:
    """A window check's next state: one more step of the window's action, ``step``."""
    return f"""
SysmoNext ==
    /\\ sysmo_k' = sysmo_k + 1
    /\\ UNCHANGED sysmo_w
    /\\ {step}"""


def _windows_variables(codec: Codec, windows: Sequence[Window]) -> str:
    """The windows as constants, and the start of a check at window ``sysmo_w``'s pre-state."""
    return f"""
VARIABLES sysmo_w, sysmo_k, sysmo_main
SysmoArgs == {tla_tuple(["<<" + ", ".join(tla_literal(a, codec.shared) for a in w.args) + ">>" for w in windows])}
SysmoPre == {tla_tuple([codec.record(w.pre) for w in windows])}
SysmoPost == {tla_tuple([codec.record(w.post) for w in windows])}
SysmoInit ==
    /\\ sysmo_w \\in 1..{len(windows)}
    /\\ sysmo_k = 0
    /\\ sysmo_main = FALSE
    /\\ {conj(codec.bind("SysmoPre[sysmo_w]", False))}"""


def _nearest_definitions(codec: Codec) -> str:
    """How many observed things a reached state shows right, and each it shows wrong (as the
    spec's side and the trace's), for the one window of a ``nearest`` module."""
    items = codec.observed("SysmoPost[1]", "SysmoPre[1]")
    if not items:
        return "\nSysmoShown == 0\nSysmoWrong == <<>>"
    shown = " + ".join(f"(IF {o.check} THEN 1 ELSE 0)" for o in items)
    wrong = ", ".join(f'IF {o.check} THEN <<>> ELSE <<"{o.what}", {o.spec}, {o.expected}>>' for o in items)
    return f"\nSysmoShown == {shown}\nSysmoWrong == <<{wrong}>>"


def _nearest_step(ctx: CellContext, codec: Codec, config: Config, action: str, window: Window) -> str:
    """Where the spec's closest step from the window's pre-state differs from what the system
    did: one more small TLC run for the first failing window of an action, so that a user need
    not diff the states by eye.  Empty when it says nothing certain (internal steps around the
    action, a run that did not finish)."""
    amap = codec.mapping.action(action)
    if amap.before or amap.after:
        return ""
    module = window_module(ctx, codec, f"{ctx.module}_SysmoNear_{action}", action, [window], nearest=True)
    result = run_check(ctx, f"nearest-{action}", module, config, "SysmoInit", "SysmoNext")
    if result.verdict is not Verdict.OK or mapping_fault(result, module, action) is not None:
        return ""
    steps = [v for v in _work.marked(result, module.mark)
             if isinstance(v, tuple) and len(v) == 4 and v[1] == "nearest" and isinstance(v[2], int)]
    call = f"{action}({', '.join(json.dumps(a) for a in window.args)})"
    if not steps:
        return f"\n  the spec: no step of {call} from this pre-state (not enabled there, or not a step of its Next)"
    best = max(steps, key=lambda v: v[2])
    wrong = [w for w in best[3] if isinstance(w, tuple) and len(w) == 3]
    if not wrong:
        return ""
    found: list[str] = []
    for what, spec, system in wrong:
        found += value_differences(str(what), system, spec)
    shown = "; ".join(found[:SHOWN_DIFFERENCES]) + (f"; ... {len(found) - SHOWN_DIFFERENCES} more"
                                                    if len(found) > SHOWN_DIFFERENCES else "")
    return f"\n  the spec's closest {call} step ({len(steps)} tried) differs: {shown}"


#: How many differences the nearest step's description lists.
SHOWN_DIFFERENCES = 6


def _traces_check(ctx: CellContext, codec: Codec, traces: Sequence[Trace]) -> Beside:
    """Every whole trace in one run: each step of trace ``t`` the spec takes prints ``<<mark, t,
    i>>`` for the ``i``-th state reached, so one TLC run says how far the spec follows each."""
    trace = "SysmoTraces[sysmo_t]"
    body = f"""
VARIABLES sysmo_t, sysmo_ti
SysmoTraces == {tla_tuple([tla_tuple([codec.record(state) for state in t.states]) for t in traces])}
SysmoLengths == <<{", ".join(str(len(t.states)) for t in traces)}>>
SysmoTraceInit ==
    /\\ sysmo_t \\in 1..{len(traces)}
    /\\ sysmo_ti = 1
    /\\ Init
    /\\ {conj(codec.bind(f"{trace}[1]", False))}
    /\\ PrintT(<<"SYSMO_MARK", sysmo_t, 1>>)
SysmoTraceNext ==
    /\\ sysmo_ti < SysmoLengths[sysmo_t]
    /\\ {conj(codec.assigned(f"{trace}[sysmo_ti + 1]"))}
    /\\ {ctx.next_action() or "Next"}
    /\\ {conj(codec.bind(f"{trace}[sysmo_ti + 1]", True, f"{trace}[sysmo_ti]"))}
    /\\ sysmo_ti' = sysmo_ti + 1
    /\\ UNCHANGED sysmo_t
    /\\ PrintT(<<"SYSMO_MARK", sysmo_t, sysmo_ti + 1>>)"""
    return Beside(body, ("sysmo_t", "sysmo_ti"), "SysmoTraceInit", "SysmoTraceNext")


@dataclass
class _ActionOutcome:
    action: str
    windows: int
    passed: int
    error: str = ""
    first_failure: str = ""
    #: Windows failed without a step being tried: a state the mapping cannot represent.
    unrepresentable: int = 0
    #: Windows failed without a step being tried: the observed step changes a variable the
    #: mapping leaves unmodelled, so the spec cannot show it.
    unmodelled_changes: int = 0
    #: Of the windows that change the state: how many, and how many passed.
    changing: int = 0
    changing_passed: int = 0
    #: Whether the spec takes steps of this action the system cannot (None: not judged).
    precision: ActionPrecision | None = None

    @property
    def recalled(self) -> bool:
        return bool(self.windows) and self.passed == self.windows and not self.error

    @property
    def score(self) -> float:
        """The original's zero tolerance, both ways: every window passes and no step is extra."""
        return 1.0 if self.recalled and (self.precision is None or self.precision.complete) else 0.0


def _hidden_change(window: Window, mapping: Mapping) -> list[str]:
    """The unmodelled variables a step changes, and the variables in whose records it writes a
    field the spec leaves out (``messages.lastLog``).  The spec has no counterpart for them, so
    it cannot show that part of the step: the window fails, or leaving a variable or a field out
    would raise the score of a spec that is wrong in it."""
    changed = [v for v in mapping.unmodelled if window.pre.get(v) != window.post.get(v)]
    for var, fields in mapping.unmodelled_fields:
        if writes_left_out(window.pre.get(var), window.post.get(var), fields):
            changed.append(f"{var} (its {', '.join(fields)})")
    return changed


def _failed_action(action: str, windows: list[Window], why: str) -> _ActionOutcome:
    """Every window of an action the spec cannot take at all, with the reason."""
    return _ActionOutcome(action, len(windows), 0, why, windows[0].describe() if windows else "",
                          changing=sum(1 for w in windows if w.pre != w.post))


@dataclass
class _Screened:
    """An action's windows before any is checked: the outcome so far, the windows its spec could
    show (``shown``), and the distinct ones among them, which a TLC run checks."""

    outcome: _ActionOutcome
    windows: list[Window]
    shown: list[Window]
    distinct: list[Window]


def _screen(ctx: CellContext, codec: Codec, action: str, windows: list[Window]) -> _Screened | _ActionOutcome:
    why = ctx.missing_actions(codec.mapping).get(action)
    if why is not None:
        return _failed_action(action, windows, f"the spec has no action for {action} ({why})")
    representable = [w for w in windows if not codec.lost
                     or (record_literal(w.pre) not in codec.lost and record_literal(w.post) not in codec.lost)]
    shown = [w for w in representable if not _hidden_change(w, codec.mapping)]
    unique: dict[str, Window] = {}
    for window in shown:
        unique.setdefault(window.key(), window)
    distinct = list(unique.values())
    outcome = _ActionOutcome(action, len(windows), 0, unrepresentable=len(windows) - len(representable),
                             unmodelled_changes=len(representable) - len(shown),
                             changing=sum(1 for w in windows if w.pre != w.post))
    if outcome.unrepresentable:
        outcome.first_failure = next(w for w in windows if w not in representable).describe()
    elif outcome.unmodelled_changes:
        first = next(w for w in representable if w not in shown)
        outcome.first_failure = (f"{first.describe()}\n  changes {', '.join(_hidden_change(first, codec.mapping))}, "
                                 "which the mapping leaves unmodelled")
    if not distinct:
        outcome.error = (f"every window has a state the spec cannot represent under its mapping ({codec.lost_reason})"
                         if not outcome.unmodelled_changes else
                         "every window changes a variable the mapping leaves unmodelled: the spec cannot show these steps")
        return outcome
    return _Screened(outcome, windows, shown, distinct)


def _check_alone(ctx: CellContext, codec: Codec, config: Config, screened: _Screened) -> _ActionOutcome:
    """One action's windows in a run of their own: what a run of several actions together
    could not settle (it ended early or in an error) is judged as each action alone gives it."""
    outcome, distinct = screened.outcome, screened.distinct
    action = outcome.action
    module = window_module(ctx, codec, f"{ctx.module}_SysmoWin_{action}", action, distinct)
    result = run_check(ctx, f"windows-{action}", module, config, "SysmoInit", "SysmoNext")
    fault = mapping_fault(result, module, action)
    if fault is not None:
        return _failed_action(action, screened.windows, f"its mapped step cannot be checked: {fault}")
    ok_ids = marked_ids(result, module.mark)
    ok_keys = {distinct[i - 1].key() for i in ok_ids if 0 < i <= len(distinct)}
    if _work.bound_reached(result, module.mark) and len(ok_keys) < len(distinct):
        outcome.error = (f"{len(distinct) - len(ok_keys)} of {len(distinct)} distinct windows not accepted within "
                         f"the work bound of {ctx.task.conformance.generated:,} generated states (the task's "
                         "phases.conformance.generated): the spec's steps branch too much to show them; "
                         "charged to the spec")
    elif result.verdict in UNFINISHED and len(ok_keys) < len(distinct):
        outcome.error = (f"{len(distinct) - len(ok_keys)} of {len(distinct)} distinct windows not accepted: "
                         + _work.charged_stop(ctx, "TLC", BUDGET_S, ctx.candidate.tla or ""))
    elif result.verdict is not Verdict.OK and result.verdict not in UNFINISHED:
        outcome.error = result.summary()
    return _settled(ctx, codec, config, screened, ok_keys, finished=result.verdict is Verdict.OK)


def _settled(ctx: CellContext, codec: Codec, config: Config, screened: _Screened, ok_keys: set[str],
             finished: bool) -> _ActionOutcome:
    """The action's outcome once its accepted windows are known; the first failing window says
    where the spec's closest step differs, when the run that checked it finished."""
    outcome = screened.outcome
    outcome.passed = sum(1 for w in screened.shown if w.key() in ok_keys)
    outcome.changing_passed = sum(1 for w in screened.shown if w.key() in ok_keys and w.pre != w.post)
    failing = next((w for w in screened.shown if w.key() not in ok_keys), None)
    if failing is not None and not outcome.first_failure:
        nearest = _nearest_step(ctx, codec, config, outcome.action, failing) if finished else ""
        outcome.first_failure = failing.describe(nearest)
    return outcome


def _check_together(ctx: CellContext, codec: Codec, config: Config, screened: list[_Screened]) -> list[_ActionOutcome]:
    """Every action's windows in one TLC run; its verdict stands only when the run finished
    within its work bound without an error, where each action's own run would have finished
    too, exploring a part of these states, and accepted the same windows.  Otherwise each
    action is checked alone, as its own run decides it (a bound reached or an error in one
    action must not decide another's windows)."""
    module = together_module(ctx, codec, f"{ctx.module}_SysmoWin", [(s.outcome.action, s.distinct) for s in screened])
    result = run_check(ctx, "windows", module, config, "SysmoInit", "SysmoNext")
    if result.verdict is not Verdict.OK or _work.bound_reached(result, module.mark):
        return [_check_alone(ctx, codec, config, s) for s in screened]
    every = [w for s in screened for w in s.distinct]
    ok_keys = {every[i - 1].key() for i in marked_ids(result, module.mark) if 0 < i <= len(every)}
    return [_settled(ctx, codec, config, s, ok_keys, finished=True) for s in screened]


#: Whether the windows of every action are first checked in one run (the verdicts are the same
#: either way; the tests and ``perf/bench.py`` compare both).
WINDOWS_TOGETHER = True
#: Whether P3 asks for extra steps too (``perf/bench.py`` measures what that costs; off, P3 is
#: recall alone, as it was).
PRECISION = True


def _check_actions(ctx: CellContext, codec: Codec, config: Config, windows: dict[str, list[Window]],
                   targets: Sequence[str]) -> list[_ActionOutcome]:
    screened = {action: _screen(ctx, codec, action, windows[action]) for action in targets}
    checked = [s for s in screened.values() if isinstance(s, _Screened)]
    if WINDOWS_TOGETHER and len(checked) > 1:
        done = {o.action: o for o in _check_together(ctx, codec, config, checked)}
    else:
        done = {s.outcome.action: _check_alone(ctx, codec, config, s) for s in checked}
    return [done[a] if isinstance(s, _Screened) else s for a, s in screened.items()]


def _check_traces(ctx: CellContext, codec: Codec, config: Config, traces: Sequence[Trace],
                  check: Beside) -> list[dict[str, Any]]:
    """How far the spec follows each whole trace (a diagnostic beside the windows, which score):
    read from the run the ``check`` shared with the precision check, unless that run could not
    say (an error, a bound, or no trace's first state taken: alone, no initial state is its own
    verdict)."""
    result = check.result
    reached = _reached(result, check.mark) if result is not None else {}
    if result is None or not reached:
        module = check_module(ctx, f"{ctx.module}_SysmoTraces", "\n".join(codec.definitions()) + check.body, codec)
        result = run_check(ctx, "traces", module, config, "SysmoTraceInit", "SysmoTraceNext")
        reached = _reached(result, module.mark) if result.verdict is not Verdict.VACUOUS else {}
    return [{"trace": trace.name, "states": len(trace.states), "accepted_prefix": reached.get(k, 0),
             "accepted": reached.get(k, 0) == len(trace.states), "verdict": result.verdict.value}
            for k, trace in enumerate(traces, start=1)]


def _reached(result: TlcResult, mark: str) -> dict[int, int]:
    """How many states of each trace (by number) the spec followed, as the run printed them."""
    reached: dict[int, int] = {}
    for value in _work.marked(result, mark):
        if isinstance(value, tuple) and len(value) == 3 and all(isinstance(v, int) for v in value[1:]):
            reached[value[1]] = max(reached.get(value[1], 0), value[2])
    return reached


def _prepare(ctx: CellContext) -> tuple[Corpus | None, Codec | None, Config | None, PhaseResult | None]:
    corpus = ctx.scored_corpus()
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
    outcomes = _check_actions(ctx, codec, config, windows, targets)
    missing = ctx.missing_actions(codec.mapping)
    whole_check = _traces_check(ctx, codec, corpus.traces)
    try:
        precision = check_precision(ctx, codec, config, corpus, [o.action for o in outcomes if o.action not in missing],
                                    beside=whole_check) if PRECISION else Precision(0, {OTHER: ActionPrecision(0)})
    except ReferenceUnfit as exc:
        return PhaseResult("conformance", Status.ERROR, None, f"task error: {exc}", {"task_error": str(exc)},
                           cause=Cause.TASK)
    for outcome in outcomes:
        outcome.precision = precision.actions.get(outcome.action)
    whole = _check_traces(ctx, codec, config, corpus.traces, whole_check)
    verdict = _verdict(outcomes, whole, corpus, codec, precision)
    if ctx.seeds:
        verdict = _noted(verdict, f"on the traces of seed(s) {', '.join(map(str, ctx.seeds))}", seeds=list(ctx.seeds))
    # A P3 score that rests on few windows says so.
    note = trace_coverage.p3_note(trace_coverage.of(ctx.task, corpus, held_out=False))
    if note is None or verdict.score is None:
        return verdict
    return _noted(verdict, f"thin evidence: {note}", evidence=note)


def _noted(verdict: PhaseResult, note: str, **details: Any) -> PhaseResult:
    """The verdict with ``note`` on its first line and ``details`` beside its own."""
    first, _, rest = verdict.reason.partition("\n")
    reason = f"{first} ({note})" + (f"\n{rest}" if rest else "")
    return dataclasses.replace(verdict, reason=reason, details={**verdict.details, **details})



def _verdict(outcomes: list[_ActionOutcome], whole: list[dict[str, Any]], corpus: Corpus, codec: Codec,
             precision: Precision) -> PhaseResult:
    total = sum(o.windows for o in outcomes)
    passed = sum(o.passed for o in outcomes)
    other = precision.actions[OTHER]
    # Steps of no action that the system cannot take count as one more action that fails (only
    # then: a spec whose every step is an action's is scored on its actions alone).
    score = sum(o.score for o in outcomes) / (len(outcomes) + (not other.complete)) if outcomes else 0.0
    moving = [o for o in outcomes if o.changing]
    details: dict[str, Any] = {
        "actions": {o.action: {"windows": o.windows, "passed": o.passed, "score": o.score, "error": o.error,
                               "first_failure": o.first_failure, "unrepresentable": o.unrepresentable,
                               "unmodelled_changes": o.unmodelled_changes,
                               "window_rate": round(o.passed / o.windows, 6) if o.windows else None,
                               "changing_windows": o.changing, "changing_passed": o.changing_passed,
                               "precision": o.precision.as_dict() if o.precision is not None else None}
                    for o in outcomes},
        "unrepresentable_states": len(codec.lost),
        "window_pass_rate": round(passed / total, 6) if total else None,
        "windows": total,
        # P3 over the windows that change the state: what a spec that does nothing cannot pass.
        "p3_on_change": round(sum(1.0 for o in moving if o.changing_passed == o.changing
                                  and (o.precision is None or o.precision.complete)) / len(moving), 6) if moving else None,
        "precision": {"states": precision.states, "narrower": list(precision.narrower), "other_steps": other.as_dict()},
        "traces": whole,
        "trace_corpus_sha256": corpus.sha256,
        "mapping": codec.mapping.describe(),
        "unmodelled": [*codec.mapping.unmodelled, *codec.mapping.left_out],
        "defaults": dict(codec.defaults),
        **codec.provenance,
    }
    if not outcomes:
        return PhaseResult("conformance", Status.SKIPPED, None, "skipped: the traces have no windows of target actions",
                           details, cause=Cause.NO_TRACES)
    failing = [o for o in outcomes if o.score < 1.0]
    unmodelled = details["unmodelled"]
    judged = (f" (judged on the variables the spec models; unmodelled: {', '.join(unmodelled)}; "
              "a step that changes one fails)") if unmodelled else ""
    if not failing and other.complete:
        return PhaseResult("conformance", Status.PASSED, 1.0,
                           f"all {total} windows of {len(outcomes)} actions conform, and from {precision.states} traced "
                           f"states the spec takes no step the system cannot{judged}", details)
    reason = f"{len(outcomes) - len(failing)}/{len(outcomes)} actions conform{judged}"
    if failing:
        reason += "; failing: " + ", ".join(f"{o.action} ({_rates(o)})" for o in failing)
    if not other.complete:
        reason += f"; and the spec takes steps of no action the system cannot take ({OTHER}: {_precise(other)})"
    if codec.lost:
        reason += f"\nstates the spec cannot represent under its mapping: {codec.lost_reason}"
    missed = [o for o in failing if not o.recalled]
    first = missed[0] if missed else None
    if first is not None and first.error:
        reason += f"\n{first.action}: {first.error}"
    if first is not None and first.first_failure:
        reason += f"\nfirst failing window of {first.action}: {first.first_failure}"
    extra = next((o for o in failing if o.precision is not None and not o.precision.complete), None)
    if extra is not None and extra.precision is not None:
        reason += f"\n{extra.action}: {_extra(extra.precision)}"
    if not other.complete:
        reason += f"\n{OTHER}: {_extra(other)}"
    reason += f"\nmapping: {codec.mapping.describe()}"
    if missed:
        only_hidden = all(o.unmodelled_changes and o.passed + o.unmodelled_changes == o.windows for o in missed)
        klass = "unmodelled_variables" if only_hidden else "steps_rejected"
    else:
        klass = "extra_steps"
    return PhaseResult("conformance", Status.FAILED, round(score, 6), reason, {**details, "failure_class": klass})


def _rates(outcome: _ActionOutcome) -> str:
    text = f"{outcome.passed}/{outcome.windows}"
    if outcome.precision is not None and not outcome.precision.complete:
        text += f"; {_precise(outcome.precision)}"
    return text


def _precise(precision: ActionPrecision) -> str:
    if precision.unjudged:
        return "precision not shown"
    return f"no extra step at {precision.precise}/{precision.states} states"


def _extra(precision: ActionPrecision) -> str:
    return precision.unjudged or f"{precision.first}"
