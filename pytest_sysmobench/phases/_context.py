from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..models import Candidate
from ..scoring import PhaseResult, Status
from ..tasks import Task
from ..tla.cfg import Config
from ..tla.toolchain import Toolchain

if TYPE_CHECKING:
    from ..evaluator import Evaluator


@dataclass(frozen=True)
class CellContext:
    """Everything a phase needs to check one candidate spec of one task."""

    task: Task
    candidate: Candidate
    toolchain: Toolchain
    run_dir: Path
    traces_dir: Path
    evaluator: Evaluator | None = None

    @property
    def module(self) -> str:
        return self.task.module

    @property
    def spec_file(self) -> str:
        return f"{self.module}.tla"

    @property
    def cfg_file(self) -> str:
        return f"{self.module}.cfg"

    def spec_files(self) -> dict[str, str]:
        """The spec as files: the root module and the other modules of a multi-file spec."""
        return self.candidate.files()

    def harness_name_clash(self, phase: str) -> PhaseResult | None:
        """The spec's fault, scored 0: it defines a name the generated modules need."""
        from ..tla.modules import harness_names_defined

        names = harness_names_defined(self.spec_files())
        if not names:
            return None
        return PhaseResult(phase, Status.FAILED, 0.0,
                           f"the spec defines {', '.join(names[:5])}: names beginning with 'Sysmo' and the name "
                           "'canon' are reserved for the modules the benchmark generates around a spec",
                           {"reserved_names": names})

    def config(self) -> Config:
        return Config.parse(self.candidate.cfg or "")

    def job_dir(self, *parts: str) -> Path:
        path = self.run_dir.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path
