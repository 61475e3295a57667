"""Re-capture traces from the real code, and score the reference on the fresh traces.

Needs the task's harness toolchain (cargo and the Debian crate sources, Go, a JDK with ZooKeeper
and Byteman): marked ``toolchain``
so it can be deselected with ``-m "not toolchain"``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_sysmobench import Status, Task, load_tasks
from pytest_sysmobench.sources import MutantSource, ReferenceSource
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.traces import load_corpus

from fresh_traces import capture_fresh, fresh_traces_root

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.toolchain


TASKS = [t for t in load_tasks(ROOT / "tasks").tasks if t.harness is not None]


@pytest.fixture(scope="module", params=TASKS, ids=lambda t: t.name)
def fresh(request: pytest.FixtureRequest, shared_verdicts: Path) -> tuple[Task, Path]:
    """Traces captured once per test run from the real code (conftest's ``capture_fresh``): the
    two tests that read them may run on two xdist workers, and the capture may have been made
    ahead of both."""
    task: Task = request.param
    root = fresh_traces_root(shared_verdicts)
    done = capture_fresh(root, task.name)
    assert done is None or done.returncode == 0, done.stderr
    assert "seed-101.ndjson" in (root / f"{task.name}.captured").read_text()
    return task, root / task.name


def test_capture_writes_valid_traces_with_every_action(fresh: tuple[Task, Path]) -> None:
    task, out = fresh
    corpus = load_corpus(out / task.name, task)
    assert corpus.errors == ()
    assert [t.name for t in corpus.traces] == ["seed-101.ndjson", "seed-102.ndjson"]
    for trace in corpus.traces:
        shown = {a for a, _ in trace.events}
        assert set(task.target_actions) <= shown <= {a.name for a in task.vocabulary.actions}
        assert trace.meta["task"] == task.name and trace.meta["seed"] in (101, 102)
    assert not list((out / task.name).glob(".*partial"))


def test_reference_conforms_to_fresh_traces_and_conformance_mutants_do_not(fresh: tuple[Task, Path], tmp_path: Path) -> None:
    task, out = fresh
    with Scorer(tmp_path, traces_dir=out) as scorer:
        reference = scorer.cell(task, ReferenceSource()).result("conformance")
        assert reference.status is Status.PASSED, reference.reason
        assert reference.details["window_pass_rate"] == 1.0
        assert all(t["accepted"] for t in reference.details["traces"])
        # Every conformance mutant fails on the committed traces (test_mutants); a fresh sample
        # may by chance lack the situation one of them needs, but it must expose most of them.
        mutants = [m.name for m in task.mutants if m.phase == "conformance"]
        caught = [m for m in mutants if scorer.cell(task, MutantSource(m)).result("conformance").status is Status.FAILED]
        assert mutants and len(caught) >= len(mutants) - 1, (mutants, caught)


def test_capture_without_cargo_says_what_to_install(tmp_path: Path) -> None:
    python = shutil.which("python3") or sys.executable
    env = {"PATH": str(Path(python).parent), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_sysmobench.cli", "traces", "capture", "spin", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 1
    assert "'cargo' is not installed" in done.stderr


RUST_CRATES = sorted(p.parent for p in (ROOT / "tasks").glob("*/*/Cargo.toml") if "target" not in p.parts)


@pytest.mark.parametrize("crate", RUST_CRATES, ids=lambda p: p.relative_to(ROOT / "tasks").as_posix())
def test_the_rust_harnesses_own_tests_pass(crate: Path) -> None:
    """The shared linearizer and each task's canonical semantics have unit tests of their own."""
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    done = subprocess.run([cargo, "test", "--release", "--offline"], cwd=crate, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = [int(n) for n in re.findall(r"test result: ok\. (\d+) passed", done.stdout)]
    assert ran and ran[0] > 0, done.stdout[-3000:]
