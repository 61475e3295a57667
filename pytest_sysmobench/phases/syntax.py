"""P1: does the module parse and resolve under SANY?

Full credit when SANY accepts the whole module.  Otherwise partial credit, as the original
benchmark gives it: ``0.5 * (top-level definitions that parse on their own) / (all)``, each
definition checked in a module of its own with the spec's declarations and stubs for the
names it uses but cannot see.
"""

from __future__ import annotations

import re

from ..scoring import PhaseResult, Status
from ..tla import modules
from ..tla.sany import SanyResult, arity_errors, unknown_operators
from ._context import CellContext

STANDARD = ("Naturals", "Integers", "Sequences", "FiniteSets", "Bags", "TLC")
STUB_ROUNDS = 5


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


def partial_credit(ctx: CellContext, spec: str) -> tuple[float, list[dict[str, object]]]:
    units = modules.top_level_units(spec)
    if not units:
        return 0.0, []
    extends = _resolvable_extends(ctx, spec)
    declarations = _declarations(spec)
    outcomes = [
        {"definition": u.name, "line": u.line, "parses": _unit_parses(ctx, i, u, extends, declarations)}
        for i, u in enumerate(units)
    ]
    passed = sum(1 for o in outcomes if o["parses"])
    return 0.5 * passed / len(units), outcomes


def _reason(result: SanyResult) -> str:
    return result.first_error_summary() or "SANY rejected the module"


def check_syntax(ctx: CellContext) -> PhaseResult:
    candidate = ctx.candidate
    if candidate.tla is None:
        return PhaseResult("syntax", Status.FAILED, 0.0, candidate.problem or "no spec", {"notes": list(candidate.notes)})
    run = ctx.toolchain.sany(ctx.job_dir("syntax"), ctx.spec_files(), ctx.module, timeout_s=60)
    details: dict[str, object] = {"notes": list(candidate.notes), "cached": run.cached}
    if run.raw.timed_out:
        return PhaseResult("syntax", Status.FAILED, 0.0, "SANY did not finish within its time limit", details)
    if run.result.ok:
        return PhaseResult("syntax", Status.PASSED, 1.0, "SANY accepts the module", details)
    score, units = partial_credit(ctx, candidate.tla)
    details.update(
        errors=[e.__dict__ if hasattr(e, "__dict__") else str(e) for e in run.result.errors][:20],
        definitions=units,
    )
    parsed = sum(1 for u in units if u["parses"])
    reason = f"{_reason(run.result)} (partial credit: {parsed}/{len(units)} definitions parse alone)"
    return PhaseResult("syntax", Status.FAILED, round(score, 6), reason, details)
