"""Model configuration, generation methods rendered from task data, evaluator answer screening,
and the leaderboard's sample statistics."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sysmobench import load_task
from pytest_sysmobench.evaluator import json_answer, screen
from pytest_sysmobench.sources.extract import extract_spec, rename_module
from pytest_sysmobench.llm import ModelConfigError, load_catalog
from pytest_sysmobench.prompts import METHODS, MethodError, render, sample_traces, stages, template_path
from pytest_sysmobench.leaderboard.board import build
from pytest_sysmobench.tasks import InvariantTemplate

ROOT = Path(__file__).resolve().parent.parent
SPIN = ROOT / "tasks" / "spin"


def test_catalog_reads_settings_aliases_and_passes_unknown_names_through(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        "evaluator: judge\n"
        "models:\n"
        "  fast:\n"
        "    route: openai/tiny\n"
        "    temperature: 0.2\n"
        "    max_tokens: 100\n"
        "    timeout: 5\n"
        "    base_url: http://127.0.0.1:1/v1\n"
        "    params: {top_k: 3}\n"
        "  judge: {}\n"
    )
    catalog = load_catalog(path)
    fast = catalog.get("fast")
    assert fast.route == "openai/tiny" and fast.timeout_s == 5.0 and fast.api_base == "http://127.0.0.1:1/v1"
    assert fast.generation_parameters() == {"temperature": 0.2, "max_tokens": 100, "top_k": 3}
    assert catalog.get("judge").route == "judge"
    assert catalog.evaluator == "judge"
    plain = catalog.get("anthropic/claude-sonnet-4-5")
    assert plain.route == "anthropic/claude-sonnet-4-5" and plain.generation_parameters() == {}


@pytest.mark.parametrize(
    "body, message",
    [
        ("models: [a, b]\n", "'models' must map"),
        ("models:\n  m: {temprature: 1}\n", "unknown setting"),
        ("models:\n  m: {max_tokens: lots}\n", "expected int"),
        ("models:\n  m: {attempts: 0}\n", "at least 1"),
        ("models: {m: {params: 3}}\n", "extra litellm parameters"),
        ("- just a list\n", "expected a mapping"),
        ("models: {a: [\n", "cannot read"),
        # The models at the top level, without 'models:': not silently an empty configuration.
        ("sonnet:\n  route: anthropic/claude-sonnet-4-5\n", "unknown top-level key\\(s\\) 'sonnet'"),
        # Agents: a command is required, as a list of strings; settings are checked by name.
        ("agents:\n  a: {timeout_s: 5}\n", "agents.a.command: expected the command"),
        ("agents:\n  a: {command: [x], sandbox: off}\n", "agents.a.sandbox: unknown setting"),
        ("agents:\n  a: {command: [x], timeout_s: -1}\n", "timeout_s must be"),
        ("agents:\n  a: {command: [x], pass_env: ['A KEY']}\n", "pass_env: expected a list"),
        # The model its endpoint serves, and the budget it may spend there.
        ("agents:\n  a: {command: [x], model: ''}\n", "agents.a.model: expected the name of a model"),
        ("agents:\n  a: {command: [x], budget: {tokens: 0}}\n", "agents.a.budget: each limit must be positive"),
        ("agents:\n  a: {command: [x], budget: {dollars: 3}}\n", "agents.a.budget: expected a mapping of requests"),
        ("agents:\n  a: {command: [x], budget: {requests: many}}\n", "agents.a.budget: requests and tokens"),
        ("agents:\n  a: {command: [x], max_file_mb: 0}\n", "agents.a.max_file_mb: expected a whole number of MB"),
        ("agents:\n  a: {command: [x], max_memory_mb: lots}\n", "agents.a.max_memory_mb: expected a whole number"),
    ],
)
def test_catalog_errors_say_where(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(body)
    with pytest.raises(ModelConfigError, match=message):
        load_catalog(path)


def test_generation_parameters_never_hold_secrets_or_timeouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "models.yaml"
    path.write_text("models:\n  m: {route: openai/x, api_key_env: SYSMO_TEST_KEY, timeout: 9, temperature: 0}\n")
    monkeypatch.setenv("SYSMO_TEST_KEY", "sk-secret")
    config = load_catalog(path).get("m")
    assert "sk-secret" not in repr(config.generation_parameters())
    assert config.request_kwargs()["api_key"] == "sk-secret"
    monkeypatch.delenv("SYSMO_TEST_KEY")
    with pytest.raises(Exception, match="SYSMO_TEST_KEY is not set"):
        config.request_kwargs()


@pytest.mark.parametrize("method", METHODS)
def test_every_method_renders_from_task_data(method: str) -> None:
    task = load_task(SPIN)
    earlier: dict[str, str] = {}
    for stage in stages(method):
        text = render(task, stage, ROOT / "data" / "traces", earlier)
        earlier[stage.name] = f"<answer of {stage.name}>"
        assert "{" + "module}" not in text and "{" + "vocabulary}" not in text
        assert task.module in text or stage.name == "statements"
        assert "locked" in text  # the vocabulary is in every prompt
    if method == "traces":
        assert "spin_lock" not in text and "fn lock" not in text  # no source code
        assert '"action":"Init"' in text
    if method == "translate":
        assert "<answer of statements>" in text  # the assembly sees the translation
    if method == "direct":
        assert "fn try_lock" in text


def test_a_task_template_overrides_the_shared_default(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "spin"
    shutil.copytree(SPIN, copy)
    (copy / "prompts").mkdir()
    (copy / "prompts" / "traces.md").write_text("Traces for {module}:\n{traces}\n")
    task = load_task(copy)
    stage = stages("traces")[0]
    assert template_path(task, stage) == copy / "prompts" / "traces.md"
    assert render(task, stage, ROOT / "data" / "traces").startswith("Traces for Spin:\n### seed-1.ndjson")


def test_trace_sampling_cuts_at_whole_lines_and_needs_traces(tmp_path: Path) -> None:
    task = load_task(SPIN)
    text = sample_traces(task, ROOT / "data" / "traces", limit=4000)
    assert len(text.encode()) < 4100 and text.endswith("KiB)")
    assert all(line.startswith(("{", "###", "...")) for line in text.splitlines())
    with pytest.raises(MethodError, match="needs traces"):
        sample_traces(task, tmp_path)
    with pytest.raises(MethodError, match="unknown generation method"):
        stages("telepathy")


def test_wrong_module_name_is_renamed_only_in_the_header() -> None:
    text = "---- MODULE Lock ----\nEXTENDS Naturals\nX == 1 \\* Lock\n====\n"
    renamed = rename_module(text, "Lock", "Spin")
    assert extract_spec(renamed).declared_module == "Spin"
    assert "\\* Lock" in renamed


@pytest.mark.parametrize(
    "kind, expression, problem",
    [
        ("safety", "\\A t \\in Threads : pc[t] = \"idle\"", None),
        ("safety", "x' = x", "prime"),
        ("safety", "[](x = 1)", "temporal"),
        ("safety", "WF_vars(Next)", "temporal"),
        ("safety", "msg = \"it's fine\"", None),
        ("liveness", "[]<>(x = 1)", None),
        ("liveness", "P ~> Q", None),
        ("liveness", "x = 1", "must use"),
        ("safety", "(CASE x = 1 -> \"a\" [] x = 2 -> \"b\" [] OTHER -> \"c\") = \"a\"", None),
        ("safety", "CASE x = 1 -> [](y = 1) [] OTHER -> TRUE", "temporal"),
    ],
)
def test_translated_invariants_are_screened_by_kind(kind: str, expression: str, problem: str | None) -> None:
    verdict = screen(InvariantTemplate("T", kind, "", ""), expression)
    assert (verdict is None) if problem is None else (problem in (verdict or ""))


@pytest.mark.parametrize(
    "text",
    ['{"invariants": ["A == TRUE"]}', '```json\n{"invariants": ["A == TRUE"]}\n```',
     'Here you go:\n{"invariants": ["A == TRUE"]}\nThanks'],
)
def test_evaluator_json_is_found_in_fences_and_chatter(text: str) -> None:
    assert json_answer(text) == {"invariants": ["A == TRUE"]}


def _records(passes: list[bool]) -> list[dict]:
    records = []
    for sample, ok in enumerate(passes):
        for phase in ("syntax", "runtime", "conformance", "invariants"):
            status = "passed" if ok or phase != "invariants" else "failed"
            records.append({"task": "t", "model": "m", "sample": sample, "phase": phase, "status": status,
                            "score": 1.0 if status == "passed" else 0.5})
    return records


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8))
def test_leaderboard_pass_at_k_and_best_of_k(passes: list[bool]) -> None:
    board = build(_records(passes), {}, "run").to_json()
    group = board["tasks"][0]
    n, c = len(passes), sum(passes)
    assert group["samples"] == n
    for k in range(1, n + 1):
        expected = 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)
        assert group["pass_at_k"]["invariants"][str(k)] == pytest.approx(expected, abs=1e-6)
        assert group["pass_at_k"]["syntax"][str(k)] == 1.0
    assert group["pass_at_k"]["invariants"]["1"] == pytest.approx(c / n, abs=1e-6)
    assert group["best_of_k"] == (1.0 if c else round(0.15 + 0.15 + 0.35 + 0.35 * 0.5, 6))
    assert board["models"][0]["best_of_k"] == group["best_of_k"]


_USE = st.fixed_dictionaries({
    "requests": st.integers(0, 3), "cached": st.integers(0, 3), "prompt_tokens": st.integers(0, 10**6),
    "completion_tokens": st.integers(0, 10**5), "cost_usd": st.floats(0, 5, allow_nan=False),
    "cost_complete": st.booleans(),
})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["conformance", "invariants"]), _USE), max_size=10))
def test_evaluator_use_is_summed_per_cell_and_per_run(uses: list[tuple[int, str, dict]]) -> None:
    """A replayed spec judged by an evaluator spends only evaluator tokens; they must show up."""
    records = [{"task": "spin", "model": "replay:x", "sample": s, "phase": p, "status": "passed", "score": 1.0,
                "details": {"evaluator": "judge", "evaluator_use": use}} for s, p, use in uses]
    records += [{"task": "spin", "model": "replay:x", "sample": s, "phase": "syntax", "status": "passed", "score": 1.0}
                for s in range(4)]
    board = build(records, {}, "run").to_json()
    if not uses:
        assert "usage" not in board
        return
    spent = board["usage"]["evaluator"]
    assert spent["prompt_tokens"] == sum(u["prompt_tokens"] for _, _, u in uses)
    assert spent["requests"] == sum(u["requests"] for _, _, u in uses)
    assert spent["cost_usd"] == pytest.approx(sum(u["cost_usd"] for _, _, u in uses), abs=1e-6)
    assert spent["cost_complete"] == all(u["cost_complete"] for _, _, u in uses)
    assert board["usage"]["cost_usd"] is None  # nothing was generated
    assert board["usage"]["total_cost_usd"] == pytest.approx(spent["cost_usd"], abs=1e-6)
    for cell in board["cells"]:
        mine = [u for s, _, u in uses if s == cell["sample"]]
        assert (cell.get("evaluator") or {}).get("completion_tokens", 0) == sum(u["completion_tokens"] for u in mine)
    assert board["models"][0]["usage"]["evaluator"] == spent


def test_a_local_openai_compatible_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's local model: route openai/..., an api_base, and no OPENAI_API_KEY set."""
    from pytest_sysmobench.llm import LOCAL_PLACEHOLDER_KEY, ModelConfig

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = ModelConfig("local", "openai/qwen3", api_base="http://127.0.0.1:8000/v1")
    assert local.request_kwargs()["api_key"] == LOCAL_PLACEHOLDER_KEY
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    assert "api_key" not in local.request_kwargs(), "a real key in the environment is litellm's to use"
    assert "api_key" not in ModelConfig("gpt", "openai/gpt-5").request_kwargs()


def test_a_route_under_a_known_provider_is_what_litellm_routes_and_needs_no_litellm() -> None:
    """The routes the benchmark accepts without importing litellm are exactly ones litellm
    routes to their provider; an unknown one is still put to litellm."""
    import subprocess
    import sys

    from pytest_sysmobench.llm import ROUTED_PROVIDERS, ModelConfig, _litellm, route_problem

    litellm = _litellm()
    for provider in sorted(ROUTED_PROVIDERS):
        assert litellm.get_llm_provider(model=f"{provider}/some-model")[1] == provider
        assert route_problem(ModelConfig(name="m", route=f"{provider}/some-model")) is None
    assert "cannot route model id 'gpt-9000'" in (route_problem(ModelConfig(name="m", route="gpt-9000")) or "")
    probe = ("import sys; from pytest_sysmobench.llm import ModelConfig, route_problem; "
             "assert route_problem(ModelConfig(name='m', route='openai/gpt-5')) is None; print('litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize(
    ("kind", "body", "steps_only"),
    [
        ("liveness", "[][\\A i \\in S : t'[i] >= t[i]]_t", True),
        ("liveness", "[][x' >= x /\\ y' = y]_<<x, y>>", True),
        ("liveness", "[][\\A i \\in S :\n      (s[i] = 1) => f[i]']_<<s, f>>", True),
        ("liveness", "[][x' >= x]_x /\\ <>(x = 3)", False),  # a temporal part: the liveness check's
        ("liveness", "[][x' >= x]_x \\/ [][y' >= y]_y", False),
        ("liveness", "<>[](x = 1)", False),
        ("liveness", "(x = 1) ~> (x = 2)", False),
        ("safety", "[][x' >= x]_x", False),
    ],
)
def test_a_step_property_is_told_from_a_temporal_one(kind: str, body: str, steps_only: bool) -> None:
    """TLC checks ``[][A]_v`` on every step it explores and names it when it fails; P4 settles
    such templates with the invariants, never as the unnamed end of a liveness check."""
    assert InvariantTemplate("T", kind, "", f"T ==\n    {body}").steps_only is steps_only
