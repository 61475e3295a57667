"""The record of one phase of one cell: what crosses from a worker to the controller, into
JUnit, the leaderboard and the HTML page.  Plain JSON by construction, whatever a phase put in
its details (enums, paths, tuples, dataclasses become their JSON reading), so that xdist's
serializer, ``json.dumps`` and a reader of ``result.json`` all see the same thing.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
from pathlib import PurePath
from typing import Any, Mapping

from .scoring import PHASES, Cause, Charge, PhaseResult, RepairStatus, Status


def slug(text: str) -> str:
    """A model name as a safe folder name ("replay:/x/y" must not become a path): the cell's
    folder is ``<run>/<task>/<slug(model)>/s<sample>``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "model"

JSON = Any
#: Nesting kept in details; deeper structure is summarised as a string.
MAX_DEPTH = 24


def jsonable(value: Any, depth: int = 0) -> JSON:
    """The JSON reading of a value: dict keys become strings, anything unknown its ``str``."""
    if isinstance(value, enum.Enum):  # first: a str- or int-valued enum is still not plain JSON
        return jsonable(value.value, depth)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)  # a subclass (IntFlag, numpy ints) becomes a plain int
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else str(value)
    if isinstance(value, PurePath):
        return str(value)
    if depth >= MAX_DEPTH:
        return str(value)[:200]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(jsonable(k, depth + 1)): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v, depth + 1) for v in items]
    return str(value)


@dataclasses.dataclass(frozen=True)
class CellId:
    """A cell (task x model x sample), and the one way its name is written: in test ids, in
    the xdist scope that keeps a cell on one worker, in JUnit and in the baseline's changes."""

    task: str
    model: str
    sample: int = 0

    @property
    def label(self) -> str:
        """``<task>-<model>[-s<k>]``: the test id without its phase."""
        return f"{self.task}-{self.model}{self._suffix('-s')}"

    @property
    def path(self) -> str:
        """``<task>/<model>[/s<k>]``: how a change against a baseline names its cell."""
        return f"{self.task}/{self.model}{self._suffix('/s')}"

    def item_id(self, phase: str) -> str:
        return f"{self.label}-{phase}"

    def _suffix(self, separator: str) -> str:
        return f"{separator}{self.sample}" if self.sample else ""

    @staticmethod
    def scope_of(nodeid: str) -> str | None:
        """The cell a benchmark item's node id (``...[<label>-<phase>]``) belongs to, or None for
        any other test; a model's name may hold dashes, so only the phase is cut off."""
        if "[" not in nodeid or not nodeid.endswith(_ITEM_SUFFIXES):
            return None
        return nodeid[: nodeid.rindex("-")]


_ITEM_SUFFIXES = tuple(f"-{phase}]" for phase in PHASES)


#: The kinds of spec source a board tells apart.
KINDS = ("reference", "model", "agent", "replay", "mutant", "floor")


@dataclasses.dataclass(frozen=True)
class Usage:
    """What making a cell's spec took and how it went, as a source recorded it: the route and
    method, the model's use (counted by the benchmark), a correcting method's rounds, an agent's
    run.  A field is written when known; ``cost_usd``, ``exit_code`` and ``usage_reported`` are
    written as null beside the use or the run they belong to, where null means unknown."""

    route: str | None = None
    method: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    requests: int | None = None
    cached: int | None = None
    #: agent_based and feedback: each attempt's verdicts, which one is scored, why it stopped early.
    attempts: tuple[dict[str, JSON], ...] | None = None
    scored_attempt: int | None = None
    corrections_allowed: int | None = None
    correction_error: str | None = None
    #: feedback: whether the scored answer fits the traces it was shown better than the held-out ones.
    fits_feedback: bool | None = None
    #: agents: the checks used, how the run ended, its time, the use it reported, its processes.
    agent: str | None = None
    checks: int | None = None
    max_checks: int | None = None
    exit_code: int | None = None
    timed_out: bool | None = None
    seconds: float | None = None
    usage_reported: JSON = None
    processes_peak: int | None = None
    max_processes: int | None = None
    #: The answer is the task's reference (an agent that copied it).
    equals_reference: bool | None = None
    #: An agent's model endpoint: what it refused, what failed, the budget spent.
    model_use: dict[str, JSON] | None = None

    #: Written as null (unknown) when the field named beside is known.
    _NULL_BESIDE = {"cost_usd": "prompt_tokens", "exit_code": "seconds", "usage_reported": "seconds"}

    @classmethod
    def of(cls, given: JSON) -> Usage | None:
        """A source's record of the generation (or a board's), keeping what a board shows; None
        for nothing.  Anything of the wrong type is left out: a board from a file is not trusted."""
        if not isinstance(given, Mapping) or not given:
            return None
        read = {f.name: _typed(given.get(f.name), f.type) for f in dataclasses.fields(cls) if f.name in given}
        usage = cls(**{k: v for k, v in read.items() if v is not _WRONG})
        return usage if usage.to_json() else None

    def to_json(self) -> dict[str, JSON]:
        data = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            beside = self._NULL_BESIDE.get(f.name)
            if value is not None or (beside is not None and getattr(self, beside) is not None):
                data[f.name] = jsonable(value)
        return data


_WRONG = object()
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "str | None": (str,), "int | None": (int,), "float | None": (int, float), "bool | None": (bool,),
    "dict[str, JSON] | None": (Mapping,), "tuple[dict[str, JSON], ...] | None": (list, tuple),
}


def _typed(value: JSON, declared: object) -> Any:
    """A value read as its field declares (``_WRONG`` when it is not), plain JSON within."""
    if value is None or declared == "JSON":
        return jsonable(value)
    kinds = _FIELD_TYPES[str(declared)]
    if isinstance(value, bool) and bool not in kinds:
        return _WRONG
    if not isinstance(value, kinds) or (isinstance(value, float) and not math.isfinite(value)):
        return _WRONG
    if isinstance(value, (list, tuple)):
        return tuple(jsonable(v) for v in value if isinstance(v, Mapping))
    if isinstance(value, Mapping):
        return jsonable(value)
    return value


@dataclasses.dataclass(frozen=True)
class PhaseSummary:
    """A phase of a cell's repaired spec, as the board reads one: no details but why it failed
    and, for P4, the original's share of templates held."""

    phase: str
    status: Status
    score: float | None
    reason: str
    charged_to: Charge
    cause: Cause | None
    details: dict[str, JSON] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, result: PhaseResult) -> PhaseSummary:
        kept = {k: result.details[k] for k in ("failure_class", "fraction") if k in result.details}
        return cls(result.phase, result.status, result.score, result.reason, result.charged_to, result.cause,
                   jsonable(kept))

    def to_json(self) -> dict[str, JSON]:
        return jsonable(self)

    @classmethod
    def from_json(cls, data: Mapping[str, JSON], phase: str) -> PhaseSummary:
        status, charged_to, cause = _words(data)
        return cls(phase, status, real(data.get("score")), _text(data.get("reason")), charged_to, cause,
                   _object(data.get("details")) or {})


@dataclasses.dataclass(frozen=True)
class RepairSummary:
    """What the board keeps of a cell's repair: its status as the original's board counts them
    (none, minor, moderate, heavy, unrepairable; ``error`` when the benchmark could not finish
    it), its edits and why."""

    status: RepairStatus
    edits: int = 0
    reason: str = ""
    #: What a SysMoBench repair manifest beside a replayed spec declares (``status``, ``edits``).
    declared: dict[str, JSON] | None = None
    #: The repair model's use (requests, tokens, cost), when one was asked.
    use: dict[str, JSON] | None = None

    def to_json(self) -> dict[str, JSON]:
        data = jsonable(self)
        for optional in ("declared", "use"):
            if data[optional] is None:
                del data[optional]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> RepairSummary:
        edits = data.get("edits")
        return cls(RepairStatus.read(data.get("status")) or RepairStatus.ERROR,
                   edits if isinstance(edits, int) and not isinstance(edits, bool) else 0, _text(data.get("reason")),
                   _object(data.get("declared")), _object(data.get("use")))


@dataclasses.dataclass(frozen=True)
class PhaseRecord:
    """One phase item's outcome, as every consumer downstream of the worker sees it.  It crosses
    xdist's serializer as its JSON (``to_json``) and is read back on the controller (``from_json``)."""

    task: str
    model: str
    sample: int
    phase: str
    status: Status
    score: float | None
    reason: str
    details: dict[str, JSON] = dataclasses.field(default_factory=dict)
    #: The spec's (scored) or the benchmark's (no score; ``cause`` says why).
    charged_to: Charge = Charge.SPEC
    cause: Cause | None = None
    tools: dict[str, int] = dataclasses.field(default_factory=dict)
    generation: Usage | None = None
    provenance: dict[str, JSON] = dataclasses.field(default_factory=dict)
    #: P3 and P4 with repair on: the cell's repair ...
    repair: RepairSummary | None = None
    #: ... and this phase of the repaired spec, when a repair made it usable.
    repaired: PhaseSummary | None = None
    #: What the cell's spec source is (``KINDS``); None when the item never reached it.
    kind: str | None = None

    @classmethod
    def of(cls, task: str, model: str, sample: int, result: PhaseResult, *, tools: Mapping[str, int] | None = None,
           generation: Mapping[str, JSON] | None = None, provenance: Mapping[str, JSON] | None = None,
           repair: RepairSummary | None = None, repaired: PhaseSummary | None = None,
           kind: str | None = None) -> PhaseRecord:
        details = {k: v for k, v in result.details.items() if k != "templates"}
        return cls(task, model, sample, result.phase, result.status, result.score, result.reason, jsonable(details),
                   result.charged_to, result.cause, dict(tools or {}), Usage.of(generation),
                   jsonable(provenance or {}), repair, repaired, kind)

    def failed_in_setup(self, why: str) -> PhaseRecord:
        """The record of an item whose setup failed after its phase was recorded: a harness error."""
        if self.status is Status.ERROR:
            return self
        return dataclasses.replace(self, status=Status.ERROR, reason=why, score=None, charged_to=Charge.BENCHMARK,
                                   cause=self.cause or Cause.HARNESS)

    def to_json(self) -> dict[str, JSON]:
        data = jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _PARTS})
        for name in _PARTS:  # each typed part writes itself, and only when there is one
            part = getattr(self, name)
            if part is not None:
                data[name] = part.to_json()
        return _ordered(data)

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> PhaseRecord:
        status, charged_to, cause = _words(data)
        sample, details = data.get("sample"), data.get("details")
        repair, repaired = data.get("repair"), data.get("repaired")
        tools = data.get("tools")
        return cls(_text(data.get("task")), _text(data.get("model")), sample if isinstance(sample, int) else 0,
                   _text(data.get("phase")), status, real(data.get("score")), _text(data.get("reason")),
                   _object(details) or {}, charged_to, cause,
                   {str(k): v for k, v in tools.items() if isinstance(v, int)} if isinstance(tools, Mapping) else {},
                   Usage.of(data.get("generation")), _object(data.get("provenance")) or {},
                   RepairSummary.from_json(repair) if isinstance(repair, Mapping) else None,
                   PhaseSummary.from_json(repaired, _text(data.get("phase"))) if isinstance(repaired, Mapping) else None,
                   data["kind"] if data.get("kind") in KINDS else None)


_ORDER = tuple(f.name for f in dataclasses.fields(PhaseRecord))
_PARTS = ("generation", "repair", "repaired")


def _ordered(data: dict[str, JSON]) -> dict[str, JSON]:
    return {k: data[k] for k in _ORDER if k in data}


def _words(data: Mapping[str, JSON]) -> tuple[Status, Charge, Cause | None]:
    """A written outcome's status, charge and cause; a word no outcome has reads as a fault of ours."""
    status = Status.read(data.get("status")) or Status.ERROR
    score = real(data.get("score"))
    charged_to = Charge.read(data.get("charged_to")) or (Charge.SPEC if score is not None else Charge.BENCHMARK)
    cause = Cause.read(data.get("cause"))
    return status, charged_to, cause


def real(value: JSON, upper: float | None = 1.0) -> float | None:
    """A finite number in [0, upper] as written (an int stays an int, so that a board reads back
    as it was written); anything else is unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int no float can hold
        return None
    return value if finite and value >= 0 and (upper is None or value <= upper) else None


def _text(value: JSON) -> str:
    return value if isinstance(value, str) else ""


def _object(value: JSON) -> dict[str, JSON] | None:
    return jsonable(value) if isinstance(value, Mapping) else None
