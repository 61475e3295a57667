#!/usr/bin/python3
"""zk-trace: run a real three-server ZooKeeper ensemble and write its leader elections as an
NDJSON trace in the canonical vocabulary of tasks/zookeeper/task.yaml (see README.md).

The servers are Debian's ZooKeeper 3.8.0, unmodified, on 127.0.0.1. Byteman rules (fle.btm)
call FleTrace at the points where a step of FastLeaderElection begins or ends; each server
writes its own notes, stamped with System.nanoTime() (CLOCK_MONOTONIC, one clock for every
process of the machine). This program starts the servers, kills the leader, restarts it, and
merges the notes into one trace (see ``merge``).

Exit status: 0 written, 2 the notes contradict the vocabulary (a finding), 3 the run could not
be linearized or did not show every action (--min-each; nothing written; run again), 64 usage,
1 the harness itself failed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ensemble import SERVERS, Ensemble, HarnessFailure  # noqa: E402

HARNESS = "zk-trace 1"
SYSTEM = "Apache ZooKeeper 3.8.0 (Debian zookeeper 3.8.0-11+deb12u2), three servers on 127.0.0.1, Byteman 4.0.20 rules"
EXIT_FINDING, EXIT_RETRY, EXIT_USAGE = 2, 3, 64
ACTIONS = ("StartElection", "HandleNotification", "Decide", "ReplyNotification", "Sync", "Crash")
NO_PROPOSAL = {"leader": -1, "zxid": [-1, -1], "epoch": 0}
ORDERING = (
    "Three unmodified ZooKeeper 3.8.0 servers run on 127.0.0.1; Byteman rules note each server's election "
    "steps where they begin and end (lookForLeader's entry, every poll of its notification queue and what it "
    "returned, sendNotifications, the receiver thread's replies, setCurrentVote, setCurrentEpoch), each note "
    "stamped with System.nanoTime(), CLOCK_MONOTONIC, one clock for every process of the machine. A step of a "
    "server's election thread runs from a poll's return to the next poll (or the end of lookForLeader); it is "
    "placed at its first send, else at its end: a notification is always sent before it is received, and what "
    "a step changes besides the messages is its own server's state, which no other server reads. A receiver "
    "thread's reply is placed at the latest point before its note where the replying server's state gives that "
    "reply (it may have read the state a moment before). Kills and restarts are the harness's own notes."
)


class Finding(Exception):
    """The notes contradict the vocabulary: the trace would not mean what it says."""


class Unplaceable(Exception):
    """A reply could not be placed (a race between a server's two threads); run again."""


def fail(code: int, message: str) -> None:
    print(f"zk-trace: {message}", file=sys.stderr)
    sys.exit(code)


# --- the canonical state ------------------------------------------------------------------------

def initial_local(sid: int) -> dict[str, Any]:
    return {"state": "DOWN", "logicalclock": 0, "proposal": dict(NO_PROPOSAL), "recvset": [], "outofelection": [],
            "currentVote": {"leader": sid, "zxid": [0, 0], "round": -1, "epoch": 0},
            "currentEpoch": 0, "lastZxid": [0, 0]}


@dataclass
class World:
    local: dict[int, dict[str, Any]] = field(default_factory=lambda: {s: initial_local(s) for s in SERVERS})
    messages: list[dict[str, Any]] = field(default_factory=list)  # every notification sent, never removed

    def copy(self) -> "World":
        return World({s: json.loads(json.dumps(v)) for s, v in self.local.items()}, list(self.messages))

    def send(self, msg: dict[str, Any]) -> None:
        if msg not in self.messages:
            self.messages.append(msg)

    def canonical(self) -> dict[str, Any]:
        per = lambda key: [self.local[s][key] for s in SERVERS]  # noqa: E731  (servers are 1..3: a tuple)
        return {
            "state": per("state"), "logicalclock": per("logicalclock"), "proposal": per("proposal"),
            "recvset": [{"$set": v} for v in per("recvset")],
            "outofelection": [{"$set": v} for v in per("outofelection")],
            "currentVote": per("currentVote"), "currentEpoch": per("currentEpoch"), "lastZxid": per("lastZxid"),
            "messages": {"$set": sorted(self.messages, key=lambda m: json.dumps(m, sort_keys=True))},
        }


def message(sender: int, to: int, vote: dict[str, Any], state: str) -> dict[str, Any]:
    return {"from": sender, "to": to, "leader": vote["leader"], "zxid": vote["zxid"], "round": vote["round"],
            "epoch": vote["epoch"], "state": state}


def received(n: dict[str, Any], to: int) -> dict[str, Any]:
    return message(n["from"], to, n, n["state"])


def votes(table: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"from": int(k), **{f: v[f] for f in ("leader", "zxid", "round", "epoch", "state")}}
            for k, v in sorted(table.items(), key=lambda kv: int(kv[0]))]


# --- steps --------------------------------------------------------------------------------------

@dataclass
class Step:
    time: int
    order: int
    actor: int
    action: str
    args: dict[str, Any]
    apply: Callable[[World], None]
    check: Callable[[World], str | None] = lambda w: None
    movable: bool = False  # a reply, which may be placed before its note


def local_after(note: dict[str, Any], leaving: bool) -> dict[str, Any]:
    post = {k: note[k] for k in ("state", "logicalclock", "proposal")}
    post["recvset"] = [] if leaving else votes(note["recvset"])
    post["outofelection"] = [] if leaving else votes(note["outofelection"])
    return post


class ServerNotes:
    """Turns one server's notes (in the order that server took them) into steps."""

    def __init__(self, sid: int, steps: list[Step], counter: list[int]) -> None:
        self.sid, self.steps, self.counter = sid, steps, counter
        self.open: dict[str, Any] | None = None
        self.epoch_seen: tuple[int, list[int]] | None = None

    def add(self, action: str, t: int, apply: Callable[[World], None], args: dict[str, Any] | None = None,
            check: Callable[[World], str | None] = lambda w: None, movable: bool = False) -> None:
        self.counter[0] += 1
        self.steps.append(Step(t, self.counter[0], self.sid, action, args or {}, apply, check, movable))

    def sync_if_changed(self, note: dict[str, Any]) -> None:
        """The synchronisation with a leader (outside the election) changed epoch or zxid."""
        seen = (note["currentEpoch"], note["lastZxid"])
        if seen != self.epoch_seen and self.epoch_seen is not None:
            self.sync(note["t"] - 1, currentEpoch=seen[0], lastZxid=seen[1])
        self.epoch_seen = seen

    def sync(self, t: int, **changes: Any) -> None:
        sid = self.sid

        def apply(w: World) -> None:
            w.local[sid].update(json.loads(json.dumps(changes)))
        self.add("Sync", t, apply)

    def note(self, n: dict[str, Any]) -> None:
        ev, sid = n["ev"], self.sid
        if ev in ("enter", "poll", "send", "leave"):
            self.sync_if_changed(n)
        if ev == "enter":
            self.open = {"action": "StartElection", "args": {}, "sends": []}
        elif ev == "got":
            got = n.get("n")
            action = "HandleNotification" if got is not None else "Timeout"
            self.open = {"action": action, "args": {"m": received(got, sid)} if got else {}, "sends": []}
        elif ev == "send":
            if self.open is None:
                raise Finding(f"server {sid} sends notifications outside an election step")
            vote = {**n["proposal"], "round": n["logicalclock"]}
            self.open["sends"].append((n["t"], [message(sid, v, vote, "LOOKING") for v in n["voters"]]))
        elif ev in ("poll", "leave"):
            if self.open is not None:
                self.close(n, leaving=ev == "leave")
            if ev == "poll" and n["site"] == 2:  # the finalize wait: see fle.btm
                self.open = {"action": "FinalizeWait", "args": {}, "sends": []}
        elif ev == "vote":
            vote = {k: n["vote"][k] for k in ("leader", "zxid", "round", "epoch")}
            self.sync(n["t"], currentVote=vote)  # after a decision: the same vote, no step
        elif ev == "epoch":
            self.sync(n["t"], currentEpoch=n["currentEpoch"], lastZxid=n["lastZxid"])
            self.epoch_seen = (n["currentEpoch"], n["lastZxid"])
        elif ev == "reply":
            self.reply(n)
        elif ev == "crash":
            if self.open is not None and self.open["sends"]:
                raise Unplaceable(f"server {sid} was killed in the middle of a step that sent notifications")
            self.open = None
            self.add("Crash", n["t"], lambda w: w.local[sid].update(
                state="DOWN", logicalclock=0, proposal=dict(NO_PROPOSAL), recvset=[], outofelection=[]))

    def close(self, note: dict[str, Any], leaving: bool) -> None:
        step, sid = self.open, self.sid
        self.open = None
        post = local_after(note, leaving)
        if leaving and note.get("vote"):  # lookForLeader's result, which QuorumPeer makes its current vote
            post["currentVote"] = {k: note["vote"][k] for k in ("leader", "zxid", "round", "epoch")}
        sends = [m for _, batch in step["sends"] for m in batch]
        when = step["sends"][0][0] if step["sends"] else note["t"]
        action, args = step["action"], step["args"]
        if action == "FinalizeWait" and leaving:
            action = "Decide"  # no notification came within finalizeWait

        def apply(w: World) -> None:
            mine = w.local[sid]
            if action == "StartElection" and mine["state"] == "DOWN":  # QuorumPeer.startLeaderElection
                mine["currentVote"] = {"leader": sid, "zxid": mine["lastZxid"], "round": -1, "epoch": mine["currentEpoch"]}
            mine.update(json.loads(json.dumps(post)))
            for m in sends:
                w.send(m)

        def check(w: World) -> str | None:
            if "m" in args and args["m"] not in w.messages:
                return f"server {sid} handles {args['m']}, which was never sent"
            return None
        self.add(action, when, apply, args, check)

    def reply(self, n: dict[str, Any]) -> None:
        sid, r = self.sid, n["reply"]
        out = message(sid, r["to"], r, r["state"])
        incoming = received(n["n"], sid)

        def check(w: World) -> str | None:
            mine = w.local[sid]
            if incoming not in w.messages:
                return "its notification not yet sent"
            if r["state"] == "LOOKING":
                vote = {**mine["proposal"], "round": mine["logicalclock"]}
                ok = mine["state"] == "LOOKING" and incoming["round"] < mine["logicalclock"]
            else:
                vote, ok = mine["currentVote"], mine["state"] == r["state"] and incoming["state"] == "LOOKING"
            return None if ok and message(sid, r["to"], vote, r["state"]) == out else "state differs"
        self.add("ReplyNotification", n["t"], lambda w: w.send(out), {"m": incoming}, check, movable=True)


def merge(notes: list[dict[str, Any]]) -> list[tuple[Step, World]]:
    """The notes of all servers as one sequence of steps and the canonical state after each."""
    stop = min((n["t"] for n in notes if n["ev"] == "stop"), default=None)
    steps: list[Step] = []
    counter = [0]
    servers = {s: ServerNotes(s, steps, counter) for s in SERVERS}
    for n in sorted(notes, key=lambda n: (n["t"], n.get("seq", 0))):  # one JVM: t follows seq
        if n["sid"] in servers and (stop is None or n["t"] < stop):
            servers[n["sid"]].note(n)
    steps.sort(key=lambda s: (s.time, s.order))
    placed: list[Step] = []
    for step in steps:
        if step.movable:
            place_reply(placed, step)
        else:
            placed.append(step)
    world, run = World(), []
    for step in placed:
        problem = step.check(world)
        if problem:
            raise Finding(f"{step.action} of server {step.actor}: {problem}")
        before = world.copy()
        step.apply(world)
        if step.action in ("Timeout", "FinalizeWait"):
            if world.canonical() != before.canonical():
                raise Finding(f"a {step.action} step of server {step.actor} changed the state")
            continue
        if world.canonical() != before.canonical():
            run.append((step, world.copy()))
    return run


def place_reply(placed: list[Step], reply: Step) -> None:
    """Insert a reply at the latest point where the replying server's state gives it."""
    worlds = [World()]
    for step in placed:
        worlds.append(worlds[-1].copy())
        step.apply(worlds[-1])
    for i in range(len(placed), -1, -1):
        if reply.check(worlds[i]) is None:
            placed.insert(i, reply)
            return
        if i and placed[i - 1].actor == reply.actor and placed[i - 1].action == "Crash":  # an earlier life
            break
    raise Unplaceable(f"no point before its note gives server {reply.actor}'s reply {reply.args}")


# --- the run ------------------------------------------------------------------------------------

def run_scenario(workdir: Path, seed: int, kills: int) -> list[dict[str, Any]]:
    """Start the servers and let them elect; then, `kills` times, kill the leader, let the others
    elect, and restart it."""
    rng = random.Random(f"zk-{seed}")
    ens = Ensemble(workdir)
    order = list(SERVERS)
    rng.shuffle(order)
    try:
        for sid in order:
            ens.start(sid)
            time.sleep(rng.uniform(0.0, 0.6))
        ens.wait_for(lambda o: all(o[s] for s in SERVERS), "the first election")
        for _ in range(kills):
            done = {s: len(v) for s, v in ens.outcomes().items()}
            leader = next(s for s in SERVERS if ens.outcomes()[s][-1]["state"] == "LEADING")
            time.sleep(rng.uniform(0.3, 1.0))
            ens.kill(leader)
            rest = [s for s in SERVERS if s != leader]
            ens.wait_for(lambda o: all(len(o[s]) > done[s] for s in rest), "the election without the old leader")
            time.sleep(rng.uniform(0.3, 1.0))
            ens.start(leader)
            ens.wait_for(lambda o: len(o[leader]) > done[leader], "the old leader's return")
        time.sleep(0.5)
    finally:
        ens.stop_all()
    return read_notes(workdir)


def read_notes(workdir: Path) -> list[dict[str, Any]]:
    notes = []
    for path in sorted(workdir.glob("*.ndjson")):
        src = path.stem
        for line in path.read_text().splitlines():
            if line.endswith("}"):
                note = json.loads(line)
                note["src"] = src
                notes.append(note)
    return notes


def trace_lines(seed: int, run: list[tuple[Step, World]]) -> list[str]:
    max_epoch = max([0] + [max(l["currentEpoch"], l["proposal"]["epoch"], l["currentVote"]["epoch"], l["lastZxid"][0])
                           for _, w in run for l in w.local.values()])
    max_round = max([0] + [l["logicalclock"] for _, w in run for l in w.local.values()])
    meta = {"meta": {"task": "zookeeper", "seed": seed,
                     "constants": {"Servers": {"$set": list(SERVERS)}, "MaxEpoch": max_epoch, "MaxRound": max_round},
                     "harness": HARNESS, "system": SYSTEM, "ordering": ORDERING}}
    lines = [json.dumps(meta), json.dumps({"step": 0, "action": "Init", "state": World().canonical()})]
    for i, (step, world) in enumerate(run, 1):
        record: dict[str, Any] = {"step": i, "action": step.action, "actor": step.actor}
        if step.args:
            record["args"] = step.args
        record["state"] = world.canonical()
        lines.append(json.dumps(record))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description="Trace the leader elections of a real ZooKeeper ensemble.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kills", type=int, default=1, help="how many times the leader is killed and restarted")
    parser.add_argument("--out", default="")
    parser.add_argument("--min-each", type=int, default=0)
    parser.add_argument("--keep", default="", help="keep the servers' notes and logs in this directory")
    try:
        args = parser.parse_args()
    except SystemExit as exc:
        sys.exit(EXIT_USAGE if exc.code else 0)
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="zk-trace-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if args.kills < 0:
            fail(EXIT_USAGE, "--kills must be at least 0")
        notes = run_scenario(workdir, args.seed, args.kills)
        run = merge(notes)
    except HarnessFailure as exc:
        fail(1, str(exc))
    except Unplaceable as exc:
        fail(EXIT_RETRY, f"{exc}; nothing written")
    except Finding as exc:
        fail(EXIT_FINDING, str(exc))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    counts = {a: sum(1 for s, _ in run if s.action == a) for a in ACTIONS}
    print(f"zk-trace: seed={args.seed} steps={len(run)} | {counts}", file=sys.stderr)
    short = [(a, c) for a, c in counts.items() if c < args.min_each]
    if short:
        fail(EXIT_RETRY, f"{short[0][0]} occurs {short[0][1]} times (< --min-each {args.min_each}); nothing written")
    text = "\n".join(trace_lines(args.seed, run)) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
