"""End to end: a real pytest session over a copy of the benchmark, through pytester.

Each test runs pytest in a subprocess, in its own folder, with the real SANY and TLC.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_sysmobench.settings import CACHE_ENV

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(ROOT / "tasks" / "spin", pytester.path / "tasks" / "spin")
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    pytester.makeini("[pytest]\njunit_family = xunit1\n")
    return pytester


def _board(path: Path) -> dict[str, Any]:
    return json.loads((path / ".sysmobench" / "leaderboard.json").read_text())


def _comparable(board: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in board.items() if k not in ("generated", "run_id", "tool_runs", "runs")}
    kept["cells"] = [{k: v for k, v in c.items() if k != "runs"} for c in board["cells"]]
    return kept


def test_reference_run_writes_the_leaderboard_and_caches(bench: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)  # its own cache, cold: the first run must run the tools
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, skipped=1)
    # No traces here: P3 is skipped, has no score, and the cell no composite (nothing stands in as 0).
    result.stdout.fnmatch_lines(["*SysMoBench leaderboard*", "spin*reference*1.00*1.00*skipped*1.00*-*"])
    board = _board(bench.path)
    assert board["schema"] == 2
    assert set(board["provenance"]) >= {"package_version", "jar_sha256", "java_version"}
    (cell,) = board["cells"]
    assert (cell["task"], cell["model"], cell["sample"], cell["composite"]) == ("spin", "reference", 0, None)
    assert cell["kind"] == "reference"  # said by the cell's source, kept through every merge
    assert cell["phases"]["conformance"] == {"score": None, "status": "skipped", "reason": "skipped: no traces for task spin",
                                             "charged_to": "benchmark", "cause": "no_traces"}
    assert board["models"][0]["invariants"] == 1.0 and board["models"][0]["conformance"] is None
    assert board["models"][0]["unscored"] == 1
    result.stdout.fnmatch_lines(["reference: 0 scored, 1 left out (no_traces)", "not scored, and what to do:",
                                 "  spin x reference#0: P3 no_traces: skipped: no traces for task spin; to score it: "
                                 "capture them (sysmobench traces capture spin) or point --sysmobench-traces at a "
                                 "folder that has spin/*.ndjson"])
    assert (bench.path / ".sysmobench" / "leaderboard.csv").read_text().startswith("task,model,sample,")
    run_dir = bench.path / ".sysmobench" / "runs" / board["run_id"]
    cell_dir = run_dir / "spin" / "reference" / "s0"
    assert (cell_dir / "Spin.tla").is_file() and (cell_dir / "Spin.cfg").is_file()
    stored = json.loads((cell_dir / "result.json").read_text())
    assert stored["phases"]["invariants"]["details"]["passed"] == stored["phases"]["invariants"]["details"]["total"]
    assert list(cell_dir.glob("invariants/*/Spin_SysmoCheck.tlc.log"))
    assert board["tool_runs"]["tlc"] > 0

    again = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider")
    again.assert_outcomes(passed=3, skipped=1)
    again.stdout.fnmatch_lines(["tool runs: 0 SANY, 0 TLC; * answered from cache"])
    assert _comparable(_board(bench.path)) == _comparable(board)


def test_parallel_run_gives_the_same_leaderboard(bench: pytest.Pytester) -> None:
    bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-no-cache").assert_outcomes(
        passed=3, skipped=1
    )
    serial = _board(bench.path)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-no-cache", "-n", "2", "-v")
    result.assert_outcomes(passed=3, skipped=1)
    assert _comparable(_board(bench.path)) == _comparable(serial)
    workers = {line.split("]")[0] for line in result.outlines if line.startswith("[gw") and "test_phase[" in line}
    assert len(workers) == 1, "all phases of a cell must run on one worker"


def test_selection_by_keyword_and_marker(bench: pytest.Pytester) -> None:
    bench.runpytest_subprocess("benchmarks", "-m", "p4", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    result = bench.runpytest_subprocess("benchmarks", "-k", "spin and runtime", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_phase?spin-reference-runtime? PASSED*"])
    bench.runpytest_subprocess("benchmarks", "-k", "nosuchtask", "-p", "no:cacheprovider").assert_outcomes()


def _replay(bench: pytest.Pytester, spec: str, cfg: str | None = None) -> Path:
    folder = bench.path / "specs" / "spin"
    folder.mkdir(parents=True)
    (folder / "Spin.tla").write_text(spec)
    if cfg is not None:
        (folder / "Spin.cfg").write_text(cfg)
    return folder.parent


def test_replayed_broken_spec_fails_with_the_counterexample_in_junit(bench: pytest.Pytester) -> None:
    reference = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    broken = reference.replace("    /\\ pc[t] = \"spin\"\n    /\\ lock = FALSE\n", "    /\\ pc[t] = \"spin\"\n")
    assert broken != reference
    cfg = (ROOT / "tasks" / "spin" / "reference" / "Spin.cfg").read_text() + "INVARIANT TypeOK\n"
    _replay(bench, broken, cfg)
    (bench.path / "specs" / "spin" / "mapping.yaml").write_text(
        (ROOT / "tasks" / "spin" / "reference" / "mapping.yaml").read_text()
    )
    result = bench.runpytest_subprocess(
        "benchmarks", "--sysmobench-models", "replay:specs", "--junitxml=out.xml", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*invariants score 0.* (failed): *MutualExclusion violated*"])
    tree = ET.parse(bench.path / "out.xml")
    case = next(c for c in tree.iter("testcase") if c.get("name", "").endswith("invariants]"))
    failure = case.find("failure")
    assert failure is not None and "MutualExclusion" in (failure.get("message") or "")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["sysmobench.status"] == "failed"
    assert 0.0 < float(props["sysmobench.score"]) < 1.0
    board = _board(bench.path)
    assert board["cells"][0]["model"] == "replay:specs"


@pytest.mark.parametrize(
    "models, message",
    [
        ("replay:empty", "holds no spec for any task (expected one of spin/Spin.tla)"),
        ("replay:nowhere", "is not a directory"),
        ("bogus:gpt", "unknown model 'bogus:gpt'"),
        ("mutant:no-such", "no task has a mutant 'no-such'"),
        ("mutant:acquire-ignores-lck", "no task has a mutant 'acquire-ignores-lck' (did you mean 'acquire-ignores-lock'?)"),
        ("replya:specs", "(did you mean replay:specs? known:"),
        ("gpt-9000", "litellm cannot route model id 'gpt-9000'"),
        ("refrence", "did you mean the built-in source 'reference'?"),
        ("replay:a/specs,replay:b/specs", "two spec sources would share the label 'replay:specs'"),
    ],
)
def test_a_typo_in_what_to_score_is_a_usage_error(bench: pytest.Pytester, models: str, message: str) -> None:
    """Nothing is skipped or errored item by item: the session stops at once with exit code 4."""
    (bench.path / "empty").mkdir()
    for side in ("a", "b"):
        _replay_into(bench.path / side / "specs")
    result = bench.runpytest_subprocess("benchmarks", "--sysmobench-models", models, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str(), result.stderr.str()
    assert not (bench.path / ".sysmobench" / "leaderboard.json").exists()


def test_replay_with_specs_for_some_tasks_skips_the_others(bench: pytest.Pytester) -> None:
    shutil.copytree(ROOT / "tasks" / "mutex", bench.path / "tasks" / "mutex")
    _replay_into(bench.path / "specs")
    result = bench.runpytest_subprocess("benchmarks", "--sysmobench-models", "replay:specs", "-p", "no:cacheprovider",
                                        "-rs", "-k", "mutex or syntax")
    result.stdout.fnmatch_lines(["*no spec for task mutex*"])
    assert result.ret == pytest.ExitCode.OK


def _replay_into(folder: Path) -> None:
    (folder / "spin").mkdir(parents=True)
    for name in ("Spin.tla", "Spin.cfg", "mapping.yaml"):
        shutil.copy(ROOT / "tasks" / "spin" / "reference" / name, folder / "spin" / name)


def test_broken_task_file_is_reported_and_the_session_goes_on(bench: pytest.Pytester) -> None:
    broken = bench.path / "tasks" / "broken"
    broken.mkdir()
    (broken / "task.yaml").write_text("name: broken\nmodule: 42x\n")
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, skipped=1, errors=4)
    result.stdout.fnmatch_lines(["*tasks/broken/task.yaml*missing required field*"])
    board = _board(bench.path)
    statuses = {(c["task"], p["status"]) for c in board["cells"] for p in c["phases"].values()}
    assert ("broken", "error") in statuses


def test_a_task_unavailable_offline_is_listed_and_its_items_skip_with_the_reason(bench: pytest.Pytester) -> None:
    shutil.copytree(ROOT / "tasks" / "curp", bench.path / "tasks" / "curp")
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=3, skipped=5)
    # At the phase item's test, not at a line of the plugin.
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] benchmarks/test_sysmobench.py:*: invariants score - (skipped): "
                                 "not scored (system_unavailable, the benchmark's, out of the means): unavailable "
                                 "offline: No implementation of CURP*"])
    assert "plugin.py" not in result.stdout.str()
    board = _board(bench.path)
    (curp,) = [c for c in board["cells"] if c["task"] == "curp"]
    assert curp["composite"] is None
    assert {p["status"] for p in curp["phases"].values()} == {"skipped"}
    assert all(p["score"] is None and "unavailable offline" in p["reason"] for p in curp["phases"].values())
    listing = subprocess.run([sys.executable, "-m", "pytest_sysmobench.cli", "tasks", "--tasks", str(bench.path / "tasks")],
                             capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0
    assert "curp         unavailable offline" in listing.stdout and "upstream: Xline CURP" in listing.stdout


def test_missing_jar_is_a_harness_error_not_a_failure(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(
        "benchmarks", "--sysmobench-jar", str(bench.path / "nope.jar"), "-p", "no:cacheprovider", "-m", "p1"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*HarnessError*nope.jar*"])


def test_an_interrupted_run_keeps_the_last_complete_leaderboard(bench: pytest.Pytester) -> None:
    bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider").assert_outcomes(passed=3, skipped=1)
    complete = _board(bench.path)
    bench.makeconftest("""
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logreport(report):
            if report.when == "call" and "syntax" in report.nodeid:
                raise KeyboardInterrupt
    """)
    interrupted = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider")
    assert interrupted.ret == pytest.ExitCode.INTERRUPTED
    assert _board(bench.path) == complete, "the complete board was overwritten by a partial one"
    partial = [json.loads(p.read_text()) for p in (bench.path / ".sysmobench" / "runs").glob("*/leaderboard.json")]
    marked = [b for b in partial if b.get("interrupted")]
    assert len(marked) == 1 and len(marked[0]["cells"]) == 1
    assert set(marked[0]["cells"][0]["phases"]) == {"syntax"}


def test_an_unwritable_output_folder_records_errors_and_still_writes_the_leaderboard(bench: pytest.Pytester) -> None:
    """The output path runs through a regular file: every write there fails with an OSError."""
    (bench.path / "blocker").write_text("not a folder")
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider",
                                        "--sysmobench-output", str(bench.path / "blocker" / "out"))
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) + outcomes.get("error", 0) >= 1 and "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*harness error*", "*could not write the leaderboard to*wrote it to*"])
    line = next(x for x in result.outlines if "could not write the leaderboard" in x)
    fallback = Path(line.rsplit("wrote it to ", 1)[1].strip())
    board = json.loads((fallback / "leaderboard.json").read_text())
    assert {c["task"] for c in board["cells"]} == {"spin"}
    statuses = {p["status"] for c in board["cells"] for p in c["phases"].values()}
    assert "error" in statuses
    shutil.rmtree(fallback, ignore_errors=True)


def test_a_partial_run_updates_only_its_rows_of_the_leaderboard(bench: pytest.Pytester) -> None:
    """-k/-m runs keep their own board in their run folder; the top-level board merges the latest
    result of every cell phase, and a phase that did not run is null, never 0."""
    traces = bench.path / "data" / "traces" / "spin"
    traces.mkdir(parents=True)
    shutil.copy(ROOT / "data" / "traces" / "spin" / "seed-1.ndjson", traces)
    bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider").assert_outcomes(passed=4)
    full = _board(bench.path)
    partial = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-m", "p4")
    partial.assert_outcomes(passed=1)
    partial.stdout.fnmatch_lines(["spin*reference*-*-*-*1.00*-*"])
    merged = _board(bench.path)
    (cell,) = merged["cells"]
    assert set(cell["phases"]) == {"syntax", "runtime", "conformance", "invariants"}
    assert cell["composite"] == full["cells"][0]["composite"] == 1.0
    assert merged["run_id"] != full["run_id"]
    assert cell["runs"] == merged["runs"] == sorted([full["run_id"], merged["run_id"]])
    own = json.loads((bench.path / ".sysmobench" / "runs" / merged["run_id"] / "leaderboard.json").read_text())
    (only,) = own["cells"]
    assert set(only["phases"]) == {"invariants"} and only["composite"] is None
    assert own["models"][0]["composite"] is None and own["models"][0]["invariants"] == 1.0
    assert own["models"][0]["syntax"] is None


def test_a_k_expression_that_selects_nothing_names_the_tasks(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-k", "spni")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["sysmobench: -k 'spni' selects no phase item (tasks here: spin); 'spni': did you mean 'spin'?"])
