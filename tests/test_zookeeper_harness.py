"""The zookeeper harness's merge of the servers' notes into one trace (no JVM needed).

The notes here are written by hand in the form FleTrace writes them; the real ones are exercised
by the `toolchain` re-capture test.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tasks" / "zookeeper" / "harness"))
import zk_trace  # noqa: E402


def snap(sid: int, t: int, ev: str, *, state: str = "LOOKING", lc: int = 1, leader: int | None = None,
         recvset: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    note = {"t": t, "seq": t, "sid": sid, "ev": ev, "src": f"fle-{sid}", "state": state, "logicalclock": lc,
            "proposal": {"leader": sid if leader is None else leader, "zxid": [0, 0], "epoch": 0},
            "lastZxid": [0, 0], "currentEpoch": 0, **extra}
    if ev == "poll":
        note.update(site=note.get("site", 1), recvset=recvset or {}, outofelection={})
    return note


def vote(leader: int, state: str = "LOOKING", rnd: int = 1) -> dict[str, Any]:
    return {"leader": leader, "zxid": [0, 0], "round": rnd, "epoch": 0, "state": state}


def note(sid: int, t: int, ev: str, **fields: Any) -> dict[str, Any]:
    return {"t": t, "seq": t, "sid": sid, "ev": ev, "src": f"fle-{sid}", **fields}


def start(sid: int, t: int) -> list[dict[str, Any]]:
    return [snap(sid, t, "enter", lc=0, leader=-1), snap(sid, t + 1, "send", voters=[1, 2, 3]), snap(sid, t + 2, "poll")]


def notification(sender: int, leader: int, state: str = "LOOKING", rnd: int = 1) -> dict[str, Any]:
    return {"from": sender, "leader": leader, "zxid": [0, 0], "round": rnd, "epoch": 0, "state": state}


def test_steps_follow_the_notes_and_a_handler_sees_what_was_sent() -> None:
    notes = start(1, 10) + start(2, 20) + [
        note(1, 30, "got", site=1, n=notification(2, 2)),
        snap(1, 31, "send", leader=2, voters=[1, 2, 3]),
        snap(1, 32, "poll", leader=2, recvset={"2": vote(2)}),
    ]
    run = zk_trace.merge(notes)
    assert [(s.action, s.actor) for s, _ in run] == [("StartElection", 1), ("StartElection", 2), ("HandleNotification", 1)]
    final = run[-1][1].canonical()
    assert final["proposal"][0]["leader"] == 2 and final["recvset"][0] == {"$set": [{"from": 2, **vote(2)}]}
    assert {"from": 1, "to": 3, "leader": 2, "zxid": [0, 0], "round": 1, "epoch": 0, "state": "LOOKING"} in final["messages"]["$set"]


def test_a_notification_that_no_server_sent_is_a_finding() -> None:
    notes = start(1, 10) + [note(1, 30, "got", site=1, n=notification(3, 3)), snap(1, 31, "poll")]
    with pytest.raises(zk_trace.Finding, match="never sent"):
        zk_trace.merge(notes)


def test_a_reply_that_no_state_of_its_server_gives_is_a_run_to_discard() -> None:
    notes = start(1, 10) + start(2, 20) + [
        note(2, 45, "reply", reply={"to": 1, "leader": 3, "zxid": [0, 0], "round": 1, "epoch": 0, "state": "FOLLOWING"},
             n=notification(1, 1)),
    ]
    with pytest.raises(zk_trace.Unplaceable, match="server 2's reply"):
        zk_trace.merge(notes)


def test_a_decision_carries_its_outcome_and_a_reply_after_it_uses_it() -> None:
    notes = start(1, 10) + start(2, 20) + [
        note(1, 30, "got", site=1, n=notification(2, 2)),
        snap(1, 31, "send", leader=2, voters=[1, 2, 3]),
        snap(1, 32, "poll", leader=2, recvset={"2": vote(2)}),
        note(1, 33, "got", site=1, n=notification(1, 2)),
        snap(1, 34, "poll", site=2, leader=2, recvset={"1": vote(2), "2": vote(2)}),
        snap(1, 40, "leave", state="FOLLOWING", leader=2, vote=vote(2)),
        note(1, 41, "vote", vote=vote(2)),
        note(1, 50, "reply", reply={"to": 3, "leader": 2, "zxid": [0, 0], "round": 1, "epoch": 0, "state": "FOLLOWING"},
             n=notification(3, 3)),
    ]
    notes += [snap(3, 45, "enter", lc=0, leader=-1), snap(3, 46, "send", voters=[1, 2, 3]), snap(3, 47, "poll")]
    run = zk_trace.merge(notes)
    actions = [(s.action, s.actor) for s, _ in run]
    assert ("Decide", 1) in actions and actions[-1] == ("ReplyNotification", 1)
    after = dict(run[actions.index(("Decide", 1))][1].canonical())
    assert after["state"][0] == "FOLLOWING" and after["currentVote"][0] == {"leader": 2, "zxid": [0, 0], "round": 1, "epoch": 0}
    assert after["recvset"][0] == {"$set": []}


def test_a_reply_goes_back_to_the_last_point_where_its_server_gave_it() -> None:
    # Server 1's receiver read its current vote before the synchronisation raised the vote's
    # epoch, and noted the reply after: the reply is placed before the Sync step.
    notes = start(1, 10) + start(2, 20) + [
        note(1, 30, "got", site=1, n=notification(2, 2)),
        snap(1, 31, "send", leader=2, voters=[1, 2, 3]),
        snap(1, 32, "poll", leader=2, recvset={"2": vote(2)}),
        note(1, 33, "got", site=1, n=notification(1, 2)),
        snap(1, 34, "poll", site=2, leader=2, recvset={"1": vote(2), "2": vote(2)}),
        snap(1, 40, "leave", state="FOLLOWING", leader=2, vote=vote(2)),
        snap(3, 45, "enter", lc=0, leader=-1), snap(3, 46, "send", voters=[1, 2, 3]), snap(3, 47, "poll"),
        note(1, 48, "vote", vote={**vote(2), "epoch": 1}),
        note(1, 50, "reply", reply={"to": 3, "leader": 2, "zxid": [0, 0], "round": 1, "epoch": 0, "state": "FOLLOWING"},
             n=notification(3, 3)),
    ]
    run = zk_trace.merge(notes)
    actions = [(s.action, s.actor) for s, _ in run]
    assert actions[-2:] == [("ReplyNotification", 1), ("Sync", 1)]
    assert run[-1][1].canonical()["currentVote"][0]["epoch"] == 1
