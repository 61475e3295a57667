"""Phase details that the mutant suite does not pin down: partial credit, blame, mapping."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_sysmobench import Status, load_task
from pytest_sysmobench.mapping import load_mapping
from pytest_sysmobench.sources import Candidate, MutantSource, ReferenceSource, ReplaySource, identity_mapping
from pytest_sysmobench.phases.invariants import canon_module, check_module
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.tla.messages import Verdict

ROOT = Path(__file__).resolve().parents[1]
TASK = load_task(ROOT / "tasks" / "spin")


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Scorer:
    with Scorer(tmp_path_factory.mktemp("phases")) as scorer:
        yield scorer


def test_unknown_operator_gets_partial_credit_for_the_other_definitions(scorer: Scorer) -> None:
    result = scorer.cell(TASK, MutantSource("unknown-operator")).result("syntax")
    definitions = result.details["definitions"]
    failed = [d["definition"] for d in definitions if not d["parses"]]
    assert failed == [], "stubs make every definition parse alone, Next included"
    assert result.status is Status.FAILED and result.score == 0.5
    assert "Unknown operator" in result.reason


def test_parse_error_partial_credit_counts_only_definitions_that_parse(scorer: Scorer) -> None:
    result = scorer.cell(TASK, MutantSource("missing-definition-eq")).result("syntax")
    parsed = sum(d["parses"] for d in result.details["definitions"])
    total = len(result.details["definitions"])
    assert 0 < parsed < total
    assert result.score == pytest.approx(0.5 * parsed / total)


def _replay(tmp_path: Path, text: str) -> ReplaySource:
    (tmp_path / "spin").mkdir(parents=True, exist_ok=True)
    (tmp_path / "spin" / "Spin.tla").write_text(text)
    return ReplaySource(tmp_path)


def _reference_with(tmp_path: Path, old: str, new: str) -> ReplaySource:
    """The spin reference (spec, cfg and mapping) with one edit to its spec."""
    reference = ROOT / "tasks" / "spin" / "reference"
    text = (reference / "Spin.tla").read_text()
    assert old in text
    source = _replay(tmp_path, text.replace(old, new, 1))
    for name in ("Spin.cfg", "mapping.yaml"):
        (tmp_path / "spin" / name).write_text((reference / name).read_text())
    return source


@pytest.mark.parametrize("count, broken", [(60, (7, 41)), (3000, (0, 1500))])
def test_partial_credit_checks_definitions_in_groups_with_bounded_work(
    scorer: Scorer, tmp_path: Path, count: int, broken: tuple[int, ...]
) -> None:
    """Groups that parse credit all their members; only the broken ones are checked alone.
    A spec with thousands of definitions is credited over an even spread of them."""
    from pytest_sysmobench.phases.syntax import MAX_UNITS

    lines = [f"Def{i}(x) == x + {'+' if i in broken else ''} {i}" for i in range(count)]
    text = "---- MODULE Spin ----\nEXTENDS Naturals\n" + "\n".join(lines) + "\n====\n"
    before = scorer.tool_counters()["sany"]
    result = scorer.cell(TASK, _replay(tmp_path, text)).result("syntax")
    runs = scorer.tool_counters()["sany"] - before
    checked = result.details["definitions"]
    assert len(checked) == min(count, MAX_UNITS)
    failing = [d["definition"] for d in checked if not d["parses"]]
    assert failing == [f"Def{i}" for i in broken if f"Def{i}" in {d["definition"] for d in checked}]
    assert result.score == pytest.approx(0.5 * (len(checked) - len(failing)) / len(checked))
    assert runs <= 1 + 2 * len(broken) * (MAX_UNITS.bit_length() + 5), f"{runs} SANY runs for {count} definitions"


def test_runtime_blames_the_action_whose_step_failed(scorer: Scorer) -> None:
    result = scorer.cell(TASK, MutantSource("arithmetic-on-string")).result("runtime")
    assert result.details["runtime_check"] is False
    assert result.details["erroneous"] == ["TryLockFail"]
    assert result.score == pytest.approx(0.8)


def test_reference_details_record_states_and_every_template(scorer: Scorer) -> None:
    cell = scorer.cell(TASK, ReferenceSource())
    runtime = cell.result("runtime")
    assert runtime.details["distinct_states"] == TASK.runtime.reference_states and runtime.details["never_fired"] == []
    invariants = cell.result("invariants")
    names = [t["name"] for t in invariants.details["templates"]]
    assert names == [t.name for t in TASK.templates]
    assert all(t["status"] == "passed" for t in invariants.details["templates"])


def test_check_module_instances_the_canonical_module_through_the_mapping() -> None:
    mapping = load_mapping(TASK.reference_mapping, TASK)
    text = check_module(TASK, mapping, "SYSMOmark")
    assert "INSTANCE Spin_SysmoCanon WITH" in text and "locked <- lock" in text
    assert 'pc[sysmo_x] = ("spin") -> ("spinning")' in text
    canon = canon_module(TASK)
    assert "VARIABLES locked, pc, request" in canon and "MutualExclusion ==" in canon


def test_identity_mapping_needs_every_canonical_name() -> None:
    reference = TASK.reference_spec.read_text()
    spec = Candidate(TASK.name, "t", 0, TASK.module, "test", tla=reference)
    assert identity_mapping(TASK, spec).missing == ("locked", "request")
    canonical = reference.replace("callType", "request").replace("lock,", "locked,")
    assert identity_mapping(TASK, dataclasses.replace(spec, tla=canonical)).mapping is not None


def test_a_task_constraint_bounds_p4_for_every_spec_through_the_mapping(scorer: Scorer, tmp_path: Path) -> None:
    # No thread spins while the lock is held: fewer states, and every template's premise still
    # within reach (a bound that hid all spinning would leave those templates vacuous).
    bounded = dataclasses.replace(TASK, invariants=dataclasses.replace(
        TASK.invariants, constraint='~\\E t \\in Threads : pc[t] = "spinning" /\\ locked'))
    free = scorer.cell(TASK, ReferenceSource()).result("invariants")
    tight = scorer.cell(bounded, ReferenceSource(), sample=1).result("invariants")
    assert free.status is Status.PASSED and tight.status is Status.PASSED
    states = lambda r: max(t["states"] or 0 for t in r.details["templates"])  # noqa: E731
    assert states(tight) < states(free)
    assert tight.details["task_constraint"].startswith("~\\E t \\in")
    assert "SysmoTaskConstraint" in check_module(bounded, load_mapping(TASK.reference_mapping, TASK), "SYSMOmark")
    # A bug inside the bound is still caught; one that needs a state beyond it is not: the bound
    # is the task's, stated in its task.yaml, and the same for every spec.
    assert scorer.cell(bounded, MutantSource("unlock-keeps-request"), sample=2).result("invariants").status is Status.FAILED
    assert scorer.cell(bounded, MutantSource("acquire-ignores-lock"), sample=3).result("invariants").status is Status.PASSED


@pytest.mark.parametrize("mutant, phase, klass", [
    ("unknown-operator", "syntax", "undefined_operator"),
    ("missing-definition-eq", "syntax", "syntax"),
    ("function-outside-domain", "runtime", "evaluation_error"),
    ("trylock-never-fires", "runtime", "actions_never_fire"),
    ("acquire-ignores-lock", "invariants", "safety_violation"),
    ("no-unlock-fairness", "invariants", "fairness_missing"),
])
def test_a_failed_phase_carries_its_failure_class(scorer: Scorer, mutant: str, phase: str, klass: str) -> None:
    result = scorer.cell(TASK, MutantSource(mutant)).result(phase)
    assert result.status is Status.FAILED
    assert result.details["failure_class"] == klass, result.reason


@pytest.mark.parametrize("case, klass", [("python_only", "python_syntax"), ("unicode_operators", "non_ascii_operator")])
def test_answers_in_the_wrong_language_are_classed_as_such(scorer: Scorer, tmp_path: Path, case: str, klass: str) -> None:
    """Unicode TLA+ operators are read as their ASCII forms; a character that is no TLA+ operator
    in any notation (here the end-of-proof box) still fails P1, classed as such."""
    text = (ROOT / "tests" / "data" / "bad_inputs" / case / "answer.txt").read_text()
    text = text.replace("MutexHolds ≜", "MutexHolds ≜ ∎")
    result = scorer.cell(TASK, _replay(tmp_path, text)).result("syntax")
    assert result.details.get("failure_class") == klass, result.reason


def test_pluscals_terminating_step_is_not_an_action_to_cover(scorer: Scorer, tmp_path: Path) -> None:
    """PlusCal's translator adds ``Terminating`` (stutter once every process is done); threads
    that loop forever never enable it, so P2 leaves it out of coverage instead of charging it."""
    source = _reference_with(tmp_path, "Next ==\n    \\E t \\in Threads :", "ProcSet == Threads\n\n"
                             'Terminating == /\\ \\A self \\in ProcSet: pc[self] = "Done"\n'
                             "               /\\ UNCHANGED vars\n\n"
                             "Next ==\n    \\/ Terminating\n    \\/ \\E t \\in Threads :")
    result = scorer.cell(TASK, source).result("runtime")
    assert result.status is Status.PASSED and result.score == 1.0, result.reason
    assert result.details["not_covered"] == ["Terminating"]
    assert "Terminating" not in result.details["actions"]



def _canonical_spin(spinning: str) -> str:
    """The reference spin spec in the task's own names, its spinning threads' pc written as given."""
    import re

    text = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    text = re.sub(r'(?<!")\block\b(?!")', "locked", text).replace("callType", "request")
    return text.replace('"cs"', '"locked"').replace('"spin"', f'"{spinning}"')


@pytest.mark.parametrize("spinning", ["spinning", "waiting"])
def test_a_value_outside_the_tasks_types_is_the_specs_failure(scorer: Scorer, tmp_path: Path, spinning: str) -> None:
    """A spin spec in the canonical names that writes "waiting" where the vocabulary says
    "spinning" would keep every template about spinning threads vacuously: the type check every
    task gets from its vocabulary fails it, and names the variable and the value."""
    source = _replay(tmp_path, _canonical_spin(spinning))
    (tmp_path / "spin" / "Spin.cfg").write_text((ROOT / "tasks" / "spin" / "reference" / "Spin.cfg").read_text())
    result = scorer.cell(TASK, source).result("invariants")
    if spinning == "spinning":
        assert result.status is Status.PASSED and result.score == 1.0, result.reason
        return
    assert result.status is Status.FAILED and result.score < 0.7, result.reason
    assert result.details["failure_class"] == "type_violation"
    assert result.details["defining_broken"] == ["TypeOK"]
    assert 'TypeOK violated: pc = ' in result.reason and '"waiting"' in result.reason
    assert "outside the type the task declares for pc" in result.reason
    # And with no thread ever "spinning", the templates about spinning threads say nothing.
    vacuous = {t["name"] for t in result.details["templates"] if "holds only vacuously" in t["reason"]}
    assert vacuous == {"NoDeadlock", "BlockingVsNonBlockingSemantics", "Progress"}
    assert result.details["fraction"] == pytest.approx(6 / 9)  # the original's count: TypeOK is not in it


@pytest.mark.parametrize("task, broken, unfair", [
    ("spin", "acquire-ignores-lock", "no-unlock-fairness"),
    ("mutex", "handoff-clears-bit", "no-release-fairness"),
])
def test_a_broken_defining_property_ranks_below_missing_fairness(scorer: Scorer, task: str, broken: str,
                                                                 unfair: str) -> None:
    """Counting templates would rank a lock that lets two threads in above a correct lock that
    declares no fairness (it loses fewer templates); mutual exclusion defines a lock."""
    lock = load_task(ROOT / "tasks" / task)
    two_in = scorer.cell(lock, MutantSource(broken)).result("invariants")
    no_fairness = scorer.cell(lock, MutantSource(unfair)).result("invariants")
    assert two_in.details["defining_broken"] == ["MutualExclusion"], two_in.reason
    assert no_fairness.details["defining_broken"] == [] and no_fairness.details["failure_class"] == "fairness_missing"
    assert two_in.score < no_fairness.score < 1.0
    assert "a defining property fails: MutualExclusion" in two_in.reason
    # The original's plain fraction is kept for comparison, and it ranks them the other way round.
    assert two_in.details["fraction"] >= no_fairness.details["fraction"]


def test_an_action_only_a_deep_state_enables_is_credited_from_the_traces(scorer: Scorer, tmp_path: Path) -> None:
    """A BFS one level deep, no random walks: only Lock and TryLock fire from Init.  Acquire,
    Unlock and TryLockFail need a thread already in lock() or holding it, which every trace of
    the real lock passes through: one step of the spec from each traced state credits them."""
    shallow = dataclasses.replace(TASK, runtime=dataclasses.replace(TASK.runtime, bfs_depth=1, simulations=0))
    cell = scorer.cell(shallow, ReferenceSource(), traces_dir=ROOT / "data" / "traces")
    result = cell.result("runtime")
    assert result.status is Status.PASSED and result.score == 1.0, result.reason
    assert result.details["fired_in"]["Unlock"] == ["traces"] and result.details["fired_in"]["Lock"] == ["bfs", "traces"]
    assert result.details["along_traces"] == "one step from every traced state"
    from pytest_sysmobench.phases._context import CellContext

    ctx = CellContext(TASK, cell.candidate(), scorer.toolchain(), tmp_path / "run", ROOT / "data" / "traces")
    assert ctx.next_action() == "Next"  # from the cfg's SPECIFICATION Spec, Spec == Init /\ [][Next]_vars /\ ...


def test_a_next_state_action_written_out_in_the_specification_is_read(scorer: Scorer,
                                                                                  tmp_path: Path) -> None:
    r"""``[][\E t \in Threads : Lock(t) \/ ...]_vars`` instead of ``[][Next]_vars``: read as
    the spec's next-state action, which P3 conjoins to each window's step."""
    from pytest_sysmobench.phases._context import CellContext

    spec = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    written_out = ("Init /\\ [][\\E t \\in Threads : Lock(t) \\/ Acquire(t) \\/ TryLockFail(t) "
                   "\\/ Unlock(t)]_vars")
    assert "Spec == Init /\\ [][Next]_vars" in spec
    folder = tmp_path / "spin"
    folder.mkdir()
    (folder / "Spin.tla").write_text(spec.replace("Init /\\ [][Next]_vars", written_out))
    for name in ("Spin.cfg", "mapping.yaml"):
        (folder / name).write_text((ROOT / "tasks" / "spin" / "reference" / name).read_text())
    cell = scorer.cell(TASK, ReplaySource(tmp_path), traces_dir=ROOT / "data" / "traces")
    ctx = CellContext(TASK, cell.candidate(), scorer.toolchain(), tmp_path / "run", ROOT / "data" / "traces")
    assert "TryLockFail(t)" in ctx.next_action()
    assert ctx.missing_actions() == {}, ctx.missing_actions()


def test_an_action_no_state_enables_is_named_never_enabled_and_one_beyond_the_bounds_not_reached(
        scorer: Scorer, tmp_path: Path) -> None:
    never = scorer.cell(TASK, MutantSource("trylock-never-fires")).result("runtime")
    assert never.details["never_enabled"] == ["TryLock"] and never.details["not_reached"] == []
    assert "never enabled (the BFS explored every reachable state): TryLock" in never.reason
    # Without traces the deep actions stay unreached: charged, and said to be beyond the bounds.
    shallow = dataclasses.replace(TASK, runtime=dataclasses.replace(TASK.runtime, bfs_depth=1, simulations=0))
    beyond = scorer.cell(shallow, ReferenceSource(), sample=1, traces_dir=tmp_path).result("runtime")
    assert beyond.status is Status.FAILED and beyond.score < 1.0
    assert set(beyond.details["not_reached"]) == {"Acquire", "TryLockFail", "Unlock"}
    assert beyond.details["never_enabled"] == [] and beyond.details["along_traces"] == "no traces"
    assert "never fired within the bounds" in beyond.reason


def test_a_template_whose_premise_no_explored_state_reaches_does_not_count_as_held(scorer: Scorer,
                                                                                  tmp_path: Path) -> None:
    """A spin lock whose lock() never starts: no thread ever spins, so every template about
    spinning threads holds vacuously.  They do not count; the ones about holders still do."""
    source = _reference_with(tmp_path, 'Lock(t) ==\n    /\\ pc[t] = "idle"', 'Lock(t) ==\n    /\\ FALSE\n    /\\ pc[t] = "idle"')
    result = scorer.cell(TASK, source).result("invariants")
    outcomes = {t["name"]: t for t in result.details["templates"]}
    vacuous = {name for name, t in outcomes.items() if "holds only vacuously" in t["reason"]}
    assert vacuous == {"NoDeadlock", "BlockingVsNonBlockingSemantics", "Progress"}, result.reason
    assert 'its premise (\\E t \\in Threads : pc[t] = "spinning") holds in no explored state' in \
        outcomes["BlockingVsNonBlockingSemantics"]["reason"]
    assert outcomes["MutualExclusion"]["status"] == "passed" and outcomes["EventualRelease"]["status"] == "passed"
    assert result.status is Status.FAILED and result.score < 1.0
    assert result.details["failure_class"] == "vacuous"


def test_a_template_without_a_premise_counts_only_where_a_variable_it_reads_changes(scorer: Scorer,
                                                                                    tmp_path: Path) -> None:
    """Ringbuffer's reference read through a mapping that shows its items as the empty sequence in
    every state: ``Len(items) <= Size - 1`` then holds of a constant and says nothing, while a
    template that also reads the counters the spec moves still counts."""
    reference = ROOT / "tasks" / "ringbuffer" / "reference"
    folder = tmp_path / "ringbuffer"
    folder.mkdir()
    for name in ("RingBuffer.tla", "RingBuffer.cfg"):
        (folder / name).write_text((reference / name).read_text())
    mapping = (reference / "mapping.yaml").read_text()
    items = "items: {expr: '[i \\in 1..((pTail + Size - cHead) % Size) |-> slot[(cHead + i - 1) % Size]]'}"
    assert items in mapping
    (folder / "mapping.yaml").write_text(mapping.replace(items, "items: {expr: '<<>>'}"))
    ring = load_task(ROOT / "tasks" / "ringbuffer")
    result = scorer.cell(ring, ReplaySource(tmp_path)).result("invariants")
    outcomes = {t["name"]: t for t in result.details["templates"]}
    assert outcomes["BufferBounds"]["status"] == "failed", result.reason
    assert "holds only vacuously: it reads items, which keeps one value in every explored state" in \
        outcomes["BufferBounds"]["reason"]
    assert "vacuously" not in outcomes["IndicesFollowCounters"]["reason"], outcomes["IndicesFollowCounters"]
    assert outcomes["IndicesFollowCounters"]["status"] == "passed"
    assert result.status is Status.FAILED and result.score < 1.0


def test_a_variable_whose_value_changes_kind_is_seen_to_move_without_stopping_tlc(scorer: Scorer,
                                                                                  tmp_path: Path) -> None:
    """TLC cannot compare ``"none"`` with a record: the register that remembers a variable's first
    value holds its text, so a spec whose variable changes kind still runs, and moves."""
    from pytest_sysmobench.phases import _work

    work = "Kinds_SysmoP4Work"
    files = {f"{work}.tla": _work.bound_module(work),
             "Kinds.tla": "---- MODULE Kinds ----\nEXTENDS Naturals\nVARIABLE x\n"
                          f"W == INSTANCE {work}\nASSUME W!ForgetAll(28000, 28002)\n"
                          'Init == x = "none"\nNext == x\' = [a |-> 1]\n'
                          'Moved == W!Moved(28000, x, <<"kinds", "moved", "x">>)\n====\n',
             "Kinds.cfg": "INIT Init\nNEXT Next\nINVARIANT Moved\n"}
    run = scorer.toolchain().tlc(tmp_path / "kinds", files, "Kinds", ["-config", "Kinds.cfg", "-deadlock"],
                                 timeout_s=60)
    assert run.result.verdict is Verdict.OK, run.result.summary()
    assert _work.marked(run.result, "kinds") == [("kinds", "moved", "x")]


def test_a_premise_that_does_not_parse_is_the_tasks_error_named_by_its_field(scorer: Scorer) -> None:
    broken = dataclasses.replace(TASK, templates=tuple(
        dataclasses.replace(t, premise="\\E t \\in Threads : pc[t] = = 1") if t.name == "MutualExclusion" else t
        for t in TASK.templates))
    result = scorer.cell(broken, ReferenceSource(), sample=7).result("invariants")
    assert result.status is Status.ERROR and result.cause.value == "task_error", result.reason
    assert "invariants[0] (MutualExclusion).premise does not parse" in result.reason


@pytest.mark.parametrize(("mutant", "says"), [
    # try_lock recorded as a lock() call: the spec's one TryLock step differs in one argument.
    ("trylock-records-lock-call", 'the spec\'s closest TryLock("t4") step (1 tried) differs: callType["t4"]: '
                                  'system "try", spec "lock"'),
    # Lock only while the lock is held: from a free lock the spec has no Lock step at all.
    ("lock-only-when-held", 'the spec: no step of Lock("t4") from this pre-state'),
])
def test_a_failing_window_says_where_the_specs_closest_step_differs(scorer: Scorer, mutant: str, says: str) -> None:
    """What a user would otherwise find by diffing states by eye: the system's step, then
    what the spec's nearest step from the same state shows wrong (from one more TLC run)."""
    result = scorer.cell(TASK, MutantSource(mutant), traces_dir=ROOT / "data" / "traces").result("conformance")
    assert result.status is Status.FAILED
    assert "  the system's step: " in result.reason and says in result.reason, result.reason
