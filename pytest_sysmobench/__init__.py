"""pytest-sysmobench: benchmark how well AI models write TLA+ models of real systems.

The public API is small and re-exported here; everything else is internal.  Names load on
first use, so that pytest loading the plugin (in any session of the environment) loads none
of the benchmark.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module that defines it.
_EXPORTS = {
    "PHASES": "scoring", "PHASE_TABLE": "scoring", "WEIGHTS": "scoring", "Phase": "scoring",
    "PhaseResult": "scoring", "Status": "scoring", "composite": "scoring", "pass_at_k": "scoring",
    "Task": "tasks", "TaskError": "tasks", "load_task": "tasks", "load_tasks": "tasks",
    "CellId": "record", "PhaseRecord": "record",
    "Cell": "cell", "Scorer": "session", "check_phase": "plugin",
}

if TYPE_CHECKING:
    from .cell import Cell
    from .plugin import check_phase
    from .record import CellId, PhaseRecord
    from .scoring import PHASE_TABLE, PHASES, WEIGHTS, Phase, PhaseResult, Status, composite, pass_at_k
    from .session import Scorer
    from .tasks import Task, TaskError, load_task, load_tasks


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "PHASES", "PHASE_TABLE", "WEIGHTS", "Cell", "CellId", "Phase", "PhaseRecord", "PhaseResult", "Scorer", "Status",
    "Task", "TaskError", "__version__", "check_phase", "composite", "load_task", "load_tasks", "pass_at_k",
]
assert set(__all__) == {"__version__", *_EXPORTS}
