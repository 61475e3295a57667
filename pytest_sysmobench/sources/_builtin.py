"""The built-in sources: the task's reference spec, its seeded-bug mutants, specs replayed from a folder."""

from __future__ import annotations


import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ..hints import close_matches, did_you_mean
from ..tasks import IDENTIFIER, Task, TaskError
from ..scoring import RepairStatus
from ._candidate import Candidate, SpecSource, UnknownModel, with_spec

MAX_SPEC_BYTES = 2_000_000
#: A multi-file spec: at most this many modules beside the root, and this many bytes in all.
MAX_EXTRA_MODULES = 32
MAX_SPEC_FOLDER_BYTES = 4_000_000


def _read(path: Path) -> str:
    data = path.read_bytes()
    if len(data) > MAX_SPEC_BYTES:
        raise OversizedAnswer(f"{path.name} is {len(data):,} bytes, over the {MAX_SPEC_BYTES:,}-byte limit for a spec")
    return data.decode("utf-8", errors="replace")


class OversizedAnswer(ValueError):
    """A spec or answer too large to be a real model's answer; it is not read at all."""


class ReferenceSource(SpecSource):
    """The expert spec that ships with each task; it must score 1.0 everywhere."""

    name = "reference"
    kind = "reference"

    def candidate(self, task: Task, sample: int, check: Any = None, judge: Any = None) -> Candidate:
        base = Candidate(task.name, self.name, sample, task.module, origin=str(task.reference_spec))
        cfg = _read(task.reference_cfg) if task.reference_cfg else None
        return with_spec(base, task, _read(task.reference_spec), cfg, task.reference_mapping)


class MutantSource(SpecSource):
    """A seeded-bug mutant of the reference spec: the benchmark must catch it in its phase."""

    kind = "mutant"

    def __init__(self, mutant: str) -> None:
        self.mutant = mutant
        self.name = f"mutant:{mutant}"

    def problems(self, tasks: Sequence[Task], samples: int, routes: bool) -> list[str]:
        if not tasks or any(m.name == self.mutant for t in tasks for m in t.mutants):
            return []
        known = sorted({m.name for t in tasks for m in t.mutants})
        return [f"{self.name}: no task has a mutant {self.mutant!r} ({did_you_mean(self.mutant, known)})"]

    def candidate(self, task: Task, sample: int, check: Any = None, judge: Any = None) -> Candidate:
        base = Candidate(task.name, self.name, sample, task.module, origin=f"{task.reference_spec} + {self.mutant}")
        mutant = next((m for m in task.mutants if m.name == self.mutant), None)
        if mutant is None:
            return replace(base, absent=f"task {task.name} has no mutant {self.mutant!r}")
        cfg = _read(task.reference_cfg) if task.reference_cfg else None
        try:
            spec, cfg = mutant.apply(_read(task.reference_spec), cfg)
        except TaskError as exc:
            return replace(base, problem=str(exc))
        return with_spec(base, task, spec, cfg, task.reference_mapping)


class ReplaySource(SpecSource):
    """Specs written or generated elsewhere: ``DIR/<task>/<Module>.tla`` (+ optional .cfg, mapping.yaml).

    Other ``.tla`` files in the folder are modules of the same spec (the root EXTENDS or
    INSTANCEs them); they are on its search path.
    """

    kind = "replay"
    may_lack_mapping = True

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.name = f"replay:{directory.name or directory}"

    def problems(self, tasks: Sequence[Task], samples: int, routes: bool) -> list[str]:
        if not tasks or any((self.directory / t.name / f"{t.module}.tla").is_file() for t in tasks):
            return []
        wanted = ", ".join(f"{t.name}/{t.module}.tla" for t in tasks)
        return [f"{self.name}: {self.directory} holds no spec for any task (expected one of {wanted})"]

    def candidate(self, task: Task, sample: int, check: Any = None, judge: Any = None) -> Candidate:
        folder = self.directory / task.name
        spec = folder / f"{task.module}.tla"
        base = Candidate(task.name, self.name, sample, task.module, origin=str(spec))
        if not spec.is_file():
            return replace(base, absent=f"no spec for task {task.name}: {spec} does not exist")
        return spec_in_folder(base, task, folder)


def spec_in_folder(base: Candidate, task: Task, folder: Path) -> Candidate:
    """``<Module>.tla`` in ``folder`` (it exists), with the cfg, ``mapping.yaml``, the modules
    and the SysMoBench repair manifest beside it: a replayed spec, or what an agent left."""
    spec = folder / f"{task.module}.tla"
    cfg_path = folder / f"{task.module}.cfg"
    mapping = folder / "mapping.yaml"
    try:
        cfg = _read(cfg_path) if cfg_path.is_file() else None
        text = _read(spec)
        beside = _modules_beside(folder, spec)
    except OversizedAnswer as exc:
        return replace(base, problem=str(exc))
    manifest = folder / REPAIR_MANIFEST
    base = replace(base, declared_repair=declared_repair(manifest) if manifest.is_file() else None)
    return with_spec(base, task, text, cfg, mapping if mapping.is_file() else None, beside)


#: SysMoBench writes this beside each spec of its repaired board (``specs_repaired/``).
REPAIR_MANIFEST = "repair_manifest.json"
#: Its statuses; anything else a manifest says is read as ``unknown``.
#: What a manifest may declare: the original's statuses (``error`` is ours).
REPAIR_STATUSES = tuple(status.value for status in RepairStatus if status is not RepairStatus.ERROR)
MAX_MANIFEST_BYTES = 1_000_000


def declared_repair(path: Path) -> dict[str, Any]:
    """The status and edit count a SysMoBench repair manifest declares; a file that is no such
    manifest says so instead of stopping the cell."""
    try:
        data = path.read_bytes()
        if len(data) > MAX_MANIFEST_BYTES:
            return {"status": "unreadable", "problem": f"{path.name} is over {MAX_MANIFEST_BYTES:,} bytes"}
        manifest = json.loads(data)
    except (OSError, ValueError, RecursionError) as exc:
        return {"status": "unreadable", "problem": f"{path.name}: {type(exc).__name__}: {str(exc)[:200]}"}
    if not isinstance(manifest, dict):
        return {"status": "unreadable", "problem": f"{path.name} holds no JSON object"}
    status = manifest.get("status")
    edits = manifest.get("edit_count")
    if not (isinstance(edits, int) and not isinstance(edits, bool) and 0 <= edits < 10**6):
        ops = manifest.get("ops")
        edits = len(ops) if isinstance(ops, list) else None
    return {"status": status if status in REPAIR_STATUSES else "unknown", "edits": edits, "by": path.name}


def _modules_beside(folder: Path, root: Path) -> tuple[tuple[str, str], ...]:
    """The other modules of a replayed spec, by file name; bounded in number and size."""
    paths = sorted(p for p in folder.glob("*.tla") if p != root and p.is_file() and IDENTIFIER.match(p.stem))
    if len(paths) > MAX_EXTRA_MODULES:
        raise OversizedAnswer(f"{folder} holds {len(paths)} modules beside the root, over the limit of {MAX_EXTRA_MODULES}")
    total = root.stat().st_size
    found = []
    for path in paths:
        total += path.stat().st_size
        if total > MAX_SPEC_FOLDER_BYTES:
            raise OversizedAnswer(f"the modules in {folder} exceed {MAX_SPEC_FOLDER_BYTES:,} bytes in all")
        found.append((path.stem, _read(path)))
    return tuple(found)


def resolve_source(entry: str, rootdir: Path, generated: Callable[[str], SpecSource] | None = None,
                   agent: Callable[[str], SpecSource] | None = None, traces_dir: Path | None = None) -> SpecSource:
    """A --sysmobench-models entry: a built-in source, an agent (``agent:NAME``), or else a model
    to ask through litellm."""
    from ._floor import FLOORS, PREFIX, FloorSource

    entry = entry.strip()
    if entry.startswith("agent:") and agent is not None:
        return agent(entry[len("agent:"):])
    if entry == "reference":
        return ReferenceSource()
    if entry.startswith(PREFIX):
        kind = entry[len(PREFIX):]
        if kind not in FLOORS:
            close = close_matches(kind, list(FLOORS), n=1)
            raise UnknownModel(f"--sysmobench-models {entry}: no such floor ({'did you mean ' + PREFIX + close[0] + '? ' if close else ''}"
                               f"known: {', '.join(PREFIX + k for k in FLOORS)})")
        return FloorSource(kind, traces_dir or rootdir / "data" / "traces")
    if entry.startswith("mutant:") and len(entry) > len("mutant:"):
        return MutantSource(entry[len("mutant:") :])
    if entry.startswith("replay:"):
        directory = Path(entry[len("replay:") :]).expanduser()
        directory = directory if directory.is_absolute() else rootdir / directory
        if not directory.is_dir():
            raise UnknownModel(f"--sysmobench-models {entry}: {directory} is not a directory")
        return ReplaySource(directory.resolve())
    if generated is not None and entry and ":" not in entry.split("/", 1)[0]:
        return generated(entry)
    prefix = entry.split(":", 1)[0]
    close = close_matches(prefix, ["replay", "mutant", "agent", "floor"], n=1) if ":" in entry else []
    hint = f"did you mean {close[0]}:{entry.split(':', 1)[1]}? " if close else ""
    raise UnknownModel(
        f"--sysmobench-models: unknown model {entry!r} ({hint}known: 'reference', 'replay:DIR', 'mutant:NAME', "
        "'agent:NAME', 'floor:noop', 'floor:loose', "
        "or a litellm model id / a name from the model configuration)"
    )
