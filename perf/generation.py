"""Generation speed and cost figures against a local OpenAI-compatible server (a benchmark that
prints figures, never a timed assertion).

    python perf/generation.py                 # 2 tasks x 8 samples, -n 2, 0.2 s simulated latency
    python perf/generation.py --samples 4 --latency 0

1. Cold: ``pytest benchmarks -m p1 -n 2`` asking every cell's prompt: wall time, requests the
   server saw, prompts per second.
2. Warm: the same command again: wall time and requests (must be 0: everything is stored).
3. An answer-store hit, measured in process: the cost of not asking.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import yaml  # noqa: E402
from llm_server import LocalModelServer, Reply  # noqa: E402

from pytest_sysmobench.llm import Client, ModelConfig  # noqa: E402
from pytest_sysmobench.answers import AnswerStore  # noqa: E402

TASKS = ("spin", "mutex")


def _answer(task: str) -> str:
    module = "Spin" if task == "spin" else "Mutex"
    spec = (ROOT / "tasks" / task / "reference" / f"{module}.tla").read_text()
    cfg = (ROOT / "tasks" / task / "reference" / f"{module}.cfg").read_text()
    return f"```tla\n{spec}```\n```cfg\n{cfg}```\n"


def _bench_dir(work: Path, server: LocalModelServer) -> Path:
    for task in TASKS:
        shutil.copytree(ROOT / "tasks" / task, work / "tasks" / task)
    (work / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", work / "benchmarks")
    (work / "pytest.ini").write_text("[pytest]\n")
    config = {"models": {"tiny": {"route": "openai/tiny", "api_base": server.base_url, "api_key_env": "SYSMO_BENCH_KEY",
                                  "timeout": 30, "backoff_s": 0.05}}}
    (work / "sysmobench-models.yaml").write_text(yaml.safe_dump(config))
    return work


def _run(work: Path, samples: int) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "-q", "-m", "p1", "-n", "2",
         "--sysmobench-models", "tiny", "--sysmobench-samples", str(samples)],
        cwd=work, check=False, capture_output=True, env={**os.environ, "SYSMO_BENCH_KEY": "sk-local"},
    )
    return time.perf_counter() - started


def plugin_runs(samples: int, latency: float) -> None:
    with LocalModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        answers = {"Spin": _answer("spin"), "Mutex": _answer("mutex")}

        def reply(body: dict) -> Reply:
            prompt = str(body["messages"][-1]["content"])
            text = answers["Spin"] if "SpinMutex" in prompt else answers["Mutex"]
            return Reply.delay(latency, Reply.text(text)) if latency else Reply.text(text)

        server.respond(reply)
        work = _bench_dir(Path(tmp), server)
        prompts = len(TASKS) * samples
        cold = _run(work, samples)
        cold_requests = server.count()
        warm = _run(work, samples)
        warm_requests = server.count() - cold_requests
        print(f"cold  -n 2: {prompts} prompts, {cold_requests} requests, {cold:.1f} s wall, "
              f"{cold_requests / cold:.2f} prompts/s (server latency {latency:.2f} s; includes P1 SANY and start-up)")
        print(f"warm  -n 2: {warm_requests} requests, {warm:.1f} s wall")


def store_hit_cost(repeat: int) -> None:
    with LocalModelServer(default="answer") as server, tempfile.TemporaryDirectory() as tmp:
        os.environ["SYSMO_BENCH_KEY"] = "sk-local"
        config = ModelConfig(name="tiny", route="openai/tiny", api_base=server.base_url, api_key_env="SYSMO_BENCH_KEY")
        store = AnswerStore(Path(tmp))
        client = Client(config, Path(tmp) / "cooldown")
        prompt = "x" * 200_000
        client.complete("warm up: import litellm before timing")
        started = time.perf_counter()
        store.answer(client, prompt, 0, "direct")
        miss = time.perf_counter() - started
        hits = []
        for _ in range(repeat):
            started = time.perf_counter()
            store.answer(client, prompt, 0, "direct")
            hits.append(time.perf_counter() - started)
        print(f"answer store, 200 KB prompt: miss {miss * 1000:.1f} ms (one local HTTP request), "
              f"hit {statistics.median(hits) * 1000:.2f} ms median of {repeat}; server saw {server.count() - 1} request(s) after the warm-up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    store_hit_cost(50)
    plugin_runs(args.samples, args.latency)


if __name__ == "__main__":
    main()
