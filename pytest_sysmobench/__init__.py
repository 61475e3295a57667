"""pytest-sysmobench: benchmark how well AI models write TLA+ models of real systems.

The public API is small and re-exported here; everything else is internal.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .scoring import WEIGHTS, PhaseResult, Status, composite, pass_at_k  # noqa: E402
from .tasks import PHASES, Task, TaskError, load_task, load_tasks  # noqa: E402

__all__ = [
    "PHASES",
    "WEIGHTS",
    "PhaseResult",
    "Status",
    "Task",
    "TaskError",
    "__version__",
    "composite",
    "load_task",
    "load_tasks",
    "pass_at_k",
]
