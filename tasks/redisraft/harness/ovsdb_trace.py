"""Captures a trace of OVSDB's clustered Raft from three real ovsdb-server processes.

The cluster is formed first (one server creates it, two join through it), outside the trace.
Then the network holds every Raft RPC, and a seeded scheduler takes one step at a time: deliver
or drop a message in flight, a client write at the leader, a crash of the leader, a restart; once
a follower is isolated until its election timer fires. The servers add steps of their own by
their timers: a heartbeat, an election. Each step's state is read when the step is done, from the
actor's ``cluster/status`` and database file and from the messages the harness holds.

Exit codes: 0 written; 2 a finding (a server did something the vocabulary cannot say); 3 the run
could not be cut into atomic steps (a timer fired inside a step), nothing written, run it again;
1 the harness failed.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovsdb_cluster import Cluster, Finding, HarnessFailure, Held, read_records

# After a handled message, how long its reply and other sends may take to reach the harness (a
# reply waits for the receiver's disk); one that comes later discards the run.
SETTLE_S = 0.05


class Unatomic(Exception):
    """Something happened inside a step that the step does not explain: the run is discarded."""


@dataclass
class Step:
    action: str
    actor: str
    state: dict[str, Any]
    args: dict[str, Any]


class Recorder:
    """Reads each server's part of the canonical state and writes messages in the vocabulary."""

    def __init__(self, cluster: Cluster, base: int) -> None:
        self.cluster = cluster
        self.base = base  # the index every server's log is counted from in the trace

    def index(self, i: int, context: object = "") -> int:
        if i < self.base:
            raise Finding(f"index {i} is inside the committed prefix {self.base}: {str(context)[:200]}")
        return i - self.base

    def server(self, name: str) -> dict[str, Any]:
        persisted = self.persisted(name)
        if not self.cluster.up(name):
            return {**persisted, "state": "Down", "leader": "none", "nextIndex": self.zeros(),
                    "matchIndex": self.zeros()}
        for _ in range(50):
            st = self.cluster.status(name)
            vote = name if st.vote == "self" else st.vote
            if (st.log_end - 1 - self.base == len(persisted["log"]) and persisted["currentTerm"] == st.term
                    and persisted["votedFor"] == (vote or "none")):
                break
            time.sleep(0.02)  # the status is ahead of the file by a write in progress
            persisted = self.persisted(name)
        else:
            raise Unatomic(f"{name}: its file does not catch up with its status")
        leader = name if st.leader == "self" else st.leader
        role = {"follower": "Follower", "candidate": "Candidate", "leader": "Leader"}.get(st.role)
        if role is None:
            raise Finding(f"{name}: role {st.role!r}")
        lead = role == "Leader"
        return {**persisted, "state": role, "leader": leader or "none", "commitIndex": self.index(st.commit),
                "nextIndex": {n: self.index(st.next_index[n]) if lead and n != name else 0 for n in self.cluster.names},
                # a new leader's match index starts at 0: nothing known, below the prefix
                "matchIndex": {n: max(0, st.match_index[n] - self.base) if lead and n != name else 0
                               for n in self.cluster.names}}

    def zeros(self) -> dict[str, int]:
        return {n: 0 for n in self.cluster.names}

    def persisted(self, name: str) -> dict[str, Any]:
        """Term, vote, log and last commit index as the server's database file holds them."""
        records = read_records(self.cluster.servers[name].db)
        term, vote, commit = 0, None, 0
        entries: dict[int, dict[str, Any]] = {}
        for rec in records[1:]:
            if "index" in rec:
                i = rec["index"]
                for j in [j for j in entries if j >= i]:
                    del entries[j]
                entries[i] = {"term": rec["term"], "value": entry_value(rec)}
            elif "term" in rec and "leader" not in rec:
                if rec["term"] != term:
                    vote = None
                term = rec["term"]
                if "vote" in rec:
                    vote = self.cluster.by_sid.get(rec["vote"], rec["vote"])
            if "commit_index" in rec:
                commit = rec["commit_index"]
        log = [entries[i] for i in sorted(entries) if i > self.base]
        return {"currentTerm": term, "votedFor": vote or "none", "log": log,
                "commitIndex": self.index(max(commit, self.base))}

    def message(self, h: Held) -> dict[str, Any]:
        """A message as the vocabulary writes it: every field, zero where its type sets none."""
        p = h.params
        m: dict[str, Any] = {"type": "", "from": h.src, "to": h.dst, "term": p["term"], "lastLogIndex": 0,
                             "lastLogTerm": 0, "granted": False, "prevLogIndex": 0, "prevLogTerm": 0,
                             "entries": [], "leaderCommit": 0, "success": False, "logEnd": 0, "nEntries": 0}
        if h.method == "vote_request":
            m |= {"type": "RequestVoteRequest", "lastLogIndex": self.index(p["last_log_index"], p),
                  "lastLogTerm": p["last_log_term"]}
        elif h.method == "vote_reply":
            m |= {"type": "RequestVoteResponse", "granted": self.cluster.by_sid.get(p["vote"]) == h.dst}
        elif h.method == "append_request":
            m |= {"type": "AppendEntriesRequest", "prevLogIndex": self.index(p["prev_log_index"], p),
                  "prevLogTerm": p["prev_log_term"], "leaderCommit": self.index(p["leader_commit"], p),
                  "entries": [{"term": e["term"], "value": entry_value(e)} for e in p.get("log", [])]}
        else:
            m |= {"type": "AppendEntriesResponse", "success": p["result"] == "OK",
                  "logEnd": self.index(p["log_end"], p), "prevLogIndex": self.index(p["prev_log_index"], p),
                  "prevLogTerm": p["prev_log_term"], "nEntries": p["n_entries"]}
        return m

    def state(self) -> dict[str, Any]:
        """Every server's part of the state; the run decides which messages are in flight."""
        per = {n: self.server(n) for n in self.cluster.names}
        fields = ("state", "currentTerm", "votedFor", "leader", "log", "commitIndex", "nextIndex", "matchIndex")
        out: dict[str, Any] = {f: {n: per[n][f] for n in self.cluster.names} for f in fields}
        out["votesGranted"] = {n: {"$set": []} for n in self.cluster.names}  # the run fills in a candidate's
        return out


def heartbeat(h: Held) -> bool:
    """A leader's heartbeat (ovsdb-server labels each append request with why it was sent)."""
    return h.method == "append_request" and not h.params.get("log") and h.params.get("comment") == "heartbeat"


def entry_value(rec: dict[str, Any]) -> str:
    """A log entry as the vocabulary names it: the value a client wrote, or its kind."""
    data = rec.get("data")
    if isinstance(data, list) and len(data) == 2 and isinstance(data[1], dict):
        rows = [row for table, rows in data[1].items() if table == "KV" for row in rows.values()]
        if len(rows) == 1 and isinstance(rows[0], dict) and isinstance(rows[0].get("v"), str):
            return rows[0]["v"]
        raise Finding(f"an entry that is not one client write: {json.dumps(data)[:200]}")
    if "servers" in rec or "election_timer" in rec:
        return "config"
    return "noop"


class Run:
    """One seeded run: the scheduler's steps and the servers' own, each closed before the next."""

    def __init__(self, cluster: Cluster, rng: random.Random, puts: int) -> None:
        self.cluster = cluster
        self.net = cluster.net
        self.rng = rng
        self.puts = puts
        self.written = 0
        self.crashed: str | None = None
        self.crash_step = 0
        self.isolated: str | None = None  # a follower cut off until its election timer fires
        self.isolation_done = False
        self.steps: list[Step] = []
        self.accounted: set[int] = set()  # held messages some logged step already sent
        self.votes: dict[str, set[str]] = {n: set() for n in cluster.names}  # a candidate's granted votes
        self.recorder: Recorder
        self.last: dict[str, Any] = {}
        self.clients: list[subprocess.Popen[bytes]] = []

    # -- the cluster before the trace ---------------------------------------------------------
    def form(self) -> None:
        for name in self.cluster.names:
            self.cluster.start(name)
        deadline = time.monotonic() + 20
        while True:
            time.sleep(0.2)
            self.cluster.learn_ids()
            sts = {n: self.cluster.status(n) for n in self.cluster.names}
            ends = {s.log_end for s in sts.values()}
            leaders = [n for n, s in sts.items() if s.role == "leader"]
            if (len(leaders) == 1 and len(ends) == 1 and all(s.commit == s.log_end - 1 for s in sts.values())
                    and all(s.leader for s in sts.values()) and len(sts[leaders[0]].match_index) == 3):
                break
            if time.monotonic() > deadline:
                raise HarnessFailure(f"the cluster did not form: {sts}")
        self.net.holding = True
        time.sleep(0.05)  # what was already on its way is handled
        # The formation's entries are committed on every server; the last of them (the
        # configuration of three servers) stays as entry 1, the rest is left out.
        base = min(self.cluster.status(n).commit for n in self.cluster.names) - 1
        self.recorder = Recorder(self.cluster, base)
        for h in self.net.in_flight():  # sent before the trace begins: lost, as a network may
            self.net.drop(h)
        self.last = self.recorder.state()
        self.last["messages"] = {"$set": []}
        self.steps.append(Step("Init", "", self.last, {}))

    # -- steps ----------------------------------------------------------------------------
    def log(self, action: str, actor: str, sent: list[Held], args: dict[str, Any]) -> None:
        """Logs a step of the scheduler's: the actor's part of the state read now, and its sends.

        Another server's timer may have fired meanwhile; what it did is left to ``absorb``,
        which logs it as that server's own step next (the processes do not share state).
        """
        if action in ("ClientRequest", "HandleRequestVoteResponse"):
            self._own_entries_on_disk(actor)
        part = self.recorder.server(actor)  # the actor alone: the sooner the step ends, the better
        if (action.startswith("Handle") and part["state"] == "Candidate"
                and part["currentTerm"] > self.last["currentTerm"][actor]):
            raise Unatomic(f"{actor}'s election timer fired while it handled {action} "
                           f"(term {self.last['currentTerm'][actor]} -> {part['currentTerm']})")
        if any(h.method == "vote_request" for h in sent):
            raise Unatomic(f"{actor} started an election inside a step")
        self._admit(sent)
        self.last = self._compose(actor, part)
        self.steps.append(Step(action, actor, self.last, args))

    def _own_entries_on_disk(self, actor: str) -> None:
        """A leader counts its own entries toward a commit once they are on its disk (its own
        match index); the step that appends them ends only then, as the vocabulary has it."""
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            st = self.cluster.status(actor)
            if st.role != "leader" or st.match_index.get(actor, 0) >= st.log_end - 1:
                return
            time.sleep(0.005)
        raise Unatomic(f"{actor}'s own entries did not reach its disk")

    def _admit(self, sent: list[Held]) -> None:
        """Puts a step's sends in flight. The network is a set: a message equal to one already in
        flight adds nothing, so the harness loses the second copy instead of delivering it twice."""
        flying = {json.dumps(self.recorder.message(h), sort_keys=True)
                  for h in self.net.in_flight() if h.number in self.accounted}
        for h in sent:
            key = json.dumps(self.recorder.message(h), sort_keys=True)
            if key in flying:
                self.net.drop(h)
            else:
                flying.add(key)
                self.accounted.add(h.number)

    def _compose(self, actor: str, part: dict[str, Any]) -> dict[str, Any]:
        """The last state with the actor's part replaced and the messages now in flight."""
        state = {f: dict(v) for f, v in self.last.items() if f != "messages"}
        for f in part:
            state[f][actor] = part[f]
        if state["state"][actor] != "Candidate":
            self.votes[actor] = set()
        state["votesGranted"][actor] = {"$set": sorted(self.votes[actor])}
        held = self.net.in_flight()
        self.accounted &= {h.number for h in held}
        msgs = [self.recorder.message(h) for h in held if h.number in self.accounted]
        keys = [json.dumps(m, sort_keys=True) for m in msgs]
        if len(set(keys)) != len(keys):
            raise Unatomic("two equal messages in flight")
        state["messages"] = {"$set": msgs}
        return state

    def absorb(self) -> None:
        """Logs the servers' own steps since the last one: elections (a leader that did not hear
        from a quorum in an election time steps down into one) and heartbeats.

        The servers are separate processes and nothing was delivered meanwhile, so their own steps
        do not depend on one another: each is logged as if it came alone, one after the other.
        """
        time.sleep(SETTLE_S)
        now = self.recorder.state()
        changed = self._changed(now)
        if changed:  # an election's vote requests wait for its term to reach the disk
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and not all(self._asked_all(n, now["currentTerm"][n]) for n in changed):
                time.sleep(0.01)
            now = self.recorder.state()
            changed = self._changed(now)
        fresh = [h for h in self.net.in_flight() if h.number not in self.accounted]
        for h in [h for h in fresh if self._asks_again(h)]:
            self.net.drop(h)  # the vocabulary has no step that asks again: the network loses it
            fresh.remove(h)
        for name in changed:
            role, mine = now["state"][name], [h for h in fresh if h.src == name]
            if role == "Candidate" and now["currentTerm"][name] > self.last["currentTerm"][name]:
                if any(h.method != "vote_request" for h in mine):
                    raise Unatomic(f"{name} started an election and sent other messages too")
                self.votes[name] = {name}
                self._log_own("ElectionTimeout", name, now, mine, {})
            else:
                raise Unatomic(f"{name} changed with no step to explain it")
        for h in [h for h in fresh if h.src not in changed]:
            if h.method == "vote_request":
                continue  # an election that began after the state was read: the next absorb logs it
            if not heartbeat(h):
                raise Unatomic(f"{h.src} sent {h.method} ({h.params.get('comment')}, term {h.params.get('term')}) "
                               f"outside any step; its last logged term {self.last['currentTerm'][h.src]}, "
                               f"role {self.last['state'][h.src]}")
            self._check_heartbeat(h, now)
            self._log_own("Heartbeat", h.src, now, [h], {"j": h.dst})

    def _check_heartbeat(self, h: Held, now: dict[str, Any]) -> None:
        """A heartbeat is logged after the steps before it; one its leader sent before its last
        logged step (a write that moved a follower's next index, say) says an older state, and
        logged now would be a step of no state: the run is discarded."""
        m, i = self.recorder.message(h), h.src
        expected = (now["currentTerm"][i], now["nextIndex"][i][h.dst] - 1, now["commitIndex"][i])
        if (m["term"], m["prevLogIndex"], m["leaderCommit"]) != expected:
            said = (m["term"], m["prevLogIndex"], m["leaderCommit"])
            raise Unatomic(f"{i}'s heartbeat to {h.dst} (term, prev index, commit: {said}) was sent before "
                           f"its last logged step ({expected})")

    def _asks_again(self, h: Held) -> bool:
        """A candidate asks a server for its vote again at a term already logged (as when its
        connection to that server comes back): a send of no step."""
        return h.method == "vote_request" and h.params["term"] <= self.last["currentTerm"][h.src]

    def _asked_all(self, name: str, term: int) -> bool:
        """Whether a new candidate's vote requests of its new term have reached every server it
        is connected to (a request of an older term is asked again, and does not count)."""
        asked = {h.dst for h in self.net.in_flight() if h.src == name and h.number not in self.accounted
                 and h.method == "vote_request" and h.params["term"] == term}
        return self.net.peers(name) <= asked

    def _changed(self, now: dict[str, Any]) -> list[str]:
        return [n for n in self.cluster.names
                if any(now[f][n] != self.last[f][n] for f in now if f not in ("messages", "votesGranted"))]

    def _log_own(self, action: str, actor: str, now: dict[str, Any], sent: list[Held],
                 args: dict[str, Any]) -> None:
        self._admit(sent)
        self.last = self._compose(actor, {f: now[f][actor] for f in now if f != "votesGranted"})
        self.steps.append(Step(action, actor, self.last, args))

    def deliver(self, h: Held) -> None:
        m = self.recorder.message(h)
        seen = self.net.last_number
        if not self.net.deliver(h):
            raise Unatomic(f"{h.dst} did not handle {h.method} from {h.src}")
        time.sleep(SETTLE_S)
        # What the handler sent; a heartbeat is the receiver's timer, logged as its own step.
        sent = [x for x in self.net.in_flight() if x.number > seen and x.src == h.dst and not heartbeat(x)]
        i = h.dst
        if (h.method == "vote_reply" and self.last["state"][i] == "Candidate"
                and h.params["term"] == self.last["currentTerm"][i] and self.cluster.by_sid.get(h.params["vote"]) == i):
            self.votes[i].add(h.src)  # raft_accept_vote: a granted vote of the candidate's term
        action = {"vote_request": "HandleRequestVoteRequest", "vote_reply": "HandleRequestVoteResponse",
                  "append_request": "HandleAppendEntriesRequest", "append_reply": "HandleAppendEntriesResponse"}
        self.log(action[h.method], h.dst, sent, {"m": m})

    def client_request(self, leader: str) -> None:
        seen = self.net.last_number
        self.written += 1
        value = f"v{self.written}"
        self.clients.append(self.cluster.client_write(leader, value))
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            if len(self.recorder.persisted(leader)["log"]) > len(self.last["log"][leader]):
                break
            time.sleep(0.005)
        else:
            raise Unatomic(f"{leader} did not append {value}")
        time.sleep(SETTLE_S)
        sent = [x for x in self.net.in_flight() if x.number > seen and x.src == leader and not heartbeat(x)]
        self.log("ClientRequest", leader, sent, {"v": value})

    def crash(self, name: str) -> None:
        self.cluster.crash(name)
        self.crashed, self.crash_step = name, len(self.steps)
        self.log("Crash", name, [], {})

    def restart(self, name: str) -> None:
        self.cluster.start(name)
        self.crashed = None
        self.log("Restart", name, [], {})

    def drop(self, h: Held) -> None:
        m = self.recorder.message(h)
        self.net.drop(h)
        self.log("DropMessage", h.dst, [], {"m": m})

    # -- the scheduler -------------------------------------------------------------------------
    def leader(self) -> str | None:
        leads = [n for n in self.cluster.names if self.last["state"][n] == "Leader"]
        return leads[0] if len(leads) == 1 else None

    def step(self) -> None:
        self.absorb()
        options: list[tuple[float, Any]] = []
        # The oldest message is likeliest to go next, as on a network that mostly keeps order;
        # a server's timers resend what waits too long, and two equal messages cannot be told apart.
        leader = self.leader()
        if self.isolated and self.last["state"][self.isolated] == "Candidate":
            self.isolated, self.isolation_done = None, True  # its vote requests may now go out
        if leader and not self.isolation_done and self.isolated is None and self.written >= 1:
            # Once, a follower loses its connections until its election timer fires: its
            # election meets a leader and a follower that still hear from each other.
            self.isolated = self.rng.choice([n for n in self.cluster.names if n != leader])
        logged = [h for h in self.net.in_flight() if h.number in self.accounted]  # not what came since
        for age, h in enumerate(logged):
            if self.isolated in (h.src, h.dst):
                options.append((50.0, lambda h=h: self.drop(h)))
                continue
            if self.cluster.up(h.dst):
                options.append((50.0 if age == 0 else 8.0, lambda h=h: self.deliver(h)))
            options.append((1.0, lambda h=h: self.drop(h)))
        # ovsdb-server hands a database's transactions to Raft one at a time: the next write
        # waits until the last one has committed, so only then is it a step of its own.
        if (leader and self.written < self.puts and self.last["commitIndex"][leader] == len(self.last["log"][leader])
                and not self.isolated):
            options.append((4.0, lambda: self.client_request(leader)))
        if (leader and self.crashed is None and self.crash_step == 0 and self.written >= self.puts // 2
                and self.isolation_done):
            # Likeliest while the leader holds a write no follower has: the next leader then
            # writes over that entry, and the old leader's log is cut back when it returns.
            ahead = all(len(self.last["log"][n]) < len(self.last["log"][leader]) for n in self.cluster.names
                        if n != leader)
            options.append((200.0 if ahead else 2.0, lambda: self.crash(leader)))
        if self.crashed and len(self.steps) - self.crash_step > 30:
            down = self.crashed
            options.append((5.0, lambda: self.restart(down)))
        if not options:
            time.sleep(0.1)  # nothing to do but wait for a timer
            return
        weights = [w for w, _ in options]
        self.rng.choices(options, weights)[0][1]()


def capture(seed: int, steps: int, puts: int, out: Path | None) -> int:
    with tempfile.TemporaryDirectory(prefix="ovsdb-trace-") as tmp:
        cluster = Cluster(Path(tmp))
        run = Run(cluster, random.Random(seed), puts)
        try:
            cluster.create()
            run.form()
            while len(run.steps) <= steps:
                run.step()
            if cluster.net.findings:
                raise Finding("; ".join(cluster.net.findings))
        except Unatomic as exc:
            print(f"ovsdb-trace: run discarded: {exc}", file=sys.stderr)
            return 3
        except Finding as exc:
            print(f"ovsdb-trace: finding: {exc}", file=sys.stderr)
            return 2
        finally:
            cluster.stop()
            for p in run.clients:
                p.kill()
    write(run, seed, steps, out)
    return 0


def write(run: Run, seed: int, steps: int, out: Path | None) -> None:
    counts: dict[str, int] = {}
    for s in run.steps[1:]:
        counts[s.action] = counts.get(s.action, 0) + 1
    states = [s.state for s in run.steps]
    constants = {"Servers": list(run.cluster.names), "Values": [f"v{k}" for k in range(1, run.puts + 1)],
                 "MaxTerm": max(t for st in states for t in st["currentTerm"].values()),
                 "MaxLogLen": max(len(log) for st in states for log in st["log"].values())}
    meta = {"task": "redisraft", "seed": seed, "steps": steps, "constants": constants, "harness": "ovsdb-trace 1",
            "system": "Open vSwitch 3.1.0 ovsdb-server, clustered (Debian openvswitch-common)",
            "actions": dict(sorted(counts.items()))}
    lines = [json.dumps({"meta": meta}, separators=(",", ":"))]
    for i, s in enumerate(run.steps):
        rec: dict[str, Any] = {"step": i, "action": s.action}
        if s.actor and s.action != "DropMessage":
            rec["actor"] = s.actor
        if s.args:
            rec["args"] = s.args
        rec["state"] = s.state
        lines.append(json.dumps(rec, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        out.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--puts", type=int, default=4)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    try:
        return capture(args.seed, args.steps, args.puts, args.out)
    except HarnessFailure as exc:
        print(f"ovsdb-trace: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
