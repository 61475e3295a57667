"""Phase results, who each is charged to, gates and the composite score.

Every outcome is charged to whoever caused it.  What the spec, its cfg or its mapping (as
submitted, or as an evaluator model proposed it) could not do is the spec's: it has a score,
0 where nothing could be checked (*blocked* by an earlier phase, *not evaluable* without a
mapping, a mapping that does not fit, a check that only the safety net in seconds could stop).
Only what the benchmark could not do has no score: a fault of the harness or the machine, a
missing toolchain, no traces, a system unavailable offline, a model endpoint that did not
answer.  Such an outcome names its cause, stays out of every mean and is counted apart, so no
spec can raise a mean by making its cell undecidable.
"""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Sequence, TypeVar


@dataclass(frozen=True)
class Phase:
    """One phase of a cell, as every part of the benchmark names, weighs and orders it."""

    name: str        # the item id's last part and the board's key: "syntax"
    marker: str      # the pytest marker and the short alias users type: "p1"
    weight: float    # its share of the composite
    gates_later: bool  # whether a spec that cannot use it is blocked from the later phases
    checks: str      # what it asks of the spec, for a user reading a page

    @property
    def short(self) -> str:
        """The column heading: "P1"."""
        return self.marker.upper()

    @property
    def label(self) -> str:
        return f"{self.short} {self.name}"


#: The phases in the order they run, P1 to P4 (the original's four metrics and weights).
PHASE_TABLE: tuple[Phase, ...] = (
    Phase("syntax", "p1", 0.15, True, "the module parses and resolves under SANY"),
    Phase("runtime", "p2", 0.15, True, "TLC runs the spec without error and its actions fire"),
    Phase("conformance", "p3", 0.35, False, "the spec can take every step the real system took"),
    Phase("invariants", "p4", 0.35, False, "the spec keeps the system's safety and liveness properties"),
)
PHASES: tuple[str, ...] = tuple(p.name for p in PHASE_TABLE)
WEIGHTS: Mapping[str, float] = {p.name: p.weight for p in PHASE_TABLE}
_BY_NAME = {**{p.name: p for p in PHASE_TABLE}, **{p.marker: p for p in PHASE_TABLE}}
#: The phases a spec repair changes (the ones the gates guard); P1 and P2 stay as written.
REPAIRED_PHASES: tuple[str, ...] = tuple(p.name for p in PHASE_TABLE if not p.gates_later)


def phase_of(name: str) -> Phase:
    """A phase by its name or its marker (``syntax`` or ``p1``, any case); KeyError otherwise."""
    return _BY_NAME[name.strip().lower()]


#: Reasons travel into failure messages, JUnit properties and the leaderboard: keep them readable.
REASON_LIMIT = 2000


_W = TypeVar("_W", bound="Word")


class Word(str, enum.Enum):
    """An enum whose members are the words records and boards write: printed, formatted and
    serialised as their value (``f"{Status.PASSED}"`` is ``passed``, on every Python)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def read(cls: type[_W], value: object) -> _W | None:
        """The member a written word names, or None for anything else (a board is not trusted)."""
        try:
            return cls(value)
        except ValueError:
            return None


class Status(Word):
    PASSED = "passed"
    FAILED = "failed"
    BLOCKED = "blocked"
    SKIPPED = "skipped"
    NOT_EVALUABLE = "not_evaluable"
    #: Boards written before every outcome was charged had it; it is read, never produced.
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


class Charge(Word):
    """Who an outcome is charged to: the spec's outcomes are scored, the benchmark's are not."""

    SPEC = "spec"
    BENCHMARK = "benchmark"


class Cause(Word):
    """Why the benchmark could not score a phase (what a board counts apart, per cause)."""

    HARNESS = "harness_error"          # a fault of ours or of the machine (a dead JVM, a full disk)
    TOOLCHAIN = "toolchain_missing"    # no Java or no TLA+ jar
    TASK = "task_error"                # a task file that does not load or parse
    NO_TRACES = "no_traces"            # P3 has nothing to check the spec against
    UNAVAILABLE = "system_unavailable" # the system cannot be run offline
    NO_SPEC = "no_spec"                # the source has no spec for this task (a replay folder without it)
    GENERATION = "generation_failed"   # the model's endpoint did not answer
    EVALUATOR = "evaluator_failed"     # the evaluator model's endpoint did not answer
    UPSTREAM = "upstream_unscored"     # blocked by an earlier phase that has no score
    NOT_RUN = "not_run"                # not selected in this run (-m p4, -k runtime)


class RepairStatus(Word):
    """How much a cell's spec needed repairing, as the original's board counts it (``error``:
    ours, the benchmark could not finish the repair)."""

    NONE = "none"
    MINOR = "minor"
    MODERATE = "moderate"
    HEAVY = "heavy"
    UNREPAIRABLE = "unrepairable"
    ERROR = "error"

    @property
    def repaired(self) -> bool:
        """Whether a repair made the spec usable (so the repaired spec has phases of its own)."""
        return self in (RepairStatus.MINOR, RepairStatus.MODERATE, RepairStatus.HEAVY)


_DEFAULT_CAUSE = {Status.ERROR: Cause.HARNESS, Status.SKIPPED: Cause.NO_SPEC, Status.BLOCKED: Cause.UPSTREAM}


def default_cause(status: Status | str) -> Cause:
    """Why an outcome without a score has none, when nothing said so: read from its status (a
    record written before causes were recorded has only that)."""
    try:
        return _DEFAULT_CAUSE.get(Status(status), Cause.HARNESS)
    except ValueError:
        return Cause.HARNESS


@dataclass(frozen=True)
class PhaseResult:
    phase: str
    status: Status
    score: float | None
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    #: Only for an outcome without a score (the benchmark's): why it has none.
    cause: Cause | None = None

    def __post_init__(self) -> None:
        if self.score is not None:
            object.__setattr__(self, "cause", None)
        elif self.cause is None:
            object.__setattr__(self, "cause", default_cause(self.status))
        else:
            object.__setattr__(self, "cause", Cause(self.cause))
        if len(self.reason) > REASON_LIMIT:
            cut = self.reason[:REASON_LIMIT]
            object.__setattr__(self, "reason", f"{cut}... ({len(self.reason) - REASON_LIMIT} more characters)")
        if self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r}")
        if self.score is not None and not (0.0 <= self.score <= 1.0 and math.isfinite(self.score)):
            raise ValueError(f"score {self.score!r} out of [0, 1]")

    @property
    def charged_to(self) -> Charge:
        return Charge.BENCHMARK if self.score is None else Charge.SPEC

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
        data["cause"] = self.cause.value if self.cause else None
        data["charged_to"] = self.charged_to.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseResult:
        return cls(
            phase=str(data["phase"]),
            status=Status(data["status"]),
            score=None if data.get("score") is None else float(data["score"]),
            reason=str(data.get("reason", "")),
            details=dict(data.get("details") or {}),
            cause=Cause(data["cause"]) if data.get("cause") else None,
        )


def blocked(phase: str, by: PhaseResult) -> PhaseResult:
    """Blocked by the spec's own failure scores 0; blocked by a phase with no score has none either."""
    score = 0.0 if by.score is not None else None
    return PhaseResult(phase, Status.BLOCKED, score, f"blocked by {by.phase}: {by.reason or by.status.value}",
                       cause=None if score is not None else Cause.UPSTREAM)


def gate(phase: str, earlier: Iterable[PhaseResult]) -> PhaseResult | None:
    """P1 < 1 blocks P2-P4; a failed runtime check or zero coverage blocks P3-P4."""
    for result in earlier:
        if PHASES.index(result.phase) < PHASES.index(phase) and phase_of(result.phase).gates_later:
            if not result.usable:
                return blocked(phase, result)
    return None


def composite(results: Mapping[str, PhaseResult | None]) -> float | None:
    """0.15 P1 + 0.15 P2 + 0.35 P3 + 0.35 P4; unknown (None) when a phase did not run or has no
    score: a phase without a score is the benchmark's doing, and counting it as 0 would charge
    the spec for it."""
    total = 0.0
    for phase, weight in WEIGHTS.items():
        result = results.get(phase)
        if result is None or result.score is None:
            return None
        total += weight * result.score
    return round(total, 6)


def repaired_composite(strict: Mapping[str, PhaseResult | None],
                       repaired: Mapping[str, PhaseResult | None] | None) -> float | None:
    """The original's repaired composite, beside the strict one and never merged with it: P1 and
    P2 of the spec as written (repairing them would make every cell 1.0 there and erase the
    signal), P3 and P4 of its repaired version when a repair made it usable, else of the spec as
    written (usable already, or unrepairable and so blocked at 0).  A phase without a score
    leaves it unknown, as it does the strict composite."""
    later = repaired if repaired is not None else strict
    return composite({p: (later if p in REPAIRED_PHASES else strict).get(p) for p in PHASES})


@dataclass(frozen=True)
class TemplateVerdict:
    """What P4's score needs to know of one template: did it hold, and does it define the system."""

    held: bool
    defines: bool = False


def template_weight(verdicts: Sequence[TemplateVerdict], verdict: TemplateVerdict) -> int:
    """A defining template weighs one more than all the other templates together."""
    return 1 + sum(1 for v in verdicts if not v.defines) if verdict.defines else 1


def template_score(verdicts: Sequence[TemplateVerdict]) -> float | None:
    """P4: the weighted share of templates that hold.  A defining property (mutual exclusion,
    election safety, ...) weighs more than all the others together, so a spec that breaks one
    ranks below every spec that keeps them all: a lock that lets two threads in is worse than a
    lock that forgot its fairness, whatever the count of templates says.  With no defining
    template this is the original benchmark's fraction of templates held."""
    if not verdicts:
        return None
    weights = [template_weight(verdicts, v) for v in verdicts]
    held = sum(w for w, v in zip(weights, verdicts) if v.held)
    return round(held / sum(weights), 6)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimator 1 - C(n-c, k) / C(n, k) (Chen et al. 2021)."""
    if not (0 <= c <= n) or k < 1 or k > n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k estimator C(c, k) / C(n, k): the chance that k samples drawn from the n
    all pass (how reliably a model passes, where pass@k says whether it can)."""
    if not (0 <= c <= n) or k < 1 or k > n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    return math.comb(c, k) / math.comb(n, k)


def gate_verdict(results: Sequence[PhaseResult]) -> dict[str, Any]:
    """What a check tool (an agent's, and ``sysmobench check``) prints of P1 and P2: whether
    both passed, and each phase's score, status and reason as the board has them."""
    return {"passed": len(results) == 2 and all(r.score == 1.0 for r in results),
            "phases": {r.phase: {"score": r.score, "status": r.status.value, "reason": r.reason} for r in results}}
