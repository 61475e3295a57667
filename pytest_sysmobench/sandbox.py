"""A coding agent's sandbox: Debian's bubblewrap, so that the agent sees its workspace and the
system (read-only), and nothing of the benchmark: not the project tree, the tasks' reference
specs, mutants, templates or traces, the output folder, or another cell's workspace.

The agent keeps the network (it needs its model's API).  Its processes live in PID, IPC, UTS and
user namespaces of their own, so when the run ends (or is stopped at its limit) every process
it started ends with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

#: Where the workspace and the check tool appear inside the sandbox.
WORKSPACE = "/workspace"
TOOLS = "/sysmobench"
#: What of the agent's output is kept as its transcript (head and tail beyond it).
TRANSCRIPT_BYTES = 1 << 20
#: The environment bwrap runs in (it clears the agent's, and sets what the agent is given).
BWRAP_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


class SandboxMissing(RuntimeError):
    """bubblewrap is not installed: agents cannot be run here (the benchmark's loss)."""


def bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxMissing("bubblewrap (bwrap) is not installed, so no agent can be sandboxed: "
                             "`bash scripts/setup` installs it (apt-get install bubblewrap)")
    return found


def command(workspace: Path, tools: Path, argv: Sequence[str], env: Mapping[str, str],
            read_only: Sequence[Path] = ()) -> list[str]:
    """The bwrap command line that runs ``argv`` with ``workspace`` and ``tools`` writable and
    the system read-only."""
    line = [bwrap(), "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            line += ["--symlink", os.readlink(target), f"/{link}"]
        elif target.is_dir():
            line += ["--ro-bind", str(target), f"/{link}"]
    line += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run",
             "--bind", str(workspace), WORKSPACE, "--bind", str(tools), TOOLS]
    for path in read_only:
        if path.exists():
            line += ["--ro-bind", str(path), str(path)]
    line += ["--unshare-all", "--share-net", "--die-with-parent", "--new-session", "--clearenv",
             "--setenv", "PATH", f"{TOOLS}:/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", WORKSPACE,
             "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8"]
    for name, value in env.items():
        line += ["--setenv", name, value]
    return [*line, "--chdir", WORKSPACE, "--", *argv]


@dataclass(frozen=True)
class Limits:
    """What the agent may take: each process's address space and the size of any file it
    writes, its transcript included (``prlimit``: per process, inherited by every child), and
    how many processes and threads it runs at once (a pids cgroup; the kernel's per-user
    process limit does not bind root, whom the benchmark runs as; ``prlimit --nproc`` for
    anyone else).  None: no limit of that kind."""

    memory_mb: int | None = None
    file_mb: int | None = None
    processes: int | None = None

    def prefix(self, cgroup: Path | None = None) -> list[str]:
        flags = [f"--as={self.memory_mb << 20}"] if self.memory_mb else []
        flags += [f"--fsize={self.file_mb << 20}"] if self.file_mb else []
        if self.processes and cgroup is None:
            flags.append(f"--nproc={self.processes}")
        joined = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cgroup)] if cgroup else []
        if not flags:
            return joined
        found = shutil.which("prlimit")
        if found is None:
            raise SandboxMissing("prlimit (util-linux) is not installed, so the agent's limits cannot be set")
        return [*joined, found, *flags, "--"]


#: Where a pids cgroup can be made: cgroup v2's unified tree (with the pids controller), or v1's.
CGROUP_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup/pids"))


class ProcessCap:
    """A pids cgroup of its own for one agent run, holding at most ``limit`` processes and
    threads; when the run ends, whatever is still in it is killed (a process that left the
    session too) and the cgroup removed.  Without a cgroup to make, as root, the limit cannot
    be held: said before the agent runs (the benchmark's loss, like a missing sandbox)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.path: Path | None = None

    def __enter__(self) -> ProcessCap:
        if not self.limit:
            return self
        for root in CGROUP_ROOTS:
            if not (root / "cgroup.procs").exists() or not _controls_pids(root):
                continue
            path = root / f"sysmobench-{os.getpid()}-{time.monotonic_ns()}"
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(self.limit))
                # A process must be able to join it (cgroup v2 refuses some placements).
                joined = subprocess.run(["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs"', str(path)],
                                        capture_output=True, timeout=30).returncode == 0
            except (OSError, subprocess.SubprocessError):
                joined = False
            if joined:
                self.path = path
                return self
            try:
                path.rmdir()
            except OSError:
                pass
        if os.geteuid() == 0:
            raise SandboxMissing(f"the agent's process limit ({self.limit}) cannot be held: no pids cgroup can be "
                                 "made here, and the kernel's per-user limit does not bind root (the agent's "
                                 "max_processes: null runs it without one)")
        return self

    def __exit__(self, *exc: object) -> None:
        path, self.path = self.path, None
        if path is None:
            return
        for _ in range(50):
            try:
                left = [int(p) for p in (path / "cgroup.procs").read_text().split()]
            except OSError:
                break
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)
        try:
            path.rmdir()
        except OSError:
            pass

    @property
    def peak(self) -> int | None:
        """The most processes and threads it held at once, where the kernel says (read before exit)."""
        try:
            return int((self.path / "pids.peak").read_text()) if self.path is not None else None
        except (OSError, ValueError):
            return None


def _controls_pids(root: Path) -> bool:
    if root.name == "pids":
        return True
    try:
        return "pids" in (root / "cgroup.controllers").read_text().split() and \
            "pids" in (root / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


@dataclass(frozen=True)
class Run:
    exit_code: int | None
    timed_out: bool
    seconds: float
    transcript: str
    #: How much it printed, as the transcript file holds it (before the head and tail are kept).
    output_bytes: int = 0


def run(line: Sequence[str], timeout_s: float, transcript: Path, limits: Limits = Limits(),
        cgroup: Path | None = None) -> Run:
    """Run the sandboxed command within ``limits`` (its processes in ``cgroup``, when given);
    past ``timeout_s`` its whole process group is killed.  Its output (both streams) goes to
    ``transcript`` as it comes (a file held to the same size limit as any the agent writes)."""
    start = time.monotonic()
    transcript.parent.mkdir(parents=True, exist_ok=True)
    with transcript.open("wb") as out:
        # bwrap itself starts from an empty environment too: its first process in the sandbox
        # keeps bwrap's own, readable there as /proc/1/environ (the benchmark's keys among it).
        process = subprocess.Popen([*limits.prefix(cgroup), *line], stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True, env=BWRAP_ENV)
        try:
            code: int | None = process.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code, timed_out = None, True
    return Run(code, timed_out, time.monotonic() - start, _kept(transcript), transcript.stat().st_size)


def _kept(path: Path) -> str:
    """The transcript's head and tail, never read whole (an agent may print without end)."""
    size = path.stat().st_size
    half = TRANSCRIPT_BYTES // 2
    with path.open("rb") as transcript:
        if size <= TRANSCRIPT_BYTES:
            data = transcript.read()
        else:
            head = transcript.read(half)
            transcript.seek(size - half)
            data = head + f"\n... ({size - 2 * half} bytes left out) ...\n".encode() + transcript.read(half)
    return data.decode("utf-8", errors="replace")
