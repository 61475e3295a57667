"""Verdicts are bounded by work, not by the machine's speed.

P2's BFS stops at the task's depth, state and generated-state bounds, its simulations at traces
x depth, each P3 check at its generated-state bound; seconds are only a safety net for what no work bound can stop, charged to the spec.  Here the same spec is scored at
full speed and in a JVM slowed to its interpreter (``-Xint``, several times slower): the
verdict, its reason and the states explored must be the same.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from pytest_sysmobench import load_task
from pytest_sysmobench.sources import ReplaySource
from pytest_sysmobench.scoring import PhaseResult, Status
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.tla.driver import JVM_FLAGS_ENV

ROOT = Path(__file__).resolve().parents[1]
SPIN = ROOT / "tasks" / "spin"


def _deep_bug(directory: Path, acquisitions: int) -> Path:
    """Spin's reference with a count of acquisitions; the Unlock after the ``acquisitions``-th
    one chooses from the empty set (an evaluation error about 2 x ``acquisitions`` steps deep)."""
    spec = (SPIN / "reference" / "Spin.tla").read_text()
    spec = spec.replace("VARIABLES\n", "VARIABLES\n    taken,      \\* acquisitions so far\n", 1)
    spec = spec.replace("vars == <<lock, pc, callType>>", "vars == <<lock, pc, callType, taken>>")
    spec = spec.replace("Init ==\n", "Init ==\n    /\\ taken = 0\n", 1)
    spec = spec.replace("    /\\ lock' = TRUE\n", "    /\\ lock' = TRUE\n    /\\ taken' = taken + 1\n")
    spec = spec.replace("    /\\ lock' = FALSE\n",
                        f"    /\\ lock' = IF taken = {acquisitions} THEN CHOOSE b \\in {{}} : b ELSE FALSE\n"
                        "    /\\ UNCHANGED taken\n")
    spec = spec.replace("    /\\ UNCHANGED lock\n", "    /\\ UNCHANGED <<lock, taken>>\n")
    folder = directory / "spin"
    folder.mkdir(parents=True)
    (folder / "Spin.tla").write_text(spec)
    shutil.copy(SPIN / "reference" / "Spin.cfg", folder)
    return directory


def _runtime(out: Path, replay: Path, flags: str, monkeypatch: pytest.MonkeyPatch) -> tuple[PhaseResult, str]:
    task = load_task(SPIN)
    # A safety net far above what even the interpreter needs: it must never be what decides.
    task = dataclasses.replace(task, runtime=dataclasses.replace(task.runtime, budget_s=600.0))
    monkeypatch.setenv(JVM_FLAGS_ENV, flags)
    with Scorer(out, use_cache=False) as scorer:
        cell = scorer.cell(task, ReplaySource(replay), traces_dir=out / "no-traces")
        result = cell.result("runtime")
        pid = scorer.toolchain().runner.driver_pid
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0") if pid else []
    return result, " ".join(command)


@pytest.mark.parametrize("acquisitions, expected", [(6, Status.FAILED), (40, Status.PASSED)],
                         ids=["bug-within-the-bounds", "bug-past-the-bounds"])
def test_a_deep_bug_gets_the_same_verdict_in_a_slowed_jvm(acquisitions: int, expected: Status, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    replay = _deep_bug(tmp_path / "specs", acquisitions)
    fast, fast_jvm = _runtime(tmp_path / "fast", replay, "", monkeypatch)
    slow, slow_jvm = _runtime(tmp_path / "slow", replay, "-Xint", monkeypatch)
    assert "-Xint" in slow_jvm.split() and "-Xint" not in fast_jvm.split()
    assert fast.status is expected, fast.reason
    assert (slow.status, slow.score, slow.reason) == (fast.status, fast.score, fast.reason)
    assert slow.details["distinct_states"] == fast.details["distinct_states"]
    if expected is Status.FAILED:
        assert "runtime check failed" in fast.reason and "Unlock" in str(fast.details.get("erroneous"))


def test_a_run_only_the_safety_net_stops_is_charged_to_the_spec(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With work bounds far past what the interpreter reaches in 1 s, the safety net in seconds
    is what stops the BFS: a known-good check right after passes, so it is the spec's doing,
    scored 0 with the reason, never left without a score."""
    task = load_task(SPIN)
    bounded = dataclasses.replace(task.runtime, budget_s=1.0, bfs_depth=200, bfs_states=1_000_000,
                                  bfs_generated=100_000_000)
    task = dataclasses.replace(task, runtime=bounded)
    replay = _deep_bug(tmp_path / "specs", 90)
    monkeypatch.setenv(JVM_FLAGS_ENV, "-Xint")
    with Scorer(tmp_path / "out", use_cache=False) as scorer:
        result = scorer.cell(task, ReplaySource(replay), traces_dir=tmp_path / "none").result("runtime")
    assert result.status is Status.FAILED and result.score == 0.0, result.reason
    assert "1 s safety net" in result.reason and "charged to the spec" in result.reason


def test_p3_windows_the_safety_net_cuts_off_fail_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of windows whose TLC run the safety net stopped before it reported them (here:
    spin's real runs, each read back as stopped with nothing reported, as a slow machine would
    leave them): the windows not accepted fail, charged to the spec with the reason."""
    from pytest_sysmobench.sources import ReferenceSource
    from pytest_sysmobench.phases import conformance
    from pytest_sysmobench.tla.messages import Verdict

    real = conformance.run_check

    def stopped_early(ctx, job, *args, **kwargs):  # noqa: ANN001, ANN202
        result = real(ctx, job, *args, **kwargs)
        if job.startswith("windows"):  # the run of every action together, and each alone
            return dataclasses.replace(result, verdict=Verdict.INCOMPLETE, print_lines=[])
        return result

    monkeypatch.setattr(conformance, "run_check", stopped_early)
    with Scorer(tmp_path / "out", use_cache=False) as scorer:
        cell = scorer.cell(load_task(SPIN), ReferenceSource(), traces_dir=ROOT / "data" / "traces")
        result = cell.result("conformance")
    assert result.status is Status.FAILED and result.score == 0.0, result.reason
    assert "safety net" in result.reason and "charged to the spec" in result.reason


def test_p3_windows_past_the_work_bound_fail_the_same_way_in_a_slowed_jvm(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A P3 check ends at the task's bound on generated states, whatever the machine's speed:
    with a bound of 40, spin's reference shows only the windows reached first, and exactly
    those, at full speed and in the interpreter; the rest fail, charged to the spec."""
    from pytest_sysmobench.sources import ReferenceSource

    task = load_task(SPIN)
    task = dataclasses.replace(task, conformance=dataclasses.replace(task.conformance, generated=40))
    verdicts = []
    for flags in ("", "-Xint"):
        monkeypatch.setenv(JVM_FLAGS_ENV, flags)
        with Scorer(tmp_path / f"out{len(verdicts)}", use_cache=False) as scorer:
            result = scorer.cell(task, ReferenceSource(), traces_dir=ROOT / "data" / "traces").result("conformance")
        verdicts.append(({a: d["passed"] for a, d in result.details["actions"].items()}, result.score))
        windows = sum(d["windows"] for d in result.details["actions"].values())
        assert result.status is Status.FAILED, result.reason
        assert "within the work bound of 40 generated states" in result.reason and "charged to the spec" in result.reason
    assert verdicts[0] == verdicts[1]
    assert 0 < sum(verdicts[0][0].values()) < windows


def test_a_ring_whose_producer_never_stops_is_bounded_by_the_task_not_by_seconds(tmp_path: Path) -> None:
    """Ringbuffer's constraint bounds every spec's search to the run's N items, as the spec's own
    cfg CONSTRAINT would (which P4 removes: a constraint of the spec's can hide a bug): a producer
    without its bound is charged for the item past N (TypeOK), and no template is left to the
    safety net in seconds."""
    ring = load_task(ROOT / "tasks" / "ringbuffer")
    folder = tmp_path / "specs" / "ringbuffer"
    folder.mkdir(parents=True)
    spec = ring.reference_spec.read_text()
    assert spec.count("Push ==\n    /\\ sent < N\n") == 1
    (folder / ring.reference_spec.name).write_text(spec.replace("Push ==\n    /\\ sent < N\n", "Push ==\n", 1).replace(
        "    /\\ slot \\in [0..(Size - 1) -> 0..N]", "    /\\ slot \\in [0..(Size - 1) -> Nat]"))
    for path in (ring.reference_cfg, ring.reference_mapping):
        assert path is not None
        shutil.copy(path, folder)
    with Scorer(tmp_path / "out", use_cache=False) as scorer:
        result = scorer.cell(ring, ReplaySource(tmp_path / "specs"), traces_dir=ROOT / "data" / "traces").result("invariants")
    templates = {t["name"]: t for t in result.details.get("templates", [])}
    assert templates, result.reason
    assert templates["TypeOK"]["status"] == "failed", templates["TypeOK"]["reason"]
    assert not any("safety net" in t["reason"] or "work bound" in t["reason"] for t in templates.values()), templates
