"""A benchmark project laid out for a pytester session: tasks, their traces and the benchmark's
test file, as a user's checkout has them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def benchmark_project(pytester: pytest.Pytester, *tasks: str) -> Path:
    """``tasks/<task>`` and ``data/traces/<task>`` of each task, and ``benchmarks/``; the project's root."""
    for task in tasks:
        shutil.copytree(ROOT / "tasks" / task, pytester.path / "tasks" / task)
        shutil.copytree(ROOT / "data" / "traces" / task, pytester.path / "data" / "traces" / task)
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    return pytester.path
