"""The OVSDB Raft capture: three real ovsdb-server processes, every Raft message through the harness.

Independent of any spec (the reference is checked against fresh traces in test_capture): each
logged step is atomic (only its actor's part of the state changes, a delivered or dropped
message leaves the network, only the actor sends), and a run shows an election after a
follower's isolation, a leader's crash and its return. Needs openvswitch-common and gcc.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "tasks" / "redisraft" / "harness"
pytestmark = pytest.mark.toolchain


def capture(tmp_path: Path, seed: int) -> list[dict[str, Any]]:
    subprocess.run(["./build.sh"], cwd=HARNESS, check=True, capture_output=True, timeout=120)
    out = tmp_path / f"seed-{seed}.ndjson"
    for _ in range(8):  # exit 3: a timer fired inside a step; the run is discarded and tried again
        done = subprocess.run([sys.executable, "ovsdb_trace.py", "--seed", str(seed), "--steps", "100", "--out", str(out)],
                              cwd=HARNESS, capture_output=True, text=True, timeout=300)
        if done.returncode != 3:
            break
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def key(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True)


def test_every_step_is_its_actors_alone(tmp_path: Path) -> None:
    meta, *steps = capture(tmp_path, 11)
    assert meta["meta"]["task"] == "redisraft" and steps[0]["action"] == "Init"
    shown = set(meta["meta"]["actions"])
    assert {"ElectionTimeout", "HandleRequestVoteRequest", "HandleRequestVoteResponse", "HandleAppendEntriesRequest",
            "HandleAppendEntriesResponse", "ClientRequest", "Crash", "Heartbeat", "DropMessage"} <= shown
    for before, after in zip(steps, steps[1:]):
        b, a, actor = before["state"], after["state"], after.get("actor")  # a loss has no actor
        changed = {s for s in a["state"] for f in a if f != "messages" and a[f][s] != b[f][s]}
        assert changed <= {actor}, (after["step"], after["action"], changed)
        gone = {key(m) for m in b["messages"]["$set"]} - {key(m) for m in a["messages"]["$set"]}
        new = [m for m in a["messages"]["$set"] if key(m) not in {key(x) for x in b["messages"]["$set"]}]
        if after["action"].startswith("Handle") or after["action"] == "DropMessage":
            assert len(gone) == 1, after["step"]
        assert all(m["from"] == actor for m in new), (after["step"], after["action"])
        if after["action"] == "ElectionTimeout":  # a request asked again at an older term is no step's
            assert all(m["type"] == "RequestVoteRequest" and m["term"] == a["currentTerm"][actor] for m in new), after["step"]
    terms = [max(s["state"]["currentTerm"].values()) for s in steps]
    assert terms == sorted(terms) and terms[-1] > terms[0]  # the crash led to a new election
