"""How sure a model's means are: a 95% interval beside each, from a bootstrap that resamples
the tasks and, within each task, the samples (a model is judged on tasks, and a cell's samples
of one task are not independent evidence about the others), seeded by what is measured so that
the same board always gives the same interval.

With one sample per cell the interval spans only the choice of tasks: the board says so, since
it then ignores how much one answer could differ from another.
"""

from __future__ import annotations

import hashlib
import random
from typing import Sequence

#: Resamples per interval: the percentiles move by about 0.005 between seeds at this many.
RESAMPLES = 2000
LEVEL = 0.95
METHOD = (f"{LEVEL:.0%} percentile bootstrap: tasks resampled, then each drawn task's samples, "
          f"{RESAMPLES} resamples, seeded by the model and the measure")
ONE_SAMPLE_NOTE = ("one sample per cell: the interval reflects the choice of tasks only, not how much "
                   "another answer of the same model could differ")


def seed_of(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode()).digest()[:8], "big")


def interval(groups: Sequence[Sequence[float]], seed: int, resamples: int = RESAMPLES,
             level: float = LEVEL) -> tuple[float, float] | None:
    """The percentile interval of the mean over every value, resampling ``groups`` (a task's
    samples each) and then the values within each drawn group; None with nothing to resample."""
    groups = [list(g) for g in groups if g]
    if not groups:
        return None
    rng = random.Random(seed)
    if len({v for g in groups for v in g}) == 1:
        return round(groups[0][0], 6), round(groups[0][0], 6)  # every value the same: no spread to draw
    means = []
    for _ in range(resamples):
        total, count = 0.0, 0
        for group in rng.choices(groups, k=len(groups)):
            total += group[0] if len(group) == 1 else sum(rng.choices(group, k=len(group)))
            count += len(group)
        means.append(total / count)
    means.sort()
    tail = (1.0 - level) / 2
    low = means[max(0, int(tail * resamples))]
    high = means[min(resamples - 1, int((1.0 - tail) * resamples))]
    return round(low, 6), round(high, 6)
