"""Generation speed and cost figures against a local OpenAI-compatible server (a benchmark that
prints figures, never a timed assertion).

    python perf/generation.py                 # 2 tasks x 8 samples, -n 2, 0.2 s simulated latency
    python perf/generation.py --samples 4 --latency 0

1. Cold: ``pytest benchmarks -m p1 -n 2`` asking every cell's prompt: wall time, requests the
   server saw, prompts per second.
2. Warm: the same command again: wall time and requests (must be 0: everything is stored).
3. An answer-store hit, measured in process: the cost of not asking.
4. A sweep asking ahead: 16 samples of one cell at a fixed server latency, generation only
   (``-m p1`` with the verdict cache on, so scoring is one SANY run), with one request in flight
   (``--sysmobench-max-connections 0``: each cell asks when it runs) against 16: seconds and
   the ratio.
5. A sweep's wall time against its bound, ``latency x ceil(requests / connections) + scoring``,
   where scoring is the same run's P1 and P2 (no verdict cache: every sample checked) with every
   answer stored, on the same ``-n``.

    python perf/generation.py --only sweep --latency 3   # parts 4 and 5 at 3 s per answer
"""

from __future__ import annotations

import argparse
import math
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


def _sweep(work: Path, samples: int, *extra: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "-q",
                           "--sysmobench-models", "tiny", "--sysmobench-samples", str(samples), *extra],
                          cwd=work, check=False, capture_output=True, env={**os.environ, "SYSMO_BENCH_KEY": "sk-local"})
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest exited {done.returncode}:\n{done.stdout.decode()[-2000:]}")
    return time.perf_counter() - started


def sweeps(samples: int, latency: float, workers: str) -> None:
    """Parts 4 and 5: the same cells asked one at a time and many at once."""
    with LocalModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        answer = _answer("spin")
        server.respond(lambda body: Reply.delay(latency, Reply.text(answer)))
        work = _bench_dir(Path(tmp), server)
        times = {}
        for connections in (0, samples):
            shutil.rmtree(work / ".sysmobench", ignore_errors=True)
            before = server.count()
            args = ("-k", "spin", "-m", "p1", "-n", "0", "--sysmobench-max-connections", str(connections))
            cold = _sweep(work, samples, *args)
            assert server.count() - before == samples, "every sample asked once"
            warm = _sweep(work, samples, *args)  # the same run with every answer stored: start-up and SANY
            times[connections] = (cold, cold - warm)
        (serial, serial_gen), (ahead, ahead_gen) = times[0], times[samples]
        print(f"generation, {samples} samples of spin at {latency:.2f} s per answer, one process: one request "
              f"in flight {serial:.1f} s wall ({serial_gen:.1f} s waiting for answers), {samples} in flight "
              f"{ahead:.1f} s wall ({ahead_gen:.1f} s waiting): {serial_gen / max(ahead_gen, 0.01):.1f}x less "
              f"waiting, {serial / ahead:.1f}x less wall")
        connections = 4
        shutil.rmtree(work / ".sysmobench", ignore_errors=True)
        args = ("-k", "spin", "-m", "p1 or p2", "-n", workers, "--sysmobench-no-cache",
                "--sysmobench-max-connections", str(connections))
        wall = _sweep(work, samples, *args)
        scoring = _sweep(work, samples, *args)  # every answer stored now: what is left is the tools' work
        bound = latency * math.ceil(samples / connections) + scoring
        print(f"sweep, {samples} cells (P1+P2, no verdict cache) at {latency:.2f} s per answer, {connections} "
              f"connections, -n {workers}: {wall:.1f} s wall; bound latency x ceil({samples}/{connections}) + "
              f"scoring {scoring:.1f} s = {bound:.1f} s; wall/bound {wall / bound:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--only", choices=("store", "plugin", "sweep"), default=None)
    parser.add_argument("-n", dest="workers", default="2", help="xdist workers for the sweeps (default 2)")
    args = parser.parse_args()
    if args.only in (None, "store"):
        store_hit_cost(50)
    if args.only in (None, "plugin"):
        plugin_runs(args.samples, args.latency)
    if args.only in (None, "sweep"):
        sweeps(16, max(args.latency, 1.0) if args.only is None else args.latency, args.workers)


if __name__ == "__main__":
    main()
