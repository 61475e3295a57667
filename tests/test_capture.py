"""Re-capture traces from the real code, and score the reference on the fresh traces.

Needs the task's harness toolchain (cargo and the Debian crate sources): marked ``toolchain``
so it can be deselected with ``-m "not toolchain"``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_sysmobench import Status, load_task
from pytest_sysmobench.models import MutantSource, ReferenceSource
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.traces import load_corpus

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.toolchain


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("traces")
    done = subprocess.run(
        [sys.executable, "-m", "pytest_sysmobench.cli", "traces", "capture", "spin", "--seed", "101", "--runs", "2",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert "seed-101.ndjson" in done.stdout and "TryLockFail" in done.stdout
    return out


def test_capture_writes_valid_traces_with_every_action(fresh: Path) -> None:
    task = load_task(ROOT / "tasks" / "spin")
    corpus = load_corpus(fresh / "spin", task)
    assert corpus.errors == ()
    assert [t.name for t in corpus.traces] == ["seed-101.ndjson", "seed-102.ndjson"]
    for trace in corpus.traces:
        assert {a for a, _ in trace.events} == set(task.target_actions)
        assert trace.meta["task"] == "spin" and trace.meta["seed"] in (101, 102)
    assert not list((fresh / "spin").glob(".*partial"))


def test_reference_conforms_to_fresh_traces_and_mutants_do_not(fresh: Path, tmp_path: Path) -> None:
    task = load_task(ROOT / "tasks" / "spin")
    with Scorer(tmp_path, use_cache=False, traces_dir=fresh) as scorer:
        reference = scorer.cell(task, ReferenceSource()).result("conformance")
        assert reference.status is Status.PASSED, reference.reason
        assert reference.details["window_pass_rate"] == 1.0
        assert all(t["accepted"] for t in reference.details["traces"])
        mutant = scorer.cell(task, MutantSource("trylock-records-lock-call")).result("conformance")
        assert mutant.status is Status.FAILED and "TryLock" in mutant.reason


def test_capture_without_cargo_says_what_to_install(tmp_path: Path) -> None:
    python = shutil.which("python3") or sys.executable
    env = {"PATH": str(Path(python).parent), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_sysmobench.cli", "traces", "capture", "spin", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 1
    assert "'cargo' is not installed" in done.stderr
