"""Phase results, gates and the composite score.

A phase that could not run is never silently dropped: it is *blocked* (an earlier phase
stopped it), *skipped* (nothing to check, e.g. no traces), *not evaluable* (no mapping onto
the canonical vocabulary), *inconclusive* (a budget cut the check short) or an *error*
(the harness failed, not the spec).  Only *blocked* is the spec's doing and scores 0, like the
original benchmark's "missing phase = 0".  The others have no score: they say nothing about
the spec, so they keep their reason and stay out of every mean, and a cell with such a phase
has no composite (it is counted apart as unscored).
"""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from .tasks import PHASES

WEIGHTS: Mapping[str, float] = {"syntax": 0.15, "runtime": 0.15, "conformance": 0.35, "invariants": 0.35}
PHASE_MARKERS: Mapping[str, str] = {"syntax": "p1", "runtime": "p2", "conformance": "p3", "invariants": "p4"}


#: Reasons travel into failure messages, JUnit properties and the leaderboard: keep them readable.
REASON_LIMIT = 2000


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    BLOCKED = "blocked"
    SKIPPED = "skipped"
    NOT_EVALUABLE = "not_evaluable"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


@dataclass(frozen=True)
class PhaseResult:
    phase: str
    status: Status
    score: float | None
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.reason) > REASON_LIMIT:
            cut = self.reason[:REASON_LIMIT]
            object.__setattr__(self, "reason", f"{cut}... ({len(self.reason) - REASON_LIMIT} more characters)")
        if self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r}")
        if self.score is not None and not (0.0 <= self.score <= 1.0 and math.isfinite(self.score)):
            raise ValueError(f"score {self.score!r} out of [0, 1]")

    @property
    def usable(self) -> bool:
        """Whether later phases may build on this one (the gate)."""
        if self.phase == "syntax":
            return self.status is Status.PASSED
        if self.phase == "runtime":
            return bool(self.details.get("runtime_check")) and (self.score or 0.0) > 0.0
        return True

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseResult:
        return cls(
            phase=str(data["phase"]),
            status=Status(data["status"]),
            score=None if data.get("score") is None else float(data["score"]),
            reason=str(data.get("reason", "")),
            details=dict(data.get("details") or {}),
        )


def blocked(phase: str, by: PhaseResult) -> PhaseResult:
    """Blocked by the spec's own failure scores 0; blocked by a phase with no score has none either."""
    score = 0.0 if by.score is not None else None
    return PhaseResult(phase, Status.BLOCKED, score, f"blocked by {by.phase}: {by.reason or by.status.value}")


def gate(phase: str, earlier: Iterable[PhaseResult]) -> PhaseResult | None:
    """P1 < 1 blocks P2-P4; a failed runtime check or zero coverage blocks P3-P4."""
    for result in earlier:
        if PHASES.index(result.phase) < PHASES.index(phase) and result.phase in ("syntax", "runtime"):
            if not result.usable:
                return blocked(phase, result)
    return None


def composite(results: Mapping[str, PhaseResult | None]) -> float | None:
    """0.15 P1 + 0.15 P2 + 0.35 P3 + 0.35 P4; unknown (None) when a phase did not run or has no
    score, since counting it as 0 would charge the spec for what the harness could not decide."""
    total = 0.0
    for phase, weight in WEIGHTS.items():
        result = results.get(phase)
        if result is None or result.score is None:
            return None
        total += weight * result.score
    return round(total, 6)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimator 1 - C(n-c, k) / C(n, k) (Chen et al. 2021)."""
    if not (0 <= c <= n) or k < 1 or k > n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
