"""Trace files: validation with file and line in every message, windows, and P3 on bad traces."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from pytest_sysmobench import Status, load_task
from pytest_sysmobench.sources import ReferenceSource
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.traces import TraceError, Window, load_corpus, load_trace, step_changes

ROOT = Path(__file__).resolve().parents[1]
TASK = load_task(ROOT / "tasks" / "spin")
GOOD = (ROOT / "data" / "traces" / "spin" / "seed-1.ndjson").read_text().splitlines()


def _write(tmp_path: Path, lines: list[str], name: str = "t.ndjson") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _edit(line: str, **changes: object) -> str:
    record = json.loads(line)
    record.update(changes)
    return json.dumps(record)


def test_committed_traces_load_and_cover_every_target_action() -> None:
    corpus = load_corpus(ROOT / "data" / "traces" / "spin", TASK)
    assert corpus.errors == ()
    assert len(corpus.traces) >= 2
    seen = {w.action for t in corpus.traces for w in t.windows()}
    assert seen == set(TASK.target_actions)
    window = corpus.traces[0].windows()[0]
    assert window.pre == corpus.traces[0].states[0] and window.step == 1


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda ls: ls[:1], "needs a meta line and an initial state"),
        (lambda ls: [ls[0], ls[1], "{not json"], ":3: not valid JSON"),
        (lambda ls: [ls[0], ls[1], "[1, 2]"], ":3: expected a JSON object"),
        (lambda ls: [ls[0], ls[1], _edit(ls[2], action="Teleport")], ":3: unknown action 'Teleport'"),
        (lambda ls: [ls[0], ls[1], _edit(ls[2], step=7)], ":3: expected step 1, got 7"),
        (lambda ls: [ls[0], ls[1], _edit(ls[2], state={"locked": True})], ":3: state lacks canonical variable(s) pc, request"),
        (lambda ls: [ls[0], _edit(ls[1], state={**json.loads(ls[1])["state"], "extra": 1})], ":2: state has unknown variable(s) extra"),
        (lambda ls: [ls[0], ls[1], _edit(ls[2], state={**json.loads(ls[2])["state"], "locked": 0.5})], "state.locked: float"),
        (lambda ls: [ls[0], ls[1], _edit(ls[2], actor=None, args=None)], "args.t: NoneType"),
        (lambda ls: [json.dumps({"meta": 3}), *ls[1:3]], ":1: the first line must be"),
        (lambda ls: [ls[0], ls[2]], ":2: the second line must be the initial state"),
    ],
)
def test_bad_lines_are_named_by_file_and_line(tmp_path: Path, mutate, message: str) -> None:
    path = _write(tmp_path, mutate(GOOD[:3]))
    with pytest.raises(TraceError, match=None) as info:
        load_trace(path, TASK)
    assert message in str(info.value) and str(path) in str(info.value)


def test_invalid_utf8_is_a_trace_error(tmp_path: Path) -> None:
    path = tmp_path / "bin.ndjson"
    path.write_bytes(b"\xff\xfe" + GOOD[0].encode())
    with pytest.raises(TraceError, match="not UTF-8"):
        load_trace(path, TASK)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=5))
def test_loader_raises_only_trace_errors(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    path = _write(tmp_path_factory.mktemp("fuzz"), [GOOD[0], GOOD[1], *lines])
    try:
        load_trace(path, TASK)
    except TraceError:
        pass


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Scorer:
    with Scorer(tmp_path_factory.mktemp("p3")) as scorer:
        yield scorer


def _traces_dir(tmp_path: Path, lines: list[str]) -> Path:
    folder = tmp_path / "traces" / "spin"
    folder.mkdir(parents=True)
    _write(folder, lines, "bad.ndjson")
    return tmp_path / "traces"


def test_an_impossible_step_fails_p3_and_names_the_window(scorer: Scorer, tmp_path: Path) -> None:
    lines = list(GOOD)
    step = next(i for i, line in enumerate(lines) if i > 1 and json.loads(line)["action"] == "Acquire")
    record = json.loads(lines[step])
    pre = json.loads(lines[step - 1])["state"]
    holder = record["actor"]
    other = next(t for t in record["state"]["pc"] if t != holder)
    # The real lock never lets two threads hold it: claim it did.
    record["state"]["pc"][other] = "locked"
    lines[step] = json.dumps(record)
    lines = lines[: step + 1]
    scorer.traces_dir = _traces_dir(tmp_path, lines)
    result = scorer.cell(TASK, ReferenceSource()).result("conformance")
    assert result.status is Status.FAILED
    assert "Acquire" in result.reason and f"bad.ndjson step {step - 1}" in result.reason
    assert result.details["traces"][0]["accepted_prefix"] == step - 1
    assert pre["locked"] is False


def test_a_malformed_trace_is_a_harness_error_with_its_line(scorer: Scorer, tmp_path: Path) -> None:
    scorer.traces_dir = _traces_dir(tmp_path, [GOOD[0], GOOD[1], "{oops"])
    result = scorer.cell(TASK, ReferenceSource()).result("conformance")
    assert result.status is Status.ERROR
    assert "bad.ndjson:3: not valid JSON" in result.reason


def test_corpus_constants_take_the_largest_bound_of_any_trace() -> None:
    from pytest_sysmobench.traces import Corpus, Trace

    def trace(name: str, constants: dict) -> Trace:
        return Trace(name, {"constants": constants}, ({},), ())

    corpus = Corpus((trace("a", {"Servers": ["n1", "n2"], "MaxTerm": 7, "Flag": True}),
                     trace("b", {"Servers": ["n1", "n2"], "MaxTerm": 9, "Flag": False, "MaxLogLen": 3})), ())
    assert corpus.constants == {"Servers": ["n1", "n2"], "MaxTerm": 9, "Flag": True, "MaxLogLen": 3}


def test_sets_are_written_with_a_tag_and_validated() -> None:
    from pytest_sysmobench.tla.values import tla_literal
    from pytest_sysmobench.traces import check_value

    assert tla_literal({"$set": [2, 1, 2]}) == "{1, 2}"
    assert tla_literal({"$set": []}) == "{}"
    assert tla_literal({"$set": [{"to": "n1", "entries": [1]}]}) == '{[entries |-> <<1>>, to |-> "n1"]}'
    assert tla_literal({"not a field": 1, "IF": 2}) == '("IF" :> 2 @@ "not a field" :> 1)'

    def fail(message: str) -> ValueError:
        return ValueError(message)

    check_value({"$set": [{"a": 1}]}, fail)
    for bad in ({"$set": 3}, {"$set": [], "other": 1}):
        with pytest.raises(ValueError, match="a set is written"):
            check_value(bad, fail)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"step": 1, "action": "Lock", "actor": "t1", "state": ' + "[" * 100_000 + "]" * 100_000 + "}",
         "nested more than 32 levels deep"),
        ('{"step": 1, "action": "Lock", "actor": "' + "t" * 10_000_000 + '", "state": {}}', "over the 1,048,576"),
        (_edit(GOOD[2], state={**json.loads(GOOD[2])["state"], "locked": "yes"}), "is not a value of its type BOOLEAN"),
    ],
    ids=["json-100000-deep", "line-of-10-MB", "value-outside-the-type"],
)
def test_hostile_trace_lines_are_refused_quickly_with_their_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, [*GOOD[:2], line])
    start = time.monotonic()
    with pytest.raises(TraceError, match=rf"t\.ndjson:3: .*{re.escape(message)}"):
        load_trace(path, TASK)
    assert time.monotonic() - start < 5


def test_a_function_on_1_to_n_may_be_a_list_and_its_values_are_still_checked(tmp_path: Path) -> None:
    zk = load_task(ROOT / "tasks" / "zookeeper")
    corpus = load_corpus(ROOT / "data" / "traces" / "zookeeper", zk)
    assert corpus.errors == () and corpus.traces
    lines = (ROOT / "data" / "traces" / "zookeeper" / "seed-1.ndjson").read_text().splitlines()[:3]
    state = json.loads(lines[2])["state"]
    assert isinstance(state["state"], list)  # servers are the ids 1..3: a tuple
    lines[2] = _edit(lines[2], state={**state, "state": ["LOOKING", "SLEEPING", "DOWN"]})
    with pytest.raises(TraceError, match=r':3: state.state: "SLEEPING" is not a value of its type'):
        load_trace(_write(tmp_path, lines), zk)
    lines[2] = _edit(lines[2], state={**state, "state": "LOOKING"})
    with pytest.raises(TraceError, match=r"expected a function \(a JSON object, or a list for one on 1..n\), got str"):
        load_trace(_write(tmp_path, lines), zk)


def test_a_windows_description_says_what_the_system_changed() -> None:
    """What a user would otherwise diff by eye: fields by path, elements added and removed."""
    window = Window("seed-1.ndjson", 7, "Lock", ("t1",),
                    {"locked": False, "pc": {"t1": "idle", "t2": "idle"}, "msgs": [{"to": 1}, {"to": 2}]},
                    {"locked": True, "pc": {"t1": "locked", "t2": "idle"}, "msgs": [{"to": 2}, {"to": 3}]})
    assert window.describe().splitlines()[1] == ('  the system\'s step: locked: false -> true; msgs: + {"to": 3}, '
                                                 '- {"to": 1}; pc["t1"]: "idle" -> "locked"')
    assert step_changes({"s": {"$set": [1, 2]}}, {"s": {"$set": [2, None]}}) == ["s: + null, - 1"]
    many = step_changes({f"v{i}": i for i in range(20)}, {f"v{i}": -i - 1 for i in range(20)})
    assert len(many) == 9 and many[-1] == "... 12 more"


JSON_LEAVES = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["idle", "locked"])
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.sampled_from(["a", "b", "t1"]), inner, max_size=3), max_leaves=8)
STATES = st.dictionaries(st.sampled_from(["locked", "pc", "msgs"]), JSON_VALUES, min_size=1, max_size=3)


@settings(max_examples=300)
@given(pre=STATES, post=STATES)
def test_a_step_shows_changes_exactly_when_it_changed_something(pre: dict, post: dict) -> None:
    changes = step_changes(pre, post, limit=1000)
    assert (changes == []) == (pre == post)
    for line in changes:  # every line names a variable of one of the two states
        assert line.split("[")[0].split(":")[0] in set(pre) | set(post)


def test_each_tasks_page_shows_what_its_traces_cover_as_the_cli_computes_it(capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' coverage sections are the committed traces' (so they cannot drift), and an
    action on few windows is named where a P3 score of its task is read."""
    from pytest_sysmobench import trace_coverage
    from pytest_sysmobench.cli import main
    from pytest_sysmobench.tasks import load_tasks

    root = Path(__file__).resolve().parents[1]
    for task in load_tasks(root / "tasks").tasks:
        found = trace_coverage.of(task, load_corpus(root / "data" / "traces" / task.name, task))
        page = (root / "docs" / "tasks" / f"{task.name}.md").read_text()
        assert f"## Trace coverage\n\n{found.markdown()}" in page, f"docs/tasks/{task.name}.md: run sysmobench tasks --coverage --markdown"
        assert found.windows == sum(a.windows for a in found.actions) or found.unexercised == ()
    zookeeper = next(t for t in load_tasks(root / "tasks").tasks if t.name == "zookeeper")
    found = trace_coverage.of(zookeeper, load_corpus(root / "data" / "traces" / "zookeeper", zookeeper))
    assert trace_coverage.p3_note(found) == "Decide, ReplyNotification rest on fewer than 20 windows"
    assert main(["tasks", "--coverage", "--tasks", str(root / "tasks"), "--traces", str(root / "data" / "traces")]) == 0
    out = capsys.readouterr().out
    assert "zookeeper: 4 traces, 188 windows, 175 distinct (pre-state, action, arguments)" in out
    assert "  note: Decide, ReplyNotification rest on fewer than 20 windows" in out


def test_held_out_seeds_are_some_of_the_tasks_seeds_and_what_only_they_show_is_counted(tmp_path: Path) -> None:
    """Each task holds seeds 3 and 4 out of feedback; what their windows show that seeds 1 and 2
    do not is counted per action, and where it is nothing (spin's three threads reach few
    states, all of them on every seed) the task's page says a correction cannot be told there."""
    import shutil

    import yaml

    from pytest_sysmobench import trace_coverage
    from pytest_sysmobench.tasks import TaskError, load_tasks

    root = Path(__file__).resolve().parents[1]
    tasks = {t.name: t for t in load_tasks(root / "tasks").tasks}
    for task in tasks.values():
        assert task.harness is not None and task.harness.held_out == (3, 4) and task.harness.feedback_seeds == (1, 2)
        corpus = load_corpus(root / "data" / "traces" / task.name, task)
        held = corpus.of_seeds(task.harness.held_out)
        assert {t.meta["seed"] for t in held.traces} == {3, 4} and held.sha256 != corpus.sha256
    # Four threads (the lock's 80 states): every spin and mutex action has held-out windows no
    # other seed has; locksvc's ClientUnlockRequest has none (seeds 1 and 2 show all 15).
    for name in ("spin", "mutex"):
        found = trace_coverage.of(tasks[name], load_corpus(root / "data" / "traces" / name, tasks[name]))
        assert found.indistinct == () and all(h.unseen > 0 for h in found.held_out), found.held_out
    locksvc = trace_coverage.of(tasks["locksvc"], load_corpus(root / "data" / "traces" / "locksvc", tasks["locksvc"]))
    assert locksvc.indistinct == ("ClientUnlockRequest",)
    etcd = trace_coverage.of(tasks["etcd"], load_corpus(root / "data" / "traces" / "etcd", tasks["etcd"]))
    assert etcd.indistinct == () and all(0 < h.unseen <= h.windows for h in etcd.held_out)
    for held, said in (([5], r"\[5\] are not among the seeds"), ([1, 2, 3, 4], "every seed is held out")):
        folder = tmp_path / str(len(held)) / "spin"
        shutil.copytree(root / "tasks" / "spin", folder)
        data = yaml.safe_load((folder / "task.yaml").read_text())
        data["harness"]["held_out"] = held
        (folder / "task.yaml").write_text(yaml.safe_dump(data))
        with pytest.raises(TaskError, match=said):
            load_task(folder)
