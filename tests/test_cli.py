"""The sysmobench command: doctor really runs a check; tasks lists what is there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_sysmobench.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


def test_doctor_names_java_jar_modules_and_runs_a_check() -> None:
    done = _run("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "58c6df9a1045beb341ee947bc640fe8d89988ad1d0b700e392aa8dd97502129a" in out
    assert "jar version" in out and "2020-01-30" in out
    for module in ("SequencesExt", "FiniteSetsExt", "Functions"):
        assert module in out
    assert "SANY check         ok" in out and "TLC check          ok" in out


def test_doctor_without_java_says_what_to_install(tmp_path: Path) -> None:
    done = _run("doctor", env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 2
    assert "no 'java' on PATH" in done.stdout


def test_doctor_with_a_missing_jar(tmp_path: Path) -> None:
    import os

    done = _run("doctor", env={**os.environ, "TLA2TOOLS_JAR": str(tmp_path / "none.jar")})
    assert done.returncode == 2 and "does not exist" in done.stdout


def test_tasks_lists_each_task_with_its_source() -> None:
    done = _run("tasks")
    assert done.returncode == 0, done.stdout
    assert "spin" in done.stdout and "librust-spin-dev" in done.stdout and "Asterinas" in done.stdout


def test_templates_says_what_p4_checks_and_what_counts() -> None:
    done = _run("templates", "mutex")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "MutualExclusion (safety, defining)" in out and "TypeOK (safety, defining, ours)" in out
    assert "EventualRelease (liveness)" in out
    assert 'counts only if some explored state has: \\E t \\in Threads : request[t] = "try"' in out
    missing = _run("templates", "mutx")
    assert missing.returncode == 4 and "mutx" in missing.stderr
