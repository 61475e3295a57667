#!/usr/bin/python3
"""dqueue-trace: run a real request/reply queue service and write the run as an NDJSON trace in
the canonical vocabulary of tasks/dqueue/task.yaml (see README.md).

The producer process serves one bounded ``queue.Queue`` over TCP on 127.0.0.1 with the standard
library's ``multiprocessing.managers`` (a ``BaseManager`` server: one thread per connection).
Three consumer processes connect to it; each sends ``request(consumer)`` calls, which the server
answers with the next item, blocking while the queue is empty. The producer puts the items
1..N into the queue, blocking while it is full.

Nothing of the standard library is patched. The served queue is a ``queue.Queue`` subclass that
overrides ``_put`` and ``_get``, the hooks ``queue.Queue`` itself provides for subclasses (as
``LifoQueue`` does) and calls with its mutex held, to note each item entering and leaving in the
order the mutex gives; ``request`` notes the consumer's call arriving at its server thread. The
consumers note when a reply reaches them. Every note carries ``time.monotonic_ns()``, one clock
for all processes of the machine; the trace is the notes in that order (see README.md).

Run it with Debian's /usr/bin/python3: the prompt's source is that interpreter's standard library.
Exit status: 0 written, 2 the run contradicts the vocabulary (a finding), 3 too little
contention (--min-each; nothing written), 64 usage, 1 the harness itself failed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue
import random
import sys
import threading
import time
from multiprocessing.managers import BaseManager

HARNESS = "dqueue-trace 1"
SYSTEM = f"Python {sys.version.split()[0]} multiprocessing.managers (BaseManager server over TCP) serving queue.Queue"
CONSUMERS = ("c1", "c2", "c3")
CAPACITY = 2
AUTHKEY = b"dqueue-trace"
EXIT_FINDING, EXIT_CONTENTION, EXIT_USAGE = 2, 3, 64

ORDERING = (
    "The producer process serves a bounded queue.Queue with multiprocessing.managers on 127.0.0.1; three "
    "consumer processes call request(consumer) over TCP. The served queue notes each item entering (_put) and "
    "leaving for a consumer (_get) while holding the queue's mutex, and each request when it reaches its "
    "server thread; each consumer notes when a reply reaches it. Every note carries time.monotonic_ns(), "
    "one clock for every process of the machine, and the trace is the notes in that order: within the "
    "server the order of the queue's mutex, across processes real time, so a reply is always received "
    "after it was taken from the queue."
)


class Notes:
    """The server's notes, in the order they were taken (one lock, one clock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[int, str, str | None, int | None]] = []

    def note(self, action: str, consumer: str | None, item: int | None = None) -> None:
        with self.lock:
            self.items.append((time.monotonic_ns(), action, consumer, item))


class ServedQueue(queue.Queue):
    """queue.Queue as shipped, with notes at its subclass hooks (called under its mutex)."""

    def __init__(self, maxsize: int, notes: Notes) -> None:
        super().__init__(maxsize)
        self.notes = notes
        self.serving = threading.local()

    def request(self, consumer: str) -> int:
        """A consumer's call: runs in the server thread of its connection."""
        self.notes.note("Request", consumer)
        self.serving.consumer = consumer
        return self.get()

    def _put(self, item: int) -> None:
        super()._put(item)
        self.notes.note("Produce", None, item)

    def _get(self) -> int:
        item = super()._get()
        self.notes.note("Deliver", self.serving.consumer, item)
        return item


class Service(BaseManager):
    pass


def consumer(name: str, rounds: int, seed: int, address: tuple[str, int], out: "mp.Queue[list]") -> None:
    rng = random.Random(f"{seed}-{name}")
    Service.register("queue")
    service = Service(address=address, authkey=AUTHKEY)
    service.connect()
    served = service.queue()
    notes = []
    for _ in range(rounds):
        time.sleep(rng.uniform(0, 0.003))
        item = served.request(name)
        notes.append((time.monotonic_ns(), "Receive", name, item))
    out.put(notes)


def fail(code: int, message: str) -> None:
    print(f"dqueue-trace: {message}", file=sys.stderr)
    sys.exit(code)


class State:
    """The canonical state and its sequential semantics."""

    def __init__(self) -> None:
        self.queue: list[int] = []
        self.produced = 0
        self.pc = {c: "idle" for c in CONSUMERS}
        self.reply = {c: 0 for c in CONSUMERS}
        self.received: dict[str, list[int]] = {c: [] for c in CONSUMERS}

    def step(self, action: str, c: str | None, item: int) -> str | None:
        """Apply one event; a string says why the run contradicts the vocabulary."""
        if action == "Produce":
            if item != self.produced + 1 or len(self.queue) >= CAPACITY:
                return f"item {item} enters a queue of {self.queue} after {self.produced} items"
            self.queue.append(item)
            self.produced = item
        elif action == "Request":
            if self.pc[c] != "idle":
                return f"{c} requests while {self.pc[c]}"
            self.pc[c] = "waiting"
        elif action == "Deliver":
            if self.pc[c] != "waiting" or not self.queue or self.queue[0] != item:
                return f"item {item} leaves the queue {self.queue} for {c}, which is {self.pc[c]}"
            self.queue.pop(0)
            self.pc[c], self.reply[c] = "answered", item
        elif action == "Receive":
            if self.pc[c] != "answered" or self.reply[c] != item:
                return f"{c} receives {item} while {self.pc[c]} with reply {self.reply[c]}"
            self.pc[c], self.reply[c] = "idle", 0
            self.received[c].append(item)
        else:
            return f"unknown action {action}"
        return None

    def json(self) -> dict:
        return {"queue": list(self.queue), "produced": self.produced, "pc": dict(self.pc),
                "reply": dict(self.reply), "received": {c: list(v) for c, v in self.received.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description="Trace a real multiprocessing.managers queue service.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=4, help="requests per consumer (N = rounds x 3 items)")
    parser.add_argument("--out", default="")
    parser.add_argument("--min-each", type=int, default=0)
    try:
        args = parser.parse_args()
    except SystemExit as exc:
        sys.exit(EXIT_USAGE if exc.code else 0)
    if args.rounds < 1:
        fail(EXIT_USAGE, "--rounds must be at least 1")
    n = args.rounds * len(CONSUMERS)
    rng = random.Random(f"{args.seed}-producer")

    notes = Notes()
    served = ServedQueue(CAPACITY, notes)
    Service.register("queue", callable=lambda: served, exposed=("request",))
    service = Service(address=("127.0.0.1", 0), authkey=AUTHKEY)
    server = service.get_server()
    threading.Thread(target=server.serve_forever, daemon=True).start()

    ctx = mp.get_context("spawn")
    results: "mp.Queue[list]" = ctx.Queue()
    procs = [ctx.Process(target=consumer, args=(c, args.rounds, args.seed, server.address, results)) for c in CONSUMERS]
    for p in procs:
        p.start()
    for item in range(1, n + 1):
        time.sleep(rng.uniform(0, 0.008))
        served.put(item)
    received = [results.get(timeout=60) for _ in procs]
    results.close()
    results.join_thread()
    for p in procs:
        p.join(30)
        if p.exitcode != 0:
            fail(1, f"consumer {p.name} ended with exit code {p.exitcode}")

    events = sorted(notes.items + [e for r in received for e in r], key=lambda e: (e[0], e[1] == "Receive"))
    state = State()
    lines = [json.dumps({"meta": {"task": "dqueue", "seed": args.seed, "rounds": args.rounds,
                                  "constants": {"Consumers": list(CONSUMERS), "N": n, "Capacity": CAPACITY,
                                                "Rounds": args.rounds},
                                  "harness": HARNESS, "system": SYSTEM, "ordering": ORDERING}}),
             json.dumps({"step": 0, "action": "Init", "state": state.json()})]
    counts = {a: 0 for a in ("Produce", "Request", "Deliver", "Receive")}
    waited, full = 0, 0
    for i, (_, action, c, item) in enumerate(events, 1):
        if action == "Produce" and any(v == "waiting" for v in state.pc.values()) and not state.queue:
            waited += 1  # an item that a waiting consumer will take
        problem = state.step(action, c, item)
        if problem:
            fail(EXIT_FINDING, f"step {i}: {problem}")
        if len(state.queue) == CAPACITY:
            full += 1
        counts[action] += 1
        record = {"step": i, "action": action, "state": state.json()}
        if c is not None:
            record["actor"] = c
        lines.append(json.dumps(record))
    if state.produced != n or any(len(v) != args.rounds for v in state.received.values()):
        fail(EXIT_FINDING, "the run ended before every item was received")
    print(f"dqueue-trace: seed={args.seed} items={n} steps={len(events)} | {counts} | items produced for a "
          f"waiting consumer={waited} steps ending with a full queue={full}", file=sys.stderr)
    need = {**counts, "items produced for a waiting consumer": waited, "steps ending with a full queue": full}
    short = [(k, v) for k, v in need.items() if v < args.min_each]
    if short:
        fail(EXIT_CONTENTION, f"too little contention: {short[0][0]} occur {short[0][1]} times "
                              f"(< --min-each {args.min_each}); nothing written")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the server thread is a daemon blocked in accept(); do not wait for it


if __name__ == "__main__":
    main()
