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

from .scoring import PHASES, PhaseResult


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
class PhaseRecord:
    """One phase item's outcome, as every consumer downstream of the worker sees it."""

    task: str
    model: str
    sample: int
    phase: str
    status: str
    score: float | None
    reason: str
    details: dict[str, JSON] = dataclasses.field(default_factory=dict)
    #: "spec" (scored) or "benchmark" (no score; ``cause`` says why).
    charged_to: str = "spec"
    cause: str | None = None
    tools: dict[str, int] = dataclasses.field(default_factory=dict)
    generation: dict[str, JSON] | None = None
    provenance: dict[str, JSON] = dataclasses.field(default_factory=dict)
    #: P3 and P4 with repair on: the cell's repair (``RepairSummary.to_json``) ...
    repair: dict[str, JSON] | None = None
    #: ... and this phase of the repaired spec (``phase_summary``), when a repair made it usable.
    repaired: dict[str, JSON] | None = None
    #: What the cell's spec source is (``KINDS``); None when the item never reached it.
    kind: str | None = None

    @classmethod
    def of(cls, task: str, model: str, sample: int, result: PhaseResult, **extra: Any) -> PhaseRecord:
        details = {k: v for k, v in result.details.items() if k != "templates"}
        return cls(task, model, sample, result.phase, result.status.value, result.score, result.reason,
                   jsonable(details), result.charged_to.value, result.cause.value if result.cause else None,
                   **{k: jsonable(v) for k, v in extra.items()})

    def to_json(self) -> dict[str, JSON]:
        data = dataclasses.asdict(self)
        for optional in ("generation", "repair", "repaired"):
            if data[optional] is None:
                del data[optional]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> PhaseRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def phase_summary(result: PhaseResult) -> dict[str, JSON]:
    """A phase result as the board reads one (no details but why it failed and, for P4, the
    original's share of templates held)."""
    kept = {k: result.details[k] for k in ("failure_class", "fraction") if k in result.details}
    return {"phase": result.phase, "status": result.status.value, "score": result.score, "reason": result.reason,
            "charged_to": result.charged_to.value, "cause": result.cause.value if result.cause else None,
            "details": jsonable(kept)}


@dataclasses.dataclass(frozen=True)
class RepairSummary:
    """What the board keeps of a cell's repair: its status as the original's board counts them
    (none, minor, moderate, heavy, unrepairable; ``error`` when the benchmark could not finish
    it), its edits and why."""

    status: str
    edits: int = 0
    reason: str = ""
    #: What a SysMoBench repair manifest beside a replayed spec declares (``status``, ``edits``).
    declared: dict[str, JSON] | None = None
    #: The repair model's use (requests, tokens, cost), when one was asked.
    use: dict[str, JSON] | None = None

    def to_json(self) -> dict[str, JSON]:
        data = dataclasses.asdict(self)
        for optional in ("declared", "use"):
            if data[optional] is None:
                del data[optional]
        return data
