"""P2: does TLC run the spec without error, and do its actions fire?

``runtime_check`` is a BFS under the spec's own cfg (liveness properties removed: they are
P4's business), bounded by work that is the same on every machine: the task's ``bfs_depth``
levels, ``bfs_states`` distinct states and ``bfs_generated`` generated states, as a state
constraint of a generated module that extends the spec.  The score is coverage: the actions
that produced a new state in that BFS or in seeded random simulations (``traces`` x ``depth``
steps each), minus the actions whose step ended in an error, over all actions TLC reports and
every target action of the task that the spec does not have (leaving behaviour out is the
most common way an answer is incomplete, and it costs).  An action that neither reaches is
given one more chance where the BFS was cut short: one step from every state of the task's
traces, read through the spec's mapping.  Seconds (``budget_s``) only stop what
no work bound can (an expression that never finishes, a spec that ends TLC itself): that is
charged to the spec, unless a known-good check right after shows the harness at fault.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable, Mapping as TMapping, Sequence

from ..failures import runtime_class
from ..scoring import PhaseResult, Status
from ..mapping import Mapping
from ..tla import modules
from ..tla.values import record_literal
from ..tla.cfg import EXPLORATION_KEYWORDS, UNSUPPORTED_IN_215, Config
from ..tla.messages import UNFINISHED, TlcResult, Verdict
from ..traces import Corpus
from . import _work
from ._codec import MappingProblem, check_module, conj, prepare_codec, tla_tuple, work_files
from ._context import CellContext
from ._infer import given_or_inferred
from ._precision import moving

CLEAN = frozenset({Verdict.OK})
BOUND = "SysmoBound"


def bfs_mark(ctx: CellContext) -> str:
    return ctx.toolchain.cache.mark("runtime-bfs", ctx.spec_files(), ctx.task.runtime)


def run_modules(ctx: CellContext) -> dict[str, str]:
    """The spec, extended by nothing but the BFS's work bounds.  The bounds are written in
    modules of their own (Naturals and TLC) reached through named instances, so none of their
    names can meet the spec's, whatever the spec extends or defines."""
    settings = ctx.task.runtime
    bound, run_name = _work.module_name(ctx.module, "bound"), _work.module_name(ctx.module, "run")
    within = modules.module(bound, 'Within(depth, states) ==\n'
                            '    TLCGet("level") <= depth /\\ TLCGet("distinct") <= states', ("Naturals", "TLC"))
    run = modules.module(run_name, f"SysmoLevels == INSTANCE {bound}\n"
                         f"{_work.instance_lines(_work.module_name(ctx.module, 'runtime'))}\n"
                         f"{BOUND} ==\n    /\\ SysmoWork!Within({settings.bfs_generated}, \"{bfs_mark(ctx)}\")\n"
                         f"    /\\ SysmoLevels!Within({settings.bfs_depth}, {settings.bfs_states})", (ctx.module,))
    return {f"{bound}.tla": within, **_work.module_files(ctx.module, "runtime"), f"{run_name}.tla": run}


def runtime_config(ctx: CellContext) -> tuple[Config, list[str]]:
    """The spec's cfg without liveness properties, without directives that change what TLC
    explores or reports, and without keywords this TLC lacks."""
    config, removed = ctx.config().without({"PROPERTY", "PROPERTIES", *EXPLORATION_KEYWORDS, *UNSUPPORTED_IN_215})
    return config, removed


def _tlc_args(ctx: CellContext, extra: list[str]) -> list[str]:
    args = ["-config", ctx.cfg_file, "-workers", "1", *extra]
    if not ctx.task.runtime.check_deadlock:
        args.append("-deadlock")
    return args


def _files(ctx: CellContext, config: Config) -> dict[str, str]:
    return {**ctx.spec_files(), ctx.cfg_file: config.render()}


def _bfs(ctx: CellContext, config: Config) -> TlcResult:
    budget = ctx.task.runtime.budget_s
    # The bound goes after the spec's own sections, so that TLC's line numbers in a cfg error are
    # the spec's; a successor the spec's own CONSTRAINT rules out first is not counted, and the
    # spec's time beyond that is its own (only the safety net stops it, and charges it).
    files = {**_files(ctx, config.with_section("CONSTRAINT", [BOUND])), **run_modules(ctx)}
    run = ctx.tlc(ctx.job_dir("runtime", "bfs"), files, _work.module_name(ctx.module, "run"), _tlc_args(ctx, ["-coverage", "1"]),
                  budget, work_bound=lambda result: _work.bound_reached(result, bfs_mark(ctx)))
    return run.result


def _simulations(ctx: CellContext, config: Config) -> list[TlcResult]:
    settings = ctx.task.runtime
    results = []
    for seed in range(1, settings.simulations + 1):
        args = ["-simulate", f"num={settings.traces}", "-depth", str(settings.depth), "-seed", str(seed), "-coverage", "1"]
        run = ctx.tlc(ctx.job_dir("runtime", f"simulate-{seed}"), _files(ctx, config), ctx.module,
                      _tlc_args(ctx, args), settings.budget_s)
        results.append(run.result)
    return results


def _failing_action(result: TlcResult, module: str, spec: str, actions: set[str]) -> str | None:
    """The action whose step raised the error, from the error's location.

    For an evaluation error, not the error trace's last action: the trace stops at the state
    *before* the failing step.  For a deadlock, the last action is the one that reached it.
    Without a location (TLC 2.15 loses the text of some errors under -simulate) no action is
    blamed; the runtime check's BFS run, which keeps the text, usually names it.
    """
    if result.verdict is Verdict.DEADLOCK:
        # The step that reached the dead state is to blame, and it is the trace's last one.
        return result.trace[-1].action if result.trace else None
    # Only the 2103 position list is the failing expression's own; result.location may be a
    # fallback taken from the trace.
    spans = [loc for loc in result.positions if loc.module == module]
    names = [modules.definition_at(spec, loc.line) for loc in spans]
    for name in names:
        if name in actions:
            return name
    if names and not actions and names[-1]:
        return names[-1]
    return None


#: PlusCal's translator adds this stuttering step so that a finished algorithm does not deadlock;
#: a service whose processes loop forever never enables it, and it is not behaviour to cover.
_PLUSCAL_TERMINATING = re.compile(
    r'Terminating==(/\\)?(\\Aself\\inProcSet:pc\[self\]="Done"|pc="Done")/\\UNCHANGEDvars')


def not_to_cover(spec: str, targets: Sequence[str] = ()) -> list[str]:
    """The spec's actions that coverage leaves out: PlusCal's ``Terminating``, as the translator
    writes it (unless the task names an action so)."""
    units = {u.name: u.text for u in modules.top_level_units(spec)}
    text = re.sub(r"\s+", "", units.get("Terminating", ""))
    return ["Terminating"] if "Terminating" not in targets and _PLUSCAL_TERMINATING.fullmatch(text) else []


def coverage(sims: list[TlcResult], bfs: TlcResult | None = None, module: str = "",
             spec: str = "", missing: Iterable[str] = (), ignored: Sequence[str] = (),
             along_traces: TlcResult | None = None, exhaustive: bool = False,
             inert: TMapping[str, Sequence[str]] | None = None,
             misread: TMapping[str, Sequence[str]] | None = None) -> tuple[float, dict[str, Any]]:
    """(fired - erroneous) / (all + missing), over every action the BFS or any simulation
    reported and every target action the spec does not have (``missing``: never fired), less
    the ``ignored`` ones (see :func:`not_to_cover`).

    An action fired if it produced a new state in the bounded BFS (TLC's distinct count) or a
    state in a simulation (simulations count no distinct states): a fine-grained spec's action
    that only a deep BFS level enables is not "never fired" because random walks missed it.
    Nor is one that only a state deep in a real run enables (after an election, say): it fired
    if it took a step from a state of the task's traces (``along_traces``, see
    :func:`_along_traces`).  What fired nowhere was never enabled when the BFS explored the
    whole state space (``exhaustive``), else not reached within the bounds: both count against
    coverage, each named for what it is.  A target action mapped to a borrowed operator that
    fires, but whose steps never move from the states where the system took it (``misread``,
    see :func:`_misread`), counts as one the spec does not have: a wrong mapping does not pay.
    """
    all_actions: set[str] = set()
    seen_by: dict[str, list[str]] = {}
    runs = [("bfs", bfs)] if bfs is not None else []
    runs += [(f"simulation {i}", r) for i, r in enumerate(sims, start=1)]
    for source, result in runs:
        for name, action in result.coverage.items():
            all_actions.add(name)
            fired = action.distinct > 0 if source == "bfs" else action.generated > 0
            if fired:
                seen_by.setdefault(name, []).append(source)
    for name, action in (along_traces.coverage.items() if along_traces is not None else ()):
        if name in all_actions and action.generated > 0:
            seen_by.setdefault(name, []).append("traces")
    erroneous: set[str] = set()
    for _, result in runs:
        if result.verdict not in CLEAN:
            failing = _failing_action(result, module, spec, all_actions)
            if failing:
                erroneous.add(failing)
    left_out = sorted(all_actions & set(ignored))
    all_actions -= set(ignored)
    inert = dict(inert or {})
    covered = set(seen_by) - set(ignored) - set(inert)
    # Canonical names, not the spec's: a spec operator that happens to bear a missing action's
    # name (its own TryRead, a blocking request) does not stand in for it.
    absent = sorted(set(missing))
    misread = dict(misread or {})
    total = len(all_actions) + len(absent) + len(misread)
    score = len(covered - erroneous) / total if total else 0.0
    never = sorted(all_actions - covered - set(inert))
    return score, {
        "actions": sorted(all_actions),
        "covered": sorted(covered),
        "fired_in": {name: sorted(set(s if s in ("bfs", "traces") else "simulation" for s in seen_by[name]))
                     for name in sorted(seen_by)},
        "never_fired": never,
        "never_enabled": never if exhaustive else [],
        "not_reached": [] if exhaustive else never,
        "erroneous": sorted(erroneous),
        "not_in_spec": absent,
        "not_covered": left_out,
        "inert": {name: list(actions) for name, actions in sorted(inert.items())},
        "misread": {name: list(operators) for name, operators in sorted(misread.items())},
    }


#: Successors of the traced states are counted, never explored: one step from each.
_ONE_STEP = 'SysmoOneStep == TLCGet("level") < 1'
def _along_traces(ctx: CellContext, mapping: Mapping | None) -> tuple[TlcResult | None, str]:
    """One step of the spec from every state of the task's traces, read through its mapping:
    the spec following the real system's runs reaches what a bounded BFS from Init may not
    (a commit right after an election).  Returns the run, and why there is none or it failed."""
    if mapping is None:
        return None, "no mapping to read the traces with"
    corpus = ctx.corpus()
    next_ = ctx.next_action()
    if not corpus.traces or next_ is None:
        return None, "no traces" if not corpus.traces else "the spec's next-state action is not named in its cfg"
    try:
        codec, config = prepare_codec(ctx, mapping, corpus)
    except MappingProblem as exc:
        return None, f"the mapping does not fit: {exc}"
    states = {record_literal(state): state for trace in corpus.traces for state in trace.states}
    body = "\n".join(codec.definitions()) + f"""
SysmoStates == {tla_tuple([codec.record(state) for state in states.values()])}
SysmoInit ==
    \\E sysmo_k \\in 1..{len(states)} :
        /\\ {conj(codec.bind("SysmoStates[sysmo_k]", False), "        ")}
{_ONE_STEP}"""
    module = check_module(ctx, f"{ctx.module}_SysmoReach", body, codec)
    cfg = config.with_section("INIT", ["SysmoInit"]).with_section("NEXT", [next_]).with_section("CONSTRAINT", ["SysmoOneStep"])
    cfg = cfg.with_section("CONSTRAINT", ["SysmoWorkBound"], first=True)
    files = {**ctx.spec_files(), **work_files(ctx), f"{module.name}.tla": module.text, f"{module.name}.cfg": cfg.render()}
    run = ctx.tlc(ctx.job_dir("runtime", "along-traces"), files, module.name,
                  ["-config", f"{module.name}.cfg", "-workers", "1", "-deadlock", "-coverage", "1"],
                  ctx.task.runtime.budget_s, work_bound=lambda result: _work.bound_reached(result, module.mark))
    result = _finished(run.result, module.mark)
    return result, "" if result.verdict is Verdict.OK else result.summary()


def _inert(ctx: CellContext, mapping: Mapping | None, bfs: TlcResult, cov: TMapping[str, Any]) -> dict[str, list[str]]:
    """The spec's actions that fired only by steps that change nothing, where the system's
    counterpart does change the state: a spec whose actions are all ``UNCHANGED vars`` runs
    without error and "fires" every action, and models nothing.  An action that produced a new
    state in the BFS changed it; the others mapped from target actions the traces show changing
    the state take one step from every traced state, and an action none of whose mapped
    canonical actions changes the state there is inert.  Actions the system itself only ever
    takes as no-ops (a failed ``try_lock``) are never inert."""
    if mapping is None:
        return {}
    corpus, moving_in_system = _system_moves(ctx)
    missing = ctx.missing_actions(mapping)
    suspects = {name for name in cov["covered"] if bfs.coverage.get(name) is None or not bfs.coverage[name].distinct}
    operators = {a: mapping.action(a).operators() for a in ctx.task.target_actions}
    asked = [a for a in ctx.task.target_actions
             if a in moving_in_system and a not in missing and operators[a] and operators[a] <= suspects]
    moved = _moved(ctx, mapping, corpus, asked, own_windows=False)
    if moved is None:
        return {}
    still = [a for a in asked if a not in moved]
    found: dict[str, list[str]] = {}
    for name in suspects:
        mine = [a for a in ctx.task.target_actions if a in moving_in_system and name in operators[a]]
        if mine and all(a in still for a in mine):
            found[name] = mine
    return found


def _misread(ctx: CellContext, mapping: Mapping | None, cov: TMapping[str, Any],
             inert: TMapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Target actions mapped to an operator another target action is mapped to as well, which
    fires, but never changes the canonical state from the states where the system took the
    action and changed it, with its arguments: the mapping borrowed an operator that is not
    this action (a give-up mapped to ``unlock``), which would otherwise earn P2 what leaving
    the action out honestly does not.  An operator of the action's own is P3's to judge; actions
    whose mapping allows internal steps are not asked (one step may not show them), nor those
    whose operators are all inert (charged already)."""
    if mapping is None or mapping.internal:
        return {}
    missing = ctx.missing_actions(mapping)
    claimed = {a: mapping.action(a).operators() for a in ctx.task.target_actions if a not in missing}
    # Only an operator that stands for another target action too can be a borrowed one; an
    # operator of its own that steps wrongly is P3's charge alone (one charge per fault).
    shared = {a for a, ops in claimed.items() if any(ops & other for b, other in claimed.items() if b != a)}
    if not shared:
        return {}
    corpus, moving_in_system = _system_moves(ctx)
    covered = set(cov["covered"])
    operators = {a: sorted(ops) for a, ops in claimed.items() if a in moving_in_system}
    asked = [a for a, ops in operators.items()
             if ops and a in shared and set(ops) & covered and not set(ops) <= set(inert)
             and not (mapping.action(a).before or mapping.action(a).after)]
    moved = _moved(ctx, mapping, corpus, asked, own_windows=True)
    return {} if moved is None else {a: operators[a] for a in asked if a not in moved}


def _system_moves(ctx: CellContext) -> tuple[Corpus, set[str]]:
    """The traces, and the target actions the system takes by changing the state."""
    corpus = ctx.corpus()
    return corpus, {w.action for t in corpus.traces for w in t.windows() if w.pre != w.post}


def _moved(ctx: CellContext, mapping: Mapping, corpus: Corpus, asked: Sequence[str], own_windows: bool) -> set[str] | None:
    """Which of ``asked`` move from the traced states (see ``moving``); None: not found out."""
    if not asked:
        return set()
    try:
        codec, config = prepare_codec(ctx, mapping, corpus)
    except MappingProblem:
        return None
    return moving(ctx, codec, config, corpus, asked, own_windows=own_windows)


def _exhaustive(raw_bfs: TlcResult, ctx: CellContext) -> bool:
    """Whether the bounded BFS explored the whole state space (no bound cut it short)."""
    settings = ctx.task.runtime
    return (raw_bfs.verdict is Verdict.OK and (raw_bfs.depth or 0) < settings.bfs_depth
            and (raw_bfs.distinct_states or 0) < settings.bfs_states)


def _check_reason(result: TlcResult) -> str:
    if result.verdict is Verdict.VACUOUS:
        return "the initial predicate has no states"
    return result.summary()


def _stopped(ctx: CellContext, which: str, details: dict[str, Any]) -> PhaseResult:
    """A run that seconds (or the spec itself) ended before its work bound: the spec's doing."""
    reason = _work.charged_stop(ctx, which, ctx.task.runtime.budget_s, ctx.candidate.tla or "")
    return PhaseResult("runtime", Status.FAILED, 0.0, f"runtime check failed: {reason}",
                       {**details, "runtime_check": False, "failure_class": "timeout"})


def _finished(result: TlcResult, mark: str) -> TlcResult:
    """A BFS that its work bound ended is a finished run (a verdict on the explored part)."""
    if result.verdict is Verdict.INCOMPLETE and _work.bound_reached(result, mark):
        return dataclasses.replace(result, verdict=Verdict.OK)
    return result


def check_runtime(ctx: CellContext) -> PhaseResult:
    clash = ctx.harness_name_clash("runtime")  # the BFS's bound lives in a module around the spec
    if clash is not None:
        return clash
    config, removed = runtime_config(ctx)
    raw_bfs = _bfs(ctx, config)
    bfs = _finished(raw_bfs, bfs_mark(ctx))
    runtime_ok = bfs.verdict in CLEAN
    # A spec whose BFS the safety net stopped, or that printed past the output limit, would
    # only do it again in every simulation: do not pay that twice.
    hopeless = bfs.verdict in UNFINISHED or bfs.verdict is Verdict.OUTPUT_LIMIT
    sims = [] if hopeless else _simulations(ctx, config)
    mapping, _ = given_or_inferred(ctx)
    missing = ctx.missing_actions(mapping)
    spec = ctx.candidate.tla or ""
    ignored = not_to_cover(spec, ctx.task.target_actions)
    exhaustive = _exhaustive(raw_bfs, ctx)
    score, cov = coverage(sims, bfs, ctx.module, spec, missing, ignored, exhaustive=exhaustive)
    traced: dict[str, Any] = {}
    along: TlcResult | None = None
    if cov["never_fired"] and runtime_ok and not exhaustive:
        along, why_not = _along_traces(ctx, mapping)
        score, cov = coverage(sims, bfs, ctx.module, spec, missing, ignored, along, exhaustive)
        traced = {"along_traces": why_not or "one step from every traced state"}
    inert = _inert(ctx, mapping, bfs, cov) if runtime_ok else {}
    misread = _misread(ctx, mapping, cov, inert) if runtime_ok else {}
    if inert or misread:
        score, cov = coverage(sims, bfs, ctx.module, spec, missing, ignored, along, exhaustive, inert, misread)
    details: dict[str, Any] = {
        "runtime_check": runtime_ok,
        "bfs_verdict": bfs.verdict.value,
        "bfs_bound": {"depth": ctx.task.runtime.bfs_depth, "states": ctx.task.runtime.bfs_states,
                      "generated": ctx.task.runtime.bfs_generated},
        "work_bound_reached": raw_bfs is not bfs,
        "distinct_states": bfs.distinct_states,
        "reference_distinct_states": ctx.task.runtime.reference_states or None,
        "states_generated": bfs.states_generated,
        "cfg_removed": removed,
        **cov,
        **traced,
    }
    if bfs.verdict in UNFINISHED:
        return _stopped(ctx, "the bounded BFS", details)
    if any(r.verdict in UNFINISHED for r in sims):
        return _stopped(ctx, "a bounded simulation", details)
    if score < 1.0 or not runtime_ok:
        details["failure_class"] = runtime_class(bfs, runtime_ok)
    if not runtime_ok:
        return PhaseResult("runtime", Status.FAILED, round(score, 6), f"runtime check failed: {_check_reason(bfs)}", details)
    sim_errors = [r for r in sims if r.verdict not in CLEAN]
    if sim_errors:
        details["simulation_error"] = sim_errors[0].summary()
    aside = f"; not counted: {', '.join(cov['not_covered'])} (PlusCal's stuttering at termination)" \
        if cov["not_covered"] else ""
    theirs = f"; the reference's: {ctx.task.runtime.reference_states}" if ctx.task.runtime.reference_states else ""
    if score >= 1.0:
        return PhaseResult("runtime", Status.PASSED, 1.0, "no runtime error; every action fired "
                           f"({bfs.distinct_states} distinct states in the bounded BFS{theirs}){aside}", details)
    reason = f"coverage {score:.2f} ({bfs.distinct_states} distinct states in the bounded BFS{theirs}){aside}"
    if cov["never_enabled"]:
        reason += f"; never fired, never enabled (the BFS explored every reachable state): {', '.join(cov['never_enabled'])}"
    if cov["not_reached"]:
        reason += (f"; never fired within the bounds (the bounded BFS, random simulation, and one step from every "
                   f"state of the traces): {', '.join(cov['not_reached'])}")
    if cov["not_in_spec"]:
        reason += f"; target actions the spec does not have (counted as never fired): {', '.join(cov['not_in_spec'])}"
    if cov["erroneous"]:
        reason += f"; ended in an error: {', '.join(cov['erroneous'])}"
    if cov["inert"]:
        reason += ("; inert (its steps never change the state, from any explored or traced state, where the "
                   f"system's do): {', '.join(cov['inert'])}")
    if cov["misread"]:
        reason += ("; mapped to operators whose steps never change the state where the system took the action "
                   "(counted as actions the spec does not have): "
                   + ", ".join(f"{a} ({', '.join(ops)})" for a, ops in cov["misread"].items()))
    if sim_errors:
        reason += f" ({sim_errors[0].summary()})"
    if not cov["actions"] and not cov["not_in_spec"]:
        reason = "TLC reported no action coverage" + (f" ({sim_errors[0].summary()})" if sim_errors else "")
    return PhaseResult("runtime", Status.FAILED, round(score, 6), reason, details)
