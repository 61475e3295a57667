"""pytest-xdist scheduling: every phase of a cell on one worker.

The phases of a cell share their work (P4 needs P1 and P2, P3 and P4 share the mapping check),
so a cell split over two workers repeats its tool runs.  xdist's ``loadgroup`` (a group mark
that xdist appends to node ids) no longer kept a cell's items together with pytest 9.2, so the
plugin brings its own scheduler: xdist's scope scheduling, with a benchmark item's scope being
its cell, read from the node id alone.  Everything else is scheduled one test at a time, as
``--dist load`` would.

Scopes go to the workers in collection order, each worker taking the next when it is done, so a
worker's collection puts the costliest cells first (each task's measured ``cost_s``): the longest
cell last would leave the other worker idle while it runs (the ten references under ``-n 2``:
zookeeper's cell alone at the end, 1.05x the speed of one process).
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from xdist.scheduler import LoadScopeScheduling

from .record import CellId

CELL_SCOPE = "sysmobench-cell:"


def cell_scope(nodeid: str) -> str | None:
    """The xdist scope of a benchmark item: its cell; None for any other test."""
    cell = CellId.scope_of(nodeid)
    return None if cell is None else CELL_SCOPE + cell


class CellScheduling(LoadScopeScheduling):
    """Scope scheduling where a benchmark cell is one unit of work."""

    def _split_scope(self, nodeid: str) -> str:
        return cell_scope(nodeid) or nodeid


Item = TypeVar("Item")


def costliest_first(items: Sequence[Item], cost: Callable[[Item], float | None]) -> list[Item]:
    """The benchmark items with the costliest cells first, each cell's phases in their order;
    any other test keeps its place after them (a stable sort: the same order on every worker)."""
    return sorted(items, key=lambda item: -(cost(item) or 0.0))
