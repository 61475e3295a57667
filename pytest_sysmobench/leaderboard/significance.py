"""Whether two models (or two boards of one model) differ, at the level of generations.

A cell's windows and templates are not independent evidence: one model's samples collapse to a
few behaviours, and a test over pooled windows counts one behaviour many times.  The unit here
is the sample (one generated spec, its composite), compared within each task: under "no
difference" the labels of a task's samples can be exchanged, so the test permutes them within
every task at once (exactly, over every relabelling, where there are few; else a seeded Monte
Carlo draw, the same p-value every time).  With one sample per task on each side this is the
exact sign-flip test of the per-task differences, paired by task.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import dataclass
from typing import Sequence

from .records import CellRow
from .uncertainty import RESAMPLES, seed_of

#: Relabellings enumerated exactly up to this many; beyond, a seeded draw of MONTE_CARLO.
EXACT_LIMIT = 20_000
MONTE_CARLO = 10_000
LEVEL = 0.05


@dataclass(frozen=True)
class Side:
    """One model's samples of one task: their composites and how many distinct behaviours."""

    values: tuple[float, ...]
    distinct: int

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)


@dataclass(frozen=True)
class Comparison:
    """B against A over some tasks: B's mean minus A's (the mean of per-task differences), the
    two-sided p-value, and how it was found."""

    scope: str  # a task's name, or "overall"
    a: tuple[Side, ...]
    b: tuple[Side, ...]
    effect: float
    p_value: float
    exact: bool
    #: The effect's 95% interval: tasks resampled, then each side's samples within each drawn task.
    interval: tuple[float, float] = (0.0, 0.0)

    @property
    def differs(self) -> bool:
        return self.p_value < LEVEL

    def describe(self, a_name: str, b_name: str) -> str:
        how = "exact" if self.exact else f"Monte Carlo, {MONTE_CARLO} seeded draws"
        sides = "; ".join(f"{name} {sum(s.mean for s in sides) / len(sides):.3f} "
                          f"({sum(len(s.values) for s in sides)} samples, {sum(s.distinct for s in sides)} distinct "
                          f"behaviours)" for name, sides in ((a_name, self.a), (b_name, self.b)))
        verdict = "differ" if self.differs else "not distinguishable"
        return (f"{self.scope}: {sides}: effect {self.effect:+.3f} (95% {self.interval[0]:+.3f} to "
                f"{self.interval[1]:+.3f}), p = {self.p_value:.4f} ({how}, permutation of samples within each "
                f"task): {verdict} at {LEVEL:g}")


def fingerprint(cell: CellRow) -> str:
    """What a sample did, as the board keeps it: each phase's status and score, and P3's
    per-action window and state counts.  Two samples with the same fingerprint behaved alike."""
    shown = {p: [r.status, r.score, [[n, a.passed, a.windows, a.precise, a.states] for n, a in r.rates.actions]
                 if r.rates is not None else None] for p, r in cell.phases.items()}
    return json.dumps(shown, sort_keys=True)


def side(cells: Sequence[CellRow]) -> Side | None:
    scored = [c for c in cells if c.is_spec and c.composite is not None]
    if not scored:
        return None
    return Side(tuple(c.composite for c in scored if c.composite is not None), len({fingerprint(c) for c in scored}))


def compare_models(a_cells: Sequence[CellRow], b_cells: Sequence[CellRow], seed_parts: Sequence[str] = ()) -> list[Comparison]:
    """Per task both have scored samples of, then overall (over those tasks)."""
    tasks = sorted({c.task for c in a_cells} & {c.task for c in b_cells})
    pairs = []
    for task in tasks:
        a, b = side([c for c in a_cells if c.task == task]), side([c for c in b_cells if c.task == task])
        if a is not None and b is not None:
            pairs.append((task, a, b))
    found = [_test(task, [a], [b], (*seed_parts, task)) for task, a, b in pairs]
    if len(pairs) > 1:
        found.append(_test("overall", [a for _, a, _ in pairs], [b for _, _, b in pairs], (*seed_parts, "overall")))
    return found


def _statistic(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> float:
    return sum(sum(y) / len(y) - sum(x) / len(x) for x, y in zip(a, b)) / len(a)


def _test(scope: str, a: Sequence[Side], b: Sequence[Side], seed_parts: Sequence[str]) -> Comparison:
    pooled = [(list(x.values) + list(y.values), len(x.values)) for x, y in zip(a, b)]
    observed = _statistic([x.values for x in a], [y.values for y in b])
    sizes = [math.comb(len(values), n_a) for values, n_a in pooled]
    total = math.prod(sizes)
    at_least = 0
    if total <= EXACT_LIMIT:
        choices = [list(itertools.combinations(range(len(values)), n_a)) for values, n_a in pooled]
        for combination in itertools.product(*choices):
            at_least += _as_extreme(pooled, combination, observed)
        p_value, exact = at_least / total, True
    else:
        rng = random.Random(seed_of("permutation", *seed_parts))
        for _ in range(MONTE_CARLO):
            pick = [tuple(rng.sample(range(len(values)), n_a)) for values, n_a in pooled]
            at_least += _as_extreme(pooled, pick, observed)
        p_value, exact = (at_least + 1) / (MONTE_CARLO + 1), False
    return Comparison(scope, tuple(a), tuple(b), round(observed, 6), round(min(1.0, p_value), 6), exact,
                      effect_interval([x.values for x in a], [y.values for y in b], seed_of("effect", *seed_parts)))


def effect_interval(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], seed: int,
                    resamples: int = RESAMPLES) -> tuple[float, float]:
    """The percentile interval of the effect (the mean over tasks of B's mean minus A's), each
    resample drawing the tasks, then each side's samples within each drawn task."""
    rng = random.Random(seed)
    pairs = list(zip(a, b))
    draws = []
    for _ in range(resamples):
        total = 0.0
        for x, y in rng.choices(pairs, k=len(pairs)):
            total += sum(rng.choices(y, k=len(y))) / len(y) - sum(rng.choices(x, k=len(x))) / len(x)
        draws.append(total / len(pairs))
    draws.sort()
    tail = (1.0 - 0.95) / 2
    return round(draws[int(tail * resamples)], 6), round(draws[min(resamples - 1, int((1 - tail) * resamples))], 6)


def _as_extreme(pooled: Sequence[tuple[list[float], int]], pick: Sequence[tuple[int, ...]], observed: float) -> bool:
    xs, ys = [], []
    for (values, _), chosen in zip(pooled, pick):
        inside = set(chosen)
        xs.append([v for i, v in enumerate(values) if i in inside])
        ys.append([v for i, v in enumerate(values) if i not in inside])
    return abs(_statistic(xs, ys)) >= abs(observed) - 1e-12
