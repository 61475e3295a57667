"""pytest-xdist scheduling: every phase of a cell on one worker.

The phases of a cell share their work (P4 needs P1 and P2, P3 and P4 share the mapping check),
so a cell split over two workers repeats its tool runs.  xdist's ``loadgroup`` (a group mark
that xdist appends to node ids) no longer kept a cell's items together with pytest 9.2, so the
plugin brings its own scheduler: xdist's scope scheduling, with a benchmark item's scope being
its cell, read from the node id alone.  Everything else is scheduled one test at a time, as
``--dist load`` would.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling

from .tasks import PHASES

_SUFFIXES = tuple(f"-{phase}]" for phase in PHASES)
CELL_SCOPE = "sysmobench-cell:"


def cell_scope(nodeid: str) -> str | None:
    """The cell of a benchmark item's node id (``...[<task>-<model>[-s<k>]-<phase>]``), else None."""
    if not nodeid.endswith(_SUFFIXES) or "[" not in nodeid:
        return None
    return CELL_SCOPE + nodeid[: nodeid.rindex("-")]


class CellScheduling(LoadScopeScheduling):
    """Scope scheduling where a benchmark cell is one unit of work."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)

    def _split_scope(self, nodeid: str) -> str:
        return cell_scope(nodeid) or nodeid
