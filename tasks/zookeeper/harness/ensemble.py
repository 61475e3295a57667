"""Runs a real three-server ZooKeeper ensemble on 127.0.0.1 with the election rules loaded.

zk_trace.run_scenario decides when each server starts and is killed. Each server writes its own
notes (FleTrace); the harness writes its own starts, kills and stop, stamped by the same
monotonic clock.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS = (1, 2, 3)
JAVA_OPTS = ["-Xmx128m", "-Xss512k", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


class HarnessFailure(Exception):
    """The run could not be completed (a server did not elect in time, a port was taken)."""


def free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Ensemble:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        ports = free_ports(9)
        self.client = dict(zip(SERVERS, ports[0:3]))
        self.quorum = dict(zip(SERVERS, ports[3:6]))
        self.election = dict(zip(SERVERS, ports[6:9]))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.notes = workdir / "harness.ndjson"
        for sid in SERVERS:
            self._configure(sid)

    def _configure(self, sid: int) -> None:
        home = self.workdir / f"s{sid}"
        (home / "data").mkdir(parents=True, exist_ok=True)
        (home / "data" / "myid").write_text(f"{sid}\n")
        lines = [
            "tickTime=200", "initLimit=10", "syncLimit=5",
            f"dataDir={home / 'data'}", f"clientPort={self.client[sid]}", "clientPortAddress=127.0.0.1",
            "admin.enableServer=false", "4lw.commands.whitelist=*",
        ]
        lines += [f"server.{i}=127.0.0.1:{self.quorum[i]}:{self.election[i]}" for i in SERVERS]
        (home / "zoo.cfg").write_text("\n".join(lines) + "\n")

    def note(self, sid: int, event: str) -> None:
        with self.notes.open("a") as f:
            f.write(json.dumps({"t": time.monotonic_ns(), "sid": sid, "ev": event}) + "\n")

    def start(self, sid: int) -> None:
        home = self.workdir / f"s{sid}"
        cmd = [
            "java", *JAVA_OPTS,
            f"-javaagent:/usr/share/java/byteman.jar=script:{HERE / 'fle.btm'}",
            f"-Dfletrace.out={self.workdir / f'fle-{sid}.ndjson'}",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-cp", f"/usr/share/java/zookeeper.jar:{HERE / 'target'}",
            "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(home / "zoo.cfg"),
        ]
        self.note(sid, "start")
        log = (home / "server.log").open("ab")
        self.procs[sid] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self, sid: int) -> None:
        proc = self.procs.pop(sid)
        self.note(sid, "crash")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop_all(self) -> None:
        if self.procs:
            self.note(0, "stop")
        for sid in list(self.procs):
            proc = self.procs.pop(sid)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()

    def outcomes(self) -> dict[int, list[dict]]:
        """Every server's 'leave' notes so far: the elections it finished."""
        found: dict[int, list[dict]] = {sid: [] for sid in SERVERS}
        for sid in SERVERS:
            path = self.workdir / f"fle-{sid}.ndjson"
            if path.exists():
                for line in path.read_text().splitlines():
                    if '"ev":"leave"' in line and line.endswith("}"):
                        found[sid].append(json.loads(line))
        return found

    def wait_for(self, done, what: str, limit_s: float = 60.0) -> None:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if done(self.outcomes()):
                return
            for sid, proc in self.procs.items():
                if proc.poll() is not None:
                    raise HarnessFailure(f"server {sid} exited with {proc.returncode} while waiting for {what}")
            time.sleep(0.05)
        raise HarnessFailure(f"timed out waiting for {what}")
