"""A benchmark project laid out for a pytester session: tasks, their traces and the benchmark's
test file, as a user's checkout has them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from llm_server import LocalModelServer

ROOT = Path(__file__).resolve().parents[1]


def benchmark_project(pytester: pytest.Pytester, *tasks: str) -> Path:
    """``tasks/<task>`` and ``data/traces/<task>`` of each task, and ``benchmarks/``; the project's root."""
    for task in tasks:
        shutil.copytree(ROOT / "tasks" / task, pytester.path / "tasks" / task)
        shutil.copytree(ROOT / "data" / "traces" / task, pytester.path / "data" / "traces" / task)
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    return pytester.path


def model_project(pytester: pytest.Pytester, server: LocalModelServer, monkeypatch: pytest.MonkeyPatch,
                  *tasks: str) -> pytest.Pytester:
    """A benchmark project whose model ``tiny`` is the local server, its key in the environment."""
    benchmark_project(pytester, *tasks)
    monkeypatch.setenv("SYSMO_LOCAL_KEY", "sk-local")
    models = {"tiny": {"route": "openai/tiny", "api_base": server.base_url, "api_key_env": "SYSMO_LOCAL_KEY",
                       "temperature": 0.0, "timeout": 20, "attempts": 2, "backoff_s": 0.01, "max_backoff_s": 0.05}}
    (pytester.path / "sysmobench-models.yaml").write_text(yaml.safe_dump({"models": models}))
    return pytester


def only_cell(path: Path) -> dict[str, Any]:
    """The one cell of the board a run in ``path`` wrote."""
    (cell,) = json.loads((path / ".sysmobench" / "leaderboard.json").read_text())["cells"]
    return cell


def prompts_sent(server: LocalModelServer, model: str = "tiny") -> list[str]:
    """The last message of every request the server got for ``model``, in order."""
    return [str(body["messages"][-1]["content"]) for body in server.iter_bodies(model)]
