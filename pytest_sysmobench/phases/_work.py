"""Work bounds that hold on every machine, and who is charged when seconds stop a run.

TLC evaluates a state constraint on every successor it generates, before it looks whether the
state is new.  A counter kept in one of TLC's registers therefore counts generated states
exactly, and with one worker the count, the states explored and the verdict are the same on
every machine.  Past the bound the constraint prints the run's unforgeable mark and asks TLC
to exit: the run ends with states left on the queue, and the mark tells this stop (a verdict on
the explored part, like the depth and distinct-state bounds) from a spec's own
``TLCSet("exit", TRUE)`` or a stop by a safety net in seconds.

Seconds stop only what no work bound can: an expression that never finishes evaluating, or a
spec that ends TLC itself.  That is the spec's doing and is charged to it, unless the harness
is shown at fault: a known-good check run right after in the same runner must finish normally.
"""

from __future__ import annotations

from typing import Any

from ..tla import modules
from ..tla.driver import DriverError
from ..tla.messages import TlcResult
from ..tla.values import ValueParseError, parse_value
from ._context import CellContext

#: The TLC register that holds the count (TLC registers are per worker; a spec that uses this
#: one only confuses its own run, which the safety net then charges to it).
REGISTER = 977
#: The count of a second check that shares a run with a first (each keeps its own bound).
SECOND_REGISTER = 976
BOUND_LABEL = "work bound"
#: A run that ended this close to the cell's deadline was cut by the cell budget.
CELL_BUDGET_SLACK_S = 1.0


#: The modules the phases write beside a spec, named after the spec's module: each phase's module
#: of bounds and marks (named after the phase), P2's run and its depth bound, P4's canonical
#: templates and the module that checks them through the mapping.
_MODULE_SUFFIX = {"runtime": "Work", "conformance": "P3Work", "invariants": "P4Work",
                  "run": "Run", "bound": "Bound", "canon": "Canon", "check": "Check"}


def module_name(spec_module: str, role: str) -> str:
    """The name of a module the benchmark writes beside a spec module (``_MODULE_SUFFIX``)."""
    return f"{spec_module}_Sysmo{_MODULE_SUFFIX[role]}"


def module_files(spec_module: str, phase: str) -> dict[str, str]:
    """That module, as the file a run of the phase adds beside the spec."""
    name = module_name(spec_module, phase)
    return {f"{name}.tla": bound_module(name)}


def bound_module(name: str) -> str:
    """A module of its own (Naturals and TLC), reached through a named instance, so that none
    of its names can meet the spec's.  Besides the count, registers that remember a state was
    seen (P4's premises) are kept through it, for the same reason; a variable's values are
    compared there as text (TLC stops on ``"none" = [a |-> 1]``, and a spec may change the kind
    of a variable's value from one state to the next)."""
    body = f"""Reset == TLCSet({REGISTER}, 0) /\\ TLCSet({SECOND_REGISTER}, 0)
WithinAt(register, generated, mark) ==
    /\\ TLCSet(register, TLCGet(register) + 1)
    /\\ \\/ TLCGet(register) <= generated
       \\/ /\\ TLCGet(register) = generated + 1
          /\\ PrintT(<<mark, "{BOUND_LABEL}">>)
          /\\ TLCSet("exit", TRUE)
          /\\ FALSE
Within(generated, mark) == WithinAt({REGISTER}, generated, mark)
Unseen(register) == TLCGet(register) = 0
Seen(register, what) == TLCSet(register, 1) /\\ PrintT(what)
Forget(register) == TLCSet(register, 0)
ForgetAll(first, last) == \\A register \\in first..last : TLCSet(register, 0)
EmptyAll(first, last) == \\A register \\in first..last : TLCSet(register, {{}})
MovedSince(fresh, register, value, what) ==
    IF fresh THEN TLCSet(register, 1) /\\ TLCSet(register + 1, ToString(value))
    ELSE TLCGet(register) = 2 \\/ TLCGet(register + 1) = ToString(value) \\/ (TLCSet(register, 2) /\\ PrintT(what))
Moved(register, value, what) == MovedSince(TLCGet(register) = 0, register, value, what)
MovedInBehaviour(register, value, what) == MovedSince(TLCGet("level") <= 1, register, value, what)
SeenFor(register, who, what) == who \\notin TLCGet(register) /\\ TLCSet(register, TLCGet(register) \\cup {{who}}) /\\ PrintT(what)"""
    return modules.module(name, body, ("Naturals", "TLC"))


def instance_lines(bound_module_name: str, instance: str = "SysmoWork") -> str:
    """What a generated module that extends the spec needs: the instance, and the reset of the
    counter (an ASSUME of the module TLC checks, where TLC evaluates it)."""
    return f"{instance} == INSTANCE {bound_module_name}\nASSUME {instance}!Reset"


def marked(result: TlcResult, mark: str) -> list[Any]:
    """The values printed behind the run's mark (anything else a spec printed is ignored).

    TLC breaks a long printed value over several lines, so the print output is read as one
    text: each ``<< "mark", ... >>`` is cut out by its brackets and parsed.
    """
    found = []
    for printed in marked_texts(result, mark):
        try:
            found.append(parse_value(printed))
        except ValueParseError:
            pass
    return found


def marked_texts(result: TlcResult, mark: str) -> list[str]:
    """Each ``<< "mark", ... >>`` printed, as TLC wrote it (one line even if TLC broke it)."""
    text = "\n".join(result.print_lines)
    quoted = f'"{mark}"'
    found = []
    start = text.find(quoted)
    while start >= 0:
        opening = text.rfind("<<", 0, start)
        end = _closing(text, opening) if opening >= 0 and not text[opening + 2 : start].strip() else -1
        if end > 0:
            found.append(" ".join(text[opening:end].split()))
        start = text.find(quoted, start + len(quoted))
    return found


def _closing(text: str, opening: int) -> int:
    """The end of the tuple that opens at ``opening`` (strings skipped), or -1."""
    depth, i = 0, opening
    while i < len(text):
        if text[i] == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("<<", i):
            depth += 1
            i += 1
        elif text.startswith(">>", i):
            depth -= 1
            i += 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def bound_reached(result: TlcResult, mark: str) -> bool:
    return bound_among(marked(result, mark))


def bound_among(marks: list[Any]) -> bool:
    """Whether a run's marks (``marked``) say its work bound stopped it."""
    return any(isinstance(v, tuple) and len(v) == 2 and v[1] == BOUND_LABEL for v in marks)


def charged_stop(ctx: CellContext, what: str, budget_s: float, spec: str) -> str:
    """The reason a run that only seconds (or the spec itself) stopped is charged to the spec;
    raises DriverError when a known-good check right after fails too (the harness is at fault)."""
    if not ctx.toolchain.harness_sound(ctx.job_dir("harness-check")):
        raise DriverError(f"{what} was stopped before its work was done, and a known-good check run right after "
                          "failed too: the harness is at fault, not the spec")
    if 'TLCSet("exit"' in spec.replace(" ", ""):
        return (f"{what} ended before its bounded work was done: the spec stops TLC itself "
                "(TLCSet(\"exit\", ...)); charged to the spec")
    net = f"the {budget_s:g} s safety net"
    cell = ctx.toolchain.budget
    if cell is not None and cell.remaining() <= CELL_BUDGET_SLACK_S:
        net = f"the cell budget of {cell.seconds:g} s (task.yaml cell_budget_s)"
    return (f"{what} did not finish its bounded work within {net}, and a known-good check right after finished "
            "normally: an evaluation in the spec takes too long; charged to the spec")
