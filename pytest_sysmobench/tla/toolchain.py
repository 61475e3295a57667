"""The one door to SANY and TLC: files in, typed and cached results out.

Phases hand over the module texts they want checked; this writes them into a job folder
inside the cell's run directory (never anywhere else), runs the tool through the per-process
driver, classifies the output, and caches the raw run by content hash so that a re-run with
nothing changed performs no tool run at all.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..cache import Cache, atomic_write_text, digest
from .driver import DriverError, RawRun, ToolRunner
from .jar import Jar, Java
from .messages import UNFINISHED, TlcResult, Verdict, classify_tlc
from .sany import SanyResult, classify_sany

LIBRARY_DIR = Path(__file__).parent / "library"
#: Bump when the way a run is performed changes (flags added by the runner, driver protocol).
RUN_FORMAT = 1
#: A check whose result is known: when a spec's run is stopped by seconds, this runs right after
#: in the same runner, and only if it fails too is the stop the harness's fault.
CANARY_MODULE = "SysmoCanary"
CANARY_FILES = {
    f"{CANARY_MODULE}.tla": f"---- MODULE {CANARY_MODULE} ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n"
                             "Next == x < 3 /\\ x' = x + 1\n====\n",
    f"{CANARY_MODULE}.cfg": "INIT Init\nNEXT Next\n",
}
CANARY_TIMEOUT_S = 60.0
SAFE_FILE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def library_fingerprint() -> str:
    digest_ = hashlib.sha256()
    for path in sorted(LIBRARY_DIR.glob("*.tla")):
        digest_.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest_.hexdigest()


@dataclass(frozen=True)
class SanyRun:
    raw: RawRun
    result: SanyResult
    cached: bool


@dataclass(frozen=True)
class TlcRun:
    raw: RawRun
    result: TlcResult
    cached: bool


class CellBudgetSpent(Exception):
    """The cell's whole budget ran out: the work left is not done, and not charged to the spec."""


@dataclass
class CellBudget:
    """A safety net over one cell's wall time (task.yaml ``cell_budget_s``).  Verdicts are bounded
    by work; this only keeps a hostile or pathological spec from holding a worker for hours."""

    seconds: float
    deadline: float = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def limit(self, timeout_s: float) -> float:
        """The hard limit for the next run; raises once nothing is left."""
        remaining = self.remaining()
        if remaining <= 0:
            raise CellBudgetSpent(f"the cell budget of {self.seconds:g} s (task.yaml cell_budget_s) is spent")
        return min(timeout_s, remaining)


def _encode(raw: RawRun) -> dict[str, object]:
    return asdict(raw)


def _decode(data: Mapping[str, object]) -> RawRun:
    return RawRun(**data)  # type: ignore[arg-type]


def _check_filename(name: str) -> None:
    """Generated specs are untrusted: a file name must be a plain name, never a path."""
    if not name or set(name) - SAFE_FILE or name.startswith(".") or "/" in name:
        raise ValueError(f"refusing to write {name!r}: not a plain file name")


class Toolchain:
    def __init__(self, jar: Jar, java: Java, runner: ToolRunner, cache: Cache) -> None:
        self.jar = jar
        self.java = java
        self.runner = runner
        self.cache = cache
        self.library = library_fingerprint()
        self.runs = {"sany": 0, "tlc": 0}
        #: Results derived from several tool runs, kept for the rest of the process (by content key).
        self.memo: dict[str, object] = {}
        self._lock = threading.Lock()
        self.budget: CellBudget | None = None

    def bounded(self, budget: CellBudget) -> Toolchain:
        """The same toolchain (runner, cache, counters, memo) with every run held to one cell's budget."""
        view = copy.copy(self)
        view.budget = budget
        return view

    def _limit(self, timeout_s: float) -> float:
        return timeout_s if self.budget is None else self.budget.limit(timeout_s)

    def provenance(self) -> dict[str, str]:
        return {
            "jar_sha256": self.jar.sha256,
            "jar_version": self.jar.version,
            "java_version": self.java.version,
            "runner_mode": self.runner.mode,
            "library_sha256": self.library,
        }

    def _key(self, tool: str, files: Mapping[str, str], module: str, args: Sequence[str], extra: object) -> str:
        return digest(RUN_FORMAT, tool, sorted(files.items()), module, list(args), self.jar.sha256, self.library, extra)

    def _materialize(self, workdir: Path, files: Mapping[str, str]) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            _check_filename(name)
            atomic_write_text(workdir / name, text)

    def _run(
        self, tool: str, key: str, compute: Callable[[], RawRun], workdir: Path, log_name: str,
        command: Mapping[str, object], decided: Callable[[RawRun], bool] = lambda _: True,
    ) -> tuple[RawRun, bool]:
        hits_before = self.cache.stats.hits

        def counted() -> RawRun:
            with self._lock:
                self.runs[tool] = self.runs.get(tool, 0) + 1
            return compute()

        # Only a finished run is a fact about the spec.  A run that a time limit (or, says the
        # tool's ``decided``, its own stop-after) ended says as much about the machine's load as
        # about the spec, and a JVM that died says nothing about it: none is cached, so the next
        # run on an idle machine tries again.  A run stopped at the output limit is bounded by
        # bytes, not seconds: a fact, kept.
        def keep(raw: RawRun) -> bool:
            return raw.output_limited or (raw.exit_code is not None and decided(raw))

        raw = self.cache.get_or_compute(tool, key, counted, _encode, _decode, keep=keep)
        cached = self.cache.stats.hits > hits_before
        atomic_write_text(workdir / log_name, raw.output)
        # How to run this check again by hand, the way one JVM per check would (perf/bench.py does).
        record = {**command, "tool": tool, "log": log_name, "cached": cached, "elapsed_s": round(raw.elapsed_s, 3),
                  "exit_code": raw.exit_code, "timed_out": raw.timed_out}
        atomic_write_text(workdir / f"{log_name}.run.json", json.dumps(record, indent=1) + "\n")
        if raw.exit_code is None and not raw.timed_out and not raw.output_limited:
            raise DriverError(f"{tool} did not finish: {raw.detail or 'the JVM stopped without an exit status'} "
                              "(a harness fault, not the spec's)")
        return raw, cached

    def sany(self, workdir: Path, files: Mapping[str, str], module: str, timeout_s: float = 60.0) -> SanyRun:
        raw, cached = self._front_end("sany", workdir, files, module, timeout_s, self.runner.sany)
        return SanyRun(raw, classify_sany(raw.output), cached)

    def sany_xml(self, workdir: Path, files: Mapping[str, str], module: str, timeout_s: float = 60.0) -> RawRun:
        """SANY's semantic tree of a module as XML (``tla.tree`` reads it); cached like SANY."""
        raw, _ = self._front_end("xml", workdir, files, module, timeout_s, self.runner.sany_xml)
        return raw

    def _front_end(self, tool: str, workdir: Path, files: Mapping[str, str], module: str, timeout_s: float,
                   run: Callable[..., RawRun]) -> tuple[RawRun, bool]:
        """A run of SANY's front end (a parse, or its tree), cached by the files it reads."""
        limit = self._limit(timeout_s)
        self._materialize(workdir, files)
        key = self._key(tool, files, module, (), timeout_s)
        return self._run(tool, key, lambda: run(workdir, module, library_dirs=[LIBRARY_DIR], timeout_s=limit),
                         workdir, f"{module}.{tool}.log", {"module": module, "args": [], "timeout_s": limit})

    def harness_sound(self, workdir: Path) -> bool:
        """Whether the runner still checks a known-good spec correctly (never cached)."""
        self._materialize(workdir, CANARY_FILES)
        with self._lock:
            self.runs["tlc"] += 1
        raw = self.runner.tlc(workdir, CANARY_MODULE, ["-config", f"{CANARY_MODULE}.cfg", "-workers", "1", "-deadlock"],
                              library_dirs=[LIBRARY_DIR], timeout_s=CANARY_TIMEOUT_S)
        result = classify_tlc(raw.output, raw.exit_code, raw.timed_out, raw.output_limited)
        return result.verdict is Verdict.OK and result.distinct_states == 4

    def tlc(
        self,
        workdir: Path,
        files: Mapping[str, str],
        module: str,
        args: Sequence[str],
        *,
        timeout_s: float,
        stop_after_s: float | None = None,
        log_name: str | None = None,
        work_bound: Callable[[TlcResult], bool] | None = None,
    ) -> TlcRun:
        """``work_bound`` tells a run that its own work bound ended (a fact about the spec, cached)
        from one that seconds stopped (never cached)."""
        limit = self._limit(timeout_s)
        self._materialize(workdir, files)
        key = self._key("tlc", files, module, args, (stop_after_s, timeout_s))
        classified: dict[int, TlcResult] = {}

        def classify(raw: RawRun) -> TlcResult:
            if id(raw) not in classified:
                classified[id(raw)] = classify_tlc(raw.output, raw.exit_code, raw.timed_out, raw.output_limited)
            return classified[id(raw)]

        raw, cached = self._run(
            "tlc",
            key,
            lambda: self.runner.tlc(
                workdir, module, args, library_dirs=[LIBRARY_DIR], timeout_s=limit, stop_after_s=stop_after_s
            ),
            workdir,
            log_name or f"{module}.tlc.log",
            {"module": module, "args": list(args), "stop_after_s": stop_after_s, "timeout_s": limit},
            decided=lambda raw: classify(raw).verdict not in UNFINISHED
            or (work_bound is not None and work_bound(classify(raw))),
        )
        return TlcRun(raw, classify(raw), cached)

