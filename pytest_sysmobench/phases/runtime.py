"""P2: does TLC run the spec without error, and do its actions fire?

``runtime_check`` is a BFS under the spec's own cfg (liveness properties removed: they are
P4's business), bounded by work that is the same on every machine: the task's ``bfs_depth``
levels and ``bfs_states`` distinct states, as a state constraint of a generated module that
extends the spec.  The score is coverage: the actions that produced a new state in that BFS
or in seeded random simulations (``traces`` x ``depth`` steps each), minus the actions whose
step ended in an error, over all actions TLC reports.  Seconds (``budget_s``) are only a
safety net: a run they stop decided nothing, so the phase is inconclusive, never passed or
failed by how fast the machine was.
"""

from __future__ import annotations

from typing import Any

from ..failures import runtime_class
from ..scoring import PhaseResult, Status
from ..tla import modules
from ..tla.cfg import EXPLORATION_KEYWORDS, UNSUPPORTED_IN_215, Config
from ..tla.messages import UNFINISHED, TlcResult, Verdict
from ._context import CellContext

CLEAN = frozenset({Verdict.OK})
HARD_LIMIT_MARGIN_S = 30.0
BOUND = "SysmoBound"


def run_module_name(ctx: CellContext) -> str:
    return f"{ctx.module}_SysmoRun"


def bound_module_name(ctx: CellContext) -> str:
    return f"{ctx.module}_SysmoBound"


def run_modules(ctx: CellContext) -> dict[str, str]:
    """The spec, extended by nothing but the BFS's work bound.  The bound is written in a module
    of its own (Naturals and TLC) reached through a named instance, so none of its names can
    meet the spec's, whatever the spec extends or defines."""
    settings = ctx.task.runtime
    within = modules.module(bound_module_name(ctx), 'Within(depth, states) ==\n'
                            '    TLCGet("level") <= depth /\\ TLCGet("distinct") <= states', ("Naturals", "TLC"))
    run = modules.module(run_module_name(ctx), f"SysmoWork == INSTANCE {bound_module_name(ctx)}\n"
                         f"{BOUND} == SysmoWork!Within({settings.bfs_depth}, {settings.bfs_states})", (ctx.module,))
    return {f"{bound_module_name(ctx)}.tla": within, f"{run_module_name(ctx)}.tla": run}


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
    files = {**_files(ctx, config.with_section("CONSTRAINT", [BOUND])), **run_modules(ctx)}
    run = ctx.toolchain.tlc(
        ctx.job_dir("runtime", "bfs"),
        files,
        run_module_name(ctx),
        _tlc_args(ctx, ["-coverage", "1"]),
        timeout_s=budget + HARD_LIMIT_MARGIN_S,
        stop_after_s=budget,
    )
    return run.result


def _simulations(ctx: CellContext, config: Config) -> list[TlcResult]:
    settings = ctx.task.runtime
    results = []
    for seed in range(1, settings.simulations + 1):
        run = ctx.toolchain.tlc(
            ctx.job_dir("runtime", f"simulate-{seed}"),
            _files(ctx, config),
            ctx.module,
            _tlc_args(ctx, ["-simulate", f"num={settings.traces}", "-depth", str(settings.depth), "-seed", str(seed),
                            "-coverage", "1"]),
            timeout_s=settings.budget_s + HARD_LIMIT_MARGIN_S,
            stop_after_s=settings.budget_s,
        )
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


def coverage(sims: list[TlcResult], bfs: TlcResult | None = None, module: str = "",
             spec: str = "") -> tuple[float, dict[str, Any]]:
    """(fired - erroneous) / all, over every action the BFS or any simulation reported.

    An action fired if it produced a new state in the bounded BFS (TLC's distinct count) or a
    state in a simulation (simulations count no distinct states): a fine-grained spec's action
    that only a deep BFS level enables is not "never fired" because random walks missed it.
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
    erroneous: set[str] = set()
    for _, result in runs:
        if result.verdict not in CLEAN:
            failing = _failing_action(result, module, spec, all_actions)
            if failing:
                erroneous.add(failing)
    covered = set(seen_by)
    score = len(covered - erroneous) / len(all_actions) if all_actions else 0.0
    return score, {
        "actions": sorted(all_actions),
        "covered": sorted(covered),
        "fired_in": {name: sorted(set(s if s == "bfs" else "simulation" for s in seen_by[name])) for name in sorted(seen_by)},
        "never_fired": sorted(all_actions - covered),
        "erroneous": sorted(erroneous),
    }


def _check_reason(result: TlcResult) -> str:
    if result.verdict is Verdict.VACUOUS:
        return "the initial predicate has no states"
    return result.summary()


def _unfinished(ctx: CellContext, bfs: TlcResult, sims: list[TlcResult], details: dict[str, Any]) -> PhaseResult:
    settings = ctx.task.runtime
    which = "the BFS" if bfs.verdict in UNFINISHED else "a simulation"
    how = ("its hard time limit" if Verdict.TIMEOUT in {bfs.verdict, *(r.verdict for r in sims)}
           else f"the {settings.budget_s:g} s safety net (task.yaml runtime.budget_s)")
    return PhaseResult("runtime", Status.INCONCLUSIVE, None,
                       f"inconclusive: {which} was stopped by {how} before it finished its bounded work "
                       f"(BFS to depth {settings.bfs_depth} or {settings.bfs_states} states: {bfs.distinct_states} "
                       f"distinct states reached); not a verdict on the spec", details)


def check_runtime(ctx: CellContext) -> PhaseResult:
    clash = ctx.harness_name_clash("runtime")  # the BFS's bound lives in a module around the spec
    if clash is not None:
        return clash
    config, removed = runtime_config(ctx)
    bfs = _bfs(ctx, config)
    runtime_ok = bfs.verdict in CLEAN
    # A spec whose BFS the safety net stopped, or that printed past the output limit, would
    # only do it again in every simulation: do not pay that twice.
    hopeless = bfs.verdict in UNFINISHED or bfs.verdict is Verdict.OUTPUT_LIMIT
    sims = [] if hopeless else _simulations(ctx, config)
    score, cov = coverage(sims, bfs, ctx.module, ctx.candidate.tla or "")
    details: dict[str, Any] = {
        "runtime_check": runtime_ok,
        "bfs_verdict": bfs.verdict.value,
        "bfs_bound": {"depth": ctx.task.runtime.bfs_depth, "states": ctx.task.runtime.bfs_states},
        "distinct_states": bfs.distinct_states,
        "cfg_removed": removed,
        **cov,
    }
    if bfs.verdict in UNFINISHED or any(r.verdict in UNFINISHED for r in sims):
        return _unfinished(ctx, bfs, sims, details)
    if score < 1.0 or not runtime_ok:
        details["failure_class"] = runtime_class(bfs, runtime_ok)
    if not runtime_ok:
        return PhaseResult("runtime", Status.FAILED, round(score, 6), f"runtime check failed: {_check_reason(bfs)}", details)
    sim_errors = [r for r in sims if r.verdict not in CLEAN]
    if sim_errors:
        details["simulation_error"] = sim_errors[0].summary()
    if score >= 1.0:
        return PhaseResult("runtime", Status.PASSED, 1.0, "no runtime error; every action fired "
                           f"({bfs.distinct_states} distinct states in the bounded BFS)", details)
    reason = f"coverage {score:.2f}"
    if cov["never_fired"]:
        reason += f"; never fired in the bounded BFS nor in random simulation: {', '.join(cov['never_fired'])}"
    if cov["erroneous"]:
        reason += f"; ended in an error: {', '.join(cov['erroneous'])}"
    if sim_errors:
        reason += f" ({sim_errors[0].summary()})"
    if not cov["actions"]:
        reason = "TLC reported no action coverage" + (f" ({sim_errors[0].summary()})" if sim_errors else "")
    return PhaseResult("runtime", Status.FAILED, round(score, 6), reason, details)
