"""Speed figures, printed side by side (a benchmark, never a timed assertion).

    python perf/bench.py            # everything
    python perf/bench.py --quick    # fewer repetitions

1. SANY per check: the long-lived driver against one JVM per check.
2. TLC per small model check: the driver against one JVM per check.
3. P3 windows: 1,000 windows checked in one batched TLC run against one TLC run per window
   (the latter measured on a sample and extrapolated).
4. P3 through a version-2 mapping (expressions, bags, records, internal steps) against the
   reference's plain mapping, per window, for spin and etcd.
5. ``pytest benchmarks --sysmobench-models reference``: wall time cold and warm (cached).
6. The default suite cold, serial against ``-n 2``.
7. The lead over one JVM per check, per task: the reference cell through the plugin (cold, and
   re-run with the verdict cache) against every SANY/TLC job of that cell run again the
   original's way (``java -cp tla2tools.jar tlc2.TLC ...``, one JVM each, serial, same files and
   flags, from the ``.run.json`` each job leaves), with the jobs' own time in the driver beside
   it (the floor no harness can go under).
8. Generated check modules written compactly against written out: P3 of etcd's reference with
   repeated values named once and long lines wrapped, against every state written in full on
   lines thousands of characters long; P4 of the records raftkvs spec with each mapped
   variable read once per template, against the mapping evaluated at every occurrence.
9. Mechanical repair, per cell: references broken in one way each (a Python-ism, a missing
   EXTENDS, a name in the wrong case, an action that leaves a variable unassigned) repaired
   cold, and again with the verdict cache: seconds and SANY/TLC/XML runs.
10. P3's window checks of each task's reference: the windows of every action in one TLC run
   against one run per action (no cache; runs and the jobs' own seconds).
11. P3 of each task's reference with its extra-step (precision) check against without it (no
   cache; the phase's seconds, its earlier phases done first): what asking the converse costs.
12. P4 of each task's reference with its check beyond the traces (a diagnostic) against without
   it (no cache; the phase's seconds, its earlier phases done first).

    python perf/bench.py --only 7     # one part
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_sysmobench import PHASES, load_task, load_tasks  # noqa: E402
from pytest_sysmobench.phases import conformance, invariants  # noqa: E402
from pytest_sysmobench.tla import modules, values  # noqa: E402
from pytest_sysmobench.sources import ReferenceSource, ReplaySource  # noqa: E402
from pytest_sysmobench.phases import CellContext  # noqa: E402
from pytest_sysmobench.phases._codec import Codec, constants_config  # noqa: E402
from pytest_sysmobench.phases.conformance import window_module  # noqa: E402
from pytest_sysmobench.session import Scorer  # noqa: E402
from pytest_sysmobench.tla.driver import ToolRunner  # noqa: E402
from pytest_sysmobench.tla.jar import find_jar, find_java  # noqa: E402
from pytest_sysmobench.tla.toolchain import LIBRARY_DIR, Toolchain  # noqa: E402
from pytest_sysmobench.cache import Cache  # noqa: E402
from pytest_sysmobench.traces import load_corpus  # noqa: E402

SPIN = ROOT / "tasks" / "spin" / "reference"


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:8.1f} ms"


def _time(call, repeat: int) -> list[float]:  # noqa: ANN001
    call()  # warm-up: the driver's first job starts the JVM
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def tool_runs(work: Path, repeat: int) -> None:
    jar, java = find_jar(), find_java()
    spec_dir = work / "spec"
    spec_dir.mkdir()
    for name in ("Spin.tla", "Spin.cfg"):
        (spec_dir / name).write_text((SPIN / name).read_text())
    args = ["-config", "Spin.cfg", "-workers", "1"]
    rows = []
    for mode, prefer in (("driver", True), ("one JVM per check", False)):
        with ToolRunner(jar.path, java=java.java, javac=java.javac, work_dir=work / mode.replace(" ", "-"),
                        prefer_driver=prefer) as runner:
            sany = _time(lambda: runner.sany(spec_dir, "Spin", library_dirs=[LIBRARY_DIR]), repeat)
            tlc = _time(lambda: runner.tlc(spec_dir, "Spin", args, library_dirs=[LIBRARY_DIR]), repeat)
            rows.append((mode, runner.mode, sany, tlc))
    print("1-2. SANY and TLC per check (spin reference; median)")
    print(f"     {'mode':<20} {'runner':<8} {'SANY':>12} {'TLC BFS':>12}")
    for mode, actual, sany, tlc in rows:
        print(f"     {mode:<20} {actual:<8} {_median_ms(sany)} {_median_ms(tlc)}")


def windows(work: Path, count: int, single_sample: int) -> None:
    task = load_task(ROOT / "tasks" / "spin")
    corpus = load_corpus(ROOT / "data" / "traces" / "spin", task)
    all_windows = [w for t in corpus.traces for w in t.windows() if w.action == "Unlock"]
    batch = (all_windows * (count // max(len(all_windows), 1) + 1))[:count]
    # Distinct windows are deduplicated by the phase; here every window is checked as given.
    jar, java = find_jar(), find_java()
    with ToolRunner(jar.path, java=java.java, javac=java.javac, work_dir=work / "win") as runner:
        toolchain = Toolchain(jar, java, runner, Cache(None))
        candidate = ReferenceSource().candidate(task, 0)
        ctx = CellContext(task, candidate, toolchain, work / "cell", work / "traces")
        codec = Codec(candidate.mapping, tuple(candidate.declared()[1]))
        config = constants_config(ctx, codec.mapping, corpus.traces[0].constants)

        def run(ws, job: str) -> float:  # noqa: ANN001
            module = window_module(ctx, codec, f"Spin_SysmoWin_{job}", "Unlock", ws)
            cfg = config.with_section("INIT", ["SysmoInit"]).with_section("NEXT", ["SysmoNext"]).render()
            start = time.perf_counter()
            result = toolchain.tlc(work / "jobs" / job, {**ctx.spec_files(), f"{module.name}.tla": module.text,
                                   f"{module.name}.cfg": cfg}, module.name,
                                   ["-config", f"{module.name}.cfg", "-deadlock"], timeout_s=300)
            elapsed = time.perf_counter() - start
            assert result.result.verdict.value == "OK", result.result.summary()
            return elapsed

        run(batch[:1], "warm")
        batched = run(batch, "batch")
        singles = [run([w], f"single{i}") for i, w in enumerate(batch[:single_sample])]
    per_single = statistics.median(singles)
    print(f"3.   P3 windows (Unlock windows of the spin traces, {count} windows, not deduplicated)")
    print(f"     one batched TLC run: {batched * 1000:8.1f} ms total = {batched / count * 1000:6.3f} ms per window "
          f"({count / batched:7.0f} windows/s)")
    print(f"     one TLC run each:    {per_single * 1000:8.1f} ms per window (median of {single_sample}), "
          f"{per_single * count:6.1f} s for {count} ({1 / per_single:7.1f} windows/s)")


def mapped_windows(work: Path, tasks: tuple[str, ...]) -> None:
    """P3 of a foreign-vocabulary spec through its version-2 mapping against the reference's."""
    foreign = ROOT / "tests" / "data" / "foreign"
    print("4.   P3 through a version-2 mapping against the reference's plain mapping (whole phase, no cache)")
    print(f"     {'task':<6} {'spec':<22} {'windows':>8} {'P3 time':>10} {'per window':>12} {'ratio':>6}")
    with Scorer(work / "mapped", use_cache=False, traces_dir=ROOT / "data" / "traces") as scorer:
        for name in tasks:
            task = load_task(ROOT / "tasks" / name)
            rows = []
            for label, source in (("reference (v1)", ReferenceSource()), *(
                    (f"{flavour} (v2)", ReplaySource(foreign / flavour)) for flavour in ("records", "sets"))):
                cell = scorer.cell(task, source)
                cell.result("runtime")  # the gate, not timed
                start = time.perf_counter()
                result = cell.result("conformance")
                elapsed = time.perf_counter() - start
                rows.append((label, result.details.get("windows") or 0, elapsed, result.status.value))
            base = rows[0][2] / max(rows[0][1], 1)
            for label, count, elapsed, status in rows:
                per = elapsed / max(count, 1)
                print(f"     {name:<6} {label:<22} {count:>8} {elapsed:>8.2f} s {per * 1000:>9.2f} ms {per / base:>5.2f}x"
                      + ("" if status == "passed" else f"  ({status})"))


def whole_benchmark(work: Path) -> None:
    out = work / "bench-out"
    figures = []
    for label in ("cold", "warm"):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "benchmarks", "-q", "-p", "no:cacheprovider",
             "--sysmobench-models", "reference", "--sysmobench-output", str(out)],
            cwd=ROOT, capture_output=True, text=True,
        )
        elapsed = time.perf_counter() - start
        runs = next((line for line in done.stdout.splitlines() if line.startswith("tool runs:")), "?")
        figures.append((label, elapsed, runs, done.returncode))
    print("5.   pytest benchmarks --sysmobench-models reference (wall time, includes pytest start-up)")
    for label, elapsed, runs, rc in figures:
        print(f"     {label:<5} {elapsed:6.2f} s   exit {rc}   {runs}")
    board = json.loads((out / "leaderboard.json").read_text())
    print("     composite per model: " + ", ".join(f"{m['model']} {m['composite']:.3f}" for m in board["models"]))


def parallel_benchmark(work: Path) -> None:
    """The default suite cold in one process and with -n 2 (the plugin's cell scheduler), no cache."""
    figures = {}
    for label, extra in (("serial", []), ("-n 2", ["-n", "2"])):
        out = work / f"parallel-{label.replace(' ', '')}"
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "benchmarks", "-q", "-p", "no:cacheprovider", "--sysmobench-no-cache",
             "--sysmobench-models", "reference", "--sysmobench-output", str(out), *extra],
            cwd=ROOT, capture_output=True, text=True,
        )
        figures[label] = (time.perf_counter() - start, done.returncode)
    print("6.   pytest benchmarks cold (no cache): one process against two workers")
    for label, (elapsed, rc) in figures.items():
        print(f"     {label:<6} {elapsed:6.2f} s   exit {rc}")
    print(f"     -n 2 is {figures['serial'][0] / figures['-n 2'][0]:.2f}x the speed of serial")


def _only(task: str) -> str:
    """A ``-k`` expression for one task's items: ``-k mutex`` alone would also select rwmutex."""
    others = sorted(p.name for p in (ROOT / "tasks").iterdir()
                    if (p / "task.yaml").is_file() and task in p.name and p.name != task)
    return " and not ".join([task, *others])


def _plugin_run(task: str, out: Path, cold: bool) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "benchmarks", "-q", "-p", "no:cacheprovider", "-k", _only(task),
         "--sysmobench-models", "reference", "--sysmobench-output", str(out),
         *(["--sysmobench-no-cache"] if cold else [])],
        cwd=ROOT, capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pytest -k {task} failed:\n{done.stdout[-2000:]}")
    return elapsed


def _one_jvm_per_check(records: list[tuple[Path, dict]], jar: Path, java: str) -> float:
    """Every job again as its own ``java`` process, the way the original benchmark runs TLC."""
    library = f"-DTLA-Library={LIBRARY_DIR}"
    start = time.perf_counter()
    for folder, record in records:
        if record["tool"] == "sany":
            command = [java, library, "-cp", str(jar), "tla2sany.SANY", f"{record['module']}.tla"]
        else:
            stop = [f"-Dtlc2.TLC.stopAfter={int(record['stop_after_s'])}"] if record.get("stop_after_s") else []
            command = [java, library, *stop, "-cp", str(jar), "tlc2.TLC", *record["args"], record["module"]]
        subprocess.run(command, cwd=folder, capture_output=True, timeout=600)
    return time.perf_counter() - start


def lead(work: Path, tasks: tuple[str, ...]) -> None:
    jar, java = find_jar(), find_java()
    print("7.   the lead over one JVM per check (reference cell; seconds; pytest start-up included on our side)")
    print(f"     {'task':<10} {'jobs':>5} {'jobs in driver':>14} {'ours cold':>10} {'1 JVM/check':>12} {'lead':>6}"
          f" {'ours re-run':>12} {'lead':>6}")
    for task in tasks:
        out = work / f"lead-{task}"
        cold = _plugin_run(task, out, cold=True)
        _plugin_run(task, out, cold=False)  # fills the verdict cache (the cold run did not use it)
        warm = _plugin_run(task, out, cold=False)
        cell = sorted((out / "runs").glob(f"*/{task}/reference/s0"))[0]  # run ids sort by time: the cold run
        runs = [(path.parent, json.loads(path.read_text())) for path in sorted(cell.rglob("*.run.json"))]
        runs = [(folder, record) for folder, record in runs if not record.get("cached")]
        floor = sum(record["elapsed_s"] for _, record in runs)
        theirs = _one_jvm_per_check(runs, jar.path, java.java)
        print(f"     {task:<10} {len(runs):>5} {floor:>13.2f}s {cold:>9.2f}s {theirs:>11.2f}s {theirs / cold:>5.1f}x"
              f" {warm:>11.2f}s {theirs / warm:>5.1f}x")


@contextmanager
def _written_out() -> Iterator[None]:
    """Generated modules as they were written before: no named values, no wrapping, the
    mapping substituted wherever the templates read it."""
    saved = values.SHARE_AT, modules.WRAP_AT, invariants._Reader.built
    values.SHARE_AT = modules.WRAP_AT = 10**9
    invariants._Reader.built = property(lambda self: ())  # type: ignore[method-assign]
    try:
        yield
    finally:
        values.SHARE_AT, modules.WRAP_AT, invariants._Reader.built = saved  # type: ignore[method-assign]


def _phase_seconds(work: Path, task: str, source, phase: str) -> tuple[float, int]:  # noqa: ANN001
    with Scorer(work, use_cache=False, traces_dir=ROOT / "data" / "traces") as scorer:
        cell = scorer.cell(load_task(ROOT / "tasks" / task), source)
        for earlier in PHASES[:PHASES.index(phase)]:
            cell.result(earlier)
        start = time.perf_counter()
        result = cell.result(phase)
        assert result.status.name == "PASSED", result.reason
        seconds = time.perf_counter() - start
    size = sum(f.stat().st_size for f in (work / "runs").rglob("*Sysmo*.tla") if f"/{phase}/" in str(f))
    return seconds, size


def compact_modules(work: Path) -> None:
    print("8.   generated modules written compactly against written out (one run each, no cache)")
    print(f"     {'check':<28} {'compact':>18} {'written out':>18} {'ratio':>6}")
    for label, task, source, phase in (
            ("P3, etcd reference", "etcd", ReferenceSource(), "conformance"),
            ("P4, raftkvs records spec", "raftkvs", ReplaySource(ROOT / "tests" / "data" / "foreign" / "records"),
             "invariants")):
        compact = _phase_seconds(work / f"{task}-compact", task, source, phase)
        with _written_out():
            plain = _phase_seconds(work / f"{task}-plain", task, source, phase)
        print(f"     {label:<28} {compact[0]:6.1f} s {compact[1] / 1e3:7.0f} KB {plain[0]:6.1f} s {plain[1] / 1e3:7.0f} KB "
              f"{plain[0] / compact[0]:5.2f}x")


#: (task, rule, reference text, broken text): one mechanical defect each.
REPAIRS = (
    ("spin", "A16", "/\\ lock = FALSE\n    /\\ lock' = TRUE", "/\\ lock = false\n    /\\ lock' = True"),
    ("ringbuffer", "A1", "EXTENDS Naturals\n", ""),
    ("mutex", "A6", ": HandOff(t, w)", ": Handoff(t, w)"),
    ("spin", "A15", "    /\\ UNCHANGED callType\n", ""),
    ("etcd", "A15", "UNCHANGED <<currentTerm, votedFor, log, commitIndex, matchIndex>>",
     "UNCHANGED <<currentTerm, votedFor, log, commitIndex>>"),
)


def repair_cost(work: Path) -> None:
    from pytest_sysmobench.repair import Repairer

    print("9.   mechanical repair per cell: cold, then again with the verdict cache (tool runs: SANY+TLC+XML)")
    print(f"     {'cell':<16} {'status':<12} {'cold':>8} {'runs':>5} {'cached':>8} {'runs':>5}")
    cache = work / "repair-cache"
    for task_name, rule, old, new in REPAIRS:
        task = load_task(ROOT / "tasks" / task_name)
        figures = []
        for attempt in ("cold", "warm"):
            with Scorer(work / f"repair-{task_name}-{rule}-{attempt}", traces_dir=ROOT / "data" / "traces",
                        cache_dir=cache) as scorer:
                reference = scorer.cell(task, ReferenceSource()).candidate()
                assert old in (reference.tla or ""), (task_name, rule)
                broken = dataclasses.replace(reference, tla=(reference.tla or "").replace(old, new, 1))
                repairer = Repairer(scorer.toolchain(), task, ROOT / "data" / "traces", scorer.output / "repair")
                start = time.perf_counter()
                outcome = repairer.repair(broken)
                seconds = time.perf_counter() - start
                runs = sum(v for k, v in scorer.tool_counters().items() if k != "cache_hits")
                figures.append((seconds, runs, outcome.status))
        (cold, cold_runs, status), (warm, warm_runs, _) = figures
        print(f"     {task_name + ' ' + rule:<16} {status:<12} {cold:6.1f} s {cold_runs:5d} {warm:6.2f} s {warm_runs:5d}")


def _reference_under(work: Path, tag: str, task: Any, flag: str, value: bool,
                     measure: Callable[[Any], tuple[int, float]]) -> tuple[int, float]:
    """One task's reference cell scored with a choice (a phase module's flag, ``module.FLAG``)
    set, and what ``measure`` reads of it; the flag is put back whatever happens."""
    module = {"conformance": conformance, "invariants": invariants}[flag.split(".")[0]]
    name = flag.split(".")[1]
    setattr(module, name, value)
    try:
        with Scorer(work / f"{tag}-{task.name}-{int(value)}", use_cache=False, traces_dir=ROOT / "data" / "traces") as scorer:
            return measure(scorer.cell(task, ReferenceSource()))
    finally:
        setattr(module, name, True)


def _window_checks(cell: Any) -> tuple[int, float]:
    cell.result("conformance")
    runs = [json.loads(f.read_text())["elapsed_s"] for f in cell.run_dir.glob("conformance/windows*/*.tlc.log.run.json")]
    return len(runs), sum(runs)


def _p3_seconds(cell: Any) -> tuple[int, float]:
    cell.result("runtime")
    start = time.perf_counter()
    assert cell.result("conformance").score == 1.0
    return 1, time.perf_counter() - start


def _p4_seconds(cell: Any) -> tuple[int, float]:
    cell.result("conformance")
    start = time.perf_counter()
    assert cell.result("invariants").score == 1.0
    return 1, time.perf_counter() - start


def _side_by_side(work: Path, title: str, header: str, tag: str, flag: str,
                  measure: Callable[[Any], tuple[int, float]],
                  row: Callable[[str, tuple[int, float], tuple[int, float]], str]) -> None:
    """Each task's reference measured with a P3 choice on and off, a row each and a total."""
    print(title)
    print(header)
    total_on, total_off = [0, 0.0], [0, 0.0]
    for task in sorted(load_tasks(ROOT / "tasks").tasks, key=lambda t: t.name):
        on, off = (_reference_under(work, tag, task, flag, value, measure) for value in (True, False))
        total_on = [total_on[0] + on[0], total_on[1] + on[1]]
        total_off = [total_off[0] + off[0], total_off[1] + off[1]]
        print(row(task.name, on, off))
    print(row("all", (int(total_on[0]), total_on[1]), (int(total_off[0]), total_off[1])))


def window_runs(work: Path) -> None:
    """P3's window checks, every action together against each alone, per task's reference."""
    _side_by_side(work, "10.  P3 window checks: every action in one TLC run against one run per action (no cache)",
                  f"     {'task':<11} {'together':>16} {'one per action':>18} {'ratio':>6}",
                  "windows", "conformance.WINDOWS_TOGETHER", _window_checks,
                  lambda name, on, off: f"     {name:<11} {on[0]:>3} runs {on[1]:>6.2f} s {off[0]:>5} runs "
                                        f"{off[1]:>6.2f} s {off[1] / max(on[1], 1e-9):>5.2f}x")


def precision_cost(work: Path) -> None:
    """P3 of each task's reference with and without its check for extra steps."""
    _side_by_side(work, "11.  P3 with its extra-step check against without it, per task's reference (no cache)",
                  f"     {'task':<11} {'without':>9} {'with':>9} {'ratio':>6}",
                  "precision", "conformance.PRECISION", _p3_seconds,
                  lambda name, on, off: f"     {name:<11} {off[1]:7.2f} s {on[1]:7.2f} s {on[1] / max(off[1], 1e-9):5.2f}x")


def beyond_cost(work: Path) -> None:
    """P4 of each task's reference with and without the diagnostic beyond the traces."""
    _side_by_side(work, "12.  P4 with its check beyond the traces against without it, per task's reference (no cache)",
                  f"     {'task':<11} {'without':>9} {'with':>9} {'ratio':>6}",
                  "beyond", "invariants.BEYOND_TRACES", _p4_seconds,
                  lambda name, on, off: f"     {name:<11} {off[1]:7.2f} s {on[1]:7.2f} s {on[1] / max(off[1], 1e-9):5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", type=int, choices=range(1, 13), help="run one part (1 and 2 run together)")
    parser.add_argument("--tasks", default="", help="part 7: these tasks only (comma-separated; default all)")
    args = parser.parse_args()
    repeat = 5 if args.quick else 15
    wanted = (lambda part: args.only is None or args.only == part)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="sysmobench-perf-") as tmp:
        work = Path(tmp)
        if wanted(1) or wanted(2):
            tool_runs(work, repeat)
        if wanted(3):
            windows(work, 1000, 5 if args.quick else 20)
        if wanted(4):
            mapped_windows(work, ("spin",) if args.quick else ("spin", "etcd"))
        if wanted(5):
            whole_benchmark(work)
        if wanted(6):
            parallel_benchmark(work)
        if wanted(7):
            every = tuple(sorted(t.name for t in load_tasks(ROOT / "tasks").tasks))
            chosen = tuple(n for n in args.tasks.split(",") if n) or (("spin",) if args.quick else every)
            unknown = sorted(set(chosen) - set(every))
            if unknown:
                parser.error(f"--tasks: no such task: {', '.join(unknown)}")
            lead(work, chosen)
        if wanted(8):
            compact_modules(work)
        if wanted(9):
            repair_cost(work)
        if wanted(10):
            window_runs(work)
        if wanted(11):
            precision_cost(work)
        if wanted(12):
            beyond_cost(work)


if __name__ == "__main__":
    main()
