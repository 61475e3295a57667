"""P1: does the module parse and resolve under SANY?

Full credit when SANY accepts the whole module.  Otherwise partial credit, as the original
benchmark gives it: ``0.5 * (top-level definitions that parse on their own) / (all)``, each
definition checked with the spec's declarations and stubs for the names it uses but cannot see.

Definitions are checked in groups (in the spec's order, so a definition may use those before
it): a group that parses credits all of its members, one that does not is halved until the
faulty definitions stand alone and get the one-by-one check.  A spec with more than
MAX_UNITS definitions is credited over MAX_UNITS of them, evenly spread, and says so: the
work is bounded by what we choose, not by what the spec holds.
"""

from __future__ import annotations

import re

from ..failures import no_module_class, syntax_class
from ..scoring import PhaseResult, Status
from ..tla import modules
from ..tla.sany import SanyResult, arity_errors, unknown_operators
from . import _work
from ._context import CellContext

STANDARD = ("Naturals", "Integers", "Sequences", "FiniteSets", "Bags", "TLC")
STUB_ROUNDS = 5
MAX_UNITS = 120


def _call_arity(name: str, text: str) -> int:
    """How many arguments the unit passes to name at its first call site (0 if never called)."""
    match = re.search(rf"(?<![A-Za-z0-9_!]){re.escape(name)}\s*\(", text)
    if match is None:
        return 0
    depth, count, i = 1, 1, match.end()
    while i < len(text) and depth:
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 1:
            count += 1
        i += 1
    return count


def _stub(name: str, arity: int) -> str:
    if arity == 0:
        return f"{name} == TRUE"
    params = ", ".join(f"sysmo_a{i}" for i in range(arity))
    return f"{name}({params}) == TRUE"


def _unit_module(name: str, extends: list[str], declarations: str, stubs: list[str], unit: str) -> str:
    return modules.module(name, "\n".join([declarations, *stubs, unit]), extends)


def _resolvable_extends(ctx: CellContext, spec: str) -> list[str]:
    from ..tla.toolchain import LIBRARY_DIR

    library = {p.stem for p in LIBRARY_DIR.glob("*.tla")} | {name for name, _ in ctx.candidate.extra_modules}
    wanted = [m for m in modules.extends(spec) if m in STANDARD or m in library]
    return wanted or list(STANDARD)


def _unit_parses(ctx: CellContext, index: int, unit: modules.Unit, extends: list[str], declarations: str) -> bool:
    name = f"{ctx.module}_SysmoUnit{index}"
    stubs: list[str] = []
    workdir = ctx.job_dir("syntax", "units")
    for _ in range(STUB_ROUNDS):
        text = _unit_module(name, extends, declarations, stubs, unit.text)
        files = {**ctx.spec_files(), f"{name}.tla": text}
        files.pop(ctx.spec_file)
        run = ctx.toolchain.sany(workdir, files, name, timeout_s=30)
        if run.result.ok:
            return True
        unknown = [n for n in unknown_operators(run.result) if n != unit.name]
        wrong_arity = arity_errors(run.result)
        known = {s.split("(")[0].split(" ")[0] for s in stubs}
        new = [n for n in unknown if n not in known]
        if not new and not wrong_arity:
            return False
        for stub_name in new:
            stubs.append(_stub(stub_name, _call_arity(stub_name, unit.text)))
        for stub_name, _required in wrong_arity.items():
            stubs = [s for s in stubs if not s.startswith(f"{stub_name} ") and not s.startswith(f"{stub_name}(")]
            stubs.append(_stub(stub_name, _call_arity(stub_name, unit.text)))
    return False


def _declarations(spec: str) -> str:
    constants, variables = modules.declared(spec)
    lines = []
    if constants:
        lines.append("CONSTANTS " + ", ".join(dict.fromkeys(constants)))
    if variables:
        lines.append("VARIABLES " + ", ".join(dict.fromkeys(variables)))
    return "\n".join(lines)


def _spread(units: list[modules.Unit]) -> list[int]:
    """Indexes of the units credited: all of them, or MAX_UNITS evenly spread."""
    if len(units) <= MAX_UNITS:
        return list(range(len(units)))
    return sorted({round(i * (len(units) - 1) / (MAX_UNITS - 1)) for i in range(MAX_UNITS)})


class _Units:
    """The partial-credit checks of one spec: group checks first, single checks for the rest."""

    def __init__(self, ctx: CellContext, spec: str, units: list[modules.Unit]) -> None:
        self.ctx = ctx
        self.units = units
        self.extends = _resolvable_extends(ctx, spec)
        self.declarations = _declarations(spec)
        self.parses: dict[int, bool] = {}
        self.runs = 0

    def check(self, group: list[int]) -> None:
        if len(group) == 1:
            index = group[0]
            self.parses[index] = _unit_parses(self.ctx, index, self.units[index], self.extends, self.declarations)
            return
        if self._group_parses(group):
            self.parses.update({i: True for i in group})
            return
        half = len(group) // 2
        self.check(group[:half])
        self.check(group[half:])

    def _group_parses(self, group: list[int]) -> bool:
        name = f"{self.ctx.module}_SysmoUnits"
        defined = {self.units[i].name for i in group}
        text = "\n".join(self.units[i].text for i in group)
        stubs: list[str] = []
        for _ in range(STUB_ROUNDS):
            files = {**self.ctx.spec_files(), f"{name}.tla": _unit_module(name, self.extends, self.declarations, stubs, text)}
            files.pop(self.ctx.spec_file)
            self.runs += 1
            run = self.ctx.toolchain.sany(self.ctx.job_dir("syntax", "units"), files, name, timeout_s=30)
            if run.result.ok:
                return True
            unknown = unknown_operators(run.result)
            known = {s.split("(")[0].split(" ")[0] for s in stubs}
            if not unknown or arity_errors(run.result) or any(n in defined or n in known for n in unknown):
                return False
            stubs += [_stub(n, _call_arity(n, text)) for n in unknown]
        return False


def partial_credit(ctx: CellContext, spec: str) -> tuple[float, list[dict[str, object]]]:
    units = modules.top_level_units(spec)
    if not units:
        return 0.0, []
    chosen = _spread(units)
    checks = _Units(ctx, spec, units)
    half = len(chosen) // 2
    for group in (chosen[:half], chosen[half:]):  # the whole spec already failed: start at halves
        if group:
            checks.check(group)
    outcomes = [{"definition": units[i].name, "line": units[i].line, "parses": checks.parses[i]} for i in chosen]
    passed = sum(1 for o in outcomes if o["parses"])
    return 0.5 * passed / len(chosen), outcomes


def _reason(result: SanyResult) -> str:
    return result.first_error_summary() or "SANY rejected the module"


def check_syntax(ctx: CellContext) -> PhaseResult:
    candidate = ctx.candidate
    if candidate.tla is None:
        return PhaseResult("syntax", Status.FAILED, 0.0, candidate.problem or "no spec",
                           {"notes": list(candidate.notes), "failure_class": no_module_class(candidate.problem or "")})
    run = ctx.toolchain.sany(ctx.job_dir("syntax"), ctx.spec_files(), ctx.module, timeout_s=60)
    details: dict[str, object] = {"notes": list(candidate.notes), "cached": run.cached}
    if run.raw.timed_out:
        # Parsing is bounded by the spec's size: one that takes longer than the limit is the
        # spec's doing, unless a known-good check right after shows the harness at fault.
        reason = _work.charged_stop(ctx, "SANY", 60, candidate.tla)
        return PhaseResult("syntax", Status.FAILED, 0.0, f"parse failed: {reason}", {**details, "failure_class": "timeout"})
    if run.result.ok:
        return PhaseResult("syntax", Status.PASSED, 1.0, "SANY accepts the module", details)
    score, units = partial_credit(ctx, candidate.tla)
    details.update(
        errors=[e.__dict__ if hasattr(e, "__dict__") else str(e) for e in run.result.errors][:20],
        definitions=units,
        failure_class=syntax_class(run.result, candidate.tla),
    )
    reason = f"{_reason(run.result)}{_where(ctx, run.result)} ({_credit(candidate.tla, units, score)})"
    return PhaseResult("syntax", Status.FAILED, round(score, 6), reason, details)


def _where(ctx: CellContext, result: SanyResult) -> str:
    """The definition the first error is in, so that the user knows what to fix."""
    first = result.errors[0] if result.errors else None
    if first is None or first.line is None or first.module not in (None, ctx.module):
        return ""
    name = modules.definition_at(ctx.candidate.tla or "", first.line)
    return f", in the definition of {name}" if name else ""


def _credit(spec: str, units: list[dict[str, object]], score: float) -> str:
    """What the partial score counts: a definition 'parses' on its own, with stubs for the
    names it uses but cannot see, so all of them can parse while the module does not resolve."""
    parsed = sum(1 for u in units if u["parses"])
    total = len(modules.top_level_units(spec))
    sampled = f" ({len(units)} of {total} checked, evenly spread)" if len(units) < total else ""
    text = (f"partial credit: {parsed}/{len(units)} definitions parse on their own{sampled}, names they cannot "
            f"see stubbed: 0.5 x {parsed}/{len(units)} = {score:.2f}")
    if units and parsed == len(units):
        text += "; the module is rejected only as a whole"
    return text
