"""Tasks are data: a folder ``tasks/<name>/`` holding task.yaml, the prompt, the invariant
templates, the reference spec with its mapping, and the seeded-bug mutants.

Loading validates everything up front so that a broken task file fails with a message that
names the file and the field, instead of surfacing later as a confusing TLC error.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from . import untrusted_yaml
from .scoring import PHASES

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TASK_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: No budget, count or depth in a task file may exceed this (a day in seconds): nan, inf and
#: 1e300 would otherwise turn every bound into "never stop".
MAX_NUMBER = 86_400.0
#: Default work bounds in generated successor states (TLC generates a few hundred thousand a
#: second on one core): reached well within the safety nets in seconds, even on a machine
#: three times slower than the one that chose them.
BFS_GENERATED = 2_000_000
INVARIANTS_GENERATED = 2_000_000
#: Whole-cell safety net (task.yaml ``cell_budget_s``): past it, the cell's remaining work is
#: recorded as inconclusive, never as a pass or a failure.
CELL_BUDGET_S = 900.0
MAX_TASK_FILE_BYTES = 1 << 20


class TaskError(ValueError):
    """A task folder is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class SourceFile:
    path: str
    description: str
    #: Inclusive 1-based line ranges to show; empty for the whole file (a large file's relevant parts).
    lines: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SourceRef:
    package: str
    install: str
    version: str
    root: Path
    files: tuple[SourceFile, ...]


@dataclass(frozen=True)
class Upstream:
    system: str
    repository: str
    path: str
    differences: str


@dataclass(frozen=True)
class Variable:
    name: str
    type: str
    meaning: str


@dataclass(frozen=True)
class Constant:
    name: str
    value: str
    meaning: str


@dataclass(frozen=True)
class Action:
    name: str
    params: tuple[str, ...]
    meaning: str


@dataclass(frozen=True)
class Vocabulary:
    constants: tuple[Constant, ...]
    variables: tuple[Variable, ...]
    actions: tuple[Action, ...]
    #: Where each action parameter ranges: a canonical constant (``t: Threads``) or a canonical
    #: set variable of the state the step starts in (``m: messages``).  P3's precision tries every
    #: action with every such argument, as the system could have called it.
    parameters: tuple[tuple[str, str], ...] = ()

    def domain(self, parameter: str) -> str:
        """Where the parameter ranges ("" when the task gives no domains)."""
        return dict(self.parameters).get(parameter, "")

    def render(self) -> str:
        """Vocabulary as prompt text: the words the evaluator will speak to the spec in."""
        lines = ["Constants:"]
        lines += [f"  {c.name} (e.g. {c.value}): {c.meaning}" for c in self.constants]
        lines.append("State variables:")
        lines += [f"  {v.name} \\in {v.type}: {v.meaning}" for v in self.variables]
        lines.append("Actions:")
        lines += [f"  {a.name}({', '.join(a.params)}): {a.meaning}" for a in self.actions]
        return "\n".join(lines)


@dataclass(frozen=True)
class InvariantTemplate:
    name: str
    kind: str  # "safety" | "liveness"
    meaning: str
    tla: str
    #: A property that defines the system (mutual exclusion, election safety, ...): a spec that
    #: breaks one ranks below every spec that keeps them all (see ``scoring.template_score``).
    defines: bool = False
    #: Counted in the original benchmark's fraction of templates held; the type check is ours.
    counted: bool = True
    #: What must hold in some explored state for the template to say anything (``P`` of
    #: ``\A x : P => Q``); a template whose premise a spec never reaches holds only vacuously.
    premise: str | None = None

    @property
    def steps_only(self) -> bool:
        """A step property, ``[][A]_v`` alone: TLC checks it on every step it explores, as it
        checks an invariant on every state, and stops at a violation naming it; it is never
        part of the liveness check at the end of a run."""
        return self.kind == "liveness" and _step_property(self.tla)


def _step_property(tla: str) -> bool:
    """Whether a template's body is one ``[][...]_v`` (``v`` a name or a tuple of names)."""
    body = " ".join(tla.partition("==")[2].split())
    if not body.startswith("[]["):
        return False
    depth = 0
    for k in range(2, len(body)):
        depth += {"[": 1, "]": -1}.get(body[k], 0)
        if depth == 0:
            return re.fullmatch(r"_\s*(\w+|<<[\w\s,]*>>)", body[k + 1:].strip()) is not None
    return False


#: The name of the template every task gets from its vocabulary's declared types.
TYPE_TEMPLATE = "TypeOK"
#: What a type template prints about a variable outside its type (the value is the mapped one).
TYPE_MARK = "SysmoType"


def type_template(vocabulary: Vocabulary) -> InvariantTemplate:
    """Every canonical variable stays within the type the task declares for it.  Templates are
    implications over these values: a spec that writes ``"waiting"`` where the vocabulary says
    ``"spinning"`` would keep every template about spinning threads vacuously.  A variable outside
    its type prints its name and value, so the verdict can say which one and what it held."""
    conjuncts = [f'    /\\ ({v.name} \\in {v.type} \\/ Print(<<"{TYPE_MARK}", "{v.name}", {v.name}>>, FALSE))'
                 for v in vocabulary.variables] or ["    TRUE"]
    return InvariantTemplate(TYPE_TEMPLATE, "safety",
                             "Every variable holds a value of the type the task declares for it.",
                             f"{TYPE_TEMPLATE} ==\n" + "\n".join(conjuncts), defines=True, counted=False)


@dataclass(frozen=True)
class Edit:
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    phase: str
    expect: str
    why: str
    edits: tuple[Edit, ...] = ()
    cfg_edits: tuple[Edit, ...] = ()
    spec_file: Path | None = None
    #: A later phase that catches it too (``phase``, ``expect``): a template it breaks shows in
    #: steps P3 finds the system cannot take.
    also: tuple[str, str] | None = None

    def apply(self, spec: str, cfg: str | None) -> tuple[str, str | None]:
        """The mutated spec and cfg; every edit's text must occur exactly once."""
        if self.spec_file is not None:
            spec = self.spec_file.read_text(encoding="utf-8")
        spec = _apply_edits(spec, self.edits, f"mutant {self.name}")
        if cfg is not None:
            cfg = _apply_edits(cfg, self.cfg_edits, f"mutant {self.name} (cfg)")
        elif self.cfg_edits:
            raise TaskError(f"mutant {self.name}: cfg_edits given but the reference has no cfg")
        return spec, cfg


def _apply_edits(text: str, edits: Sequence[Edit], where: str) -> str:
    for edit in edits:
        count = text.count(edit.old)
        if count != 1:
            raise TaskError(f"{where}: the text to replace occurs {count} times, expected once: {edit.old[:60]!r}")
        text = text.replace(edit.old, edit.new)
    return text


@dataclass(frozen=True)
class Harness:
    """How to build and run the real system to capture traces (commands run in ``directory``)."""

    directory: Path
    requires: tuple[str, ...]
    packages: tuple[str, ...]
    build: str
    run: str
    retry_exit_codes: tuple[int, ...]
    attempts: int
    seeds: tuple[int, ...]
    ops: int
    ordering: str
    #: Seeds whose traces are held out of any feedback a model is shown (``held_out``): a spec
    #: corrected on the others is scored on these, which it never saw.
    held_out: tuple[int, ...] = ()

    @property
    def feedback_seeds(self) -> tuple[int, ...]:
        """The seeds whose traces feedback may show (all of them when none is held out)."""
        return tuple(s for s in self.seeds if s not in self.held_out)


@dataclass(frozen=True)
class RuntimeSettings:
    """P2's work, the same on every machine: a BFS to ``bfs_depth`` levels, at most
    ``bfs_states`` distinct states and ``bfs_generated`` generated successor states, and
    ``simulations`` seeded runs of ``traces`` traces of ``depth`` steps.  ``budget_s`` is only
    a safety net for what no work bound can stop, and what it stops is charged to the spec."""

    check_deadlock: bool = True
    simulations: int = 2
    traces: int = 50
    depth: int = 40
    bfs_depth: int = 30
    bfs_states: int = 100_000
    bfs_generated: int = BFS_GENERATED
    budget_s: float = 120.0
    #: The distinct states the reference's own bounded BFS reaches (0: not given), shown beside
    #: a spec's: a spec that reaches one state where the reference reaches hundreds says so.
    reference_states: int = 0


#: The most unobserved spec steps a mapping may allow around an observed action, by default.
MAX_INTERNAL_STEPS = 3


@dataclass(frozen=True)
class ConformanceSettings:
    """P3: how many unobserved spec steps (``internal`` in a mapping) a window may take before
    or after the observed one, and how much work one check may do.  A task whose real steps are coarse raises it (Raft's election
    timeout is about six fine-grained steps for three servers); each step more widens every
    window's search, so it is the task's to set, the same for every spec."""

    max_internal_steps: int = MAX_INTERNAL_STEPS
    #: Successor states one P3 check (an action's windows, a whole trace) may generate: past
    #: it the windows not yet shown to conform fail, the same on every machine.
    generated: int = 1_000_000
    #: Precision is judged at this many distinct pre-states of the traces at most (0: all), chosen
    #: the same way every time, every target action's own first: a task whose reference branches
    #: widely (etcd's flow control) would otherwise cost more than the windows themselves.
    precision_states: int = 0
    #: Where the reference is deliberately narrower than the system (the bounds of its search):
    #: precision does not count a step these say lies beyond it.
    narrower: tuple[Narrowing, ...] = ()


@dataclass(frozen=True)
class Narrowing:
    """A place where the task's reference allows less than the real system on purpose.  ``when``
    is a TLA+ predicate over the canonical states ``pre`` and ``post`` of a step (records keyed
    by canonical variable) and the canonical constants; ``why`` says what the reference leaves out."""

    when: str
    why: str


@dataclass(frozen=True)
class RepairBounds:
    """How far a repair may bound an infinite domain TLC cannot enumerate (rule A10): ``Nat`` is
    read as ``0..nat``, ``Int`` as ``-nat..nat``, ``Seq(S)`` as its sequences of length up to
    ``seq``.  The task's, the same for every spec; 0 when the task declares none (then A10 does
    not apply)."""

    nat: int = 0
    seq: int = 0


@dataclass(frozen=True)
class InvariantSettings:
    """P4's work: each check explores at most ``generated`` successor states (a verdict on the
    explored part); ``budget_s`` is the safety net in seconds."""

    budget_s: float = 60.0
    generated: int = INVARIANTS_GENERATED
    # A state constraint over the canonical vocabulary that bounds P4's search for every spec
    # alike (through the mapping); the task's, never the model's.
    constraint: str = ""
    #: Which traced states lie within P4's bounds (a predicate over the canonical vocabulary, at the
    #: spec's constants; "TRUE": all), for a task whose reference's exploration reaches every one
    #: of them within the constraint: a spec's P4 counts only as far as its exploration reaches
    #: them too.  "" for a task whose P4 configuration does not reach the traced states (fewer
    #: servers than the traces ran), where nothing is asked.
    reach: str = ""
    #: Seeded random behaviours beside the BFS, for bugs deeper than its work bound reaches:
    #: ``simulations`` seeds, each ``traces`` behaviours of up to ``depth`` steps, checked
    #: against the safety templates the BFS found holding, only when the BFS stopped at its
    #: work bound (0 seeds: none).  The same behaviours on every machine.
    simulations: int = 1
    traces: int = 50
    depth: int = 100


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    description: str
    system_type: str
    language: str
    module: str
    directory: Path
    source: SourceRef
    upstream: Upstream
    vocabulary: Vocabulary
    target_actions: tuple[str, ...]
    prompt_file: Path
    templates: tuple[InvariantTemplate, ...]
    template_definitions: str
    reference_spec: Path
    reference_cfg: Path | None
    reference_mapping: Path | None
    mutants: tuple[Mutant, ...]
    runtime: RuntimeSettings = field(default_factory=RuntimeSettings)
    invariants: InvariantSettings = field(default_factory=InvariantSettings)
    conformance: ConformanceSettings = field(default_factory=ConformanceSettings)
    harness: Harness | None = None
    fix_module_name: bool = False  # a generated module with another name is renamed, not failed
    cell_budget_s: float = CELL_BUDGET_S
    invariants_file: Path | None = None
    repair_bounds: RepairBounds = field(default_factory=RepairBounds)
    #: Seconds one cell of this task takes, cold, on the 2-core machine CI uses (``perf/bench.py``
    #: part 7): what ``--sysmobench-shard`` balances by.
    cost_s: float = 10.0

    def variables_read(self, template: InvariantTemplate) -> frozenset[str]:
        """The canonical variables a template reads, itself or through the task's definitions."""
        return self.reads(template.tla)

    def reads(self, tla: str) -> frozenset[str]:
        """The canonical variables TLA+ text over the vocabulary reads, through the task's definitions too."""
        return _variables_read(tla, self.template_definitions, frozenset(v.name for v in self.vocabulary.variables))

    def fields_read(self, tla: str) -> frozenset[str]:
        """The record fields TLA+ text over the vocabulary names, itself or through the task's definitions."""
        return _fields_read(tla, self.template_definitions)

    def vocabulary_type(self, variable: str) -> str:
        return next((v.type for v in self.vocabulary.variables if v.name == variable), "?")

    @property
    def default_constants(self) -> dict[str, str]:
        return {c.name: c.value for c in self.vocabulary.constants}


@functools.lru_cache(maxsize=512)
def _variables_read(tla: str, definitions: str, variables: frozenset[str]) -> frozenset[str]:
    return frozenset(_names_read(tla, definitions) & variables)


@functools.lru_cache(maxsize=512)
def _fields_read(tla: str, definitions: str) -> frozenset[str]:
    from .tla.grammar import fields_named

    texts = _units(definitions)
    return frozenset().union(fields_named(tla), *(fields_named(texts[n]) for n in _names_read(tla, definitions)
                                                 if n in texts))


@functools.lru_cache(maxsize=64)
def _units(definitions: str) -> dict[str, str]:
    from .tla.modules import module, top_level_units

    return {u.name: u.text for u in top_level_units(module("SysmoDefinitions", definitions))}


@functools.lru_cache(maxsize=512)
def _names_read(tla: str, definitions: str) -> frozenset[str]:
    """Every name TLA+ text refers to, itself or through the definitions it names."""
    from .tla.grammar import referenced_names

    uses = {name: referenced_names(text) for name, text in _units(definitions).items()}
    seen: set[str] = set()
    pending = set(referenced_names(tla))
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending |= uses.get(name, frozenset())
    return frozenset(seen)


class _Fields:
    """Typed access to one YAML mapping, with errors that say where the bad value is."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise TaskError(f"{where}: expected a mapping, got {type(data).__name__}")
        self.data = data
        self.where = where

    def _get(self, key: str, required: bool) -> Any:
        if key not in self.data or self.data[key] is None:
            if required:
                raise TaskError(f"{self.where}: missing required field '{key}'")
            return None
        return self.data[key]

    def str(self, key: str, default: str | None = None) -> str:
        value = self._get(key, default is None)
        if value is None:
            return default or ""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise TaskError(f"{self.where}.{key}: expected a string, got {type(value).__name__}")
        return str(value)

    def sub(self, key: str, required: bool = True) -> _Fields:
        value = self._get(key, required)
        return _Fields({} if value is None else value, f"{self.where}.{key}")

    def list(self, key: str, required: bool = True) -> list[Any]:
        value = self._get(key, required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise TaskError(f"{self.where}.{key}: expected a list, got {type(value).__name__}")
        return value

    def number(self, key: str, default: float, limit: float = MAX_NUMBER) -> float:
        value = self._get(key, False)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 < value <= limit:
            raise TaskError(f"{self.where}.{key}: expected a positive number up to {limit:g}, got {value!r}")
        return float(value)

    def ints(self, key: str) -> tuple[int, ...]:
        values = self.list(key, required=False)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise TaskError(f"{self.where}.{key}: expected a list of integers, got {values!r:.200}")
        return tuple(values)

    def flag(self, key: str, default: bool) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise TaskError(f"{self.where}.{key}: expected true or false, got {value!r}")
        return value

    def items(self) -> list[tuple[str, _Fields]]:
        return [(str(k), _Fields(v if v is not None else {}, f"{self.where}.{k}")) for k, v in self.data.items()]


def read_yaml(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_TASK_FILE_BYTES:
            raise TaskError(f"{path}: {path.stat().st_size} bytes, more than a task file may hold ({MAX_TASK_FILE_BYTES})")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TaskError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    try:
        return untrusted_yaml.load(text)
    except RecursionError as exc:
        raise TaskError(f"{path}: nested too deeply to be a task file") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise TaskError(f"{path}: invalid YAML{where}: {getattr(exc, 'problem', exc)}") from exc


def _identifier(value: str, where: str) -> str:
    if not IDENTIFIER.match(value):
        raise TaskError(f"{where}: {value!r} is not a TLA+ identifier")
    return value


def _existing(directory: Path, relative: str, where: str) -> Path:
    path = (directory / relative).resolve()
    if directory.resolve() not in path.parents:
        raise TaskError(f"{where}: {relative!r} points outside the task folder")
    if not path.is_file():
        raise TaskError(f"{where}: file {relative!r} does not exist in {directory}")
    return path


def _vocabulary(fields: _Fields) -> Vocabulary:
    constants = tuple(
        Constant(_identifier(name, f.where), f.str("value"), f.str("meaning", "")) for name, f in fields.sub("constants").items()
    )
    variables = tuple(
        Variable(_identifier(name, f.where), f.str("type"), f.str("meaning", "")) for name, f in fields.sub("variables").items()
    )
    actions = tuple(
        Action(
            _identifier(name, f.where),
            tuple(_identifier(str(p), f"{f.where}.params") for p in f.list("params", required=False)),
            f.str("meaning", ""),
        )
        for name, f in fields.sub("actions").items()
    )
    if not variables:
        raise TaskError(f"{fields.where}.variables: a task needs at least one canonical variable")
    return Vocabulary(constants, variables, actions, _parameters(fields, constants, variables, actions))


def _parameters(fields: _Fields, constants: tuple[Constant, ...], variables: tuple[Variable, ...],
                actions: tuple[Action, ...]) -> tuple[tuple[str, str], ...]:
    """Each action parameter's domain: a canonical constant, or a canonical variable of a set type."""
    given = fields.sub("parameters", required=False)
    sets = {v.name for v in variables if v.type.strip().startswith("SUBSET")}
    names = {c.name for c in constants} | sets
    domains: dict[str, str] = {}
    for parameter in map(str, given.data):
        domain = given.str(parameter)
        if domain not in names:
            raise TaskError(f"{given.where}.{parameter}: {domain!r} is neither a canonical constant nor a canonical "
                            f"variable of a set type ({', '.join(sorted(names))})")
        domains[_identifier(parameter, given.where)] = domain
    for action in actions:
        missing = [p for p in action.params if p not in domains]
        if missing and domains:  # none given at all: P3's precision says so, as the task's error
            raise TaskError(f"{given.where}: no domain for parameter(s) {', '.join(missing)} of action {action.name}")
    return tuple(sorted(domains.items()))


def _templates(path: Path) -> tuple[tuple[InvariantTemplate, ...], str]:
    fields = _Fields(read_yaml(path), str(path))
    templates = []
    seen: set[str] = set()
    for index, raw in enumerate(fields.list("invariants")):
        item = _Fields(raw, f"{path}: invariants[{index}]")
        name = _identifier(item.str("name"), f"{item.where}.name")
        kind = item.str("kind")
        if kind not in ("safety", "liveness"):
            raise TaskError(f"{item.where}.kind: expected 'safety' or 'liveness', got {kind!r}")
        tla = item.str("tla").strip()
        if not re.match(rf"^{re.escape(name)}\s*==", tla):
            raise TaskError(f"{item.where}.tla: must define '{name} == ...'")
        if name in seen:
            raise TaskError(f"{item.where}.name: duplicate template name {name!r}")
        if name == TYPE_TEMPLATE:
            raise TaskError(f"{item.where}.name: {TYPE_TEMPLATE} is the type check every task gets from "
                            "its vocabulary's types; give the template another name")
        seen.add(name)
        templates.append(InvariantTemplate(name, kind, item.str("meaning", ""), tla, item.flag("defines", False),
                                           premise=_premise(item, tla)))
    if not templates:
        raise TaskError(f"{path}: no invariant templates")
    return tuple(templates), fields.str("definitions", "")


def _premise(item: _Fields, tla: str) -> str | None:
    """The template's premise: ``premise:`` as written (``false``: none), else read from its
    shape (``\\A x \\in S : P => Q`` or ``P ~> Q`` gives ``\\E x \\in S : P``)."""
    from .tla.grammar import premise

    given = item.data.get("premise")
    if given is False:
        return None
    if given is not None:
        return item.str("premise").strip() or None
    return premise(tla)


def _edits(items: list[Any], where: str) -> tuple[Edit, ...]:
    edits = []
    for index, raw in enumerate(items):
        item = _Fields(raw, f"{where}[{index}]")
        edits.append(Edit(item.str("old"), item.str("new", "")))
    return tuple(edits)


def _mutants(directory: Path, path: Path) -> tuple[Mutant, ...]:
    fields = _Fields(read_yaml(path), str(path))
    mutants = []
    for index, raw in enumerate(fields.list("mutants")):
        item = _Fields(raw, f"{path}: mutants[{index}]")
        phase = item.str("phase")
        if phase not in PHASES:
            raise TaskError(f"{item.where}.phase: expected one of {', '.join(PHASES)}, got {phase!r}")
        spec = item.str("spec", "") or None
        edits = _edits(item.list("edits", required=False), f"{item.where}.edits")
        if not spec and not edits:
            raise TaskError(f"{item.where}: a mutant needs 'edits' or 'spec'")
        mutants.append(
            Mutant(
                name=item.str("name"),
                phase=phase,
                expect=item.str("expect", ""),
                why=item.str("why"),
                edits=edits,
                cfg_edits=_edits(item.list("cfg_edits", required=False), f"{item.where}.cfg_edits"),
                spec_file=_existing(directory, spec, f"{item.where}.spec") if spec else None,
                also=_also(item, phase),
            )
        )
    return tuple(mutants)


def _also(item: _Fields, phase: str) -> tuple[str, str] | None:
    if item.data.get("also") is None:
        return None
    also = item.sub("also")
    other = also.str("phase")
    if other not in PHASES or other == phase:
        raise TaskError(f"{also.where}.phase: expected a phase other than {phase}, got {other!r}")
    return other, also.str("expect")


def _harness(directory: Path, fields: _Fields) -> Harness:
    folder = (directory / fields.str("dir")).resolve()
    if not folder.is_dir():
        raise TaskError(f"{fields.where}.dir: {folder} is not a folder")
    if "{out}" not in fields.str("run") or "{seed}" not in fields.str("run"):
        raise TaskError(f"{fields.where}.run: the command must use {{seed}} and {{out}}")
    seeds = fields.ints("seeds") or (1,)
    return Harness(
        directory=folder,
        requires=tuple(str(x) for x in fields.list("requires", required=False)),
        packages=tuple(str(x) for x in fields.list("packages", required=False)),
        build=fields.str("build", ""),
        run=fields.str("run"),
        retry_exit_codes=fields.ints("retry_exit_codes"),
        attempts=int(fields.number("attempts", 1)),
        seeds=seeds,
        ops=int(fields.number("ops", 100)),
        ordering=fields.str("ordering"),
        held_out=_held_out(fields, seeds),
    )


def _held_out(fields: _Fields, seeds: tuple[int, ...]) -> tuple[int, ...]:
    """The held-out seeds: some of the task's seeds, never all of them (feedback needs some)."""
    held = fields.ints("held_out")
    unknown = [s for s in held if s not in seeds]
    if unknown:
        raise TaskError(f"{fields.where}.held_out: {unknown} are not among the seeds {list(seeds)}")
    if held and set(held) >= set(seeds):
        raise TaskError(f"{fields.where}.held_out: every seed is held out; leave at least one for feedback")
    return tuple(dict.fromkeys(held))


def _source_file(fields: _Fields) -> SourceFile:
    ranges = []
    for item in fields.list("lines", required=False):
        text = str(item)
        first, _, last = text.partition("-")
        if not (first.isdigit() and last.isdigit() and 0 < int(first) <= int(last)):
            raise TaskError(f"{fields.where}.lines: {text!r:.80} is not a line range such as 120-180")
        ranges.append((int(first), int(last)))
    return SourceFile(fields.str("path"), fields.str("description", ""), tuple(ranges))


def load_task(directory: str | os.PathLike[str]) -> Task:
    directory = Path(directory).resolve()
    path = directory / "task.yaml"
    root = _Fields(read_yaml(path), str(path))
    name = root.str("name")
    if not TASK_NAME.match(name):
        raise TaskError(f"{path}.name: {name!r} must be lower-case letters, digits, '-' or '_'")
    if name != directory.name:
        raise TaskError(f"{path}.name: {name!r} does not match the folder name {directory.name!r}")
    if root.data.get("unavailable") is not None:
        raise _Unavailable(UnavailableTask(name, root.str("title", name), root.sub("upstream").str("system"),
                                           root.str("unavailable")))
    source = root.sub("source")
    upstream = root.sub("upstream")
    vocabulary = _vocabulary(root.sub("vocabulary"))
    action_names = {a.name for a in vocabulary.actions}
    targets = tuple(str(a) for a in root.list("target_actions", required=False))
    for action in targets:
        if action not in action_names:
            raise TaskError(f"{path}.target_actions: {action!r} is not an action of the vocabulary")
    reference = root.sub("reference")
    invariants_file = _existing(directory, root.str("invariants"), f"{path}.invariants")
    templates, definitions = _templates(invariants_file)
    templates = (type_template(vocabulary), *templates)
    mutants_file = root.str("mutants", "")
    runtime = root.sub("phases", required=False).sub("runtime", required=False)
    invariants = root.sub("phases", required=False).sub("invariants", required=False)
    conformance = root.sub("phases", required=False).sub("conformance", required=False)
    cfg = reference.str("cfg", "")
    mapping = reference.str("mapping", "")
    return Task(
        name=name,
        title=root.str("title", name),
        description=root.str("description", ""),
        system_type=root.str("system_type"),
        language=root.str("language"),
        module=_identifier(root.str("module"), f"{path}.module"),
        directory=directory,
        source=SourceRef(
            package=source.str("package"),
            install=source.str("install", ""),
            version=source.str("version", ""),
            root=Path(source.str("root")),
            files=tuple(_source_file(_Fields(f, f"{path}.source.files")) for f in source.list("files")),
        ),
        upstream=Upstream(upstream.str("system"), upstream.str("repository", ""), upstream.str("path", ""), upstream.str("differences")),
        vocabulary=vocabulary,
        target_actions=targets,
        prompt_file=_existing(directory, root.str("prompt"), f"{path}.prompt"),
        templates=templates,
        template_definitions=definitions,
        reference_spec=_existing(directory, reference.str("spec"), f"{path}.reference.spec"),
        reference_cfg=_existing(directory, cfg, f"{path}.reference.cfg") if cfg else None,
        reference_mapping=_existing(directory, mapping, f"{path}.reference.mapping") if mapping else None,
        mutants=_mutants(directory, _existing(directory, mutants_file, f"{path}.mutants")) if mutants_file else (),
        runtime=RuntimeSettings(
            check_deadlock=runtime.flag("check_deadlock", True),
            simulations=int(runtime.number("simulations", 2)),
            traces=int(runtime.number("traces", 50)),
            depth=int(runtime.number("depth", 40)),
            bfs_depth=int(runtime.number("bfs_depth", 30, limit=10_000_000)),
            bfs_states=int(runtime.number("bfs_states", 100_000, limit=10_000_000)),
            bfs_generated=int(runtime.number("bfs_generated", BFS_GENERATED, limit=100_000_000)),
            budget_s=runtime.number("budget_s", 120.0),
            reference_states=int(runtime.number("reference_states", 0, limit=100_000_000)),
        ),
        invariants=InvariantSettings(budget_s=invariants.number("budget_s", 60.0),
                                     generated=int(invariants.number("generated", INVARIANTS_GENERATED,
                                                                     limit=100_000_000)),
                                     constraint=invariants.str("constraint", "").strip(),
                                     reach=_reach(invariants),
                                     simulations=int(invariants.number("simulations", 1, limit=100)),
                                     traces=int(invariants.number("traces", 50, limit=100_000)),
                                     depth=int(invariants.number("depth", 100, limit=100_000))),
        conformance=_conformance(conformance),
        harness=_harness(directory, root.sub("harness")) if root.data.get("harness") else None,
        fix_module_name=root.flag("fix_module_name", False),
        cell_budget_s=root.number("cell_budget_s", CELL_BUDGET_S),
        invariants_file=invariants_file,
        repair_bounds=_repair_bounds(root.sub("repair", required=False).sub("bounds", required=False)),
        cost_s=root.number("cost_s", 10.0),
    )


def _conformance(fields: _Fields) -> ConformanceSettings:
    from .tla.expressions import ExpressionError, check_expression

    precision = fields.sub("precision", required=False)
    narrower = []
    for index, raw in enumerate(precision.list("narrower", required=False)):
        item = _Fields(raw, f"{precision.where}.narrower[{index}]")
        try:
            when = check_expression(item.str("when"))
        except ExpressionError as exc:
            raise TaskError(f"{item.where}.when: {exc}") from exc
        narrower.append(Narrowing(when, item.str("why")))
    return ConformanceSettings(int(fields.number("max_internal_steps", MAX_INTERNAL_STEPS, limit=12)),
                               int(fields.number("generated", 1_000_000, limit=100_000_000)),
                               int(precision.number("states", 0, limit=1_000_000)), tuple(narrower))


def _reach(invariants: _Fields) -> str:
    from .tla.expressions import ExpressionError, check_expression

    value = invariants.data.get("reach")
    if value is None or value is False:
        return ""
    if value is True:
        return "TRUE"
    try:
        return check_expression(invariants.str("reach"))
    except ExpressionError as exc:
        raise TaskError(f"{invariants.where}.reach: {exc}") from exc


def _repair_bounds(bounds: _Fields) -> RepairBounds:
    unknown = sorted(set(bounds.data) - {"nat", "seq"})
    if unknown:
        raise TaskError(f"{bounds.where}: unknown bound {unknown[0]!r} (known: nat, seq)")
    values = {key: bounds.number(key, 0, limit=100) for key in ("nat", "seq")}
    if any(v != int(v) for v in values.values()):
        raise TaskError(f"{bounds.where}: bounds are whole numbers, got {values}")
    return RepairBounds(int(values["nat"]), int(values["seq"]))


@dataclass(frozen=True)
class UnavailableTask:
    """A system of the original benchmark that cannot be run here: it stays listed (so the table
    of systems stays comparable) and its items are skipped with the reason, never scored."""

    name: str
    title: str
    upstream: str
    reason: str


class _Unavailable(TaskError):
    def __init__(self, task: UnavailableTask) -> None:
        super().__init__(f"task {task.name} is unavailable offline: {task.reason}")
        self.task = task


@dataclass(frozen=True)
class TaskLoad:
    """All tasks of a folder; broken ones are kept with their error so the session goes on."""

    tasks: tuple[Task, ...]
    errors: tuple[tuple[str, str], ...]
    unavailable: tuple[UnavailableTask, ...] = ()


def load_tasks(root: str | os.PathLike[str], names: Sequence[str] | None = None) -> TaskLoad:
    root = Path(root)
    tasks: list[Task] = []
    errors: list[tuple[str, str]] = []
    unavailable: list[UnavailableTask] = []
    if not root.is_dir():
        return TaskLoad((), ((str(root), f"task folder {root} does not exist"),))
    for directory in sorted(p for p in root.iterdir() if (p / "task.yaml").is_file()):
        if names and directory.name not in names:
            continue
        try:
            tasks.append(load_task(directory))
        except _Unavailable as exc:
            unavailable.append(exc.task)
        except TaskError as exc:
            errors.append((directory.name, str(exc)))
        except (RecursionError, ValueError, TypeError, OSError) as exc:  # a task file we did not foresee
            errors.append((directory.name, f"{directory / 'task.yaml'}: cannot load: {type(exc).__name__}: {exc}"))
    return TaskLoad(tuple(tasks), tuple(errors), tuple(unavailable))


def enumerated_values(type_text: str, shape: str) -> set[str] | None:
    """The literals of a type written as an enumeration ``{"a", "b"}`` (a function's range for
    shape function), or None: other types are left to the check against the traces."""
    text = type_text.strip()
    if shape == "function":
        arrow = text.rfind("->")
        if not (text.startswith("[") and text.endswith("]") and arrow > 0):
            return None
        text = text[arrow + 2 : -1].strip()
    if text == "BOOLEAN":
        return {"TRUE", "FALSE"}
    if not (text.startswith("{") and text.endswith("}")):
        return None
    items = [item.strip() for item in text[1:-1].split(",")]
    if not all(len(item) > 1 and item.startswith('"') and item.endswith('"') for item in items):
        return None
    return set(items)
