"""The methods that send a spec back, end to end: a pytest session asks a real OpenAI-compatible
server on 127.0.0.1 through litellm and checks each answer with real SANY and TLC as the phases
will.  ``agent_based`` sends a rejected spec back with the tools' errors; ``feedback`` also sends
a usable one back with what P3 (on the task's feedback seeds) and P4 find, and the cell's P3 is
scored on the held-out seeds, with the feedback seeds' figure beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from projects import model_project, only_cell, prompts_sent
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


def _edited(old: str, new: str) -> str:
    assert REFERENCE.count(old) == 1, old
    return REFERENCE.replace(old, new)


#: Dropping the guard forgets the call's kind (spin's mutant unlock-keeps-request): every seed's
#: Unlock windows show it, and P4's RequestConsistency fails.
KEEPS_REQUEST = _answer(_edited('''    /\\ pc' = [pc EXCEPT ![t] = "idle"]
    /\\ callType' = [callType EXCEPT ![t] = "none"]''', '''    /\\ pc' = [pc EXCEPT ![t] = "idle"]
    /\\ UNCHANGED callType'''))
BROKEN_SYNTAX = _answer(REFERENCE.replace("Init ==", "Init ==\n    /\\ (", 1))


@pytest.fixture
def bench(pytester: pytest.Pytester, model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return model_project(pytester, model_server, monkeypatch, "spin")


ARGS = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "tiny", "--sysmobench-method", "agent_based")


def _corrected_once(bench: pytest.Pytester, server: LocalModelServer, args: tuple[str, ...],
                    wrong: str) -> tuple[pytest.RunResult, list[str]]:
    """A run in which the model answers ``wrong`` and then, sent it back, the reference: its
    result (the cell's four items pass) and the two prompts the model got."""
    server.enqueue("tiny", wrong, GOOD)
    result = bench.runpytest_subprocess(*args)
    result.assert_outcomes(passed=4)
    return result, prompts_sent(server)


def test_a_spec_tlc_rejects_is_sent_back_with_its_error_and_the_correction_is_scored(
        bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    result, (first, second) = _corrected_once(bench, model_server, ARGS, NO_UNCHANGED)
    assert "correction 1 of\nat most 3" in second and "Acquire" in second
    assert "not completely specified" in second or "not assigned" in second, second[:2000]
    assert NO_UNCHANGED.split("```tla\n")[1].split("```")[0] in second  # its last answer, whole
    assert first in second  # and the task it answers
    cell = only_cell(bench.path)
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
    prompts = prompts_sent(model_server)
    assert all("correction 3 of\nat most 3" not in p for p in prompts[:3]) and "correction 3 of\nat most 3" in prompts[3]
    assert all("SANY" in p or "syntax" in p for p in prompts[1:])
    generation = only_cell(bench.path)["generation"]
    assert generation["scored_attempt"] == 4 and not any(a["passed"] for a in generation["attempts"])
    result.stdout.fnmatch_lines(["tiny@agent_based: P1 and P2 pass after attempt 1: 0/1, 2: 0/1, 3: 0/1, 4: 0/1"])
    fewer = bench.runpytest_subprocess(*ARGS, "-m", "p1", "--sysmobench-corrections", "1", "--sysmobench-refresh")
    fewer.assert_outcomes(failed=1, deselected=3)
    assert model_server.count("tiny") == 6  # asked anew: the answer and one correction


#: The feedback method: agent_based, and then what P3 and P4 find, sent back; P3 scored on held-out traces.
FEEDBACK = (*ARGS[:-1], "feedback")


def test_what_p3_and_p4_find_is_sent_back_and_the_correction_is_scored_on_held_out_traces(
        bench: pytest.Pytester, model_server: LocalModelServer) -> None:
    result, (first, second) = _corrected_once(bench, model_server, FEEDBACK, KEEPS_REQUEST)
    evidence = second.split("## Where your spec and the real system differ", 1)[1].split("## Your last answer", 1)[0]
    assert "correction 1 of at most 3" in " ".join(second.split())
    assert "Unlock" in evidence and "windows pass" in evidence and "RequestConsistency" in evidence
    # Only the feedback seeds' windows, and never the reference or a template's text.
    assert "seed-1.ndjson" in evidence or "seed-2.ndjson" in evidence
    assert "seed-3" not in evidence and "seed-4" not in evidence
    assert "MODULE" not in evidence and "==" not in evidence and "Sysmo" not in evidence
    assert first in second
    cell = only_cell(bench.path)
    assert cell["model"] == "tiny@feedback" and cell["composite"] == 1.0
    conformance = cell["phases"]["conformance"]
    assert "on the traces of seed(s) 3, 4" in conformance["reason"]
    generation = cell["generation"]
    assert generation["scored_attempt"] == 2 and generation["requests"] == 2 and generation["fits_feedback"] is False
    before, after = generation["attempts"]
    assert before["phases"]["conformance"] < 1.0 and before["phases"]["conformance_shown"] < 1.0
    assert before["phases"]["invariants"] < 1.0 and before["composite"] < after["composite"] == 1.0
    assert after["phases"]["conformance"] == after["phases"]["conformance_shown"] == 1.0
    result.stdout.fnmatch_lines(["tiny@feedback: P3 after each round (held-out): 1: 0.80, 2: 1.00; first shot 0.9* -> "
                                 "corrected 1.00; fits the feedback: 0 of 1 cells"])
    page = (bench.path / ".sysmobench" / "leaderboard.html").read_text()
    assert "attempt 2 of 4; first shot 0.9" in page and "fits the feedback" not in page

    again = bench.runpytest_subprocess(*FEEDBACK)
    again.assert_outcomes(passed=4)
    assert model_server.count("tiny") == 2  # every round's answer is stored: a re-run asks nothing


DQUEUE = ROOT / "tasks" / "dqueue"
DQUEUE_SPEC = (DQUEUE / "reference" / "DQueue.tla").read_text()
OLDEST = """    /\\ inflight' = [inflight EXCEPT ![c] = Head(buf)]
    /\\ buf' = Tail(buf)"""
#: The server hands out the newest item instead of the oldest.
NEWEST = """    /\\ inflight' = [inflight EXCEPT ![c] = buf[Len(buf)]]
    /\\ buf' = SubPrefix(buf)"""


def _shown_states() -> str:
    """Every state of the dqueue traces feedback may show (seeds 1 and 2): what a spec that
    special-cases them tests for."""
    from pytest_sysmobench import load_task
    from pytest_sysmobench.tla.values import tla_literal
    from pytest_sysmobench.traces import load_corpus

    task = load_task(DQUEUE)
    states = set()
    for trace in load_corpus(ROOT / "data" / "traces" / "dqueue", task).of_seeds(task.harness.feedback_seeds).traces:
        for s in trace.states:
            states.add("<<" + ", ".join(tla_literal(s[v]) for v in ("queue", "produced", "pc", "reply", "received"))
                       + ">>")
    return "{" + ",\n    ".join(sorted(states)) + "}"


#: The reference's names and values as the task's (so the spec needs no mapping).
CANONICAL = {"buf": "queue", "made": "produced", "where": "pc", "inflight": "reply", "got": "received",
             "Cs": "Consumers", "Cap": "Capacity", '"free"': '"idle"', '"asked"': '"waiting"', '"sent"': '"answered"'}


def _canonical(text: str) -> str:
    return re.sub(r'\b(buf|made|where|inflight|got|Cs|Cap)\b|"(free|asked|sent)"',
                  lambda m: CANONICAL[m.group(0)], text)


def _dqueue(deliver: str, shown: bool = False) -> str:
    text = DQUEUE_SPEC.replace(OLDEST, deliver).replace("Init ==", "SubPrefix(s) == [k \\in 1..(Len(s) - 1) |-> s[k]]\n\nInit ==", 1)
    assert deliver in text
    text = _canonical(text)
    if shown:
        text = text.replace("Init ==", f"Shown == {_shown_states()}\n\nInit ==", 1)
    cfg = _canonical((DQUEUE / "reference" / "DQueue.cfg").read_text())
    return f"```tla\n{text}```\n\n```cfg\n{cfg}```\n"


#: The correction that special-cases every state it was shown: the oldest item there, the newest
#: anywhere else.
HARD_CODED = """    /\\ LET shown == <<buf, made, where, inflight, got>> \\in Shown
       IN /\\ inflight' = [inflight EXCEPT ![c] = IF shown THEN Head(buf) ELSE buf[Len(buf)]]
          /\\ buf' = IF shown THEN Tail(buf) ELSE SubPrefix(buf)"""


def test_a_correction_that_special_cases_the_states_it_was_shown_is_flagged(
        pytester: pytest.Pytester, model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shown the windows where its queue hands out the newest item, the model answers with a
    spec that hands out the oldest in exactly the states it was shown: P3 on the feedback
    seeds is 1.0, on the held-out seeds (states it never saw) it is not, and the board says
    it fits the feedback."""
    model_project(pytester, model_server, monkeypatch, "dqueue")
    model_server.enqueue("tiny", _dqueue(NEWEST), _dqueue(HARD_CODED, shown=True))
    result = pytester.runpytest_subprocess(*FEEDBACK, "--sysmobench-corrections", "1")
    assert model_server.count("tiny") == 2
    generation = only_cell(pytester.path)["generation"]
    first, second = generation["attempts"]
    assert first["phases"]["conformance_shown"] < 1.0
    assert second["phases"]["conformance_shown"] == 1.0 > second["phases"]["conformance"]
    assert generation["fits_feedback"] is True
    result.stdout.fnmatch_lines(["tiny@feedback: P3 after each round (held-out): *; fits the feedback: 1 of 1 cells"])
    page = (pytester.path / ".sysmobench" / "leaderboard.html").read_text()
    assert "<b>fits the feedback</b> (P3 1.00 on the traces it was shown, 0.75 held out)" in page
