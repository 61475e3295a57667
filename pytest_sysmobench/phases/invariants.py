"""P4: does the spec keep the system's safety and liveness properties?

The task's templates speak the canonical vocabulary.  They are placed in a generated module
of their own, which the spec then INSTANCEs with the mapping as substitutions: a TLA+
refinement mapping, so the templates' names can never collide with the spec's.  The
model's own INVARIANT/PROPERTY/CONSTRAINT lines are removed first (a constraint of its own can
prune the states that lead to a violation; the task's constraint bounds every spec alike).  Safety templates are
checked together and a violated one is removed and the rest re-checked; liveness templates
are checked together under the spec's own fairness, and one by one when that run does not
pass (TLC 2.15 does not say which property failed).

Every check is bounded by work: at most the task's ``generated`` successor states (a template
that holds on the explored part holds), besides the task's canonical constraint.  What only
seconds stop is charged to the spec.  A mapping that does not fit the spec, or the traces,
fails the phase (scored 0, charged to the spec that came with it), as does a spec with no
mapping at all.  A template that reads a variable the mapping leaves unmodelled fails
unchecked; the others are checked.  The score weighs the templates that define the system
above all the others together (``scoring.template_score``); ``TypeOK``, from the task's
declared types, keeps the other templates from holding vacuously on values they never name.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping as TMapping, Sequence

from ..cache import digest
from ..evaluator import EvaluatorError, Translation
from ..failures import UNMODELLED_NOTE, VACUOUS_NOTE, invariants_class
from ..mapping import Mapping
from ..scoring import Cause, PhaseResult, Status, TemplateVerdict, template_score
from ..tasks import TYPE_MARK, TYPE_TEMPLATE, InvariantTemplate, Task, type_template
from ..tla import modules
from ..tla.grammar import spec_parts
from ..tla.cfg import EXPLORATION_KEYWORDS, UNSUPPORTED_IN_215, Config
from ..tla.messages import UNFINISHED, TlcResult, Verdict
from ..tla.toolchain import TlcRun
from ..tla.values import ValueParseError, format_value, parse_value, record_literal
from ..traces import Corpus
from . import _work
from ._beyond import BEYOND_TRACES, beyond_traces
from ._codec import MappingProblem, constant_literal, prepare_codec
from ._fields import stripped_state
from ._context import CellContext, evaluator_failure, no_mapping
from ._infer import given_or_inferred

PREFIX = "Sysmo_"
CONSTRAINT = "SysmoTaskConstraint"
WORK_BOUND = "SysmoWorkBound"
REACH = "SysmoReach"
UNREACHED = "SysmoUnreached"
#: TLC registers that remember a premise was reached (the work bound's is 977).
PREMISE_REGISTER = 978
PREMISE_LABEL = "premise"
MOVED = "SysmoMoved"
#: TLC registers (two per variable: seen, first value) that remember a variable read by a
#: template without a premise took a second value; and the label printed when it does.
MOVED_REGISTER = 28_000
MOVED_LABEL = "moved"
IN_BEHAVIOURS = "InBehaviours"
BOUNDED_NOTE = "work bound reached"
TRACE_PREVIEW = 12


def canon_module(task: Task, templates: Sequence[InvariantTemplate] | None = None, constraint: bool = True,
                 modelled: Sequence[str] = (), moving: Sequence[str] = ()) -> str:
    """The templates over the canonical vocabulary, in a module of their own (with the state read
    on the ``modelled`` variables, for the traced states a run reaches)."""
    vocab = task.vocabulary
    lines = []
    if vocab.constants:
        lines.append("CONSTANTS " + ", ".join(c.name for c in vocab.constants))
    lines.append("VARIABLES " + ", ".join(v.name for v in vocab.variables))
    if task.template_definitions.strip():
        lines.append(task.template_definitions.strip())
    templates = task.templates if templates is None else templates
    lines += [t.tla for t in templates]
    lines += [f"SysmoPremise_{t.name} ==\n    {t.premise}" for t in templates if t.premise]
    if constraint and task.invariants.constraint:
        lines.append(f"{CONSTRAINT} ==\n    {task.invariants.constraint}")
    lines += [f"SysmoValue_{v} == {v}" for v in moving]
    if modelled:
        lines.append(f"{TRACED_KEY} == [" + ", ".join(f"{v} |-> {v}" for v in modelled) + "]")
        within = [f"({task.invariants.constraint})" if constraint and task.invariants.constraint else "",
                  f"({task.invariants.reach})"]
        lines.append(f"{WITHIN} ==\n    " + " /\\ ".join(w for w in within if w))
    return modules.module(_work.module_name(task.module, "canon"), "\n\n".join(lines),
                          ("Naturals", "Integers", "Sequences", "FiniteSets", "TLC"))


def task_problem(ctx: CellContext) -> str | None:
    """The templates must parse on their own, over the canonical vocabulary alone: a task file
    that does not is the task's fault, reported as such (naming file and field), never charged
    to every spec that meets it."""
    text = canon_module(ctx.task, modelled=_every_variable(ctx.task))
    key = f"task-templates:{digest(text)}"
    if key not in ctx.toolchain.memo:
        ctx.toolchain.memo[key] = _task_parse_problem(ctx, text)
    return ctx.toolchain.memo[key]  # type: ignore[return-value]


def _task_parse_problem(ctx: CellContext, text: str) -> str | None:
    task = ctx.task
    name = _work.module_name(task.module, "canon")
    workdir = ctx.job_dir("invariants", "task")

    def problem(module_text: str) -> str | None:
        run = ctx.toolchain.sany(workdir, {f"{name}.tla": module_text}, name)
        return None if run.result.ok else (run.result.first_error_summary() or "SANY rejected it")

    whole = problem(text)
    if whole is None:
        return None
    file = task.invariants_file or task.directory
    culprit = problem(canon_module(task, (), constraint=False))
    if culprit is not None:
        return f"task error: {file}: definitions do not parse: {culprit}"
    written = [t for t in task.templates if t.name != TYPE_TEMPLATE]  # as invariants.yaml lists them
    for template in task.templates:
        culprit = problem(canon_module(task, (template,), constraint=False))
        if culprit is not None and template.name == TYPE_TEMPLATE:
            return (f"task error: {task.directory / 'task.yaml'}: vocabulary.variables: the types do not parse "
                    f"together ({TYPE_TEMPLATE}): {culprit}")
        if culprit is not None:
            field = f"invariants[{written.index(template)}] ({template.name})"
            what = "premise" if template.premise and problem(canon_module(task, (
                dataclasses.replace(template, premise=None),), constraint=False)) is None else "tla"
            return f"task error: {file}: {field}.{what} does not parse: {culprit}"
    if task.invariants.constraint:
        culprit = problem(canon_module(task, (), constraint=True))
        if culprit is not None:
            return f"task error: {task.directory / 'task.yaml'}: phases.invariants.constraint does not parse: {culprit}"
    if task.invariants.reach:
        culprit = problem(canon_module(task, (), constraint=False, modelled=_every_variable(task)))
        if culprit is not None:
            return f"task error: {task.directory / 'task.yaml'}: phases.invariants.reach does not parse: {culprit}"
    return f"task error: {file}: the templates do not parse together: {whole}"


def _every_variable(task: Task) -> tuple[str, ...]:
    """Every canonical variable, when the task asks P4's exploration to reach the traced states."""
    return tuple(v.name for v in task.vocabulary.variables) if task.invariants.reach else ()


def work_lines(task: Task, mark: str) -> list[str]:
    return [_work.instance_lines(_work.module_name(task.module, "invariants")),
            f'{PREFIX}{WORK_BOUND} == SysmoWork!Within({task.invariants.generated}, "{mark}")']


def check_module(task: Task, mapping: Mapping, mark: str, templates: Sequence[InvariantTemplate] | None = None,
                 constraint: bool = True, extends: Sequence[str] = (), history: Sequence[str] = (),
                 traced: _Traced | None = None, moving: Sequence[str] = ()) -> str:
    reader = _Reader(task, mapping)
    canon = _work.module_name(task.module, "canon")
    lines = [*history, f"SysmoCanon == INSTANCE {canon} WITH\n    {mapping.substitutions()}",
             *reader.lines()]
    templates = task.templates if templates is None else templates
    lines += [f"{PREFIX}{t.name} == " + (reader.state_level(t.name, task.variables_read(t)) if t.kind == "safety"
                                         else f"SysmoCanon!{t.name}") for t in templates]
    if constraint and task.invariants.constraint:
        lines.append(f"{PREFIX}{CONSTRAINT} == {reader.state_level(CONSTRAINT, _constraint_reads(task))}")
    lines += work_lines(task, mark) + reach_lines(templates, mark, reader) + moved_lines(moving, mark, reader)
    if traced is not None:
        lines += traced.lines(task, mapping, mark, reader)
    return modules.module(_work.module_name(task.module, "check"), "\n".join(lines), tuple(extends) or (task.module,))


@dataclass(frozen=True)
class _Reader:
    """How the check module reads a canonical state predicate of a spec whose mapping builds
    variables from the spec's state.  TLC evaluates an INSTANCE substitution again at every
    occurrence, and a function it builds again at every application: a template over a mapped
    log reads it hundreds of times per state.  So each built variable is bound once per
    evaluation (a LET, which TLC keeps), passed to the canonical module as an instance
    parameter, and a function is made whole once (comparing it with itself builds it)."""

    task: Task
    mapping: Mapping

    @property
    def built(self) -> tuple[str, ...]:
        return tuple(v.canonical for v in self.mapping.variables if v.computed)

    def lines(self) -> list[str]:
        if not self.built:
            return []
        given = {name: f"SysmoArg_{name}" for name in self.built}
        readings = {v.canonical: v.reading() for v in self.mapping.variables}
        canon = _work.module_name(self.task.module, "canon")
        return [f"SysmoCanonAt({', '.join(given.values())}) == INSTANCE {canon} WITH\n    "
                f"{self.mapping.substitutions(given)}",
                *(f"SysmoMapped_{name} == {readings[name]}" for name in self.built)]

    def state_level(self, name: str, reads: frozenset[str]) -> str:
        if not reads & set(self.built):
            return f"SysmoCanon!{name}"
        held = "\n        ".join(f"SysmoHeld_{n} == SysmoMapped_{n}" for n in self.built)
        whole = [f"SysmoHeld_{n} = SysmoHeld_{n}" for n in self.built
                 if n in reads and name != TYPE_TEMPLATE and self._function(n)]
        call = f"SysmoCanonAt({', '.join(f'SysmoHeld_{n}' for n in self.built)})!{name}"
        return f"\n    LET {held}\n    IN " + " /\\ ".join([*whole, call])

    def value_level(self, name: str) -> str:
        """A canonical definition that is a value, not a predicate, read once per state."""
        let, (read,) = self.values([name])
        return f"\n    {let}{read}" if let else read

    def values(self, names: Sequence[str]) -> tuple[str, list[str]]:
        """Canonical definitions that are values, each read once per state: a LET that binds the
        built variables (empty when none is built), and an expression for each name under it."""
        if not self.built:
            return "", [f"SysmoCanon!{name}" for name in names]
        held = "\n        ".join(f"SysmoHeld_{n} == SysmoMapped_{n}" for n in self.built)
        at = f"SysmoCanonAt({', '.join(f'SysmoHeld_{n}' for n in self.built)})"
        return f"LET {held}\n    IN ", [f"{at}!{name}" for name in names]

    def _function(self, variable: str) -> bool:
        """Only functions are built lazily by TLC (a type TypeOK checks, so other values are left alone)."""
        kind = self.task.vocabulary_type(variable)
        return "->" in kind or "Seq(" in kind


TRACED_KEY = "SysmoTracedKey"
WITHIN = "SysmoReachWithin"
TRACED_LABEL = "traced"
WITHIN_LABEL = "within"
#: The TLC registers that remember a traced state was reached (one per distinct reading).
TRACED_REGISTER = 30_000
#: The register that counts the explored states printed for the check beyond the traces, and
#: how many are printed (in breadth-first order; a sample of them is judged, see ``_beyond``).
SAMPLED_REGISTER = 29_999
SAMPLED_LABEL = "sampled"
SAMPLED_PRINTED = 240


@dataclass(frozen=True)
class _Traced:
    """The traced states of the real system, for a task whose reference reaches them within P4's
    bounds: a spec's P4 counts only as far as its exploration reaches them too (a spec whose
    actions do nothing keeps every template, vacuously, in the one state it has).  A state is
    reached when an explored state reads, on the variables the mapping models, as it does; those
    the task's constraint rules out are not asked for."""

    full: tuple[str, ...]  # each distinct traced state, as a record over every canonical variable
    keys: tuple[str, ...]  # the distinct readings of those on the modelled variables
    key_of: tuple[int, ...]  # for each full state, its reading's place in ``keys`` (from 1)
    #: Whether the run prints the first states it explores that no trace shows (their readings
    #: are whole canonical states only when the mapping models every variable).
    sample: bool = False

    @classmethod
    def of(cls, corpus: Corpus, modelled: Sequence[str], names: TMapping[str, Any],
           unrepresentable: frozenset[str] = frozenset(), sample: bool = False,
           mapping: Mapping | None = None) -> _Traced:
        """The traced states, their names (``t1``) written as the spec's cfg names them (``names``);
        those the mapping cannot represent are not asked for (P3 charged them, once)."""
        full: dict[str, int] = {}
        keys: dict[str, int] = {}
        key_of = []
        for trace in corpus.traces:
            for state in trace.states:
                if record_literal(state) in unrepresentable:
                    continue
                state = _renamed(state, names)
                text = record_literal(state)
                if text in full:
                    continue
                full[text] = len(full)
                read = stripped_state(state, mapping) if mapping is not None else state
                key = record_literal({v: read[v] for v in modelled})
                key_of.append(keys.setdefault(key, len(keys) + 1))
        return cls(tuple(full), tuple(keys), tuple(key_of), sample)

    def lines(self, task: Task, mapping: Mapping, mark: str, reader: _Reader) -> list[str]:
        variables = {v.name: f"sysmo_t.{v.name}" for v in task.vocabulary.variables}
        index = " @@ ".join(f"({key} :> {k})" for k, key in enumerate(self.keys, start=1))
        return [
            f"SysmoTracedFull == <<{', '.join(self.full)}>>",
            f"SysmoTracedKeyOf == <<{', '.join(map(str, self.key_of))}>>",
            f"SysmoTracedAt(sysmo_t) == INSTANCE {_work.module_name(task.module, 'canon')} WITH\n    "
            + mapping.substitutions(variables, every=True),
            "SysmoTracedWithin == {SysmoTracedKeyOf[sysmo_k] : sysmo_k \\in "
            f"{{sysmo_k \\in 1..Len(SysmoTracedFull) : SysmoTracedAt(SysmoTracedFull[sysmo_k])!{WITHIN}}}}}",
            f'ASSUME PrintT(<<"{mark}", "{WITHIN_LABEL}", SysmoTracedWithin>>)',
            f"SysmoTracedIndex == {index}",
            f"{PREFIX}{TRACED_KEY} == {reader.value_level(TRACED_KEY)}",
            f"{PREFIX}{TRACED_LABEL.capitalize()} ==\n"
            f"    LET sysmo_r == {PREFIX}{TRACED_KEY}\n"
            f"    IN (sysmo_r \\in DOMAIN SysmoTracedIndex /\\ SysmoWork!Unseen({TRACED_REGISTER} + SysmoTracedIndex[sysmo_r])) =>\n"
            f"        SysmoWork!Seen({TRACED_REGISTER} + SysmoTracedIndex[sysmo_r], "
            f'<<"{mark}", "{TRACED_LABEL}", SysmoTracedIndex[sysmo_r]>>)',
            f"ASSUME SysmoWork!ForgetAll({TRACED_REGISTER}, {TRACED_REGISTER + len(self.keys)})",
            *(self._sampled(mark) if self.sample else ())]

    @staticmethod
    def _sampled(mark: str) -> list[str]:
        count = f"TLCGet({SAMPLED_REGISTER})"
        return [f"ASSUME TLCSet({SAMPLED_REGISTER}, 0)",
                f"{PREFIX}{SAMPLED_LABEL.capitalize()} ==\n"
                f"    \\/ {count} >= {SAMPLED_PRINTED}\n"
                f"    \\/ LET sysmo_r == {PREFIX}{TRACED_KEY}\n"
                f"       IN \\/ sysmo_r \\in DOMAIN SysmoTracedIndex\n"
                f"          \\/ TLCSet({SAMPLED_REGISTER}, {count} + 1) /\\ PrintT(<<\"{mark}\", \"{SAMPLED_LABEL}\", sysmo_r>>)"]


def _renamed(value: Any, names: TMapping[str, Any]) -> Any:
    """A trace's JSON value with the names of its processes (a function's keys, strings) swapped."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {names.get(k, k): _renamed(v, names) for k, v in value.items()}
    return value


def traced_instance(config: Config, mapping: Mapping, constants: TMapping[str, Any]) -> tuple[Config, list[str]]:
    """The cfg with each set of processes it gives another size (or values no trace has, as
    model values) set to the traces' own: P4 explores the instance of the system that ran, so a
    cfg cannot make a spec's exploration smaller than the traces (and skip the traced states it
    is to reach) by running fewer threads or servers.  What was set, as the details say it."""
    given = config.constants()
    values: dict[str, str] = {}
    for canonical, expr in mapping.constants:
        value, name = constants.get(canonical), expr.strip()
        if not isinstance(value, list) or name not in given:
            continue
        try:
            mine = parse_value(given[name])
        except ValueParseError:
            mine = None
        if not isinstance(mine, frozenset) or len(mine) != len(value) or not all(_plain(v) for v in mine):
            values[name] = constant_literal(value)
    notes = [f"{name} = {literal}, the traces' instance (the cfg gave {given[name]})" for name, literal in values.items()]
    return config.with_constants(values), notes


def _plain(value: Any) -> bool:
    """A value a trace names a process by: a string or a number (never a model value)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def traced_names(config: Config, mapping: Mapping, constants: TMapping[str, Any]) -> dict[str, Any] | None:
    """How the spec's cfg names what the traces name (the traces' threads ``t1``..``t3`` are the
    cfg's ``"a"``..``"c"``, matched in sorted order: the processes of these systems are alike),
    or None when the cfg runs another instance of the system than the traces (another number
    of processes, values it does not give, model values) and no traced state can be asked of it."""
    given = config.constants()
    names: dict[str, Any] = {}
    for canonical, expr in mapping.constants:
        value = constants.get(canonical)
        if not isinstance(value, list):
            continue  # a bound (N, MaxTerm): the task's ``reach`` predicate reads it at the cfg's value
        text = given.get(expr.strip())
        try:
            mine = parse_value(text) if text is not None else None
        except ValueParseError:
            return None
        if not isinstance(mine, frozenset) or len(mine) != len(value) or not all(map(_plain, (*mine, *value))):
            return None
        if all(isinstance(v, str) for v in (*mine, *value)):
            names.update(zip(sorted(map(str, value)), sorted(map(str, mine))))
        elif set(value) != set(mine):
            return None
    return names


HISTORY_SPEC = "SysmoHistorySpec"


def history_run(mapping: Mapping, spec_modules: Sequence[str], config: Config) -> tuple[list[str], Config]:
    """The spec run with one more variable per history in its mapping, which gathers what every
    state of the run shows of it (TLC takes one next-state relation, so the spec's own formula
    is taken apart and put back together around it)."""
    histories = mapping.histories()
    if not histories:
        return [], config
    names = [h.history_variable for h in histories]
    lines = [f"VARIABLES {', '.join(names)}",
             "SysmoHistoryInit == " + " /\\ ".join(f"{h.history_variable} = {h.spec_to_canonical()}" for h in histories),
             "SysmoHistoryNext == " + " /\\ ".join(f"{h.history_variable}' = {h.history_variable} \\cup "
                                                    f"{h.spec_to_canonical()}'" for h in histories)]
    keywords = config.keywords()
    if "SPECIFICATION" not in keywords:
        init = next((s.names()[0] for s in config.sections if s.keyword == "INIT" and s.names()), None)
        step = next((s.names()[0] for s in config.sections if s.keyword == "NEXT" and s.names()), None)
        if init is None or step is None:
            raise MappingProblem("a history entry needs the cfg's SPECIFICATION, or its INIT and NEXT")
        lines += [f"SysmoHistoryInitAll == {init} /\\ SysmoHistoryInit",
                  f"SysmoHistoryNextAll == {step} /\\ SysmoHistoryNext"]
        config, _ = config.without(["INIT", "NEXT"])
        return lines, config.with_section("INIT", ["SysmoHistoryInitAll"]).with_section("NEXT", ["SysmoHistoryNextAll"])
    formula = next(s.names()[0] for s in config.sections if s.keyword == "SPECIFICATION")
    parts = spec_parts(spec_modules, formula)
    if parts is None:
        raise MappingProblem(f"a history entry ({', '.join(h.canonical for h in histories)}) needs the specification "
                             f"{formula} in the form Init /\\ [][Next]_vars /\\ fairness, one [][...]_vars in all")
    conjuncts = [*(f"({c})" for c in parts.init), "SysmoHistoryInit",
                 f"[][({parts.next}) /\\ SysmoHistoryNext]_<<{parts.subscript}, {', '.join(names)}>>",
                 *(f"({c})" for c in parts.temporal)]
    lines.append(f"{HISTORY_SPEC} ==\n    /\\ " + "\n    /\\ ".join(conjuncts))
    config, _ = config.without(["SPECIFICATION"])
    return lines, config.with_section("SPECIFICATION", [HISTORY_SPEC])


def reach_lines(templates: Sequence[InvariantTemplate], mark: str, reader: _Reader) -> list[str]:
    """A state constraint that is always true and prints, the first time a template's premise
    holds in an explored state, that it was reached (once: a register remembers it)."""
    with_premise = [t for t in templates if t.premise]
    if not with_premise:
        return []
    premises = [f"{PREFIX}{REACH}_{t.name} == {reader.state_level(f'SysmoPremise_{t.name}', reader.task.reads(f'SysmoPremise == {t.premise}'))}"
                for t in with_premise]
    # As invariants, for seeded behaviours beyond the work bound: one that breaks it reaches the premise.
    premises += [f"{PREFIX}{UNREACHED}_{t.name} == ~{PREFIX}{REACH}_{t.name}" for t in with_premise]
    parts = [f"(SysmoWork!Unseen({PREMISE_REGISTER + k}) /\\ {PREFIX}{REACH}_{t.name}) =>\n"
             f'        SysmoWork!Seen({PREMISE_REGISTER + k}, <<"{mark}", "{PREMISE_LABEL}", "{t.name}">>)'
             for k, t in enumerate(with_premise)]
    resets = " /\\ ".join(f"SysmoWork!Forget({PREMISE_REGISTER + k})" for k in range(len(with_premise)))
    return [*premises, f"{PREFIX}{REACH} ==\n    /\\ " + "\n    /\\ ".join(parts), f"ASSUME {resets}"]


def moving_variables(task: Task, templates: Sequence[InvariantTemplate]) -> tuple[str, ...]:
    """The variables the templates without a premise read: such a template says something about
    a spec only where one of them changes (a conjunction over a log the spec never writes holds
    on the empty log)."""
    return tuple(sorted({v for t in templates if not t.premise for v in task.variables_read(t)}))


def moved_lines(variables: Sequence[str], mark: str, reader: _Reader) -> list[str]:
    """An invariant that is always true and prints, the first time one of the variables reads
    in an explored state otherwise than in the first, that it moved (once: a register remembers
    it)."""
    if not variables:
        return []
    bind, values = reader.values([f"SysmoValue_{v}" for v in variables])

    def parts(marker: str) -> str:
        return "\n       /\\ ".join(f'SysmoWork!{marker}({MOVED_REGISTER + 2 * k}, {value}, <<"{mark}", "{MOVED_LABEL}", "{v}">>)'
                                   for k, (v, value) in enumerate(zip(variables, values)))
    # Seeded behaviours (TLC's registers are the simulating worker's own, empty at its start):
    # each variable against its value where the behaviour starts.
    return [f"{PREFIX}{MOVED} ==\n    {bind}/\\ " + parts("Moved"),
            f"{PREFIX}{MOVED}{IN_BEHAVIOURS} ==\n    {bind}/\\ " + parts("MovedInBehaviour"),
            f"ASSUME SysmoWork!ForgetAll({MOVED_REGISTER}, {MOVED_REGISTER + 2 * len(variables)})"]


@dataclass
class TemplateOutcome:
    name: str
    kind: str
    status: str  # passed | failed
    reason: str = ""
    states: int | None = None
    trace: list[str] = field(default_factory=list)
    stuttering: bool = False  # a liveness counterexample that ends stuttering
    defines: bool = False  # the template states a property that defines the system
    counted: bool = True  # one of the templates the original benchmark's fraction counts

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def _trace_preview(result: TlcResult) -> list[str]:
    lines = []
    for state in result.trace[:TRACE_PREVIEW]:
        raw = state.raw.strip()
        if not raw.startswith(f"{state.index}:"):
            raw = f"{state.index}: {state.action or 'Initial predicate'}\n{raw}"
        lines.append(raw)
    return lines


def translated_module(task: Task, definitions: list[tuple[str, str]], mark: str) -> str:
    """The check module for templates an evaluator restated over the spec's own names."""
    lines = [f"{PREFIX}{name} ==\n    {expr}" for name, expr in definitions] + work_lines(task, mark)
    return modules.module(_work.module_name(task.module, "check"), "\n".join(lines),
                          (task.module, "Naturals", "Integers", "Sequences", "FiniteSets", "TLC"))


def work_mark(ctx: CellContext) -> str:
    return ctx.toolchain.cache.mark("invariants-work", ctx.spec_files(), ctx.task.invariants)


def work_files(ctx: CellContext) -> dict[str, str]:
    return _work.module_files(ctx.task.module, "invariants")


class _Checker:
    def __init__(self, ctx: CellContext, check_files: dict[str, str], config: Config) -> None:
        self.ctx = ctx
        self.task = ctx.task
        self.files = {**ctx.spec_files(), **work_files(ctx), **check_files}
        #: Without the work bound: a simulation's behaviours bound its work (and TLC's registers,
        #: which count the work, are the main thread's, not a simulation worker's).
        self.unbounded = config
        self.config = config.with_section("CONSTRAINT", [PREFIX + WORK_BOUND], first=True)
        self.mark = work_mark(ctx)
        self._stops: dict[int, tuple[TlcResult, str]] = {}
        #: Templates whose premise held in a state some run explored (None: premises not tracked,
        #: as for templates an evaluator restated in the spec's own names).
        self.reached: set[str] | None = None
        #: The variables read by templates without a premise that took a second value in some
        #: explored state (None: not tracked).
        self.moved: set[str] | None = None
        #: The traced states asked for (None: not asked, see ``_Traced``), and those reached.
        self.traced: set[int] | None = None
        self.traced_reached: set[int] = set()
        #: How the cfg names the traces' processes, and the first untraced states explored (by
        #: their text; None: not asked), for the check beyond the traces.
        self.names: dict[str, Any] | None = None
        self.sampled: dict[str, Any] | None = None
        self.corpus: Corpus | None = None
        #: Whether some run stopped at the work bound: the BFS did not explore everything.
        self.bounded = False
        #: The most successors a bounded run generated per state it explored (TLC's counts, the
        #: same on every machine): a simulation step generates at most as many.
        self.branching = 1.0

    @classmethod
    def mapped(cls, ctx: CellContext, mapping: Mapping, config: Config, modelled: _Modelled) -> _Checker:
        task, templates = ctx.task, modelled.templates
        history, config = history_run(mapping, ctx.spec_modules(), config)
        if modelled.constraint:
            config = config.with_section("CONSTRAINT", [PREFIX + CONSTRAINT])
        # Marks are invariants, not constraints: TLC evaluates an invariant once per distinct state
        # the bounds keep, a constraint once per successor generated (hundreds of times as many);
        # first, so that a template's violation does not leave its own state unmarked.
        if any(t.premise for t in templates):
            config = config.with_section("INVARIANT", [PREFIX + REACH], first=True)
        moving = moving_variables(task, templates)
        if moving:
            config = config.with_section("INVARIANT", [PREFIX + MOVED], first=True)
        readings = [v.canonical for v in mapping.variables]
        traced = None
        if task.invariants.reach and readings:
            corpus = ctx.corpus()
            names = traced_names(config, mapping, corpus.constants)
            whole = not mapping.unmodelled and not mapping.unmodelled_fields and BEYOND_TRACES
            traced = _Traced.of(corpus, readings, names, _unrepresentable(ctx, mapping, corpus), whole, mapping) \
                if corpus.traces and names is not None else None
        if traced is not None:
            config = config.with_section("INVARIANT", [PREFIX + TRACED_LABEL.capitalize()], first=True)
        if traced is not None and traced.sample:
            config = config.with_section("INVARIANT", [PREFIX + SAMPLED_LABEL.capitalize()], first=True)
        canon, check = _work.module_name(task.module, "canon"), _work.module_name(task.module, "check")
        checker = cls(ctx, {
            f"{canon}.tla": canon_module(task, templates, modelled.constraint,
                                         readings if traced is not None else (), moving),
            f"{check}.tla": check_module(task, mapping, work_mark(ctx), templates, modelled.constraint,
                                         ctx.mapping_extends(), history, traced, moving),
        }, config)
        checker.reached = set()
        checker.moved = set()
        if traced is not None:
            checker.traced = set()
            checker.names = names
            checker.corpus = corpus
        if traced is not None and traced.sample:
            checker.sampled = {}
        return checker

    def run(self, job: str, keyword: str, names: list[str], also: Sequence[tuple[str, list[str]]] = ()) -> TlcResult:
        config = self.config
        for section, listed in ((keyword, names), *also):
            config = config.with_section(section, [PREFIX + n for n in listed])
        # Liveness checked once, on the whole explored graph: TLC's periodic checks run by the
        # clock, which would make the states explored depend on the machine's speed.
        run = self._tlc(job, config, ["-lncheck", "final"], lambda result: _work.bound_reached(result, self.mark))
        if run.result.verdict is Verdict.PARSE_ERROR:
            # The spec passed SANY on its own: what does not parse is the mapping in it.
            raise _Unparsable(f"the mapped templates do not parse against the spec: {run.result.summary()}")
        marks = _work.marked(run.result, self.mark)
        if self.reached is not None:
            self.reached |= {v[2] for v in marks if isinstance(v, tuple) and len(v) == 3 and v[1] == PREMISE_LABEL}
        if self.moved is not None:
            self.moved |= _moved_marks(marks)
        if self.traced is not None:
            for value in marks:
                if isinstance(value, tuple) and len(value) == 3 and value[1] == WITHIN_LABEL and isinstance(value[2], frozenset):
                    self.traced = {k for k in value[2] if isinstance(k, int)}
                elif isinstance(value, tuple) and len(value) == 3 and value[1] == TRACED_LABEL and isinstance(value[2], int):
                    self.traced_reached.add(value[2])
                elif self.sampled is not None and isinstance(value, tuple) and len(value) == 3 \
                        and value[1] == SAMPLED_LABEL:
                    self.sampled.setdefault(format_value(value[2]), value[2])
        bounded = _work.bound_among(marks)
        if bounded:
            self.bounded = True
            self.branching = max(self.branching, _branching(run.result))
        if run.result.verdict is Verdict.INCOMPLETE and bounded:
            # The work bound ended it: a verdict on the explored part, as a finished run is.
            note = f"{BOUNDED_NOTE} ({run.result.states_generated} generated, {run.result.distinct_states} distinct)"
            return dataclasses.replace(run.result, verdict=Verdict.OK, warnings=[*run.result.warnings, note])
        return run.result

    def simulate(self, seed: int, names: list[str], job: str = "simulate") -> TlcResult:
        """Seeded random behaviours checked against the invariants ``names`` (the marks, which
        speak of the BFS's exploration, are left out; the task's constraint stays)."""
        settings = self.task.invariants
        config, _ = self.unbounded.without({"INVARIANT"})
        config = config.with_section("INVARIANT", [PREFIX + n for n in names])
        return self._tlc(f"{job}-{seed}-{len(names)}", config,
                         ["-simulate", f"num={self.behaviours()}", "-depth", str(settings.depth), "-seed", str(seed)]).result

    def behaviours(self) -> int:
        """How many seeded behaviours a simulation takes: the task's, or fewer where the spec
        branches so widely that they would generate more than ``SIMULATED_GENERATED`` states
        (each step of a behaviour generates every successor of its state; a spec that may step
        anywhere would otherwise simulate for minutes)."""
        settings = self.task.invariants
        affordable = SIMULATED_GENERATED // max(1, math.ceil(settings.depth * self.branching))
        return max(1, min(settings.traces, affordable))

    def _tlc(self, job: str, config: Config, args: list[str],
             work_bound: Callable[[TlcResult], bool] | None = None) -> TlcRun:
        module = _work.module_name(self.task.module, "check")
        cfg_name = f"{module}.cfg"
        return self.ctx.tlc(self.ctx.job_dir("invariants", job), {**self.files, cfg_name: config.render()}, module,
                            ["-config", cfg_name, "-workers", "1", "-deadlock", *args], self.task.invariants.budget_s,
                            work_bound=work_bound)

    def stopped(self, result: TlcResult) -> str:
        """Why a run that only seconds or the spec itself ended is charged to the spec (once a run)."""
        key = id(result)
        if key not in self._stops:
            budget = self.task.invariants.budget_s
            self._stops[key] = (result, _work.charged_stop(self.ctx, "TLC", budget, self.ctx.candidate.tla or ""))
        return self._stops[key][1]


@dataclass(frozen=True)
class _Modelled:
    """What P4 can check of a spec whose mapping leaves canonical variables unmodelled: the
    templates that read none of them (the type check over the modelled ones), and whether the
    task's constraint can bound the search.  A template that reads one fails unchecked."""

    templates: tuple[InvariantTemplate, ...]
    unread: tuple[TemplateOutcome, ...]
    constraint: bool
    #: The unmodelled variables the task's constraint reads (why it is not applied).
    constraint_unmodelled: tuple[str, ...] = ()

    @classmethod
    def of(cls, task: Task, mapping: Mapping) -> _Modelled:
        missing = set(mapping.unmodelled)
        kept: list[InvariantTemplate] = []
        unread: list[TemplateOutcome] = []
        for template in task.templates:
            reads = sorted(task.variables_read(template) & missing) + _fields_read(task, mapping, template.tla)
            if template.name == TYPE_TEMPLATE:
                # A variable whose records lack fields the task's type gives them is not type-checked.
                typed = missing | {v for v, _ in mapping.unmodelled_fields}
                modelled = [v for v in task.vocabulary.variables if v.name not in typed]
                kept.append(type_template(dataclasses.replace(task.vocabulary, variables=tuple(modelled))))
            elif reads:
                unread.append(TemplateOutcome(template.name, template.kind, "failed",
                                              f"{template.name}: reads {', '.join(reads)}, {UNMODELLED_NOTE}: "
                                              "the property is not checked, and fails"))
            else:
                kept.append(template)
        unapplied = tuple(sorted(_constraint_reads(task) & missing)
                          + _fields_read(task, mapping, task.invariants.constraint)) if task.invariants.constraint else ()
        return cls(tuple(kept), tuple(unread), bool(task.invariants.constraint) and not unapplied, unapplied)


def _fields_read(task: Task, mapping: Mapping, tla: str) -> list[str]:
    """The left-out fields (``messages.lastLog``) TLA+ over the vocabulary reads: the variable,
    and the field by name (itself or through the task's definitions)."""
    if not mapping.unmodelled_fields:
        return []
    variables, fields = task.reads(tla), task.fields_read(tla)
    return [f"{var}.{f}" for var, names in mapping.unmodelled_fields if var in variables for f in names if f in fields]


def _constraint_reads(task: Task) -> frozenset[str]:
    probe = InvariantTemplate(CONSTRAINT, "safety", "", f"{CONSTRAINT} ==\n    {task.invariants.constraint}")
    return task.variables_read(probe)


class _Unparsable(Exception):
    """The generated check module does not parse: a mapping (or translation) fault."""


def _type_violation(result: TlcResult) -> str:
    """Which variable left its declared type, and with what value, as the type template printed it."""
    head = f'"{TYPE_MARK}", "'
    for text in _work.marked_texts(result, TYPE_MARK):
        body = text.removeprefix("<<").strip()  # a long value makes TLC break the tuple: << "mark", ...
        if body.startswith(head):
            name, _, value = body[len(head):].partition('", ')
            return f"{name} = {value.removesuffix('>>').strip()} is outside the type the task declares for {name}"
    return result.summary()


def _verdict_outcome(checker: _Checker, template: InvariantTemplate, result: TlcResult, violated: bool) -> TemplateOutcome:
    states = result.distinct_states
    if template.name == TYPE_TEMPLATE and result.verdict is Verdict.EVAL_ERROR and not violated:
        # TLC cannot even compare a value of another shape with the type (a tuple where the type
        # is a set): as much outside the type as a wrong element.
        return TemplateOutcome(template.name, template.kind, "failed",
                               f"{template.name} violated: a value of another shape than the task declares: "
                               f"{result.summary()}", states, _trace_preview(result))
    if violated:
        what = _type_violation(result) if template.name == TYPE_TEMPLATE else result.summary()
        return TemplateOutcome(template.name, template.kind, "failed", f"{template.name} violated: {what}",
                               states, _trace_preview(result), any(s.stuttering for s in result.trace))
    if result.verdict is Verdict.OK:
        bounded = next((w for w in result.warnings if w.startswith(BOUNDED_NOTE)), None)
        return TemplateOutcome(template.name, template.kind, "passed", f"holds in the explored part: {bounded}"
                               if bounded else "holds", states)
    if result.verdict in UNFINISHED:
        return TemplateOutcome(template.name, template.kind, "failed", f"{template.name}: {checker.stopped(result)}",
                               states)
    return TemplateOutcome(template.name, template.kind, "failed", f"{template.name}: {result.summary()}", states,
                           _trace_preview(result))


def _settled(checker: _Checker, templates: list[InvariantTemplate]) -> list[TemplateOutcome]:
    """Every template in one run, one exploration of the state space: when it ends with no
    violation all of them hold.  A safety violation names its template, which is recorded and
    removed before the next such run; a liveness violation ends the exploration with no safety
    template violated (TLC checks them on every state first), so those hold when the run
    explored all it was to explore, and only liveness is settled further, one template at a
    time.  Anything else is settled the long way (safety together, then liveness), which names
    the culprits."""
    safety = [t for t in templates if t.kind == "safety"]
    liveness = [t for t in templates if t.kind == "liveness"]
    outcomes: list[TemplateOutcome] = []
    round_ = 0
    while safety and liveness:
        round_ += 1
        result = checker.run("all" if round_ == 1 else f"all-{round_}", "INVARIANT", [t.name for t in safety],
                             also=[("PROPERTY", [t.name for t in liveness])])
        hit = _named_violation(result, safety + [t for t in liveness if t.steps_only])
        if hit is not None:
            outcomes.append(_verdict_outcome(checker, hit, result, violated=True))
            (safety if hit in safety else liveness).remove(hit)
            continue
        if result.verdict is Verdict.OK:
            return outcomes + [_verdict_outcome(checker, t, result, violated=False) for t in safety + liveness]
        if result.verdict is Verdict.LIVENESS_VIOLATION and _explored(checker, result):
            return outcomes + _after_liveness_violation(checker, safety, liveness, result)
        break
    return outcomes + _safety(checker, safety) + _liveness(checker, liveness)


def _after_liveness_violation(checker: _Checker, safety: list[InvariantTemplate], liveness: list[InvariantTemplate],
                              result: TlcResult) -> list[TemplateOutcome]:
    """A run that reached its liveness check kept every safety template and every step property
    (TLC checks those on each state and step it explores and stops at a violation): they hold.
    The violation is of the other liveness templates: of the only one, or of one of them, each
    then settled alone (TLC 2.15 does not say which)."""
    held = dataclasses.replace(result, verdict=Verdict.OK, trace=[])
    # No temporal one left: TLC took a step property for one, and each alone says which.
    temporal = [t for t in liveness if not t.steps_only] or liveness
    settled = {t.name: _verdict_outcome(checker, t, held, violated=False) for t in safety + liveness if t not in temporal}
    if len(temporal) == 1 and not temporal[0].steps_only:
        settled[temporal[0].name] = _verdict_outcome(checker, temporal[0], result, violated=True)
    else:
        settled |= {o.name: o for o in _liveness(checker, temporal, together=False)}
    return [settled[t.name] for t in safety + liveness]


def _explored(checker: _Checker, result: TlcResult) -> bool:
    """Whether a run explored all it was to explore: every state's successors, or as far as the
    work bound.  A run the safety net stopped in seconds still checks liveness on the graph it
    explored (TLC does, after a stop); a violation found there is real, but the safety templates
    were checked only as far as that machine got in those seconds, which decides nothing."""
    return not result.states_left or _work.bound_reached(result, checker.mark)


def _deeper(checker: _Checker, templates: Sequence[InvariantTemplate], outcomes: list[TemplateOutcome]) -> list[TemplateOutcome]:
    """Where the BFS stopped at its work bound, seeded random behaviours go deeper (as TLC users
    hunt deep bugs in large specs): a safety template the explored part kept but one of them
    breaks is violated.  Only a violation they name changes a verdict; any other end of theirs
    (an error, the work bound, seconds) leaves the BFS's verdicts as they are."""
    settings = checker.task.invariants
    if not settings.simulations or not checker.bounded:
        return outcomes
    by_name = {o.name: o for o in outcomes}
    held = [t for t in templates if t.kind == "safety" and t.name in by_name and by_name[t.name].status == "passed"]
    for seed in range(1, settings.simulations + 1):
        while held:
            result = checker.simulate(seed, [t.name for t in held])
            hit = _named_violation(result, held)
            if hit is None:
                break
            by_name[hit.name] = TemplateOutcome(
                hit.name, hit.kind, "failed",
                f"{hit.name} violated beyond the part the work bound let the BFS explore, in a seeded random "
                f"behaviour (seed {seed} of {settings.simulations}, {checker.behaviours()} behaviours of up to "
                f"{settings.depth} steps): {result.summary()}", by_name[hit.name].states, _trace_preview(result))
            held.remove(hit)
    _premises_deeper(checker, held, by_name)
    _moved_deeper(checker, held, by_name)
    return [by_name[o.name] for o in outcomes]


def _premises_deeper(checker: _Checker, held: list[InvariantTemplate], by_name: dict[str, TemplateOutcome]) -> None:
    """A safety template the seeded behaviours kept, whose premise the BFS did not reach within
    its work bound but one of the behaviours does, says something about the spec: the bound,
    not the spec, kept the premise out of the BFS (a finer-grained spec takes more steps to
    elect a leader).  Each behaviour that reaches a premise breaks its negation, checked as an
    invariant; the others are left as the BFS found them."""
    if checker.reached is None:
        return
    settings = checker.task.invariants
    unreached = [t for t in held if t.premise and t.name not in checker.reached]
    for seed in range(1, settings.simulations + 1):
        while unreached:
            result = checker.simulate(seed, [f"{UNREACHED}_{t.name}" for t in unreached], "premises")
            hit = _named_violation(result, unreached, f"{PREFIX}{UNREACHED}_")
            if hit is None:
                break
            checker.reached.add(hit.name)
            outcome = by_name[hit.name]
            by_name[hit.name] = dataclasses.replace(outcome, reason=(
                f"{outcome.reason}; its premise, which the BFS did not reach within its work bound, holds in a "
                f"seeded random behaviour (seed {seed} of {settings.simulations}) that keeps it"))
            unreached.remove(hit)


def _moved_deeper(checker: _Checker, held: list[InvariantTemplate], by_name: dict[str, TemplateOutcome]) -> None:
    """The same for a safety template without a premise whose variables kept their first value
    in every state the BFS explored within its work bound: where they move in a seeded random
    behaviour that keeps it, it says something about the spec."""
    if checker.moved is None:
        return
    settings, task = checker.task.invariants, checker.task
    still = [t for t in held if not t.premise and task.variables_read(t) and not checker.moved & set(task.variables_read(t))]
    for seed in range(1, settings.simulations + 1):
        if not still:
            break
        result = checker.simulate(seed, [MOVED + IN_BEHAVIOURS], "moved")
        checker.moved |= _moved_marks(_work.marked(result, checker.mark))
        for template in [t for t in still if checker.moved & set(task.variables_read(t))]:
            outcome = by_name[template.name]
            by_name[template.name] = dataclasses.replace(outcome, reason=(
                f"{outcome.reason}; the variables it reads, which kept their first value within the BFS's work "
                f"bound, move in a seeded random behaviour (seed {seed} of {settings.simulations}) that keeps it"))
            still.remove(template)


#: The successor states one seeded simulation may generate, whatever the task's BFS bound (a
#: few seconds of TLC on the 2-core machine): the task's behaviours x depth unless the spec
#: branches so widely that they would generate more.
SIMULATED_GENERATED = 5_000_000


def _branching(result: TlcResult) -> float:
    """Successors generated per state explored (the states left on the queue were not)."""
    explored = (result.distinct_states or 0) - (result.states_left or 0)
    return (result.states_generated or 0) / explored if explored > 0 else 1.0


def _moved_marks(marks: Sequence[Any]) -> set[str]:
    """The variables a run printed as moved."""
    return {v[2] for v in marks if isinstance(v, tuple) and len(v) == 3 and v[1] == MOVED_LABEL}


def _named_violation(result: TlcResult, remaining: list[InvariantTemplate],
                     prefix: str = PREFIX) -> InvariantTemplate | None:
    """The template a run's invariant or step-property violation names (the invariant is
    ``prefix`` and the template's name; TLC names a step property ``[][A]_v`` as the module that
    defines it does, ``SysmoCanon!Name``), if it is one still being checked."""
    if result.verdict not in (Verdict.INVARIANT_VIOLATION, Verdict.ACTION_PROPERTY_VIOLATION) or not result.violated:
        return None
    name = result.violated.rsplit("!", 1)[-1].removeprefix(prefix)
    return next((t for t in remaining if t.name == name), None)


def _safety(checker: _Checker, templates: list[InvariantTemplate]) -> list[TemplateOutcome]:
    """All safety templates in one run; a violated one is recorded, removed, and the rest re-run."""
    outcomes: list[TemplateOutcome] = []
    remaining = list(templates)
    round_ = 0
    while remaining:
        round_ += 1
        result = checker.run(f"safety-{round_}", "INVARIANT", [t.name for t in remaining])
        hit = _named_violation(result, remaining)
        if hit is not None:
            outcomes.append(_verdict_outcome(checker, hit, result, violated=True))
            remaining.remove(hit)
            continue
        if result.verdict in (Verdict.OK, Verdict.INCOMPLETE, Verdict.TIMEOUT, Verdict.OUTPUT_LIMIT) \
                or len(remaining) == 1:
            outcomes += [_verdict_outcome(checker, t, result, violated=False) for t in remaining]
            break
        # An error that names no invariant: check one by one so blame lands where it belongs.
        for template in remaining:
            single = checker.run(f"safety-{template.name}", "INVARIANT", [template.name])
            violated = single.verdict is Verdict.INVARIANT_VIOLATION
            outcomes.append(_verdict_outcome(checker, template, single, violated))
        break
    return outcomes


def _liveness(checker: _Checker, templates: list[InvariantTemplate], together: bool = True) -> list[TemplateOutcome]:
    """All liveness templates in one run first (one exploration of the state space instead of
    one per template); TLC 2.15 does not say which property a counterexample violates, so any
    other outcome is settled one template at a time."""
    if together and len(templates) > 1:
        combined = checker.run("liveness", "PROPERTY", [t.name for t in templates])
        if combined.verdict in (Verdict.OK, Verdict.OUTPUT_LIMIT):
            return [_verdict_outcome(checker, t, combined, violated=False) for t in templates]
    outcomes: list[TemplateOutcome] = []
    for template in templates:
        result = checker.run(f"liveness-{template.name}", "PROPERTY", [template.name])
        outcomes.append(_verdict_outcome(checker, template, result, result.verdict is Verdict.LIVENESS_VIOLATION))
        if result.verdict is Verdict.OUTPUT_LIMIT:  # the spec's printing, not the property: same for the rest
            rest = templates[len(outcomes):]
            return outcomes + [_verdict_outcome(checker, t, result, violated=False) for t in rest]
    return outcomes


def _vacuous(outcomes: list[TemplateOutcome], task: Task, templates: Sequence[InvariantTemplate],
             checker: _Checker) -> list[TemplateOutcome]:
    """A template that holds only because its premise never held (no thread ever spins, no
    leader is ever elected), or one without a premise whose variables all keep their first value
    in every explored state (an order over a log the spec never writes), says nothing about the
    spec: it does not count as held."""
    if checker.reached is None:
        return outcomes
    by_name = {t.name: t for t in templates}
    checked = []
    for outcome in outcomes:
        template = by_name.get(outcome.name)
        if outcome.status != "passed" or template is None:
            pass
        elif template.premise and outcome.name not in checker.reached:
            one_line = " ".join(template.premise.split())
            outcome = dataclasses.replace(outcome, status="failed", reason=(
                f"{outcome.name} {VACUOUS_NOTE}: its premise ({one_line}) holds in no explored state "
                f"({outcome.states} distinct); a template counts only where it says something"))
        elif not template.premise and checker.moved is not None:
            reads = sorted(task.variables_read(template))
            if reads and not checker.moved & set(reads):
                outcome = dataclasses.replace(outcome, status="failed", reason=(
                    f"{outcome.name} {VACUOUS_NOTE}: it reads {', '.join(reads)}, which keep{'s' if len(reads) == 1 else ''} "
                    f"one value in every explored state ({outcome.states} distinct); a template counts only "
                    "where it says something"))
        checked.append(outcome)
    return checked


def _order(task: Task, outcomes: list[TemplateOutcome]) -> list[TemplateOutcome]:
    """In the task's order, each marked with what its template means for the score."""
    templates = {t.name: (i, t) for i, t in enumerate(task.templates)}
    ordered = sorted(outcomes, key=lambda o: templates[o.name][0])
    return [dataclasses.replace(o, defines=templates[o.name][1].defines, counted=templates[o.name][1].counted)
            for o in ordered]


def _sany_screen(ctx: CellContext, translations: list[Translation]) -> list[Translation]:
    """Each translation must resolve under SANY on its own, against the spec."""
    checked = []
    for item in translations:
        if item.definition is None:
            checked.append(item)
            continue
        module = f"{ctx.module}_SysmoInv_{item.name}"
        text = modules.module(module, f"{PREFIX}{item.name} ==\n    {item.definition}",
                              (ctx.module, "Naturals", "Integers", "Sequences", "FiniteSets", "TLC"))
        run = ctx.toolchain.sany(ctx.job_dir("invariants", "translations"), {**ctx.spec_files(), f"{module}.tla": text}, module)
        if run.result.ok:
            checked.append(item)
        else:
            checked.append(Translation(item.name, item.kind, None,
                                       f"the translation does not parse: {run.result.first_error_summary()}"))
    return checked


def _translated(ctx: CellContext, config: Config) -> tuple[_Checker, list[TemplateOutcome], dict[str, Any]] | PhaseResult:
    """Templates restated by the evaluator model, screened and SANY-checked before TLC sees them."""
    assert ctx.evaluator is not None and ctx.candidate.tla is not None
    try:
        translations, use = ctx.evaluator.invariants(ctx.task, ctx.candidate.tla)
    except EvaluatorError as exc:
        return evaluator_failure("invariants", exc)
    translations = _sany_screen(ctx, translations)
    usable = [(t.name, t.definition) for t in translations if t.definition is not None]
    rejected = [TemplateOutcome(t.name, t.kind, "failed", f"{t.name}: no valid translation ({t.problem})")
                for t in translations if t.definition is None]
    info = {"evaluator": ctx.evaluator.name, "evaluator_use": use.as_dict(),
            "translations": {t.name: t.definition or f"rejected: {t.problem}" for t in translations},
            "task_constraint": "not applied: it speaks the canonical vocabulary and the spec has no mapping"
            if ctx.task.invariants.constraint else None}
    check = _work.module_name(ctx.task.module, "check")
    checker = _Checker(ctx, {f"{check}.tla": translated_module(ctx.task, usable, work_mark(ctx))}, config)
    return checker, rejected, info


def _mapping_problem(ctx: CellContext, mapping: Mapping) -> str | None:
    """Why the mapping cannot be used at all (it does not evaluate against the traces, or no
    traced state maps back through it), else None.  P4 judges the spec through the mapping
    whatever else the round trip says (a coarser spec may not represent every traced state):
    P3 charged what it cannot represent, and P4 counts only as far as the spec reaches the
    traced states (``_reach_scaled``)."""
    if not mapping.needs_check:
        return None
    corpus = ctx.corpus()
    if not corpus.traces:
        return None
    try:
        codec, _ = prepare_codec(ctx, mapping, corpus)
    except MappingProblem as exc:
        return str(exc)
    if codec.lost and len(codec.lost) >= codec.checked:
        return codec.lost_reason
    return None


def _unrepresentable(ctx: CellContext, mapping: Mapping, corpus: Corpus) -> frozenset[str]:
    """The traced states no spec state maps back onto (the round trip P3 made, memoised)."""
    if not mapping.needs_check:
        return frozenset()
    try:
        codec, _ = prepare_codec(ctx, mapping, corpus)
    except MappingProblem:
        return frozenset()
    return codec.lost


def _modelled_info(task: Task, mapping: Mapping, modelled: _Modelled) -> dict[str, Any]:
    variables = [v.name for v in task.vocabulary.variables]
    constraint = task.invariants.constraint or None
    if constraint and not modelled.constraint:
        constraint = f"not applied: it reads {', '.join(modelled.constraint_unmodelled)}, " \
                     f"{UNMODELLED_NOTE} (the work bound alone bounds the search)"
    info = {"modelled": f"{len(variables) - len(mapping.unmodelled)} of {len(variables)} variables",
            "unmodelled": list(mapping.unmodelled), "task_constraint": constraint}
    if mapping.unmodelled_fields:
        info["unmodelled_fields"] = list(mapping.left_out)
        info["not_type_checked"] = [v for v, _ in mapping.unmodelled_fields]
    return info


_DOES_NOT_FIT = "the mapping does not fit the spec"


def _does_not_fit(problem: str, info: dict[str, Any]) -> PhaseResult:
    """The mapping that came with the spec (or that its evaluator proposed) does not fit it:
    the submission's failure, scored 0."""
    said = problem if problem.startswith(_DOES_NOT_FIT) else f"{_DOES_NOT_FIT}: {problem}"
    return PhaseResult("invariants", Status.FAILED, 0.0, f"{said}; scored 0, charged to the spec and its mapping",
                       {**info, "mapping_error": problem, "failure_class": "mapping_does_not_fit"})


def check_invariants(ctx: CellContext) -> PhaseResult:
    candidate = ctx.candidate
    config, removed = ctx.config().without(UNSUPPORTED_IN_215 | EXPLORATION_KEYWORDS)
    config, stripped = config.strip_assertions()
    outcomes: list[TemplateOutcome] = []
    templates = list(ctx.task.templates)
    broken_task = task_problem(ctx)
    if broken_task is not None:
        return PhaseResult("invariants", Status.ERROR, None, broken_task, {"task_error": broken_task}, cause=Cause.TASK)
    clash = ctx.harness_name_clash("invariants")
    if clash is not None:
        return clash
    mapping, inferred = given_or_inferred(ctx)
    if mapping is not None:
        modelled = _Modelled.of(ctx.task, mapping)
        info: dict[str, Any] = {"mapping": mapping.describe(), **inferred, **_modelled_info(ctx.task, mapping, modelled)}
        problem = _mapping_problem(ctx, mapping)
        if problem is not None:
            return _does_not_fit(problem, info)
        if ctx.task.invariants.reach:
            config, instance = traced_instance(config, mapping, ctx.corpus().constants)
            info.update({"instance": instance} if instance else {})
        try:
            checker = _Checker.mapped(ctx, mapping, config, modelled)
        except MappingProblem as exc:
            return _does_not_fit(str(exc), info)
        outcomes = list(modelled.unread)
        templates = list(modelled.templates)
    elif ctx.evaluator is not None:
        prepared = _translated(ctx, config)
        if isinstance(prepared, PhaseResult):
            return prepared
        checker, outcomes, info = prepared
        done = {o.name for o in outcomes}
        templates = [t for t in templates if t.name not in done]
    else:
        return no_mapping("invariants", candidate.mapping_problem)
    try:
        outcomes += _vacuous(_deeper(checker, templates, _settled(checker, templates)), ctx.task, templates, checker)
    except _Unparsable as exc:
        return _does_not_fit(str(exc), info)
    outcomes = _order(ctx.task, outcomes)
    verdict = template_verdict(outcomes, {**info, "cfg_removed": removed + stripped,
                                          "work_bound": {"generated": ctx.task.invariants.generated}}, candidate.tla or "")
    verdict = _reach_scaled(verdict, checker)
    if mapping is not None and checker.sampled is not None and checker.corpus is not None:
        verdict = beyond_traces(ctx, mapping, checker.corpus, checker.sampled.values(), checker.names or {}, verdict)
    return verdict


def _reach_scaled(verdict: PhaseResult, checker: _Checker) -> PhaseResult:
    """The template score times the share of the traced states (within the task's bounds) that
    the spec's exploration reaches: a template kept in states the system never leaves for says
    little, and a spec that reaches one state keeps them all.  States the mapping cannot
    represent are not charged again here: P3 charged them."""
    asked = checker.traced
    if not asked or verdict.score is None:
        return verdict
    reached = len(checker.traced_reached & asked)
    details = {**verdict.details, "traced_states": f"{reached} of {len(asked)}"}
    if reached >= len(asked):
        return dataclasses.replace(verdict, details=details)
    score = round(verdict.score * reached / len(asked), 6)
    note = (f"scaled by the {reached} of {len(asked)} traced states (read on the variables the mapping models, "
            f"within the task's constraint) its exploration reaches (templates alone: {verdict.score:g})")
    return dataclasses.replace(verdict, status=Status.FAILED, score=score, reason=f"{verdict.reason}\n{note}",
                               details={**details, "templates_score": verdict.score,
                                        "failure_class": verdict.details.get("failure_class", "unreached_states")})


def template_verdict(outcomes: list[TemplateOutcome], info: dict[str, Any], spec: str = "") -> PhaseResult:
    """Score over every template: each one holds (on the explored part, within the work bound)
    or fails, whatever stopped its check."""
    passed = sum(1 for o in outcomes if o.status == "passed")
    failed = [o for o in outcomes if o.status == "failed"]
    counted = [o for o in outcomes if o.counted]
    score = template_score([TemplateVerdict(o.status == "passed", o.defines) for o in outcomes])
    broken = [o.name for o in failed if o.defines]
    details: dict[str, Any] = {
        "templates": [o.as_dict() for o in outcomes],
        **info,
        "passed": passed,
        "decided": len(outcomes),
        "total": len(outcomes),
        "states": {o.name: o.states for o in outcomes},
        # The original benchmark's score, for comparison: its templates held, each counted once.
        "fraction": round(sum(1 for o in counted if o.status == "passed") / len(counted), 6) if counted else None,
        "defining": [o.name for o in outcomes if o.defines],
        "defining_broken": broken,
    }
    if not outcomes:
        return PhaseResult("invariants", Status.SKIPPED, None, "skipped: the task has no invariant templates", details,
                           cause=Cause.TASK)
    if failed:
        # A violation says most about the spec: it leads the reason, before a stopped check.
        # A broken defining property first: it is what weighs most.
        first = next((o for o in failed if o.defines and " violated" in o.reason),
                     next((o for o in failed if " violated" in o.reason), failed[0]))
        trace = ("\n" + "\n".join(first.trace)) if first.trace else ""
        weighed = f" (a defining property fails: {', '.join(broken)})" if broken else ""
        # Each failed template with how it failed: two liveness templates that need fairness
        # and a broken safety property ask for different fixes.
        classes = {o.name: invariants_class([o.as_dict()], spec) for o in failed}
        for template in details["templates"]:
            if template["name"] in classes:
                template["failure_class"] = classes[template["name"]]
        others = [f"{o.name} ({classes[o.name]})" for o in failed if o is not first]
        also = f"; also failed: {', '.join(others)}" if others else ""
        reason = f"{passed}/{len(outcomes)} templates hold{weighed}{also}; [{classes[first.name]}] {first.reason}{trace}"
        klass = invariants_class([o.as_dict() for o in failed], spec)
        return PhaseResult("invariants", Status.FAILED, score, reason, {**details, "failure_class": klass})
    bounded = sum(1 for o in outcomes if o.reason.startswith("holds in the explored part"))
    note = f" ({bounded} within the work bound of {info.get('work_bound', {}).get('generated')} generated states)" \
        if bounded else ""
    return PhaseResult("invariants", Status.PASSED, 1.0, f"all {len(outcomes)} templates hold{note}", details)
