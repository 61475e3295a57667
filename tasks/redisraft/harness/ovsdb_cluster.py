"""Three unmodified ovsdb-server processes in one Raft cluster on 127.0.0.1, every Raft message
passing through the harness.

Each server runs with ``target/netshim.so`` preloaded: its connect() to another server's address
reaches the harness's listener for that pair instead, which opens the real connection and splices
the two. The harness reads every JSON-RPC message on every connection. While the network is
``holding``, the Raft RPCs (vote and append requests and replies) stay with the harness until the
scheduler delivers or drops them; everything else (hello, echo) passes at once. A delivery writes
the message followed by an echo request of the harness's own on the same connection: the server
answers echoes in the order it reads, so the echo's answer means the message has been handled.

A server's state is read from ``cluster/status`` (role, term, vote, leader, log range, commit
index, a leader's next and match index) and from its database file (the log's entries), never
written.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHIM = HERE / "target" / "netshim.so"
SCHEMA = {"name": "KV", "version": "1.0.0",
          "tables": {"KV": {"columns": {"k": {"type": "string"}, "v": {"type": "string"}}}}}
#: The Raft RPCs of the protocol the task models: they wait for the scheduler.
RAFT_RPCS = frozenset({"vote_request", "vote_reply", "append_request", "append_reply"})
#: Messages that only set up a connection; they pass at once.
TRANSPORT = frozenset({"hello_request", "echo"})
DB_RECORD = re.compile(rb"OVSDB (?:CLUSTER|JSON) (\d+) [0-9a-f]{40}\n")


class HarnessFailure(Exception):
    """The run could not be completed (a server did not start or answer, a port was taken)."""


class Finding(Exception):
    """The servers did something the trace's vocabulary cannot say."""


def free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass(eq=False)
class Link:
    """One TCP connection opened by ``initiator`` to ``acceptor``, spliced by the harness."""

    initiator: str
    acceptor: str
    sockets: dict[str, socket.socket]  # the socket that reaches each end
    lock: threading.Lock = field(default_factory=threading.Lock)
    open: bool = True

    def send_to(self, server: str, data: bytes) -> bool:
        with self.lock:
            if not self.open:
                return False
            try:
                self.sockets[server].sendall(data)
                return True
            except OSError:
                return False

    def close(self) -> None:
        with self.lock:
            self.open = False
            for s in self.sockets.values():
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()


@dataclass(eq=False)
class Held:
    """A Raft RPC in flight: sent by ``src``, not yet received by ``dst``."""

    number: int
    src: str
    dst: str
    method: str
    params: dict[str, Any]
    raw: bytes
    link: Link


class Network:
    """The harness's side of every connection between the servers."""

    def __init__(self, names: list[str], listen: dict[str, int]) -> None:
        self.names = names
        self.listen = listen
        ports = free_ports(len(names) * (len(names) - 1))
        self.proxy = {(a, b): ports.pop() for a in names for b in names if a != b}
        self.cv = threading.Condition()
        self.holding = False
        self.held: list[Held] = []
        self.links: list[Link] = []
        self.findings: list[str] = []
        self._answered: set[str] = set()
        self._numbers = 0
        self._listeners: list[socket.socket] = []

    def connect_map(self, server: str) -> str:
        return ",".join(f"{self.listen[b]}={self.proxy[server, b]}" for b in self.names if b != server)

    def start(self) -> None:
        for (a, b), port in self.proxy.items():
            ls = socket.socket()
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind(("127.0.0.1", port))
            ls.listen(8)
            self._listeners.append(ls)
            threading.Thread(target=self._accept, args=(ls, a, b), daemon=True).start()

    def stop(self) -> None:
        for ls in self._listeners:
            ls.close()
        for link in list(self.links):
            link.close()

    def _accept(self, ls: socket.socket, a: str, b: str) -> None:
        while True:
            try:
                near, _ = ls.accept()
            except OSError:
                return
            try:
                far = socket.create_connection(("127.0.0.1", self.listen[b]), timeout=5)
                far.settimeout(None)
            except OSError:
                near.close()
                continue
            link = Link(a, b, {a: near, b: far})
            with self.cv:
                self.links.append(link)
            threading.Thread(target=self._pump, args=(link, a, b, near), daemon=True).start()
            threading.Thread(target=self._pump, args=(link, b, a, far), daemon=True).start()

    def _pump(self, link: Link, src: str, dst: str, sock: socket.socket) -> None:
        decoder = json.JSONDecoder()
        buf = ""
        while True:
            try:
                data = sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                self._lost(link)
                return
            buf += data.decode()
            while True:
                start = len(buf) - len(buf.lstrip())
                if start == len(buf):
                    buf = ""
                    break
                try:
                    message, end = decoder.raw_decode(buf, start)
                except ValueError:
                    break
                raw, buf = buf[start:end].encode(), buf[end:]
                self._route(link, src, dst, message, raw)

    def _route(self, link: Link, src: str, dst: str, message: dict[str, Any], raw: bytes) -> None:
        ident = message.get("id")
        if isinstance(ident, str) and ident.startswith("sysmo-") and "result" in message:
            with self.cv:
                self._answered.add(ident)
                self.cv.notify_all()
            return
        method = message.get("method")
        with self.cv:
            if self.holding and method in RAFT_RPCS:
                self._numbers += 1
                params = message["params"][0] if message.get("params") else {}
                self.held.append(Held(self._numbers, src, dst, method, params, raw, link))
                self.cv.notify_all()
                return
            if self.holding and method not in TRANSPORT and ident != "echo":
                self.findings.append(f"{src} sent {method} to {dst}, outside the modelled protocol")
        link.send_to(dst, raw)

    def _lost(self, link: Link) -> None:
        link.close()
        with self.cv:
            if link in self.links:
                self.links.remove(link)
            self.cv.notify_all()

    def deliver(self, held: Held, timeout: float = 5.0) -> bool:
        """Hands ``held`` to its receiver and waits until the receiver has handled it."""
        with self.cv:
            self.held.remove(held)
        marker = f"sysmo-{held.number}"
        echo = json.dumps({"id": marker, "method": "echo", "params": []}).encode()
        if not held.link.send_to(held.dst, held.raw + echo):
            return False
        deadline = time.monotonic() + timeout
        with self.cv:
            while marker not in self._answered:
                left = deadline - time.monotonic()
                if left <= 0 or not held.link.open:
                    return False
                self.cv.wait(left)
            self._answered.discard(marker)
        return True

    def drop(self, held: Held) -> None:
        with self.cv:
            self.held.remove(held)

    def sever(self, server: str) -> None:
        """Closes every connection of a crashed server; what was in flight on them is lost."""
        with self.cv:
            self.held = [h for h in self.held if server not in (h.src, h.dst)]
            links = [link for link in self.links if server in (link.initiator, link.acceptor)]
        for link in links:
            self._lost(link)

    def peers(self, server: str) -> set[str]:
        """The servers ``server`` has a connection with."""
        with self.cv:
            return {link.acceptor if link.initiator == server else link.initiator
                    for link in self.links if link.open and server in (link.initiator, link.acceptor)}

    def in_flight(self) -> list[Held]:
        with self.cv:
            return list(self.held)

    @property
    def last_number(self) -> int:
        with self.cv:
            return self._numbers


@dataclass(frozen=True)
class Status:
    """What ``cluster/status`` says of one server, with its log read from its database file."""

    role: str
    term: int
    vote: str | None
    leader: str | None
    log_start: int
    log_end: int
    commit: int
    next_index: dict[str, int]
    match_index: dict[str, int]


@dataclass
class Server:
    name: str
    home: Path
    address: str
    proc: subprocess.Popen[bytes] | None = None
    sid: str = ""

    @property
    def db(self) -> Path:
        return self.home / f"{self.name}.db"

    @property
    def ctl(self) -> Path:
        return self.home / f"{self.name}.ctl"


class Cluster:
    def __init__(self, workdir: Path, size: int = 3, election_timer_ms: int = 3000) -> None:
        if not SHIM.is_file():
            raise HarnessFailure(f"{SHIM} is missing: run build.sh")
        self.workdir = workdir
        self.names = [f"s{i}" for i in range(1, size + 1)]
        ports = dict(zip(self.names, free_ports(size)))
        self.servers = {n: Server(n, workdir, f"tcp:127.0.0.1:{ports[n]}") for n in self.names}
        self.net = Network(self.names, ports)
        self.election_timer_ms = election_timer_ms
        self.nick: dict[str, str] = {}  # the 4-hex nickname status uses -> server name
        self.by_sid: dict[str, str] = {}  # full server id -> server name

    # -- life cycle -------------------------------------------------------------------------
    def create(self) -> None:
        (self.workdir / "kv.ovsschema").write_text(json.dumps(SCHEMA))
        first = self.servers[self.names[0]]
        self._tool("--election-timer", str(self.election_timer_ms), "create-cluster", str(first.db),
                   "kv.ovsschema", first.address)
        for name in self.names[1:]:
            s = self.servers[name]
            self._tool("join-cluster", str(s.db), "KV", s.address, first.address)
        self.net.start()

    def _tool(self, *args: str) -> None:
        done = subprocess.run(["ovsdb-tool", *args], cwd=self.workdir, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise HarnessFailure(f"ovsdb-tool {' '.join(args)}: {done.stderr.strip()}")

    def start(self, name: str) -> None:
        s = self.servers[name]
        env = dict(os.environ, LD_PRELOAD=str(SHIM), SYSMO_CONNECT_MAP=self.net.connect_map(name))
        s.proc = subprocess.Popen(
            ["ovsdb-server", "--no-chdir", f"--unixctl={s.ctl}", f"--log-file={self.workdir / (name + '.log')}",
             f"--remote=punix:{self.workdir / (name + '.sock')}", "-vconsole:off", "-vraft:file:dbg", str(s.db)],
            cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not s.ctl.exists():
            if s.proc.poll() is not None or time.monotonic() > deadline:
                raise HarnessFailure(f"{name} did not start (see {name}.log)")
            time.sleep(0.02)

    def crash(self, name: str) -> None:
        s = self.servers[name]
        if s.proc is not None:
            s.proc.send_signal(signal.SIGKILL)
            s.proc.wait(timeout=10)
            s.proc = None
        s.ctl.unlink(missing_ok=True)
        self.net.sever(name)

    def stop(self) -> None:
        for name in self.names:
            s = self.servers[name]
            if s.proc is not None:
                s.proc.kill()
                s.proc.wait(timeout=10)
                s.proc = None
        self.net.stop()

    def up(self, name: str) -> bool:
        return self.servers[name].proc is not None

    def learn_ids(self) -> None:
        """Reads each server's id from its database header, so status nicknames can be named."""
        for name in self.names:
            header = read_records(self.servers[name].db)[0]
            sid = header["server_id"]
            self.servers[name].sid = sid
            self.by_sid[sid] = name
            self.nick[sid[:4]] = name

    # -- observation ------------------------------------------------------------------------
    def status(self, name: str) -> Status:
        s = self.servers[name]
        done = subprocess.run(["ovs-appctl", "-t", str(s.ctl), "cluster/status", "KV"],
                              capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            raise HarnessFailure(f"{name}: cluster/status failed: {done.stderr.strip()}")
        return parse_status(done.stdout, self.nick)

    def client_write(self, name: str, value: str) -> subprocess.Popen[bytes]:
        """Starts a transaction at ``name``; it returns when committed, which the run need not wait for."""
        op = ["KV", {"op": "insert", "table": "KV", "row": {"k": value, "v": value}}]
        return subprocess.Popen(["ovsdb-client", "--timeout=60", "transact", f"unix:{self.workdir / (name + '.sock')}",
                                 json.dumps(op)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)


def parse_status(text: str, nick: dict[str, str]) -> Status:
    fields: dict[str, str] = {}
    servers: dict[str, str] = {}
    in_servers = False
    for line in text.splitlines():
        if in_servers and line.startswith("    "):
            key = line.split()[0]
            servers[nick.get(key, key)] = line
            continue
        in_servers = line.startswith("Servers:")
        if ": " in line:
            k, v = line.split(": ", 1)
            fields[k] = v.strip()

    def who(v: str) -> str | None:
        if v in ("", "unknown"):
            return None
        return v if v == "self" else nick.get(v, v)

    start, end = (int(x) for x in re.fullmatch(r"\[(\d+), (\d+)\]", fields["Log"]).groups())
    commit = end - 1 - int(fields["Entries not yet committed"])
    next_index: dict[str, int] = {}
    match_index: dict[str, int] = {}
    for name, line in servers.items():
        if m := re.search(r"next_index=(\d+) match_index=(\d+)", line):
            next_index[name], match_index[name] = int(m[1]), int(m[2])
    return Status(fields["Role"], int(fields["Term"]), who(fields.get("Vote", "")), who(fields.get("Leader", "")),
                  start, end, commit, next_index, match_index)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record of an OVSDB log file; a record still being written is left out."""
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
    pos = 0
    while m := DB_RECORD.match(data, pos):
        body_end = m.end() + int(m[1])
        if body_end > len(data):
            break
        records.append(json.loads(data[m.end():body_end]))
        pos = body_end + 1 if data[body_end:body_end + 1] == b"\n" else body_end
    return records
