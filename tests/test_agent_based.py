"""The ``agent_based`` method end to end: a pytest session asks a real OpenAI-compatible server on
127.0.0.1 through litellm, checks each answer with real SANY and TLC as P1 and P2 will, and
sends a rejected spec back with the tools' errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from projects import benchmark_project
from llm_server import LocalModelServer

ROOT = Path(__file__).resolve().parents[1]
SPIN = ROOT / "tasks" / "spin"
REFERENCE = (SPIN / "reference" / "Spin.tla").read_text()
REFERENCE_CFG = (SPIN / "reference" / "Spin.cfg").read_text()


def _answer(spec: str) -> str:
    return f"Here is the specification.\n\n```tla\n{spec}```\n\n```cfg\n{REFERENCE_CFG}```\n"


GOOD = _answer(REFERENCE)
#: Acquire forgets that it leaves callType alone: TLC stops at the first Acquire.
NO_UNCHANGED = _answer(REFERENCE.replace("    /\\ UNCHANGED callType\n", "", 1))
BROKEN_SYNTAX = _answer(REFERENCE.replace("Init ==", "Init ==\n    /\\ (", 1))


@pytest.fixture
def bench(pytester: pytest.Pytester, model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    benchmark_project(pytester, "spin")
    monkeypatch.setenv("SYSMO_LOCAL_KEY", "sk-local")
    models = {"tiny": {"route": "openai/tiny", "api_base": model_server.base_url, "api_key_env": "SYSMO_LOCAL_KEY",
                       "temperature": 0.0, "timeout": 20, "attempts": 2, "backoff_s": 0.01, "max_backoff_s": 0.05}}
    (pytester.path / "sysmobench-models.yaml").write_text(yaml.safe_dump({"models": models}))
    return pytester


def _cell(path: Path) -> dict[str, Any]:
    (cell,) = json.loads((path / ".sysmobench" / "leaderboard.json").read_text())["cells"]
    return cell


def _prompts(server: LocalModelServer) -> list[str]:
    return [str(body["messages"][-1]["content"]) for body in server.iter_bodies("tiny")]


ARGS = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "--sysmobench-method", "agent_based")


def test_a_spec_tlc_rejects_is_sent_back_with_its_error_and_the_correction_is_scored(
        bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", NO_UNCHANGED, GOOD)
    result = bench.runpytest_subprocess(*ARGS)
    result.assert_outcomes(passed=4)
    first, second = _prompts(model_server)
    assert "correction 1 of\nat most 3" in second and "Acquire" in second
    assert "not completely specified" in second or "not assigned" in second, second[:2000]
    assert NO_UNCHANGED.split("```tla\n")[1].split("```")[0] in second  # its last answer, whole
    assert first in second  # and the task it answers
    cell = _cell(bench.path)
    assert cell["model"] == "tiny@agent_based" and cell["composite"] == 1.0
    generation = cell["generation"]
    assert generation["scored_attempt"] == 2 and generation["requests"] == 2
    assert [a["passed"] for a in generation["attempts"]] == [False, True]
    assert generation["attempts"][0]["phases"]["runtime"] < 1.0
    result.stdout.fnmatch_lines(["tiny@agent_based: P1 and P2 pass after attempt 1: 0/1, 2: 1/1, 3: 1/1, 4: 1/1"])
    run = bench.path / ".sysmobench" / "runs"
    assert list(run.glob("*/spin/tiny_agent_based/s0/prompt-correct-1.md"))
    page = (bench.path / ".sysmobench" / "leaderboard.html").read_text()
    assert "<td>model</td>" in page and "attempt 2 of 4" in page

    again = bench.runpytest_subprocess(*ARGS)
    again.assert_outcomes(passed=4)
    assert model_server.count("tiny") == 2  # every attempt's answer is stored: a re-run asks nothing
    direct = bench.runpytest_subprocess(*ARGS[:-2], "-m", "p1")
    direct.assert_outcomes(passed=1, deselected=3)
    assert model_server.count("tiny") == 2  # the first answer is the direct method's own


def test_answers_that_never_get_better_stop_after_the_allowed_corrections(
        bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    model_server.respond(lambda body: BROKEN_SYNTAX)
    result = bench.runpytest_subprocess(*ARGS, "-m", "p1")
    result.assert_outcomes(failed=1, deselected=3)
    assert model_server.count("tiny") == 4  # the answer, then three corrections
    prompts = _prompts(model_server)
    assert all("correction 3 of\nat most 3" not in p for p in prompts[:3]) and "correction 3 of\nat most 3" in prompts[3]
    assert all("SANY" in p or "syntax" in p for p in prompts[1:])
    generation = _cell(bench.path)["generation"]
    assert generation["scored_attempt"] == 4 and not any(a["passed"] for a in generation["attempts"])
    result.stdout.fnmatch_lines(["tiny@agent_based: P1 and P2 pass after attempt 1: 0/1, 2: 0/1, 3: 0/1, 4: 0/1"])
    fewer = bench.runpytest_subprocess(*ARGS, "-m", "p1", "--sysmobench-corrections", "1", "--sysmobench-refresh")
    fewer.assert_outcomes(failed=1, deselected=3)
    assert model_server.count("tiny") == 6  # asked anew: the answer and one correction
