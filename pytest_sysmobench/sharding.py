"""A run split by cell over several runners (``--sysmobench-shard I/N``): every phase of a cell
in one shard, the shards disjoint and together the whole selection, balanced by each task's
measured cost (an etcd cell is worth six spin cells), the same on every runner."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .cache import digest
from .leaderboard.records import Selection, Sweep
from .record import CellId
from .scoring import PHASES


Item = TypeVar("Item")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)) <= 1000:
            raise ValueError(f"--sysmobench-shard {text!r}: expected I/N with 1 <= I <= N (e.g. 2/3)")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def assign(cells: Iterable[CellId], cost: Callable[[str], float], count: int) -> dict[CellId, int]:
    """Each cell's shard (1-based): the costliest cells first, each to the shard with the least
    cost so far (ties to the lowest shard), in an order fixed by the cells alone."""
    loads = [0.0] * count
    shards: dict[CellId, int] = {}
    for cell in sorted(set(cells), key=lambda c: (-cost(c.task), c.task, c.model, c.sample)):
        lightest = min(range(count), key=lambda k: (loads[k], k))
        shards[cell] = lightest + 1
        loads[lightest] += cost(cell.task)
    return shards


def split(items: Sequence[tuple[Item, CellId | None]], cost: Callable[[str], float],
          shard: Shard) -> tuple[list[Item], dict[CellId, int], str]:
    """The benchmark items of the other shards' cells (other items stay), every cell's shard,
    and a line saying what this shard holds."""
    shards = assign((cell for _, cell in items if cell is not None), cost, shard.count)
    dropped = [item for item, cell in items if cell is not None and shards[cell] != shard.index]
    mine = [cell for cell, index in shards.items() if index == shard.index]
    return dropped, shards, (f"sysmobench: shard {shard}: {len(mine)} of {len(shards)} cells (about "
                             f"{sum(cost(c.task) for c in mine):.0f} s of {sum(cost(c.task) for c in shards):.0f} s "
                             "of cold work)")


def selection(phases: Iterable[tuple[CellId, str]], shard: Shard | None, shards: Mapping[CellId, int],
              **described: Any) -> Selection:
    """What a run's board must hold: the selected cell phases of its shard; a shard's also
    names its whole sweep (by a digest of it), so that merged shards know what is missing."""
    whole: dict[CellId, tuple[str, ...]] = {}
    for cell, phase in phases:
        whole[cell] = tuple(p for p in PHASES if p in whole.get(cell, ()) or p == phase)
    if shard is None:
        return Selection(whole, **described)
    mine = {cell: phases for cell, phases in whole.items() if shards.get(cell) == shard.index}
    key = digest("sweep-v1", shard.count, Selection(whole).to_json())[:16]
    return Selection(mine, {key: Sweep(shard.count, (shard.index,), whole)}, shard=str(shard), **described)
