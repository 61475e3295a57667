"""P3: can the spec take every step the real system took?

Windows are cut from traces of the running system.  A window passes if the spec, started in
the window's pre-state (through the mapping), has one step of the window's action that reaches
the post-state.  All windows of an action are checked in one TLC run: Init ranges over window
ids, Next is the spec's action conjoined with the post-state, and each window that conforms
prints its id.  Identical windows are checked once.  Per action the score is 1 iff all its
windows pass; P3 is the mean over the actions that have windows.

Whole-trace validation is recorded as a stricter diagnostic: the longest prefix of each trace
that the spec's Init and Next accept, with an explicit step counter (level-based indexing is
wrong when a trace revisits a state).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping as TMapping, Sequence

from ..evaluator import EvaluatorError
from ..mapping import Mapping, tla_literal
from ..scoring import PhaseResult, Status
from ..tla import modules
from ..tla.cfg import Config, Section
from ..tla.messages import TlcResult, Verdict
from ..traces import Corpus, Trace, Window, load_corpus
from ._context import CellContext

OK_MARK = "SYSMO_WINDOW_OK"
HARD_LIMIT_MARGIN_S = 60.0
BUDGET_S = 60.0
_OK = re.compile(rf'"{OK_MARK}",\s*(\d+)')


@dataclass(frozen=True)
class _Vocabulary:
    """The spec side of the mapping: which spec variable gets which canonical value.

    States are written as records keyed by spec variable (plus ``sysmo_dN`` fields for the
    values of derived canonical variables), gathered in a tuple and indexed by window or step,
    so each check costs a constant number of evaluations however many windows there are.
    """

    mapping: Mapping
    spec_variables: tuple[str, ...]
    #: Where the mapping came from when an evaluator model proposed it (its name and token use).
    provenance: TMapping[str, Any] = field(default_factory=dict)

    def record(self, state: TMapping[str, Any]) -> str:
        fields = []
        for index, vm in enumerate(self.mapping.variables):
            value = state[vm.canonical]
            if vm.var is not None:
                fields.append(f"{vm.var} |-> {vm.canonical_to_spec(value)}")
            else:
                fields.append(f"sysmo_d{index} |-> {tla_literal(value)}")
        return "[" + ", ".join(fields) + "]" if fields else "[sysmo_empty |-> TRUE]"

    def match(self, states: str, index: str, primed: bool) -> list[str]:
        """Conjuncts saying the (primed) spec state equals states[index]."""
        tick = "'" if primed else ""
        parts = []
        for i, vm in enumerate(self.mapping.variables):
            if vm.var is not None:
                parts.append(f"{vm.var}{tick} = {states}[{index}].{vm.var}")
            else:
                parts.append(f"({vm.expr}){tick} = {states}[{index}].sysmo_d{i}")
        return parts

    def auxiliary(self) -> list[str]:
        return [f"{name} \\in {values}" for name, values in self.mapping.auxiliary]


def _unmapped(vocab: _Vocabulary) -> list[str]:
    covered = {vm.var for vm in vocab.mapping.variables if vm.var} | {n for n, _ in vocab.mapping.auxiliary}
    return [v for v in vocab.spec_variables if v not in covered]


def _conj(parts: Sequence[str]) -> str:
    return " /\\ ".join(parts) if parts else "TRUE"


def _tuple(items: Sequence[str]) -> str:
    return "<<\n    " + ",\n    ".join(items) + "\n>>"


def _constants_config(ctx: CellContext, mapping: Mapping, trace_constants: TMapping[str, Any]) -> Config:
    """The spec's CONSTANT bindings, with the constants the traces fix set to the traces' values."""
    spec_constants, _ = modules.declared(ctx.candidate.tla or "")
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
        body = section.body
        for name in overrides:
            body = re.sub(rf"^\s*{re.escape(name)}\s*(=|<-).*$", "", body, flags=re.MULTILINE)
        sections.append(Section(section.keyword, body))
    if overrides:
        sections.append(Section("CONSTANTS", "\n" + "\n".join(f"    {n} = {v}" for n, v in overrides.items()) + "\n"))
    return Config("", tuple(sections))


def _window_module(ctx: CellContext, vocab: _Vocabulary, name: str, action: str, windows: Sequence[Window]) -> str:
    arity = len(windows[0].args)
    params = ", ".join(f"SysmoArgs[sysmo_w][{k}]" for k in range(1, arity + 1))
    call = f"{vocab.mapping.spec_action(action)}({params})" if arity else vocab.mapping.spec_action(action)
    body = f"""VARIABLES sysmo_w, sysmo_done
SysmoArgs == {_tuple(["<<" + ", ".join(tla_literal(a) for a in w.args) + ">>" for w in windows])}
SysmoPre == {_tuple([vocab.record(w.pre) for w in windows])}
SysmoPost == {_tuple([vocab.record(w.post) for w in windows])}
SysmoInit ==
    /\\ sysmo_w \\in 1..{len(windows)}
    /\\ sysmo_done = FALSE
    /\\ {_conj(vocab.match("SysmoPre", "sysmo_w", False) + vocab.auxiliary())}
SysmoNext ==
    /\\ ~sysmo_done
    /\\ {call}
    /\\ {_conj(vocab.match("SysmoPost", "sysmo_w", True))}
    /\\ sysmo_done' = TRUE
    /\\ UNCHANGED sysmo_w
    /\\ PrintT(<<"{OK_MARK}", sysmo_w>>)"""
    return modules.module(name, body, (ctx.module, "TLC"))


def _trace_module(ctx: CellContext, vocab: _Vocabulary, name: str, trace: Trace) -> str:
    body = f"""VARIABLE sysmo_i
SysmoTrace == {_tuple([vocab.record(state) for state in trace.states])}
SysmoTraceInit ==
    /\\ sysmo_i = 1
    /\\ Init
    /\\ {_conj(vocab.match("SysmoTrace", "1", False) + vocab.auxiliary())}
SysmoTraceNext ==
    /\\ sysmo_i < {len(trace.states)}
    /\\ Next
    /\\ {_conj(vocab.match("SysmoTrace", "sysmo_i + 1", True))}
    /\\ sysmo_i' = sysmo_i + 1"""
    return modules.module(name, body, (ctx.module, "TLC"))


def _run(ctx: CellContext, job: str, module: str, text: str, config: Config, init: str, next_: str) -> TlcResult:
    cfg = config.with_section("INIT", [init]).with_section("NEXT", [next_])
    return ctx.toolchain.tlc(
        ctx.job_dir("conformance", job),
        {**ctx.spec_files(), f"{module}.tla": text, f"{module}.cfg": cfg.render()},
        module,
        ["-config", f"{module}.cfg", "-workers", "1", "-deadlock"],
        timeout_s=BUDGET_S + HARD_LIMIT_MARGIN_S,
        stop_after_s=BUDGET_S,
    ).result


@dataclass
class _ActionOutcome:
    action: str
    windows: int
    passed: int
    error: str = ""
    first_failure: str = ""

    @property
    def score(self) -> float:
        return 1.0 if self.windows and self.passed == self.windows and not self.error else 0.0


def _check_action(ctx: CellContext, vocab: _Vocabulary, config: Config, action: str, windows: list[Window]) -> _ActionOutcome:
    unique: dict[str, Window] = {}
    for window in windows:
        unique.setdefault(window.key(), window)
    distinct = list(unique.values())
    module = f"{ctx.module}_SysmoWin_{action}"
    result = _run(ctx, f"windows-{action}", module, _window_module(ctx, vocab, module, action, distinct), config,
                  "SysmoInit", "SysmoNext")
    ok_ids = {int(m.group(1)) for line in result.print_lines for m in _OK.finditer(line)}
    ok_keys = {distinct[i - 1].key() for i in ok_ids if 0 < i <= len(distinct)}
    passed = sum(1 for w in windows if w.key() in ok_keys)
    outcome = _ActionOutcome(action, len(windows), passed)
    if result.verdict is not Verdict.OK:
        outcome.error = result.summary()
    failing = next((w for w in windows if w.key() not in ok_keys), None)
    if failing is not None:
        outcome.first_failure = failing.describe()
    return outcome


def _check_trace(ctx: CellContext, vocab: _Vocabulary, config: Config, index: int, trace: Trace) -> dict[str, Any]:
    module = f"{ctx.module}_SysmoTrace_{index}"
    result = _run(ctx, f"trace-{index}", module, _trace_module(ctx, vocab, module, trace), config,
                  "SysmoTraceInit", "SysmoTraceNext")
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


def _prepare(ctx: CellContext) -> tuple[Corpus | None, _Vocabulary | None, PhaseResult | None]:
    corpus = load_corpus(ctx.traces_dir / ctx.task.name, ctx.task)
    if not corpus.traces and not corpus.errors:
        return None, None, PhaseResult("conformance", Status.SKIPPED, 0.0, f"skipped: no traces for task {ctx.task.name}")
    if corpus.errors:
        return None, None, PhaseResult("conformance", Status.ERROR, None, f"corrupt trace: {corpus.errors[0]}",
                                       {"trace_errors": list(corpus.errors)})
    mapping = ctx.candidate.mapping
    provenance: dict[str, Any] = {}
    if mapping is None and ctx.evaluator is not None and ctx.candidate.tla is not None:
        try:
            mapping, use = ctx.evaluator.mapping(ctx.task, ctx.candidate.tla)
        except EvaluatorError as exc:
            return None, None, PhaseResult("conformance", Status.ERROR, None, str(exc))
        provenance = {"evaluator": ctx.evaluator.name, "evaluator_use": use.as_dict()}
    if mapping is None:
        reason = ctx.candidate.mapping_problem or "not evaluable: no mapping to the canonical vocabulary"
        return None, None, PhaseResult("conformance", Status.NOT_EVALUABLE, 0.0,
                                       f"{reason}; no evaluator model (--sysmobench-evaluator) to propose one")
    _, spec_variables = modules.declared(ctx.candidate.tla or "")
    vocab = _Vocabulary(mapping, tuple(spec_variables), provenance)
    unmapped = _unmapped(vocab)
    if unmapped:
        return None, None, PhaseResult(
            "conformance", Status.NOT_EVALUABLE, 0.0,
            f"not evaluable: spec variable(s) {', '.join(unmapped)} have no canonical counterpart "
            "(give them start values under 'auxiliary' in the mapping)",
            dict(provenance),
        )
    return corpus, vocab, None


def check_conformance(ctx: CellContext) -> PhaseResult:
    corpus, vocab, early = _prepare(ctx)
    if early is not None:
        return early
    assert corpus is not None and vocab is not None
    config = _constants_config(ctx, vocab.mapping, corpus.constants)
    windows: dict[str, list[Window]] = {}
    for trace in corpus.traces:
        for window in trace.windows():
            windows.setdefault(window.action, []).append(window)
    targets = [a for a in (ctx.task.target_actions or tuple(windows)) if windows.get(a)]
    outcomes = [_check_action(ctx, vocab, config, action, windows[action]) for action in targets]
    whole = [_check_trace(ctx, vocab, config, i, trace) for i, trace in enumerate(corpus.traces, start=1)]
    total = sum(o.windows for o in outcomes)
    passed = sum(o.passed for o in outcomes)
    score = sum(o.score for o in outcomes) / len(outcomes) if outcomes else 0.0
    details: dict[str, Any] = {
        "actions": {o.action: {"windows": o.windows, "passed": o.passed, "score": o.score, "error": o.error,
                               "first_failure": o.first_failure} for o in outcomes},
        "window_pass_rate": round(passed / total, 6) if total else None,
        "windows": total,
        "traces": whole,
        "trace_corpus_sha256": corpus.sha256,
        "mapping": vocab.mapping.describe(),
        **vocab.provenance,
    }
    if not outcomes:
        return PhaseResult("conformance", Status.SKIPPED, 0.0, "skipped: the traces have no windows of target actions", details)
    failing = [o for o in outcomes if o.score < 1.0]
    if not failing:
        return PhaseResult("conformance", Status.PASSED, 1.0, f"all {total} windows of {len(outcomes)} actions conform", details)
    first = failing[0]
    names = ", ".join(f"{o.action} ({o.passed}/{o.windows})" for o in failing)
    reason = f"{len(outcomes) - len(failing)}/{len(outcomes)} actions conform; failing: {names}"
    if first.error:
        reason += f"\nTLC: {first.error}"
    if first.first_failure:
        reason += f"\nfirst failing window of {first.action}: {first.first_failure}"
    reason += f"\nmapping: {vocab.mapping.describe()}"
    return PhaseResult("conformance", Status.FAILED, round(score, 6), reason, details)
