"""A candidate spec, made the same way from any text: its modules extracted and read as ASCII,
its cfg settled, and its mapping (given, or the identity when it speaks the task's names)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping as TMapping, Sequence

from ..mapping import ActionCall, ActionMap, Mapping, MappingError, VariableMap, load_mapping
from ..tasks import Task
from ..tla import modules
from ..tla.cfg import default_config
from ..tla.unicode import to_ascii
from .extract import extract_spec, rename_module


class UnknownModel(ValueError):
    """A --sysmobench-models entry that names no known source."""


@dataclass(frozen=True)
class Candidate:
    """One spec to score, or the reason there is none."""

    task: str
    model: str
    sample: int
    module: str
    origin: str
    tla: str | None = None
    cfg: str | None = None
    cfg_generated: bool = False
    mapping: Mapping | None = None
    mapping_problem: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    problem: str | None = None
    absent: str | None = None  # nothing to score at all (e.g. no replayed file): phases are skipped
    generation_error: str | None = None  # the model gave no usable answer: phases are blocked
    generation: TMapping[str, Any] = field(default_factory=dict)  # route, method, tokens, cost, cache use
    transcript: tuple[tuple[str, str, str], ...] = ()  # (stage, prompt, answer) per request
    #: Further modules of a multi-file spec, (name, source), on the root module's search path.
    extra_modules: tuple[tuple[str, str], ...] = ()
    #: What a SysMoBench ``repair_manifest.json`` beside a replayed spec says of its repair
    #: (``status``, ``edits``): shown beside the board's own repair status, never trusted as one.
    declared_repair: TMapping[str, Any] | None = None
    #: The seeds whose traces P3 scores it on (none: all): a spec corrected on the feedback
    #: seeds' evidence is scored on the held-out ones.
    scored_seeds: tuple[int, ...] = ()

    def files(self) -> dict[str, str]:
        """The spec as files: the root module and the modules beside it."""
        assert self.tla is not None
        return {f"{self.module}.tla": self.tla, **{f"{name}.tla": text for name, text in self.extra_modules}}

    def declared(self) -> tuple[list[str], list[str]]:
        """(constants, variables) the spec declares, across the modules its root EXTENDS."""
        return modules.declared_with(self.tla or "", dict(self.extra_modules))


class SpecSource:
    """Where a cell's spec comes from: what a cell asks of it (the candidate, checked as it is
    made when ``uses_checker``), and what a session asks before any cell runs (``problems``;
    whether its specs may need an evaluator's mapping; whether its answers are a model's, asked
    ahead after collection)."""

    name: str
    #: What it is, as the board says: one of ``record.KINDS``.
    kind: str = "model"
    #: Its answers are checked as they are made: the cell hands it its checker and its judge.
    uses_checker: bool = False
    #: Its specs may come without a mapping, for an evaluator model to propose one.
    may_lack_mapping: bool = False
    #: Its answers are a model's, which a sweep asks for ahead of the cells.
    asked_ahead: bool = False

    def candidate(self, task: Task, sample: int, check: Any = None, judge: Any = None) -> Candidate:
        """The cell's spec; ``check`` (P1 and P2) and ``judge`` (P3 and P4) of an answer as it is made,
        for a source that ``uses_checker``."""
        raise NotImplementedError

    def problems(self, tasks: Sequence[Task], samples: int, routes: bool) -> list[str]:
        """What keeps it from being scored, known before any cell runs (a typo must not pass as
        a skip); ``routes``: whether a model may be put to litellm to find out."""
        return []


def with_spec(base: Candidate, task: Task, text: str, cfg: str | None, mapping_file: Path | None,
               beside: tuple[tuple[str, str], ...] = ()) -> Candidate:
    """Extract the module(s), fall back to the task's default cfg, and settle the mapping.

    ``beside`` are the other modules of a multi-file spec (replayed files next to the root).
    """
    extraction = extract_spec(text, task.module)
    notes = list(extraction.notes)
    tla = extraction.tla
    extras = dict(extraction.extra_modules)
    for name, source in beside:
        extras.setdefault(name, source)
    unicode_read = 0
    if tla is not None:
        tla, unicode_read = to_ascii(tla)
    for name, source in extras.items():
        extras[name], read = to_ascii(source)
        unicode_read += read
    if unicode_read:
        notes.append(f"{unicode_read} Unicode operator(s) read as their ASCII forms (TLA+ Unicode mapping)")
    if tla is not None and extraction.declared_module and extraction.declared_module != task.module:
        if task.fix_module_name:
            tla = rename_module(tla, extraction.declared_module, task.module)
            notes.append(f"the module was named {extraction.declared_module!r}; renamed to {task.module!r} "
                         "(task allows it)")
        else:
            notes.append(f"the module is named {extraction.declared_module!r}, the task requires {task.module!r}; "
                         "not renamed (the task does not allow it)")
    cfg = cfg if cfg is not None else extraction.cfg
    generated = cfg is None
    if generated:
        cfg = default_config(task.default_constants)
        notes.append("no cfg given: the task's default cfg was used")
    extras.pop(task.module, None)
    for name in sorted(extras):
        if _reserved_module(name):
            del extras[name]
            notes.append(f"module {name} ignored: the name is reserved (a standard, library or harness module)")
    candidate = replace(base, tla=tla, cfg=cfg, cfg_generated=generated, notes=tuple(notes),
                        problem=extraction.problem, extra_modules=tuple(sorted(extras.items())))
    if tla is None:
        return candidate
    if mapping_file is not None:
        try:
            return replace(candidate, mapping=load_mapping(mapping_file, task))
        except MappingError as exc:
            return replace(candidate, mapping_problem=f"invalid mapping: {exc}")
    check = identity_mapping(task, candidate)
    if check.mapping is None:
        return replace(
            candidate,
            mapping_problem="not evaluable: no mapping to the canonical vocabulary and the spec does not declare "
            + ", ".join(check.missing),
        )
    return replace(candidate, mapping=check.mapping)


#: Modules a spec may not bring its own copy of: the checks' generated modules EXTEND them, so a
#: spec's own Naturals or TLC could change what a template or a window check means.
STANDARD_MODULES = frozenset({"Naturals", "Integers", "Reals", "Sequences", "FiniteSets", "Bags", "TLC", "TLCExt",
                              "RealTime", "Json", "Randomization", "Toolbox"})


def _reserved_module(name: str) -> bool:
    from ..tla.toolchain import LIBRARY_DIR

    return name in STANDARD_MODULES or (LIBRARY_DIR / f"{name}.tla").is_file() or "Sysmo" in name


@dataclass(frozen=True)
class IdentityCheck:
    mapping: Mapping | None
    missing: tuple[str, ...] = field(default_factory=tuple)


def identity_mapping(task: Task, candidate: Candidate) -> IdentityCheck:
    """The identity mapping applies only when the spec declares every canonical name."""
    constants, variables = candidate.declared()
    defined = {u.name for u in modules.top_level_units(candidate.tla or "")}
    missing = [v.name for v in task.vocabulary.variables if v.name not in variables]
    missing += [c.name for c in task.vocabulary.constants if c.name not in constants and c.name not in defined]
    if missing:
        return IdentityCheck(None, tuple(missing))
    return IdentityCheck(
        Mapping(
            constants=tuple((c.name, c.name) for c in task.vocabulary.constants),
            variables=tuple(VariableMap(v.name, var=v.name) for v in task.vocabulary.variables),
            actions=tuple(ActionMap(a.name, (ActionCall(a.name),)) for a in task.vocabulary.actions),
            identity=True,
            source="identity",
        )
    )
