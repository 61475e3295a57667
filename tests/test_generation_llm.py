"""Generated specs end to end: pytest sessions ask a real OpenAI-compatible server on 127.0.0.1
through litellm (the normal model configuration), and the server counts every request."""

from __future__ import annotations

import json
import time
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from projects import benchmark_project
from llm_server import LocalModelServer, Reply

from pytest_sysmobench import load_task
from pytest_sysmobench.leaderboard.reporter import EXIT_NO_ANSWER
from pytest_sysmobench.mapping import load_mapping

ROOT = Path(__file__).resolve().parents[1]
SPIN = ROOT / "tasks" / "spin"
REFERENCE = (SPIN / "reference" / "Spin.tla").read_text()
REFERENCE_CFG = (SPIN / "reference" / "Spin.cfg").read_text()
GOOD = f"Here is the specification.\n\n```tla\n{REFERENCE}```\n\n```cfg\n{REFERENCE_CFG}```\nHope it helps!"
BROKEN_SYNTAX = GOOD.replace("Init ==", "Init ==\n    /\\ (", 1)


def _with_own_constant(text: str) -> str:
    """The reference with its constant named Procs: no mapping is inferred for a spec whose
    constants are not the task's, so only a mapping (its own, or an evaluator's) can relate it."""
    return text.replace("Threads", "Procs")


UNMAPPED = (f"Here is the specification.\n\n```tla\n{_with_own_constant(REFERENCE)}```\n\n"
            f"```cfg\n{_with_own_constant(REFERENCE_CFG)}```\n")


@pytest.fixture
def bench(pytester: pytest.Pytester, model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    benchmark_project(pytester, "spin")
    pytester.makeini("[pytest]\njunit_family = xunit1\n")
    monkeypatch.setenv("SYSMO_LOCAL_KEY", "sk-local")
    models = {name: {"route": f"openai/{name}", "api_base": model_server.base_url, "api_key_env": "SYSMO_LOCAL_KEY",
                     "temperature": 0.0, "timeout": 20, "attempts": 3, "backoff_s": 0.01, "max_backoff_s": 0.05,
                     "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
              for name in ("tiny", "judge", "broken", "slow", "denied", "hollow", "garbled")}
    models["slow"]["timeout"] = 0.5
    models["slow"]["attempts"] = 2
    (pytester.path / "sysmobench-models.yaml").write_text(yaml.safe_dump({"models": models}))
    return pytester


def _board(path: Path) -> dict[str, Any]:
    return json.loads((path / ".sysmobench" / "leaderboard.json").read_text())


def _prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _translations() -> list[str]:
    """The spin templates restated over the reference's own names (what a good evaluator answers)."""
    task = load_task(SPIN)
    mapping = load_mapping(SPIN / "reference" / "mapping.yaml", task)
    out = []
    for template in task.templates:
        body = template.tla.split("==", 1)[1]
        for vm in mapping.variables:
            expr = vm.spec_to_canonical()
            body = re.sub(rf"(?<![A-Za-z0-9_\"]){vm.canonical}(?![A-Za-z0-9_\"])", lambda _: expr, body)
        out.append(f"{template.name} == {_with_own_constant(body.strip())}")
    return out


def _evaluator(body: dict[str, Any]) -> Reply:
    prompt = _prompt(body)
    if "You relate a TLA+ specification" in prompt:
        mapping = yaml.safe_load((SPIN / "reference" / "mapping.yaml").read_text())
        mapping["constants"] = {"Threads": "Procs"}
        return Reply.text("```json\n" + json.dumps(mapping) + "\n```")
    assert "You restate properties" in prompt
    return Reply.text(json.dumps({"invariants": _translations()}))


def test_generated_spec_is_scored_in_all_phases_and_never_asked_again(bench: pytest.Pytester,
                                                                      model_server: LocalModelServer) -> None:
    model_server.respond(lambda body: UNMAPPED if body["model"] == "tiny" else _evaluator(body))
    args = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "--sysmobench-evaluator", "judge")
    result = bench.runpytest_subprocess(*args)
    result.assert_outcomes(passed=4)
    assert model_server.count("tiny") == 1 and model_server.count("judge") == 2
    judge = [b for b in model_server.iter_bodies("judge")]
    assert all(b.get("response_format") == {"type": "json_object"} for b in judge)
    (cell,) = _board(bench.path)["cells"]
    assert cell["composite"] == 1.0
    assert cell["generation"]["requests"] == 1 and cell["generation"]["prompt_tokens"] > 0
    assert cell["generation"]["cost_usd"] == pytest.approx(
        cell["generation"]["prompt_tokens"] * 1e-6 + cell["generation"]["completion_tokens"] * 2e-6)
    board = _board(bench.path)
    run_dir = bench.path / ".sysmobench" / "runs" / board["run_id"] / "spin" / "tiny" / "s0"
    assert "fn try_lock" in (run_dir / "prompt-direct.md").read_text()
    assert (run_dir / "answer-direct.md").read_text() == UNMAPPED
    details = json.loads((run_dir / "result.json").read_text())["phases"]["invariants"]["details"]
    assert details["evaluator"] == "judge" and details["passed"] == details["total"]
    judged = cell["evaluator"]  # the mapping for P3 and the translations for P4, summed
    assert (judged["requests"], judged["cached"]) == (2, 0) and judged["prompt_tokens"] > 0
    assert judged["cost_usd"] == pytest.approx(judged["prompt_tokens"] * 1e-6 + judged["completion_tokens"] * 2e-6)
    usage = board["usage"]
    assert usage["evaluator"]["requests"] == 2
    assert usage["total_cost_usd"] == pytest.approx(usage["cost_usd"] + judged["cost_usd"])
    result.stdout.fnmatch_lines(
        ["model requests: 3 sent, 0 answered from the answer store*generation used*cost $*the evaluator used*cost $*"])

    again = bench.runpytest_subprocess(*args)
    again.assert_outcomes(passed=4)
    assert model_server.count() == 3  # nothing asked again: not the model, not the evaluator
    again.stdout.fnmatch_lines(["model requests: 0 sent, 3 answered from the answer store*"])
    (warm,) = _board(bench.path)["cells"]
    assert (warm["evaluator"]["requests"], warm["evaluator"]["cached"]) == (0, 2)
    assert warm["evaluator"]["cost_usd"] == judged["cost_usd"]  # what the cell cost, wherever its answers came from

    refreshed = bench.runpytest_subprocess(*args, "-m", "p1", "--sysmobench-refresh")
    refreshed.assert_outcomes(passed=1, deselected=3)
    assert model_server.count("tiny") == 2


def test_samples_give_pass_at_k_and_best_of_k(bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", GOOD, "I am sorry, I cannot write TLA+.", BROKEN_SYNTAX)
    # One connection: the samples are asked in order, so each gets the reply queued for it.
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "--sysmobench-samples", "3", "-m", "p1", "--sysmobench-max-connections", "1")
    result.assert_outcomes(passed=1, failed=2, deselected=9)
    assert model_server.count("tiny") == 3
    board = _board(bench.path)
    (group,) = board["tasks"]
    assert group["samples"] == 3
    assert group["pass_at_k"]["syntax"] == {"1": pytest.approx(1 / 3), "2": pytest.approx(2 / 3), "3": 1.0}
    assert group["best_of_k"] is None  # only P1 ran: no sample has a composite (a phase not run is not a 0)
    reasons = {c["sample"]: c["phases"]["syntax"]["reason"] for c in board["cells"]}
    assert "no TLA+ module" in reasons[1]
    result.stdout.fnmatch_lines(["tiny: pass@3 syntax 1.00*best-of-3 composite -"])


def test_rate_limits_and_overload_are_retried_with_a_shared_cool_down(bench: pytest.Pytester,
                                                                      model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.status(429, retry_after=0.02), Reply.status(529), GOOD)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "-m", "p1")
    result.assert_outcomes(passed=1, deselected=3)
    assert model_server.count("tiny") == 3
    assert list((bench.path / ".sysmobench" / "answers" / "cooldown").glob("openai_tiny.until"))
    (cell,) = _board(bench.path)["cells"]
    assert cell["generation"]["requests"] == 1


def test_failures_block_their_cell_and_the_session_goes_on(bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    def reply(body: dict[str, Any]) -> Reply | str:
        return {
            "tiny": GOOD,
            "broken": Reply.status(500),
            "slow": Reply.delay(3.0, Reply.text(GOOD)),
            "denied": Reply.status(401, "invalid api key"),
            "hollow": Reply.empty(),
            "garbled": Reply.malformed(b'{"choices": [ not json'),
        }[body["model"]]

    model_server.respond(reply)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models",
                                        "tiny,broken,slow,denied,hollow,garbled", "-m", "p1", "-rs")
    result.assert_outcomes(passed=1, skipped=5, deselected=18)
    assert model_server.count("broken") == 3  # bounded: attempts, then a recorded failure
    assert model_server.count("slow") == 2
    assert model_server.count("denied") == 1  # not transient: no retry
    assert model_server.count("hollow") == 3
    assert model_server.count("garbled") == 3
    cells = {c["model"]: c for c in _board(bench.path)["cells"]}
    reason = lambda m: cells[m]["phases"]["syntax"]["reason"]  # noqa: E731
    assert cells["broken"]["phases"]["syntax"]["status"] == "blocked"
    assert reason("broken").startswith(f"blocked: generation failed: broken at {model_server.base_url}: "
                                       "InternalServerError")
    assert "Timeout" in reason("slow") and "after 2 attempt(s)" in reason("slow")
    assert "AuthenticationError" in reason("denied") and "after 1 attempt(s)" in reason("denied")
    assert "empty answer" in reason("hollow")
    assert cells["garbled"]["phases"]["syntax"]["status"] == "blocked"
    assert cells["tiny"]["phases"]["syntax"]["status"] == "passed"
    # Five models measured nothing: the run fails with its own exit code, each named with its endpoint.
    assert result.ret == EXIT_NO_ANSWER
    result.stdout.fnmatch_lines([f"warning: broken: no answer to any of its 1 request(s), nothing of it was measured "
                                 f"(exit code {EXIT_NO_ANSWER}): broken at {model_server.base_url}: InternalServerError*"])


@pytest.mark.parametrize("set_by", ["configuration", "OPENAI_BASE_URL"])
def test_an_endpoint_nobody_listens_on_fails_the_run_and_names_the_url(bench: pytest.Pytester, set_by: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Not "4 skipped" and exit 0: a CI job must not pass on a dead endpoint; the warning names
    the URL whatever set it."""
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    config = yaml.safe_load((bench.path / "sysmobench-models.yaml").read_text())
    config["models"]["tiny"].update(api_base=dead, attempts=1)
    if set_by != "configuration":
        del config["models"]["tiny"]["api_base"]
        monkeypatch.setenv(set_by, dead)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    (bench.path / "sysmobench-models.yaml").write_text(yaml.safe_dump(config))
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny")
    assert result.ret == EXIT_NO_ANSWER, result.stdout.str()[-2000:]
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines([f"warning: tiny: no answer to any of its 1 request(s)*tiny at {dead}*: *"])


def test_the_answer_is_stored_before_scoring_can_fail(bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    model_server.respond(lambda body: GOOD)
    first = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                       "-m", "p1", "--sysmobench-jar", str(bench.path / "missing.jar"))
    first.assert_outcomes(errors=1, deselected=3)
    assert model_server.count("tiny") == 1
    second = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "-m", "p1")
    second.assert_outcomes(passed=1, deselected=3)
    assert model_server.count("tiny") == 1


def test_parallel_workers_ask_each_prompt_once(bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    model_server.respond(lambda body: GOOD)
    args = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "--sysmobench-samples", "3",
            "-m", "p1 or p2", "-n", "2")
    result = bench.runpytest_subprocess(*args)
    result.assert_outcomes(passed=6)
    assert model_server.count("tiny") == 3
    again = bench.runpytest_subprocess(*args)
    again.assert_outcomes(passed=6)
    assert model_server.count("tiny") == 3


def test_translate_method_assembles_from_the_statement_translation(bench: pytest.Pytester,
                                                                   model_server: LocalModelServer) -> None:
    fragments = "## lock()\n- CAS loop: `lock' = TRUE` when `lock = FALSE` (FRAGMENT-MARK)"

    def reply(body: dict[str, Any]) -> str:
        prompt = _prompt(body)
        if "statement by statement" in prompt and "Assemble" not in prompt:
            assert "fn try_lock" in prompt
            return fragments
        assert "FRAGMENT-MARK" in prompt and "fn try_lock" not in prompt
        return GOOD

    model_server.respond(reply)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "--sysmobench-method", "translate", "-m", "p1")
    result.assert_outcomes(passed=1, deselected=3)
    assert model_server.count("tiny") == 2
    (cell,) = _board(bench.path)["cells"]
    assert cell["model"] == "tiny@translate" and cell["generation"]["method"] == "translate"


def test_traces_method_sends_traces_and_no_source(bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    model_server.respond(lambda body: GOOD)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "--sysmobench-method", "traces", "-m", "p1")
    result.assert_outcomes(passed=1, deselected=3)
    (body,) = list(model_server.iter_bodies("tiny"))
    assert '"action":"Acquire"' in _prompt(body) and "fn try_lock" not in _prompt(body)


def test_without_an_evaluator_an_unmappable_spec_scores_0_and_is_told_how_to_map(bench: pytest.Pytester,
                                                                                 model_server: LocalModelServer) -> None:
    model_server.respond(lambda body: UNMAPPED)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "-m", "p3 or p4")
    result.assert_outcomes(failed=2, deselected=2)
    result.stdout.fnmatch_lines(["*not evaluable*scored 0, charged to the spec*mapping.yaml beside the spec*"])
    (cell,) = _board(bench.path)["cells"]
    assert {p["score"] for p in cell["phases"].values()} == {0.0}


def test_a_spec_that_only_renames_needs_no_evaluator(bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    """The reference's own names and values, no mapping, no evaluator: the unique renaming and
    recoding that fits the traces is inferred, and nobody is asked."""
    model_server.respond(lambda body: GOOD)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "-m", "p3 or p4")
    result.assert_outcomes(passed=2, deselected=2)
    assert model_server.count("tiny") == 1


def test_an_unusable_evaluator_answer_is_charged_to_the_spec(bench: pytest.Pytester,
                                                             model_server: LocalModelServer) -> None:
    """The evaluator answered, but nothing in its answer is usable: its proposal for this spec
    failed, which is scored (0), not left out of the means."""
    def reply(body: dict[str, Any]) -> str:
        if body["model"] == "tiny":
            return UNMAPPED
        if "You relate" in _prompt(body):
            return "no json here"
        return json.dumps({"invariants": ["MutualExclusion == lock' = lock", "Nonsense == 1",
                                          "LockConsistency == undefinedThing = 3"]})

    model_server.respond(reply)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "--sysmobench-evaluator", "judge", "-m", "p3 or p4")
    result.assert_outcomes(failed=2, deselected=2)
    board = _board(bench.path)
    phases = board["cells"][0]["phases"]
    assert phases["conformance"]["status"] == "failed" and phases["conformance"]["score"] == 0.0
    assert "no JSON" in phases["conformance"]["reason"] and "charged to the spec" in phases["conformance"]["reason"]
    assert phases["invariants"]["status"] == "failed" and phases["invariants"]["score"] == 0.0
    run = bench.path / ".sysmobench" / "runs" / board["run_id"] / "spin" / "tiny" / "s0" / "result.json"
    translations = json.loads(run.read_text())["phases"]["invariants"]["details"]["translations"]
    assert "prime" in translations["MutualExclusion"]
    assert "does not parse" in translations["LockConsistency"]
    assert translations["NoDeadlock"] == "rejected: no translation given"


def test_the_readme_local_model_works_without_any_key(bench: pytest.Pytester, model_server: LocalModelServer,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`local: {route: openai/qwen3, api_base: ...}` as in the README, with no OPENAI_API_KEY anywhere."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = {"models": {"local": {"route": "openai/qwen3", "api_base": model_server.base_url,
                                   "input_cost_per_token": 0.0, "output_cost_per_token": 0.0}}}
    (bench.path / "sysmobench-models.yaml").write_text(yaml.safe_dump(config))
    model_server.respond(lambda body: GOOD)
    start = time.monotonic()
    result = bench.runpytest_subprocess("benchmarks", "--sysmobench-models", "local", "-p", "no:cacheprovider", "-m", "p1")
    result.assert_outcomes(passed=1)
    assert model_server.count("qwen3") == 1 and time.monotonic() - start < 60


def test_a_model_without_its_key_is_a_usage_error_unless_its_answers_are_stored(
        bench: pytest.Pytester, model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    model_server.respond(lambda body: GOOD)
    config = yaml.safe_load((bench.path / "sysmobench-models.yaml").read_text())
    config["models"]["tiny"]["api_key_env"] = "SYSMO_UNSET_KEY"
    (bench.path / "sysmobench-models.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.delenv("SYSMO_UNSET_KEY", raising=False)
    result = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "-m", "p1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and model_server.count("tiny") == 0
    assert "tiny: environment variable SYSMO_UNSET_KEY is not set, and 1 of its 1 cell(s) have no stored answer" \
        in result.stderr.str() and "Traceback" not in result.stderr.str()
    # Asked once with the key, the answer is stored: scoring it again needs no key.
    monkeypatch.setenv("SYSMO_UNSET_KEY", "sk-local")
    bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "-m", "p1"
                               ).assert_outcomes(passed=1)
    monkeypatch.delenv("SYSMO_UNSET_KEY")
    again = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "-m", "p1")
    again.assert_outcomes(passed=1)
    assert model_server.count("tiny") == 1
    # A configured evaluator without its key stops a run that may need it (a model's specs), up front.
    config["models"]["judge"]["api_key_env"] = "SYSMO_UNSET_KEY"
    (bench.path / "sysmobench-models.yaml").write_text(yaml.safe_dump(config))
    judged = bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
                                        "--sysmobench-evaluator", "judge", "-m", "p1")
    assert judged.ret == pytest.ExitCode.USAGE_ERROR
    assert "evaluator judge: environment variable SYSMO_UNSET_KEY is not set" in judged.stderr.str()


# ------------------------------------------------------------------ a sweep asks ahead


def _most_in_flight(model_server: LocalModelServer, latency: float) -> int:
    """The most requests the server had open at once (each is answered after ``latency``)."""
    arrivals = sorted(r.at for r in model_server.requests if r.model == "tiny")
    return max(sum(1 for b in arrivals if a <= b < a + latency * 0.9) for a in arrivals)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_sweep_keeps_many_requests_in_flight_and_asks_each_once(bench: pytest.Pytester,
                                                                  model_server: LocalModelServer, workers: str) -> None:
    model_server.respond(lambda body: Reply.delay(0.6, Reply.text(GOOD)))
    args = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "--sysmobench-samples", "8",
            "-m", "p1", "-n", workers)
    result = bench.runpytest_subprocess(*args, "--sysmobench-max-connections", "4")
    result.assert_outcomes(passed=8)
    assert model_server.count("tiny") == 8
    assert 2 <= _most_in_flight(model_server, 0.6) <= 4  # one process asks: the limit holds over the workers
    result.stdout.fnmatch_lines(["sysmobench generation: 8 of 8 cells' answers (* request(s) answered, *), 0 in flight, "
                                 "0 waiting, 0 failed, $0.0* spent, * s"])
    board = _board(bench.path)
    assert sum(c["generation"]["requests"] for c in board["cells"]) == 8  # each cell's request, asked ahead
    if workers != "0":
        return
    again = bench.runpytest_subprocess(*args)
    again.assert_outcomes(passed=8)
    assert model_server.count("tiny") == 8
    serial = bench.runpytest_subprocess(*args, "--sysmobench-max-connections", "0", "--sysmobench-refresh")
    serial.assert_outcomes(passed=8)
    assert model_server.count("tiny") == 16  # refreshed: asked once more each, by the cells, one at a time
    assert _most_in_flight(model_server, 0.6) >= 2  # (the first run's)
    bad = bench.runpytest_subprocess(*args, "--sysmobench-max-connections", "-1")
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(["*--sysmobench-max-connections -1: expected 0 (each cell asks when it runs) to 256*"])


def test_an_interrupted_sweep_resumes_asking_only_what_is_missing(bench: pytest.Pytester,
                                                                 model_server: LocalModelServer) -> None:
    import signal
    import subprocess
    import sys

    model_server.respond(lambda body: Reply.delay(0.5, Reply.text(GOOD)))
    args = [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny",
            "--sysmobench-samples", "12", "-m", "p1", "--sysmobench-max-connections", "2"]
    # Under xdist the worker ignores SIGINT, and a child would inherit that: give it the default back.
    first = subprocess.Popen(args, cwd=bench.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while model_server.count("tiny") < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    out = first.communicate(timeout=60)[0].decode()
    assert first.returncode == 2, out  # interrupted
    asked = model_server.count("tiny")
    stored = len(list((bench.path / ".sysmobench" / "answers").glob("*/*.json")))
    assert 4 <= stored < 12 and asked <= stored + 3  # at most what was in flight (two ahead, one a cell's) is lost
    second = bench.runpytest_subprocess(*args[3:])
    second.assert_outcomes(passed=12, deselected=36)
    assert model_server.count("tiny") - asked == 12 - stored  # only what was missing
    assert len(list((bench.path / ".sysmobench" / "answers").glob("*/*.json"))) == 12


@pytest.mark.parametrize("asked_for_s", [None, 0.5, 10_000.0])
def test_a_cell_waits_for_an_answer_asked_ahead_only_as_long_as_a_request_can_take(
        model_server: LocalModelServer, tmp_path: Path, asked_for_s: float | None) -> None:
    """A cell whose answer a sweep of its run is asking for waits for it (here the sweep stores
    it), but not for a request asked longer ago than every attempt could take (an asker that
    died): then the cell asks itself.  A sweep that has not started asking is waited for."""
    import threading

    from pytest_sysmobench.answers import AnswerStore, asking_since
    from pytest_sysmobench.llm import Client, ModelConfig

    model_server.respond(lambda body: Reply.text("the cell's"))
    config = ModelConfig("tiny", "openai/tiny", api_base=model_server.base_url, timeout_s=2, attempts=1,
                         backoff_s=0.01, max_backoff_s=1)
    client = Client(config, tmp_path / "cool")
    store, sweep = AnswerStore(tmp_path / "answers", run_id="run-1"), AnswerStore(tmp_path / "answers", run_id="run-1")
    note = store.reserve(client, "prompt", 0, "spec")
    assert note is not None
    if asked_for_s is not None:
        asking_since(note)
        since = float(note.read_text().splitlines()[1])
        note.write_text(f"run-1\n{since - asked_for_s}")
    ahead = threading.Timer(1.0, lambda: sweep.answer(client, "prompt", 0, "spec", ahead=True))
    started = time.monotonic()
    ahead.start()
    answer, _ = store.answer(client, "prompt", 0, "spec")
    waited = time.monotonic() - started
    ahead.join()
    assert answer.text == "the cell's" and model_server.count("tiny") == 1  # asked once, by one of them
    if asked_for_s == 10_000.0:  # given up on at once (3 s of patience): the cell asked, the sweep found it
        assert waited < 0.9 and store.stats.requests == 1
    else:  # waited for the sweep, which asked a second later
        assert waited >= 0.9 and store.stats.requests == 1


def test_a_429_with_retry_after_is_waited_out(model_server: LocalModelServer, tmp_path: Path) -> None:
    from pytest_sysmobench.llm import Client, ModelConfig

    model_server.enqueue("tiny", Reply.status(429, retry_after=1.5), Reply.text("ok"))
    config = ModelConfig("tiny", "openai/tiny", api_base=model_server.base_url, timeout_s=10, backoff_s=0.01,
                         max_backoff_s=30)
    answer = Client(config, tmp_path).complete("hello")
    first, second = (r.at for r in model_server.requests)
    assert answer.text == "ok" and answer.attempts == 2
    assert second - first >= 1.5  # the server's word, not our 0.01 s backoff
    assert float((tmp_path / "openai_tiny.until").read_text()) > 0  # every worker holds off too


def test_a_requests_per_minute_limit_holds_across_processes(tmp_path: Path) -> None:
    from pytest_sysmobench.llm import Pace

    now = [1000.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    mine, theirs = (Pace(tmp_path, "openai/tiny", 2, clock=lambda: now[0]) for _ in range(2))
    mine.wait(sleep)
    now[0] += 10
    theirs.wait(sleep)  # another process, the same file: the second of the minute
    assert slept == []
    mine.wait(sleep)  # the third waits until the first is a minute old
    assert slept == [pytest.approx(50.0)] and now[0] == pytest.approx(1060.0)
    Pace(tmp_path, "openai/other", None).wait(sleep)  # no limit, no wait
    assert len(slept) == 1
