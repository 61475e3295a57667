"""The sysmobench command: doctor really runs a check; tasks lists what is there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def test_doctor_names_java_and_the_jar_once() -> None:
    out = _run("doctor").stdout
    labels = [line[2:20].strip() for line in out.splitlines()[1:]]
    assert labels.count("java") == labels.count("javac") == labels.count("jar") == 1, out


def test_tasks_has_a_header_and_aligned_columns() -> None:
    lines = _run("tasks").stdout.splitlines()
    header = lines[0]
    assert header.split()[:6] == ["task", "kind", "lang", "module", "templates", "mutants"]
    title = header.index("title")
    rows = [line for line in lines[1:] if line and not line.startswith(" ") and "unavailable" not in line]
    assert rows and all(line[title - 2:title] == "  " and line[title] != " " for line in rows), lines[:6]


def test_help_names_every_command_in_plain_words() -> None:
    out = _run("--help").stdout
    for command in ("doctor", "tasks", "templates", "prompt", "repair", "check", "traces", "leaderboard"):
        assert f"({command})" in out
    assert "``" not in out


def test_a_missing_leaderboard_is_named_as_missing(tmp_path: Path) -> None:
    done = _run("leaderboard", "html", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "nowhere does not exist" in done.stderr and "not a leaderboard" not in done.stderr
    empty = _run("leaderboard", "html", str(tmp_path))
    assert empty.returncode == 2 and "has no leaderboard.json" in empty.stderr


def test_output_into_a_closed_pipe_ends_quietly() -> None:
    """``sysmobench tasks | head -1``: no BrokenPipeError traceback."""
    done = subprocess.run(f"{sys.executable} -m pytest_sysmobench.cli templates etcd | head -1", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.startswith("P4 templates of etcd") and "Traceback" not in done.stderr, done.stderr


def test_a_misspelt_task_gets_close_matches_and_tasks_are_found_from_a_subfolder() -> None:
    missing = _run("prompt", "spni")
    assert missing.returncode == 4 and "has no task 'spni' (did you mean 'spin'?)" in missing.stderr
    below = subprocess.run([sys.executable, "-m", "pytest_sysmobench.cli", "templates", "spin"], cwd=ROOT / "data",
                           capture_output=True, text=True, timeout=300)
    assert below.returncode == 0 and below.stdout.startswith("P4 templates of spin"), below.stderr


def test_the_commands_docstring_names_every_command_group(capsys: pytest.CaptureFixture[str]) -> None:
    """What ``sysmobench --help`` offers and what the module says it offers are the same list."""
    import pytest_sysmobench.cli as cli

    with pytest.raises(SystemExit):
        cli.main(["--help"])
    groups = set(capsys.readouterr().out.split("{", 1)[1].split("}", 1)[0].split(","))
    assert groups >= {"doctor", "tasks", "templates", "prompt", "repair", "check", "traces", "leaderboard", "cache"}
    for group in groups:
        assert f"``{group}``" in (cli.__doc__ or ""), group
