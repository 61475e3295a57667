from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping as TMapping, Protocol

from ..mapping import Mapping
from ..tasks import Task


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

    def files(self) -> dict[str, str]:
        """The spec as files: the root module and the modules beside it."""
        assert self.tla is not None
        return {f"{self.module}.tla": self.tla, **{f"{name}.tla": text for name, text in self.extra_modules}}

    def declared(self) -> tuple[list[str], list[str]]:
        """(constants, variables) the spec declares, across the modules its root EXTENDS."""
        from ..tla import modules

        return modules.declared_with(self.tla or "", dict(self.extra_modules))


class SpecSource(Protocol):
    name: str

    def candidate(self, task: Task, sample: int) -> Candidate: ...
