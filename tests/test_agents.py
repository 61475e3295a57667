"""Coding agents on the board (``agent:NAME``): scripted agents run as their command in a
bubblewrap sandbox, with the check tool (real SANY and TLC, the cell's own P1 and P2), a time
limit, and nothing of the answer key in sight."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from projects import benchmark_project

ROOT = Path(__file__).resolve().parents[1]
SPIN = ROOT / "tasks" / "spin"
REFERENCE = (SPIN / "reference" / "Spin.tla").read_text()

FIXER = r'''
import json, os, shutil, subprocess
here = os.path.dirname(os.path.abspath(__file__))
module = os.environ["SYSMOBENCH_MODULE"]
assert os.path.isfile("PROMPT.md") and os.path.isfile("TASK.json") and os.path.isdir("source")
shutil.copy(os.path.join(here, "broken.tla"), module + ".tla")
shutil.copy(os.path.join(here, "Spin.cfg"), module + ".cfg")
for attempt in (1, 2):
    done = subprocess.run([os.environ["SYSMOBENCH_CHECK"], module + ".tla"], capture_output=True, text=True)
    verdict = json.loads(done.stdout)
    print("check", attempt, "exit", done.returncode, "passed", verdict["passed"], verdict["phases"]["syntax"]["reason"][:200])
    if verdict["passed"]:
        break
    shutil.copy(os.path.join(here, "good.tla"), module + ".tla")
json.dump({"cost_usd": 0.25, "prompt_tokens": 1200}, open("usage.json", "w"))
print("env", os.environ.get("SECRET"), os.environ.get("HIDDEN"))
'''

#: An agent that asks its check tool what P3 and P4 find of a spec that forgets the call's kind
#: on Unlock, prints it, and then leaves the right spec.
LEARNER = r'''
import json, os, shutil, subprocess
here = os.path.dirname(os.path.abspath(__file__))
module = os.environ["SYSMOBENCH_MODULE"]
shutil.copy(os.path.join(here, "keeps.tla"), module + ".tla")
shutil.copy(os.path.join(here, "Spin.cfg"), module + ".cfg")
done = subprocess.run([os.environ["SYSMOBENCH_CHECK"], "--conformance", module + ".tla"], capture_output=True, text=True)
found = json.loads(done.stdout)["conformance"]
print("conformance p3", found["p3"], "p4", found["p4"])
print("EVIDENCE", found["evidence"], "END")
shutil.copy(os.path.join(here, "good.tla"), module + ".tla")
'''
SLEEPER = "import time\nprint('thinking', flush=True)\ntime.sleep(600)\n"

SNOOP = r'''
import os, shutil
found = []
for top in ("/", os.environ.get("PROJECT", "/")):
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not (folder == "/" and d in ("proc", "sys", "dev"))]
        if folder.endswith("/reference") and "/tasks/" in folder:
            found += [os.path.join(folder, f) for f in files if f.endswith(".tla")]
for guess in (os.path.join(os.environ.get("PROJECT", "/"), "tasks/spin/reference/Spin.tla"),):
    if os.path.exists(guess):
        found.append(guess)
print("found", len(found), found[:5])
if found:
    shutil.copy(found[0], os.environ["SYSMOBENCH_MODULE"] + ".tla")
'''

ESCAPE = r'''
import os
target = os.environ["TARGET"]
for path in (target, "/work/escaped.txt"):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as out:
            out.write("out")
        print("wrote", path)
    except OSError as exc:
        print("refused", path, exc)
'''


CRASHER = "import sys\nprint('bwrap: pretending the sandbox broke')\nsys.exit(3)\n"

#: An agent that forks children that stay, asks for more memory than it may have, fills a file
#: past its limit, then prints without end (its transcript is a file held to the same limit).
HOG = r'''
import os, subprocess, time
children, refused = [], 0
for _ in range(200):  # forks without end, each child staying
    try:
        pid = os.fork()
    except BlockingIOError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    children.append(pid)
print("forks", len(children), "refused", refused, flush=True)
for pid in children[5:]:  # room for what follows; five stay until the run ends
    os.kill(pid, 9)
    os.waitpid(pid, 0)
try:
    hoard = bytearray(600 << 20)
    print("memory granted", len(hoard), flush=True)
except MemoryError:
    print("memory refused", flush=True)
done = subprocess.run(["/bin/sh", "-c", "head -c 50000000 /dev/zero > big.bin"])
print("head exit", done.returncode, "size", os.path.getsize("big.bin"), flush=True)
os.execv("/bin/sh", ["sh", "-c", "head -c 50000000 /dev/zero"])
'''

#: The model key the benchmark holds; the agent's script knows it only backwards, so that its
#: own text is no find.
KEY = "sk-agent-never-sees-this-7f3a"

ASKER = r'''
import json, os, shutil, urllib.error, urllib.request
here = os.path.dirname(os.path.abspath(__file__))
secret = KEY_BACKWARDS[::-1].encode()
found = [name for name, value in os.environ.items() if secret in value.encode()]
for folder, dirs, files in os.walk("/"):
    if folder == "/":
        dirs[:] = [d for d in dirs if d not in ("sys", "dev", "usr")]
    if folder == "/proc":
        dirs[:] = [d for d in dirs if d.isdigit()]
    for name in files:
        path = os.path.join(folder, name)
        if folder.startswith("/proc") and name not in ("environ", "cmdline"):
            continue
        try:
            if os.path.isfile(path) and os.path.getsize(path) < 4_000_000 and secret in open(path, "rb").read():
                found.append(path)
        except OSError:
            pass
print("key found", len(found), found[:3])
base, token = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]

def ask(text, stream=False, auth=token):
    body = json.dumps({"model": "any", "messages": [{"role": "user", "content": text}], "stream": stream}).encode()
    request = urllib.request.Request(base + "/chat/completions", body,
                                     {"Authorization": "Bearer " + auth, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()

print("wrong token", ask("hello", auth="guess")[0])
status, first = ask("write the spin spec")
open(os.environ["SYSMOBENCH_MODULE"] + ".tla", "w").write(json.loads(first)["choices"][0]["message"]["content"])
shutil.copy(os.path.join(here, "Spin.cfg"), os.environ["SYSMOBENCH_MODULE"] + ".cfg")
status, second = ask("and once more", stream=True)
print("stream", status, second.count("data: "), second.rstrip().endswith("data: [DONE]"))
status, third = ask("and again")
print("third", status, json.loads(third)["error"]["code"])
'''.replace("KEY_BACKWARDS", repr(KEY[::-1]))


@pytest.fixture
def bench(pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory) -> pytest.Pytester:
    benchmark_project(pytester, "spin")
    agents_dir = tmp_path_factory.mktemp("agents")
    for name, script in (("fixer", FIXER), ("sleeper", SLEEPER), ("snoop", SNOOP), ("escape", ESCAPE),
                         ("crasher", CRASHER), ("asker", ASKER), ("hog", HOG), ("learner", LEARNER)):
        (agents_dir / f"{name}.py").write_text(script)
    (agents_dir / "good.tla").write_text(REFERENCE)
    (agents_dir / "broken.tla").write_text(REFERENCE.replace("Init ==", "Init ==\n    /\\ (", 1))
    (agents_dir / "keeps.tla").write_text(REFERENCE.replace('''    /\\ callType' = [callType EXCEPT ![t] = "none"]''',
                                                            "    /\\ UNCHANGED callType", 1))
    shutil.copy(SPIN / "reference" / "Spin.cfg", agents_dir / "Spin.cfg")
    agents = {name: {"command": ["/usr/bin/python3", str(agents_dir / f"{name}.py")], "timeout_s": 120,
                     "max_checks": 5, "read_only": [str(agents_dir)]}
              for name in ("fixer", "snoop", "escape", "crasher", "asker", "hog", "learner")}
    agents["sleeper"] = {"command": ["/usr/bin/python3", str(agents_dir / "sleeper.py")], "timeout_s": 3,
                         "read_only": [str(agents_dir)]}
    agents["fixer"]["pass_env"] = ["SECRET"]
    agents["snoop"]["env"] = {"PROJECT": str(pytester.path)}
    agents["escape"]["env"] = {"TARGET": str(pytester.path / "escaped" / "out.txt")}
    agents["asker"].update(model="local", budget={"requests": 2})
    agents["hog"].update(max_memory_mb=400, max_file_mb=10, max_processes=40)
    (pytester.path / "sysmobench-models.yaml").write_text(yaml.safe_dump({"models": {}, "agents": agents}))
    return pytester


def _cells(path: Path) -> dict[str, dict[str, Any]]:
    return {c["model"]: c for c in json.loads((path / ".sysmobench" / "leaderboard.json").read_text())["cells"]}


def _transcript(path: Path, agent: str) -> str:
    (found,) = (path / ".sysmobench" / "runs").glob(f"*/spin/agent_{agent}/s0/answer-agent.md")
    return found.read_text()


RUN = ("benchmarks", "-p", "no:cacheprovider", "--sysmobench-repair", "none")


def test_an_agent_that_checks_its_broken_spec_and_fixes_it_scores_full_marks(bench: pytest.Pytester,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET", "s3cret")  # passed in by name (pass_env)
    monkeypatch.setenv("HIDDEN", "h1dden")  # not passed: the sandbox starts from an empty environment
    result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:fixer", "-m", "p1 or p2")
    result.assert_outcomes(passed=2, deselected=2)
    cell = _cells(bench.path)["agent:fixer"]
    assert cell["phases"]["syntax"]["score"] == 1.0 and cell["phases"]["runtime"]["score"] == 1.0
    generation = cell["generation"]
    assert generation["checks"] == 2 and generation["exit_code"] == 0 and not generation["timed_out"]
    assert generation["usage_reported"] == {"cost_usd": 0.25, "prompt_tokens": 1200}
    assert generation["equals_reference"] is True  # the scripted agent carries the reference: flagged
    transcript = _transcript(bench.path, "fixer")
    assert "check 1 exit 1 passed False" in transcript and "check 2 exit 0 passed True" in transcript
    assert "env s3cret None" in transcript
    page = (bench.path / ".sysmobench" / "leaderboard.html").read_text()
    assert "<td>agent</td>" in page and "2 checks of 5" in page and "reported: 1200 tokens, $0.2500" in page
    assert "<b>equals the reference</b>" in page
    links = re.findall(r'<a href="([^"]+)">files</a>', page)
    assert len(links) == 1 and (bench.path / ".sysmobench" / html.unescape(links[0]) / "answer-agent.md").is_file()
    (run,) = (bench.path / ".sysmobench" / "runs").iterdir()
    run_page = (run / "leaderboard.html").read_text()  # the run's own copy links to the same folder
    (link,) = re.findall(r'<a href="([^"]+)">files</a>', run_page)
    assert (run / html.unescape(link) / "prompt-agent.md").is_file()


def test_an_agent_that_never_ends_is_stopped_at_its_limit_and_scores_zero(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:sleeper", "-m", "p1")
    result.assert_outcomes(failed=1, deselected=3)
    cell = _cells(bench.path)["agent:sleeper"]
    assert cell["phases"]["syntax"]["score"] == 0.0 and "ran out of time (3 s)" in cell["phases"]["syntax"]["reason"]
    assert cell["generation"]["timed_out"] is True and cell["generation"]["seconds"] < 60
    assert "thinking" in _transcript(bench.path, "sleeper")


def test_an_agent_finds_no_answer_key_and_cannot_write_outside_its_workspace(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:snoop,agent:escape,agent:crasher", "-m", "p1")
    result.assert_outcomes(failed=3, deselected=9)
    cells = _cells(bench.path)
    assert "found 0 []" in _transcript(bench.path, "snoop")
    assert "ended without a spec" in cells["agent:snoop"]["phases"]["syntax"]["reason"]
    assert not (bench.path / "escaped").exists() and not Path("/work/escaped.txt").exists()
    assert "ended without a spec" in cells["agent:escape"]["phases"]["syntax"]["reason"]
    # A failing agent is charged for it, whatever it prints: the sandbox ran a known-good command.
    crashed = cells["agent:crasher"]["phases"]["syntax"]
    assert crashed["score"] == 0.0 and "failed (exit code 3)" in crashed["reason"]


def test_a_sandbox_that_cannot_run_anything_is_the_benchmarks_loss(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_sysmobench import sandbox
    from pytest_sysmobench.sources._agent import AgentSource

    monkeypatch.setattr(sandbox, "command", lambda *args, **kw: ["/bin/sh", "-c", "echo 'bwrap: no namespaces'; exit 1"])
    why = AgentSource._sandbox_broken(tmp_path, tmp_path, tmp_path)
    assert why == "the sandbox cannot run a command on this machine: bwrap: no namespaces"


def test_an_unknown_agent_is_a_usage_error_naming_the_close_one(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:fixr")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*agent:fixr*did you mean agent:fixer?*"])


def test_the_check_command_prints_what_an_agents_check_tool_prints(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_sysmobench.cli import main

    spec = tmp_path / "Spin.tla"
    spec.write_text(REFERENCE.replace("    /\\ UNCHANGED callType\n", "", 1))
    shutil.copy(SPIN / "reference" / "Spin.cfg", tmp_path / "Spin.cfg")
    args = ["check", "spin", str(spec), "--tasks", str(ROOT / "tasks"), "--traces", str(ROOT / "data" / "traces")]
    assert main(args) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["passed"] is False and verdict["phases"]["syntax"]["score"] == 1.0
    assert verdict["phases"]["runtime"]["status"] == "failed" and "Acquire" in verdict["phases"]["runtime"]["reason"]
    spec.write_text(REFERENCE)
    assert main(args) == 0 and json.loads(capsys.readouterr().out)["passed"] is True
    assert main(["check", "spin", str(tmp_path / "none.tla"), "--tasks", str(ROOT / "tasks")]) == 4


def test_an_agent_reaches_its_model_through_its_cells_endpoint_never_sees_the_key_and_is_counted(
        bench: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_server import LocalModelServer, Reply

    monkeypatch.setenv("MODEL_KEY", KEY)
    with LocalModelServer() as server:
        server.enqueue("local-model", Reply.text(REFERENCE, prompt_tokens=111, completion_tokens=222),
                       Reply.text("and so on", prompt_tokens=5, completion_tokens=7))
        catalog = yaml.safe_load((bench.path / "sysmobench-models.yaml").read_text())
        catalog["models"] = {"local": {"route": "openai/local-model", "api_base": server.base_url,
                                       "api_key_env": "MODEL_KEY", "input_cost_per_token": 0.001,
                                       "output_cost_per_token": 0.002}}
        (bench.path / "sysmobench-models.yaml").write_text(yaml.safe_dump(catalog))
        result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:asker", "-m", "p1 or p2")
        asked = [r for r in server.requests if r.path.endswith("/chat/completions")]
    result.assert_outcomes(passed=2, deselected=2)
    transcript = _transcript(bench.path, "asker")
    assert "key found 0 []" in transcript, transcript
    assert "wrong token 401" in transcript and "stream 200 3 True" in transcript  # two events and [DONE]
    assert "third 429 budget_spent" in transcript  # a budget of two requests
    # The model saw the key, from the benchmark; the agent's two requests, and no third.
    assert len(asked) == 2 and {r.headers.get("authorization") for r in asked} == {f"Bearer {KEY}"}
    cell = _cells(bench.path)["agent:asker"]
    made = cell["generation"]
    assert (made["requests"], made["prompt_tokens"], made["completion_tokens"]) == (2, 116, 229)
    assert made["cost_usd"] == pytest.approx(116 * 0.001 + 229 * 0.002)
    assert made["model_use"]["refused"] == 1 and made["model_use"]["budget_spent"] == "2 requests"
    page = (bench.path / ".sysmobench" / "leaderboard.html").read_text()
    assert "345 tokens, $0.5740" in page and "<b>model budget spent</b> (2 requests)" in page


def test_an_agent_is_held_to_its_processes_memory_and_file_size_and_its_transcript_to_its_cap(
        bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:hog", "-m", "p1")
    result.assert_outcomes(failed=1, deselected=3)
    cell = _cells(bench.path)["agent:hog"]
    reason = cell["phases"]["syntax"]["reason"]
    assert "was stopped writing a file beyond its limit of 10 MB (exit code" in reason, reason
    transcript = _transcript(bench.path, "hog")
    forks = re.search(r"forks (\d+) refused (\d+)", transcript)
    assert forks is not None and int(forks.group(1)) < 40 and int(forks.group(1)) + int(forks.group(2)) == 200
    assert cell["generation"]["processes_peak"] <= cell["generation"]["max_processes"] == 40
    assert _none_left("hog.py")  # its children were killed with it
    assert "memory refused" in transcript and f"head exit 153 size {10 << 20}" in transcript
    # Its printing was cut at 10 MB on disk, and the board keeps a head and a tail of that.
    assert "bytes left out" in transcript and len(transcript.encode()) < 2 << 20


def test_an_agent_asks_its_check_tool_what_p3_and_p4_find_and_is_scored_on_traces_it_was_not_shown(
        bench: pytest.Pytester) -> None:
    """The check tool's --conformance shows what P3 finds on the task's feedback traces (seeds 1
    and 2) and what P4 finds; the agent's cell is scored on seeds 3 and 4."""
    result = bench.runpytest_subprocess(*RUN, "--sysmobench-models", "agent:learner", "-m", "p1 or p3")
    result.assert_outcomes(passed=2, deselected=2)
    transcript = _transcript(bench.path, "learner")
    found = transcript.split("EVIDENCE", 1)[1].split("END", 1)[0]
    assert "conformance p3 0.8 p4 0.9" in transcript
    assert "Unlock" in found and "windows pass" in found and "RequestConsistency" in found
    assert "seed-1.ndjson" in found and "seed-3" not in found and "seed-4" not in found
    conformance = _cells(bench.path)["agent:learner"]["phases"]["conformance"]
    assert conformance["score"] == 1.0 and "on the traces of seed(s) 3, 4" in conformance["reason"]


def _none_left(script: str) -> bool:
    """Whether no process runs ``script`` any more."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if script.encode() in cmdline.read_bytes():
                return False
        except OSError:
            pass
    return True
