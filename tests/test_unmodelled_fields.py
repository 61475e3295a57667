"""Record fields a spec leaves out (``unmodelled: [messages.epoch]``): the Python and TLA+
readings of a value without them agree (Hypothesis, real TLC), and a spec whose messages lack a
field the task's carry is scored on what it models, where without the declaration no state with
a message in flight could be represented.  Real SANY and TLC."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_sysmobench import PHASES, load_task
from pytest_sysmobench.mapping import MappingError, mapping_from_data
from pytest_sysmobench.phases._fields import expression, shape_of, strip, writes_left_out
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.sources import ReplaySource
from pytest_sysmobench.tla.jar import find_jar
from pytest_sysmobench.tla.values import SET_TAG, tla_literal

ROOT = Path(__file__).resolve().parents[1]
TASK = load_task(ROOT / "tasks" / "zookeeper")
FIELDS = ("x", "y")

_scalars = st.one_of(st.integers(-3, 3), st.booleans(), st.sampled_from(["a", "b"]))


def _values() -> st.SearchStrategy[Any]:
    """Trace values: scalars, sequences, sets and records, some records with the left-out fields."""
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        record = st.dictionaries(st.sampled_from(["x", "y", "a", "b"]), inner, min_size=1, max_size=3)
        return st.one_of(st.lists(inner, max_size=3), record,
                         st.lists(inner, max_size=3).map(lambda items: {SET_TAG: items}))
    return st.recursive(_scalars, extend, max_leaves=8)


@given(st.lists(_values(), min_size=1, max_size=3))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_stripping_is_idempotent_and_removes_every_left_out_field(values: list[Any]) -> None:
    for value in values:
        once = strip(value, FIELDS)
        assert strip(once, FIELDS) == once
        assert not writes_left_out(value, value, FIELDS)
        assert "'x'" not in repr(_keys(once)) and "'y'" not in repr(_keys(once))


def _keys(value: Any) -> list[str]:
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    if isinstance(value, dict):
        items = value[SET_TAG] if set(value) == {SET_TAG} else list(value.values())
        own = [] if set(value) == {SET_TAG} else list(value)
        return own + [k for v in items for k in _keys(v)]
    return []


def test_a_step_writes_a_left_out_field_when_it_adds_a_record_with_a_value_in_it() -> None:
    """A record added with the field at zero shows nothing the spec cannot; one with a value in
    it, or a change in the field alone, is part of the step the spec cannot show."""
    before = {SET_TAG: [{"to": 1, "x": 0}]}
    assert not writes_left_out(before, {SET_TAG: [{"to": 1, "x": 0}, {"to": 2, "x": 0}]}, FIELDS)
    assert writes_left_out(before, {SET_TAG: [{"to": 1, "x": 0}, {"to": 2, "x": 5}]}, FIELDS)
    assert writes_left_out(before, {SET_TAG: [{"to": 1, "x": 5}]}, FIELDS)
    assert not writes_left_out({SET_TAG: [{"to": 1, "x": 5}]}, {SET_TAG: []}, FIELDS)
    assert writes_left_out({"s1": []}, {"s1": [{"t": 1, "y": [1]}]}, FIELDS)
    assert not writes_left_out({"s1": []}, {"s1": [{"t": 1, "y": []}]}, FIELDS)


#: One variable's values over a run, for each shape a variable with records can have.
HISTORIES = [
    [{SET_TAG: []}, {SET_TAG: [{"x": 1, "a": "p"}, {"x": 2, "a": "p", "y": "q"}]}],  # a set of records
    [{"s1": [], "s2": [{"t": 1, "x": 3}]}, {"s1": [{"t": 2, "x": 1}], "s2": []}],   # a function to sequences
    [{"s1": {SET_TAG: [{"x": 1, "b": 2}]}}, {"s1": {SET_TAG: []}, "s2": {SET_TAG: [{"x": 4, "b": 5}]}}],
    [{"x": 1, "log": [{"y": True, "a": "p"}], "n": 3}],                          # a record, a field below
    [{"a": {"x": {SET_TAG: [1]}, "b": [{"y": 1}]}, "b": 2}],                      # records at two depths
    [[{SET_TAG: [{"x": 1}]}, {SET_TAG: []}]],                                     # a sequence of sets
]


def test_the_tla_reading_takes_out_what_the_python_one_does(tmp_path: Path) -> None:
    """Each variable read in TLA+ by the shape its values show: TLC evaluates the reading of
    every value and compares it with the Python one's literal (ASSUMEs; a false one fails the
    run, checked by one false on purpose)."""
    lines = []
    for values in HISTORIES:
        shape = shape_of(values, FIELDS)
        assert shape is not None
        for value in values:
            lines.append(f"ASSUME {expression(shape, tla_literal(value))} = {tla_literal(strip(value, FIELDS))}")
    assert _tlc(tmp_path / "right", lines)
    shape = shape_of(HISTORIES[0], FIELDS)
    assert not _tlc(tmp_path / "wrong", [f"ASSUME {expression(shape, tla_literal(HISTORIES[0][1]))} = "
                                         f"{tla_literal(HISTORIES[0][1])}"])


def _tlc(folder: Path, assumptions: list[str]) -> bool:
    folder.mkdir()
    (folder / "Strip.tla").write_text("---- MODULE Strip ----\nEXTENDS Integers, Sequences, TLC\n"
                                      + "\n".join(assumptions) + "\nVARIABLE v\nInit == v = 0\nNext == UNCHANGED v\n====\n")
    (folder / "Strip.cfg").write_text("INIT Init\nNEXT Next\n")
    proc = subprocess.run(["java", "-XX:+UseSerialGC", "-cp", str(find_jar().path), "tlc2.TLC", "-metadir",
                           str(folder / "meta"), "-config", "Strip.cfg", "Strip.tla"],
                          cwd=folder, capture_output=True, text=True, timeout=300)
    # Any error but a false assumption is the reading's fault (a value it cannot evaluate).
    assert "Semantic errors" not in proc.stdout and "Error: Evaluating" not in proc.stdout, proc.stdout[-3000:]
    return "Model checking completed" in proc.stdout


def _mapping(fields: list[str]) -> dict[str, Any]:
    """The reference's own mapping, with ``messages`` read without its records' ``epoch``."""
    mapping = yaml.safe_load((ROOT / "tasks" / "zookeeper" / "reference" / "mapping.yaml").read_text())
    mapping["version"] = 2
    mapping["variables"]["messages"] = {"expr": '{[f \\in DOMAIN m \\ {"epoch"} |-> m[f]] : m \\in messages}'}
    mapping["state"] = {"messages": "canon.messages"}
    mapping["unmodelled"] = fields
    return mapping


def test_a_field_is_left_out_only_of_a_mapped_variable_by_its_name() -> None:
    loaded = mapping_from_data(_mapping(["messages.epoch"]), TASK, "m.yaml")
    assert loaded.stripped("messages") == ("epoch",) and loaded.unmodelled == ()
    assert "messages.epoch unmodelled" in loaded.describe()
    for wrong, said in ((["nosuch.epoch"], "'nosuch' is not a canonical variable mapped"),
                        (["messages.1x"], "'1x' is not a record field name")):
        with pytest.raises(MappingError, match=said):
            mapping_from_data(_mapping(wrong), TASK, "m.yaml")


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Scorer:
    with Scorer(tmp_path_factory.mktemp("fields"), traces_dir=ROOT / "data" / "traces") as scorer:
        yield scorer


def _results(scorer: Scorer, tmp_path: Path, fields: list[str], phases: tuple[str, ...] = PHASES) -> dict[str, Any]:
    folder = tmp_path / "zookeeper"
    folder.mkdir(parents=True)
    for name in ("ZooKeeperFLE.tla", "ZooKeeperFLE.cfg"):
        shutil.copy(ROOT / "tasks" / "zookeeper" / "reference" / name, folder)
    (folder / "mapping.yaml").write_text(yaml.safe_dump(_mapping(fields)))
    cell = scorer.cell(TASK, ReplaySource(tmp_path))
    return {phase: cell.result(phase) for phase in phases}


def test_messages_without_a_field_are_judged_on_the_fields_the_spec_has(scorer: Scorer, tmp_path: Path) -> None:
    """The mapping reads the spec's notifications without their epoch.  Declared, every traced
    state is represented and every window judged without it; a step that sends a notification
    with an epoch writes what the spec cannot show, and fails (as a change to an unmodelled
    variable does); the extra-step check finds no step the system cannot take.  P4 charges the
    templates that read a notification's epoch, and checks the rest.  Not declared, no traced
    state with a notification in flight maps back, and P3 passes fewer windows."""
    results = _results(scorer, tmp_path / "declared", ["messages.epoch"])
    conformance, invariants = results["conformance"], results["invariants"]
    actions = conformance.details["actions"]
    assert conformance.details["unrepresentable_states"] == 0
    assert "unmodelled: messages.epoch" in conformance.reason
    assert actions["Decide"]["score"] == 1.0 and actions["Decide"]["unmodelled_changes"] == 0
    sending = actions["StartElection"]
    assert 0 < sending["unmodelled_changes"] < sending["windows"] and sending["score"] == 0.0
    assert "changes messages (its epoch), which the mapping leaves unmodelled" in sending["first_failure"]
    steps = [conformance.details["precision"]["other_steps"], *(a["precision"] for a in actions.values())]
    assert all(p["precise"] == p["states"] > 0 and not p["first_extra"] for p in steps), steps
    templates = {t["name"]: t for t in invariants.details["templates"]}
    assert templates["ProposalAnnounced"]["status"] == "failed"
    assert "reads messages.epoch, which the mapping leaves unmodelled" in templates["ProposalAnnounced"]["reason"]
    assert templates["LeaderHasQuorum"]["status"] == "passed", templates["LeaderHasQuorum"]
    assert invariants.details["not_type_checked"] == ["messages"]
    assert 0 < invariants.score < 1.0

    undeclared = _results(scorer, tmp_path / "undeclared", [], ("syntax", "runtime", "conformance"))["conformance"]
    assert undeclared.details["unrepresentable_states"] > 0
    assert undeclared.details["window_pass_rate"] < conformance.details["window_pass_rate"]
