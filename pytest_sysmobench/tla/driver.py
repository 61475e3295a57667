"""Running SANY and TLC: a long-lived JVM driver, or one JVM per check as a fallback.

A JVM start plus class loading costs 130–700 ms per check, while the work itself is often a few
milliseconds, so by default one driver JVM per runner (per pytest worker) runs every job:
SANY in a shared class loader, TLC in a fresh class loader per job (TLC 2.15 keeps static state).
Without ``javac`` the driver cannot be built and each check starts its own JVM ("cli" mode).

Tool output never travels on the control channel: the driver writes it to a per-job file and
answers with one ``DONE <id> <rc> <ms>`` line on a stdout that no tool code can reach, so a spec
that Prints protocol-looking text cannot forge a verdict.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import secrets
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Sequence
from urllib.parse import quote

from .jar import ToolchainMissing, file_sha256, java_version_text

JAVA_SOURCES_DIR = Path(__file__).parent / "java"
DRIVER_CLASS = "SysmoDriver"
#: Every JVM: the soft-ref policy lets per-job class loaders be collected; VM chatter goes to
#: stderr, never to the control stream; java.util is opened so the driver can cancel the
#: stop-after timers TLC leaves behind.  The only classes loaded are the pinned jar's (its
#: sha256 is checked) and the driver's, so their bytecode is not verified again in every job's
#: class loader: a tenth of a small check's CPU (docs/speed.md).
JVM_FLAGS: tuple[str, ...] = (
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:-BytecodeVerificationRemote",
    "-XX:SoftRefLRUPolicyMSPerMB=0",
    "-XX:-UsePerfData",
    "-XX:+DisplayVMOutputToStderr",
    "-Dfile.encoding=UTF-8",
)
#: The driver lives for the whole session, but it loads TLC's classes afresh for every job, so
#: code compiled by C2 does not outlive a job: C1 only, with the throughput collector TLC asks
#: for (docs/speed.md has the figures that chose them).
DRIVER_TUNING: tuple[str, ...] = ("-XX:+UseParallelGC", "-XX:TieredStopAtLevel=1")
#: A java per check (cli mode) lives for one job: C1 only and SerialGC start fastest.
CLI_TUNING: tuple[str, ...] = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
#: Extra JVM flags, last on the command line (so they win): a user's tuning, or a test that
#: slows the JVM down (-Xint) to show that no verdict depends on the machine's speed.
JVM_FLAGS_ENV = "SYSMOBENCH_JVM_FLAGS"
STARTUP_TIMEOUT_S = 60.0
QUIT_GRACE_S = 2.0
CLI_NETWORK_NOTE = "cli mode: each java runs in a network namespace of its own (unshare), unreachable from outside"
CLI_EXPOSED_NOTE = (
    "cli mode: no network namespace ({why}), so during a model-checking run TLC's RMI fingerprint set "
    "listens on a TCP port on all interfaces"
)
DRIVER_NETWORK_NOTE = "driver mode: TLC's RMI listener is bound to loopback and never accepts connections"
#: A tool's output is bounded: past this many bytes the run is stopped (a spec that prints in
#: every state wrote 775 MB in 31 s).  What is kept and read is the head and the tail.  Real
#: runs stay far below it: the largest seen, an etcd error trace with coverage, is under 1 MB.
OUTPUT_LIMIT_BYTES = 8 << 20
OUTPUT_KEEP_BYTES = 1 << 20
#: How often a running job's output size is looked at.
OUTPUT_POLL_S = 0.2


@dataclass(frozen=True)
class RawRun:
    """One tool invocation as it happened; classification is someone else's job."""

    tool: str
    exit_code: int | None
    output: str
    elapsed_s: float
    timed_out: bool
    mode: str
    #: Why exit_code is None when it was not a timeout (e.g. the driver JVM died mid-job).
    detail: str = ""
    #: The run was stopped because its output passed OUTPUT_LIMIT_BYTES (exit_code is None).
    output_limited: bool = False


class DriverError(Exception):
    """A harness fault (no Java, driver will not build or start): never the spec's fault."""


def _which(program: str | None) -> str | None:
    if not program:
        return None
    return shutil.which(program)


def _java_sources() -> list[Path]:
    sources = sorted(JAVA_SOURCES_DIR.glob("*.java"))
    if not sources:
        raise DriverError(f"driver sources missing from {JAVA_SOURCES_DIR}")
    return sources


def _cache_root() -> Path:
    """Compiled classes are shared by all workers and runs, so they live in the user cache, not work_dir."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-sysmobench" / "driver"


def _class_key(sources: Sequence[Path], jar_sha: str, java_version: str) -> str:
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    digest.update(jar_sha.encode() + b"\0" + java_version.encode())
    return digest.hexdigest()[:32]


def _compile(javac: str, jar: Path, sources: Sequence[Path], dest: Path) -> None:
    """Compile into a temp dir and rename, so concurrent xdist workers never see half a class dir."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=dest.parent))
    cmd = [javac, "-encoding", "UTF-8", "-nowarn", "-cp", str(jar), "-d", str(staging), *map(str, sources)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise DriverError(f"javac failed to run: {exc}") from exc
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise DriverError(f"javac failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    try:
        os.rename(staging, dest)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not _is_compiled(dest):
            raise


def _is_compiled(class_dir: Path) -> bool:
    return (class_dir / f"{DRIVER_CLASS}.class").is_file() and (class_dir / "TlcJob.class").is_file()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """The JVM runs in its own session; killing the group also takes any child it may have spawned."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _encode_fields(fields: Sequence[str]) -> bytes:
    return (" ".join(quote(field, safe="") for field in fields) + "\n").encode("utf-8")


def _read_bounded(path: Path, keep: int = OUTPUT_KEEP_BYTES) -> str:
    """The whole output when it is small, else its head and tail (where TLC says how a run
    started and how it ended) around a note of what was left out."""
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size <= 2 * keep:
                data = stream.read()
            else:
                head = stream.read(keep)
                stream.seek(size - keep)
                tail = stream.read(keep)
                data = head + f"\n[... {size - 2 * keep:,} bytes of output left out ...]\n".encode() + tail
    except FileNotFoundError:
        return ""
    return data.decode("utf-8", errors="replace")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _log_tail(path: Path, limit: int = 4000) -> str:
    return _read_bounded(path, limit // 2)[-limit:]


@dataclass(frozen=True)
class _Reply:
    """What the driver said about one job: DONE with rc, nothing within the time limit, or it died."""

    kind: str  # "done" | "timeout" | "died" | "overflow"
    rc: int | None = None
    detail: str = ""


class _DriverProcess:
    """One driver JVM and its line-based control channel (stdout), read with a deadline."""

    def __init__(self, cmd: Sequence[str], cwd: Path, log_path: Path) -> None:
        self._log_path = log_path
        self._log: IO[bytes] = log_path.open("ab")
        try:
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                list(cmd),
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                start_new_session=True,
                bufsize=0,
            )
        except OSError as exc:
            self._log.close()
            raise DriverError(f"cannot start the driver JVM: {exc}") from exc
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._finalizer = weakref.finalize(self, _kill_group, self.proc)
        self._await_ready()

    def _await_ready(self) -> None:
        try:
            line = self._read_line(time.monotonic() + STARTUP_TIMEOUT_S)
        except EOFError:
            line = "<exited>"
        if line != "READY":
            self.kill()
            reason = "timed out" if line is None else f"said {line!r}"
            raise DriverError(f"driver JVM did not start ({reason}); log:\n{_log_tail(self._log_path)}")

    def _read_line(self, deadline: float) -> str | None:
        """Next control line, or None on timeout; EOFError when the JVM is gone."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                return None
            assert self.proc.stdout is not None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")

    def request(self, fields: Sequence[str], job_id: str, timeout_s: float, output: Path, output_limit: int) -> _Reply:
        """Send one job and wait for its reply; the job's output file is watched while it runs."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(_encode_fields(fields))
        except OSError:
            return self._died()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._read_line(min(deadline, time.monotonic() + OUTPUT_POLL_S))
            except EOFError:
                return self._died()
            if line is None:
                if _size(output) > output_limit:
                    self.kill()
                    return _Reply("overflow")
                if time.monotonic() < deadline:
                    continue
                self.kill()
                return _Reply("timeout")
            reply = self._parse(line, job_id)
            if reply is not None:
                return reply

    def _parse(self, line: str, job_id: str) -> _Reply | None:
        parts = line.split(" ")
        if parts[0] == "FAIL":
            raise DriverError(f"driver rejected a request: {line}")
        if len(parts) == 4 and parts[0] == "DONE" and parts[1] == job_id and parts[2].lstrip("-").isdigit():
            return _Reply("done", int(parts[2]))
        return None  # stray VM chatter; only our exact reply counts

    def _died(self) -> _Reply:
        self.kill()
        status = self.proc.returncode
        return _Reply("died", detail=f"driver JVM exited (status {status}) during the job; see {self._log_path}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        _kill_group(self.proc)
        self._shutdown_streams()

    def quit(self) -> None:
        """Ask politely (QUIT and EOF both end the driver), then make sure."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"QUIT\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=QUIT_GRACE_S)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def _shutdown_streams(self) -> None:
        self._selector.close()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._log.close()
        self._finalizer.detach()


class ToolRunner:
    """Runs SANY and TLC for one pytest worker; owns one driver JVM, restarted lazily after a kill."""

    def __init__(
        self,
        jar: Path,
        *,
        java: str = "java",
        javac: str | None = "javac",
        work_dir: Path,
        heap_mb: int | None = None,
        prefer_driver: bool = True,
        output_limit: int = OUTPUT_LIMIT_BYTES,
    ) -> None:
        self._jar = Path(jar).resolve()
        if not self._jar.is_file():
            raise DriverError(f"TLA+ tools jar not found: {self._jar}")
        self._java = _which(java) or java
        try:
            self._java_version = java_version_text(self._java)
        except ToolchainMissing as exc:
            raise DriverError(str(exc)) from exc
        self._javac = _which(javac)
        self._work_dir = Path(work_dir).resolve()
        self._tmp_dir = self._work_dir / "tmp"
        self._tmp_dir.mkdir(parents=True, exist_ok=True)
        self._heap_mb = heap_mb or default_heap_mb()
        self._output_limit = output_limit
        self._mode = "driver" if prefer_driver and self._javac else "cli"
        self._isolation, self._isolation_problem = _network_isolation() if self._mode == "cli" else ((), "")
        self._class_dir: Path | None = None
        self._driver: _DriverProcess | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._nonce = secrets.token_hex(6)

    # ----------------------------------------------------------------- public API

    @property
    def mode(self) -> str:
        return self._mode

    def sany(
        self, spec_dir: Path, module: str, *, library_dirs: Sequence[Path] = (), timeout_s: float = 60.0
    ) -> RawRun:
        """Parse and level-check ``spec_dir/module.tla``. In driver mode exit_code is synthesized (0 clean,
        255 on any SANY error, including semantic ones the SANY CLI exits 0 on); classify from the text."""
        spec_dir = Path(spec_dir).resolve()
        dirs = self._search_dirs(spec_dir, library_dirs)
        if self._mode == "driver":
            return self._driver_job("sany", spec_dir / f"{module}.tla", dirs, [], 0, timeout_s)
        cmd = ["tla2sany.SANY", f"{module}.tla"]
        return self._cli_job("sany", spec_dir, dirs[1:], cmd, None, timeout_s)

    def sany_xml(
        self, spec_dir: Path, module: str, *, library_dirs: Sequence[Path] = (), timeout_s: float = 60.0
    ) -> RawRun:
        """SANY's semantic tree of ``spec_dir/module.tla`` as XML, by the jar's exporter (exit 0),
        or SANY's errors (non-zero); the XML is the output from its ``<?xml`` line on."""
        spec_dir = Path(spec_dir).resolve()
        dirs = self._search_dirs(spec_dir, library_dirs)
        if self._mode == "driver":
            return self._driver_job("xml", spec_dir / f"{module}.tla", dirs, [], 0, timeout_s)
        includes = [arg for d in dirs[1:] for arg in ("-I", str(d))]
        cmd = ["tla2sany.xml.XMLExporter", "-o", *includes, f"{module}.tla"]
        return self._cli_job("xml", spec_dir, [], cmd, None, timeout_s)

    def tlc(
        self,
        spec_dir: Path,
        module: str,
        args: Sequence[str],
        *,
        library_dirs: Sequence[Path] = (),
        timeout_s: float = 120.0,
        stop_after_s: float | None = None,
    ) -> RawRun:
        """Run TLC with ``args`` plus ``-tool``, a fresh ``-metadir`` and the spec file.

        ``stop_after_s`` is TLC's own budget (whole seconds, rounded up): the run ends cleanly with
        states left on queue. ``timeout_s`` is the hard limit: the JVM is killed and the result has
        timed_out=True and exit_code None. File-valued switches (``-dump``, ``-userFile``,
        ``-simulate file=``) should be absolute: a relative one resolves against spec_dir in cli mode
        but against work_dir in driver mode (one JVM cannot change directory per job).
        """
        spec_dir = Path(spec_dir).resolve()
        dirs = self._search_dirs(spec_dir, library_dirs)
        user_args = _checked_tlc_args(args, spec_dir)
        stop_after = _stop_after_seconds(stop_after_s)
        metadir = self._work_dir / "meta" / self._next_id()
        metadir.parent.mkdir(parents=True, exist_ok=True)
        try:
            if self._mode == "driver":
                spec_file = spec_dir / f"{module}.tla"
                full = ["-tool", "-metadir", str(metadir), *user_args, str(spec_file)]
                return self._driver_job("tlc", spec_file, dirs, full, stop_after, timeout_s)
            full = ["tlc2.TLC", "-tool", "-metadir", str(metadir), *user_args, f"{module}.tla"]
            return self._cli_job("tlc", spec_dir, dirs[1:], full, stop_after, timeout_s)
        finally:
            shutil.rmtree(metadir, ignore_errors=True)

    @property
    def driver_pid(self) -> int | None:
        """The live driver JVM's pid (for diagnostics and leak checks); None in cli mode or before first use."""
        if self._driver is not None and self._driver.alive():
            return self._driver.proc.pid
        return None

    def describe(self) -> dict[str, str]:
        return {
            "java": self._java,
            "java_version": self._java_version.splitlines()[0],
            "javac": self._javac or "not found: one JVM per check (cli mode)",
            "mode": self._mode,
            "class_dir": self._describe_class_dir(),
            "jar": str(self._jar),
            "work_dir": str(self._work_dir),
            "heap_mb": str(self._heap_mb),
            "jvm_flags": " ".join(self._jvm_base(self._tmp_dir)[1:]),
            "network": self._network_note(),
        }

    def _network_note(self) -> str:
        if self._mode == "driver":
            return DRIVER_NETWORK_NOTE
        return CLI_NETWORK_NOTE if self._isolation else CLI_EXPOSED_NOTE.format(why=self._isolation_problem)

    def _describe_class_dir(self) -> str:
        if self._mode != "driver":
            return "(none: cli mode)"
        class_dir = self._class_dir or self._class_dir_for_sources()
        return str(class_dir) if _is_compiled(class_dir) else f"{class_dir} (compiled at first use)"

    def close(self) -> None:
        with self._lock:
            if self._driver is not None:
                self._driver.quit()
                self._driver = None

    def __enter__(self) -> ToolRunner:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ----------------------------------------------------------------- shared helpers

    def _next_id(self) -> str:
        return f"{self._nonce}-{next(self._ids)}"

    @staticmethod
    def _search_dirs(spec_dir: Path, library_dirs: Sequence[Path]) -> list[Path]:
        """The spec's own directory first, so a spec's module shadows a library module of the same name."""
        return [spec_dir, *(Path(d).resolve() for d in library_dirs)]

    def _jvm_base(self, tmp_dir: Path) -> list[str]:
        tuning = DRIVER_TUNING if self._mode == "driver" else CLI_TUNING
        extra = shlex.split(os.environ.get(JVM_FLAGS_ENV, ""))
        return [self._java, *JVM_FLAGS, *tuning, f"-Xmx{self._heap_mb}m", f"-Djava.io.tmpdir={tmp_dir}", *extra]

    # ----------------------------------------------------------------- driver mode

    def _driver_job(
        self, tool: str, spec_file: Path, dirs: Sequence[Path], args: Sequence[str], stop_after: int, timeout_s: float
    ) -> RawRun:
        with self._lock:
            driver = self._ensure_driver()
            job_id = self._next_id()
            out_path = self._work_dir / "jobs" / f"{job_id}.out"
            out_path.parent.mkdir(parents=True, exist_ok=True)
            fields = ["JOB", job_id, tool, str(out_path), str(stop_after), str(len(dirs)), *map(str, dirs)]
            fields += [str(spec_file), str(len(args)), *args]
            start = time.monotonic()
            reply = driver.request(fields, job_id, timeout_s, out_path, self._output_limit)
            elapsed = time.monotonic() - start
            if reply.kind != "done":
                self._driver = None  # restarted lazily by the next job
            elif _size(out_path) > self._output_limit:
                # Past the limit between two looks: the same verdict as if it had been seen in time,
                # so that the outcome depends on the bytes written, never on the machine's speed.
                reply = _Reply("overflow")
            output = _read_bounded(out_path)
            out_path.unlink(missing_ok=True)
        return RawRun(
            tool=tool,
            exit_code=reply.rc,
            output=output,
            elapsed_s=elapsed,
            timed_out=reply.kind == "timeout",
            mode="driver",
            detail=self._overflow_note() if reply.kind == "overflow" else reply.detail,
            output_limited=reply.kind == "overflow",
        )

    def _overflow_note(self) -> str:
        return f"stopped: its output passed {self._output_limit:,} bytes"

    def _ensure_driver(self) -> _DriverProcess:
        if self._driver is not None and self._driver.alive():
            return self._driver
        if self._driver is not None:
            self._driver.kill()
        class_dir = self._ensure_classes()
        cmd = self._jvm_base(self._tmp_dir)
        cmd += ["-cp", f"{class_dir}{os.pathsep}{self._jar}", DRIVER_CLASS, str(self._jar), str(class_dir)]
        # cwd = work_dir: a relative output path in a job lands in our private dir, not the user's cwd.
        self._driver = _DriverProcess(cmd, self._work_dir, self._work_dir / "driver.log")
        return self._driver

    def _ensure_classes(self) -> Path:
        if self._class_dir is not None and _is_compiled(self._class_dir):
            return self._class_dir
        assert self._javac is not None
        class_dir = self._class_dir_for_sources()
        if not _is_compiled(class_dir):
            _compile(self._javac, self._jar, _java_sources(), class_dir)
        self._class_dir = class_dir
        return class_dir

    def _class_dir_for_sources(self) -> Path:
        """Keyed by sources, jar and Java, so an upgrade of any of them never reuses stale classes."""
        return _cache_root() / _class_key(_java_sources(), file_sha256(self._jar), self._java_version)

    # ----------------------------------------------------------------- cli mode

    def _cli_job(
        self,
        tool: str,
        spec_dir: Path,
        library_dirs: Sequence[Path],
        main_and_args: Sequence[str],
        stop_after: int | None,
        timeout_s: float,
    ) -> RawRun:
        """One JVM per check; a private tmpdir per run because TLC extracts and deletes standard modules there."""
        run_id = self._next_id()
        tmp_dir = self._tmp_dir / f"cli-{run_id}"
        tmp_dir.mkdir(parents=True)
        out_path = self._work_dir / "jobs" / f"{run_id}.out"
        out_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = self._jvm_base(tmp_dir)
        if library_dirs:
            cmd.append("-DTLA-Library=" + os.pathsep.join(map(str, library_dirs)))
        if stop_after:
            cmd.append(f"-Dtlc2.TLC.stopAfter={stop_after}")
        cmd += ["-cp", str(self._jar), *main_and_args]
        try:
            run = _run_killable([*self._isolation, *cmd], spec_dir, out_path, timeout_s, self._output_limit)
            output = _read_bounded(out_path)
        finally:
            out_path.unlink(missing_ok=True)
            shutil.rmtree(tmp_dir, ignore_errors=True)
        rc, detail = run.rc, ""
        if run.overflow:
            detail = self._overflow_note()
        elif rc is not None and rc < 0:  # died from a signal (crash or OOM killer): not a tool verdict
            rc, detail = None, f"java was killed by signal {-rc}"
        return RawRun(tool=tool, exit_code=rc, output=output, elapsed_s=run.elapsed_s, timed_out=run.timed_out,
                      mode="cli", detail=detail, output_limited=run.overflow)


def _network_isolation() -> tuple[tuple[str, ...], str]:
    """Without the driver (no javac) there is no loopback-only socket factory for TLC's RMI
    object, so each java gets a network namespace of its own, where nothing can reach it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return (), "unshare not found"
    prefix = (unshare, "--net") if os.geteuid() == 0 else (unshare, "--net", "--map-root-user")
    try:
        probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return (), f"unshare failed: {exc}"
    if probe.returncode != 0:
        return (), f"unshare failed: {probe.stderr.decode(errors='replace').strip()[:200]}"
    return prefix, ""


@dataclass(frozen=True)
class _Ended:
    rc: int | None
    timed_out: bool
    overflow: bool
    elapsed_s: float


def _run_killable(cmd: Sequence[str], cwd: Path, out_path: Path, timeout_s: float, output_limit: int) -> _Ended:
    """Output goes to a file so that a killed run still leaves what it printed so far."""
    start = time.monotonic()
    deadline = start + timeout_s
    with out_path.open("wb") as sink:
        try:
            proc = subprocess.Popen(
                list(cmd), cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise DriverError(f"cannot start java: {exc}") from exc
        while True:
            try:
                rc = proc.wait(timeout=max(0.0, min(OUTPUT_POLL_S, deadline - time.monotonic())))
                if _size(out_path) > output_limit:  # ended past the limit between two looks
                    return _Ended(None, False, True, time.monotonic() - start)
                return _Ended(rc, False, False, time.monotonic() - start)
            except subprocess.TimeoutExpired:
                overflow = _size(out_path) > output_limit
                if overflow or time.monotonic() >= deadline:
                    _kill_group(proc)
                    return _Ended(None, not overflow, overflow, time.monotonic() - start)


def default_heap_mb() -> int:
    """Half the machine's memory, shared by the driver JVMs of the session's xdist workers, kept
    within 512 MB..8 GB (a heap, not a bound on any verdict: the work bounds are the task's)."""
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
        workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))
    except (OSError, ValueError):
        return 1024
    return max(512, min(8192, total_mb // 2 // workers))


def _stop_after_seconds(stop_after_s: float | None) -> int:
    """TLC reads tlc2.TLC.stopAfter as whole seconds; any positive budget means at least one second."""
    if stop_after_s is None or stop_after_s <= 0:
        return 0
    return max(1, math.ceil(stop_after_s))


def _checked_tlc_args(args: Sequence[str], spec_dir: Path) -> list[str]:
    """Reject what the runner owns, and turn an absolute -config inside spec_dir into the relative
    form TLC 2.15 requires (it prefixes the spec dir to any -config path)."""
    out = [str(a) for a in args]
    if "-metadir" in out:
        raise ValueError("-metadir is managed by ToolRunner (a fresh one per run)")
    out = [a for a in out if a != "-tool"]
    for index, arg in enumerate(out[:-1]):
        if arg == "-config" and os.path.isabs(out[index + 1]):
            config = Path(out[index + 1]).resolve()
            try:
                out[index + 1] = str(config.relative_to(spec_dir))
            except ValueError:
                raise ValueError(f"-config must lie inside the spec dir {spec_dir}: {config}") from None
    return out


def toolchain_summary(jar_option: str | None) -> str:
    """One line for the pytest header: which jar and Java, and how checks will run."""
    from .jar import find_jar, find_java

    try:
        jar, java = find_jar(jar_option), find_java()
    except ToolchainMissing as exc:
        return f"toolchain missing: {exc}"
    if java.javac and _which(java.javac):
        mode = "runner driver (one JVM per worker; TLC's RMI listener bound to loopback)"
    else:
        prefix, problem = _network_isolation()
        network = "a network namespace per run" if prefix else f"TLC listens on all interfaces: {problem}"
        mode = f"runner cli (no javac: one JVM per check; {network})"
    return f"TLA+ tools {jar.version} ({jar.path}); Java {java.version}; {mode}"
