"""A spec is scored on what it allows: P3's extra steps (the task's reference is the oracle), P2's
inert actions, P4's reach of the traced states, and the floor rows.  Real SANY and TLC, the
committed traces, and specs written the ways a model's answer goes wrong (kept here, not in the
task folders, so that no task's data is tuned to them)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sysmobench import Status, composite, load_task
from pytest_sysmobench.phases._beyond import _trace_value
from pytest_sysmobench.phases._precision import pre_states
from pytest_sysmobench.phases.invariants import _renamed
from pytest_sysmobench.sources import MutantSource, ReferenceSource, ReplaySource, UnknownModel, resolve_source
from pytest_sysmobench.sources._floor import FloorSource
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.tla.values import parse_value, tla_literal
from pytest_sysmobench.traces import load_corpus

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "data" / "traces"
SPIN = load_task(ROOT / "tasks" / "spin")
#: The distinct states spin's traces show: P3's extra-step check asks a spec's steps from each.
TRACED = len(pre_states(load_corpus(TRACES / "spin", SPIN), frozenset()))
RING = load_task(ROOT / "tasks" / "ringbuffer")

#: The spin lock in the task's own names, exactly as the traces show it.
EXACT_SPIN = r"""---- MODULE Spin ----
EXTENDS Naturals, FiniteSets, TLC
CONSTANT Threads
VARIABLES locked, pc, request
vars == <<locked, pc, request>>
Init == locked = FALSE /\ pc = [t \in Threads |-> "idle"] /\ request = [t \in Threads |-> "none"]
Lock(t) == pc[t] = "idle" /\ pc' = [pc EXCEPT ![t] = "spinning"] /\ request' = [request EXCEPT ![t] = "lock"] /\ UNCHANGED locked
Acquire(t) == pc[t] = "spinning" /\ ~locked /\ locked' = TRUE /\ pc' = [pc EXCEPT ![t] = "locked"] /\ UNCHANGED request
TryLock(t) == pc[t] = "idle" /\ ~locked /\ locked' = TRUE /\ pc' = [pc EXCEPT ![t] = "locked"] /\ request' = [request EXCEPT ![t] = "try"]
TryLockFail(t) == pc[t] = "idle" /\ locked /\ UNCHANGED vars
Unlock(t) == pc[t] = "locked" /\ locked' = FALSE /\ pc' = [pc EXCEPT ![t] = "idle"] /\ request' = [request EXCEPT ![t] = "none"]
Next == \E t \in Threads : Lock(t) \/ Acquire(t) \/ TryLock(t) \/ TryLockFail(t) \/ Unlock(t)
Spec == Init /\ [][Next]_vars /\ \A t \in Threads : WF_vars(Acquire(t)) /\ WF_vars(Unlock(t))
====
"""

#: Every action a step that changes nothing.
NOOP_SPIN = re.sub(r"^(Lock|Acquire|TryLock|TryLockFail|Unlock)\(t\) == .*$", r"\1(t) == UNCHANGED vars", EXACT_SPIN,
                   flags=re.M)
#: try_lock may fail on a free lock, and a spinning thread may give up and go idle.
LOOSER_SPIN = EXACT_SPIN.replace('TryLockFail(t) == pc[t] = "idle" /\\ locked /\\ UNCHANGED vars',
                                 'TryLockFail(t) == pc[t] = "idle" /\\ UNCHANGED vars\n'
                                 'GiveUp(t) == pc[t] = "spinning" /\\ pc\' = [pc EXCEPT ![t] = "idle"] /\\ '
                                 'request\' = [request EXCEPT ![t] = "none"] /\\ UNCHANGED locked').replace(
    "\\/ Unlock(t)\n", "\\/ Unlock(t) \\/ GiveUp(t)\n")
#: Acquire(t) may make any spinning thread the holder.
ANY_HOLDER_SPIN = EXACT_SPIN.replace(
    'Acquire(t) == pc[t] = "spinning" /\\ ~locked /\\ locked\' = TRUE /\\ pc\' = [pc EXCEPT ![t] = "locked"]',
    'Acquire(t) == \\E u \\in Threads : pc[u] = "spinning" /\\ ~locked /\\ locked\' = TRUE /\\ pc\' = [pc EXCEPT ![u] = "locked"]')


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Scorer:
    with Scorer(tmp_path_factory.mktemp("precision"), traces_dir=TRACES) as scorer:
        yield scorer


def _spin(tmp_path: Path, text: str) -> ReplaySource:
    assert text != EXACT_SPIN or "GiveUp" not in text
    (tmp_path / "spin").mkdir(parents=True, exist_ok=True)
    (tmp_path / "spin" / "Spin.tla").write_text(text)
    return ReplaySource(tmp_path)


def _reference_with(tmp_path: Path, task: str, *edits: tuple[str, str]) -> ReplaySource:
    """A task's reference (spec, cfg and mapping) with edits to its spec."""
    loaded = load_task(ROOT / "tasks" / task)
    folder = tmp_path / task
    folder.mkdir(parents=True)
    text = loaded.reference_spec.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (folder / loaded.reference_spec.name).write_text(text)
    for path in (loaded.reference_cfg, loaded.reference_mapping):
        assert path is not None
        (folder / path.name).write_text(path.read_text())
    return ReplaySource(tmp_path)


def test_the_exact_spec_takes_no_step_the_system_cannot(scorer: Scorer, tmp_path: Path) -> None:
    cell = scorer.cell(SPIN, _spin(tmp_path, EXACT_SPIN))
    result = cell.result("conformance")
    assert result.status is Status.PASSED and result.score == 1.0, result.reason
    assert result.details["precision"]["states"] == TRACED
    assert all(a["precision"]["precise"] == TRACED for a in result.details["actions"].values())
    assert "takes no step the system cannot" in result.reason


@pytest.mark.parametrize(("text", "extra", "says"), [
    # The spurious failure: a try_lock that fails on a free lock, a step the real CAS never takes.
    (LOOSER_SPIN, {"TryLockFail", "(steps of no action)"}, 'the system: no step of TryLockFail("t1")'),
    # The wrong actor: Acquire(t1) lets t2 in (every such step is one Acquire(t2) could take).
    (ANY_HOLDER_SPIN, {"Acquire"}, "the system: no step of Acquire("),
    # A spec that does nothing: every action, TryLockFail included (a no-op where the lock is free).
    (NOOP_SPIN, {"Lock", "Acquire", "TryLock", "TryLockFail", "Unlock"}, "changes nothing"),
], ids=["spurious-failure-and-give-up", "any-thread-acquires", "does-nothing"])
def test_a_spec_that_allows_more_than_the_system_loses_p3(scorer: Scorer, tmp_path: Path, text: str,
                                                          extra: set[str], says: str) -> None:
    result = scorer.cell(SPIN, _spin(tmp_path, text)).result("conformance")
    assert result.status is Status.FAILED, result.reason
    flagged = {name for name, a in result.details["actions"].items() if a["precision"]["precise"] < TRACED}
    if result.details["precision"]["other_steps"]["precise"] < TRACED:
        flagged.add("(steps of no action)")
    assert flagged == extra, result.reason
    assert says in result.reason
    assert result.details["failure_class"] in ("extra_steps", "steps_rejected")
    # The raw rates stand beside the zero-tolerance score.
    assert result.details["window_pass_rate"] is not None and result.details["p3_on_change"] is not None


def test_every_window_passes_yet_the_extra_steps_cost_and_are_classed(scorer: Scorer, tmp_path: Path) -> None:
    result = scorer.cell(SPIN, _spin(tmp_path, ANY_HOLDER_SPIN)).result("conformance")
    assert result.details["window_pass_rate"] == 1.0
    assert result.details["failure_class"] == "extra_steps"
    assert result.score == pytest.approx(4 / 5)


def test_steps_of_no_action_count_as_one_more_action_that_fails(scorer: Scorer, tmp_path: Path) -> None:
    give_up_only = EXACT_SPIN.replace("\\/ Unlock(t)\n", "\\/ Unlock(t) \\/ GiveUp(t)\n").replace(
        "Next ==", 'GiveUp(t) == pc[t] = "spinning" /\\ pc\' = [pc EXCEPT ![t] = "idle"] /\\ '
                   'request\' = [request EXCEPT ![t] = "none"] /\\ UNCHANGED locked\nNext ==')
    result = scorer.cell(SPIN, _spin(tmp_path, give_up_only)).result("conformance")
    assert result.score == pytest.approx(5 / 6), result.reason
    assert "steps of no action the system cannot take" in result.reason


def test_an_inert_spec_scores_near_its_syntax_credit(scorer: Scorer, tmp_path: Path) -> None:
    """P2 counts no inert action, P3 every one, and P4 the one traced state it reaches."""
    cell = scorer.cell(SPIN, _spin(tmp_path, NOOP_SPIN))
    results = cell.evaluate()
    runtime, invariants = results["runtime"], results["invariants"]
    assert runtime.score == pytest.approx(1 / 5) and sorted(runtime.details["inert"]) == \
        ["Acquire", "Lock", "TryLock", "Unlock"], runtime.reason
    assert "inert" in runtime.reason
    assert invariants.details["traced_states"] == f"1 of {TRACED}", invariants.reason
    assert composite(results) < 0.2


def test_p2_counts_a_no_op_the_system_itself_takes_as_fired(scorer: Scorer) -> None:
    """Ringbuffer's failed enqueue and dequeue change nothing in the real ring either: a ring whose
    every call changes nothing loses only the two that must change it."""
    runtime = scorer.cell(RING, FloorSource("noop", TRACES)).result("runtime")
    assert runtime.score == pytest.approx(2 / 4), runtime.reason
    assert sorted(runtime.details["inert"]) == ["Pop", "Push"]


def test_p2_does_not_take_a_spec_operator_for_the_canonical_action_of_the_same_name(scorer: Scorer,
                                                                                    tmp_path: Path) -> None:
    """The spec's own ``TryLock`` is a blocking request; the canonical TryLock is mapped to an
    operator it does not define.  The two names are not one name space: the canonical action is
    still missing."""
    text = EXACT_SPIN.replace("TryLock(t) ==", "Attempt(t) ==").replace(
        "Unlock(t) ==", "TryLock(t) == pc[t] = \"idle\" /\\ pc' = [pc EXCEPT ![t] = \"spinning\"] /\\ "
                        "UNCHANGED <<locked, request>>\nUnlock(t) ==").replace(
        "\\/ TryLock(t) \\/", "\\/ Attempt(t) \\/ TryLock(t) \\/")
    assert text.count("Attempt(t)") == 2 and text.count("TryLock(t) ==") == 1, text
    source = _spin(tmp_path, text)
    (tmp_path / "spin" / "mapping.yaml").write_text(
        "variables: {locked: {var: locked}, pc: {var: pc}, request: {var: request}}\n"
        "actions: {Lock: Lock, Acquire: Acquire, TryLock: TryAcquire, TryLockFail: TryLockFail, Unlock: Unlock}\n")
    runtime = scorer.cell(SPIN, source).result("runtime")
    assert runtime.details["not_in_spec"] == ["TryLock"], runtime.reason
    assert runtime.score < 1.0 and "TryLock" in runtime.reason


def test_a_mapping_declares_a_canonical_action_absent_though_the_spec_has_an_operator_of_its_name(
        scorer: Scorer, tmp_path: Path) -> None:
    """The spec's own ``TryLock`` is a blocking request: ``absent: [TryLock]`` says the spec has
    no canonical TryLock, with no made-up operator name.  Left unsaid, the spec's operator would
    stand for the canonical action."""
    text = EXACT_SPIN.replace("TryLock(t) ==", "Attempt(t) ==").replace(
        "Unlock(t) ==", "TryLock(t) == pc[t] = \"idle\" /\\ pc' = [pc EXCEPT ![t] = \"spinning\"] /\\ "
                        "UNCHANGED <<locked, request>>\nUnlock(t) ==").replace(
        "\\/ TryLock(t) \\/", "\\/ Attempt(t) \\/ TryLock(t) \\/")
    variables = "variables: {locked: {var: locked}, pc: {var: pc}, request: {var: request}}\n"

    def mapped(folder: str, mapping: str) -> ReplaySource:
        source = _spin(tmp_path / folder, text)
        (tmp_path / folder / "spin" / "mapping.yaml").write_text(variables + mapping)
        return source

    cell = scorer.cell(SPIN, mapped("absent", "absent: [TryLock]\n"))
    runtime, conformance = cell.result("runtime"), cell.result("conformance")
    assert runtime.details["not_in_spec"] == ["TryLock"], runtime.reason
    assert "TryLock" in runtime.reason and runtime.score < 1.0
    took = conformance.details["actions"]["TryLock"]
    assert took["passed"] == 0 and "its mapping declares it absent" in took["error"], took
    # The spec's own TryLock (idle to spinning, request unchanged) is a step of no action the
    # system never takes.
    assert conformance.details["precision"]["other_steps"]["precise"] < TRACED, conformance.details
    assert "TryLock absent" in conformance.details["mapping"]
    taken = scorer.cell(SPIN, mapped("named", "")).result("runtime")
    assert "TryLock" not in taken.details["not_in_spec"], taken.reason
    both = scorer.cell(SPIN, mapped("both", "absent: [TryLock]\nactions: {TryLock: Attempt}\n")).result("conformance")
    assert both.score == 0.0 and "absent[0]: TryLock is also mapped under actions" in both.reason, both.reason


def test_a_wrong_action_mapping_never_pays_against_leaving_the_action_out(scorer: Scorer, tmp_path: Path) -> None:
    """A lock service without its give-up: mapped honestly (the action left out) or to the
    spec's unlock, which fires but never moves where the real clients gave up.  P2 reads the
    mapped steps at the system's own give-up states: the wrong mapping earns nothing there."""
    locksvc = load_task(ROOT / "tasks" / "locksvc")
    drop = ("\\/ Release(p) \\/ Abandon(p)", "\\/ Release(p)")
    scored = {}
    for mapped in ("Abandon", "Release"):
        source = _reference_with(tmp_path / mapped, "locksvc", drop)
        mapping = tmp_path / mapped / "locksvc" / "mapping.yaml"
        mapping.write_text(mapping.read_text().replace("ClientGiveUp: {action: Abandon}",
                                                       f"ClientGiveUp: {{action: {mapped}Missing}}"
                                                       if mapped == "Abandon" else "ClientGiveUp: {action: Release}"))
        cell = scorer.cell(locksvc, source)
        scored[mapped] = (cell.result("runtime"), cell.result("conformance"))
    (honest_p2, honest_p3), (wrong_p2, wrong_p3) = scored["Abandon"], scored["Release"]
    assert honest_p2.details["not_in_spec"] == ["ClientGiveUp"], honest_p2.reason
    assert wrong_p2.details["misread"] == {"ClientGiveUp": ["Release"]}, wrong_p2.reason
    assert wrong_p2.score <= honest_p2.score < 1.0 and "never change the state where" in wrong_p2.reason
    assert wrong_p3.score <= honest_p3.score
    reference = scorer.cell(locksvc, ReferenceSource()).result("runtime")
    assert reference.score == 1.0 and reference.details["misread"] == {}, reference.reason


def test_a_ring_whose_calls_may_fail_when_they_need_not_loses_p3(scorer: Scorer, tmp_path: Path) -> None:
    source = _reference_with(tmp_path, "ringbuffer", ("    /\\ sent < N\n    /\\ Full\n", "    /\\ sent < N\n"),
                             ("    /\\ recv < N\n    /\\ Empty\n", "    /\\ recv < N\n"))
    result = scorer.cell(RING, source).result("conformance")
    assert result.status is Status.FAILED and result.details["failure_class"] == "extra_steps", result.reason
    assert {"PushFull", "PopEmpty"} == {a for a, d in result.details["actions"].items() if d["score"] < 1}


@pytest.mark.parametrize(("full", "empty", "p3"), [
    ("sent < N /\\ Full", "recv < N /\\ Empty", 1.0),   # exactly where the real calls fail
    ("sent < N", "recv < N /\\ Empty", 0.75),            # a push that may fail on a ring with room
])
def test_a_spec_whose_threads_wait_maps_a_failed_call_to_a_stutter(scorer: Scorer, tmp_path: Path, full: str,
                                                                  empty: str, p3: float) -> None:
    """The ring without its failing calls (its threads would wait instead): ``stutter`` maps
    PushFull and PopEmpty to steps that change nothing where a condition holds.  The windows
    take them, and the extra-step check holds the condition to the system's."""
    source = _reference_with(tmp_path, "ringbuffer", ("Next == Push \\/ PushFull \\/ Pop \\/ PopEmpty", "Next == Push \\/ Pop"))
    mapping = tmp_path / "ringbuffer" / "mapping.yaml"
    text = mapping.read_text()
    assert text.count("  PushFull: PushFull\n") == 1 and text.count("  PopEmpty: PopEmpty\n") == 1
    mapping.write_text(text.replace("  PushFull: PushFull\n", f"  PushFull: {{stutter: '{full}'}}\n")
                       .replace("  PopEmpty: PopEmpty\n", f"  PopEmpty: {{stutter: '{empty}'}}\n"))
    cell = scorer.cell(RING, source)
    result = cell.result("conformance")
    actions = result.details["actions"]
    assert actions["PushFull"]["passed"] == actions["PushFull"]["windows"] > 0, actions["PushFull"]
    assert actions["PopEmpty"]["passed"] == actions["PopEmpty"]["windows"] > 0, actions["PopEmpty"]
    assert result.score == pytest.approx(p3), result.reason
    if p3 < 1:
        assert actions["PushFull"]["score"] == 0 and result.details["failure_class"] == "extra_steps", result.reason
    runtime = cell.result("runtime")
    assert runtime.details["not_in_spec"] == [] and runtime.score == 1.0, runtime.reason


def test_a_step_beyond_the_references_declared_bounds_is_not_counted(scorer: Scorer, tmp_path: Path) -> None:
    """The reference enqueues the run's N items only (its workload's bound, declared as narrower):
    a ring that would enqueue more is not charged for it."""
    assert RING.conformance.narrower
    source = _reference_with(tmp_path, "ringbuffer", ("Push ==\n    /\\ sent < N\n", "Push ==\n"))
    result = scorer.cell(RING, source).result("conformance")
    assert result.status is Status.PASSED, result.reason
    assert result.details["precision"]["narrower"] == [n.why for n in RING.conformance.narrower]


def test_steps_the_spec_cannot_tell_apart_are_judged_together(scorer: Scorer) -> None:
    """records/spin maps TryLock and TryLockFail both to its Try: a failed Try on a held lock is a
    step of TryLock to the mapping, and a step of TryLockFail to the system."""
    result = scorer.cell(SPIN, ReplaySource(ROOT / "tests" / "data" / "foreign" / "records")).result("conformance")
    assert result.status is Status.PASSED, result.reason


def test_an_inert_spec_does_not_keep_p4_by_reaching_one_state_and_a_renamed_cfg_reaches_them_all(
        scorer: Scorer, tmp_path: Path) -> None:
    """The traced states' threads t1..t3 are records/spin's "a".."c" (its cfg): every one reached."""
    foreign = scorer.cell(SPIN, ReplaySource(ROOT / "tests" / "data" / "foreign" / "records")).result("invariants")
    assert foreign.status is Status.PASSED and foreign.details["traced_states"] == f"{TRACED} of {TRACED}", foreign.reason


@pytest.mark.parametrize(("floor", "expected"), [("noop", {"runtime": 0.2, "conformance": 0.0, "invariants": 0.0}),
                                                 ("loose", {"runtime": 1.0, "conformance": 0.0, "invariants": 1.0})])
def test_floor_rows_show_what_a_phase_gives_for_nothing(scorer: Scorer, floor: str, expected: dict[str, float]) -> None:
    results = scorer.cell(SPIN, FloorSource(floor, TRACES)).evaluate()
    assert results["syntax"].score == 1.0
    for phase, score in expected.items():
        assert results[phase].score == pytest.approx(score), (phase, results[phase].reason)
    assert composite(results) < 0.7


def test_an_unknown_floor_is_a_usage_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(UnknownModel, match="did you mean floor:noop"):
        resolve_source("floor:nop", tmp_path)
    assert isinstance(resolve_source("floor:loose", tmp_path), FloorSource)


LOCKSVC = load_task(ROOT / "tasks" / "locksvc")


def test_beyond_the_traces_a_diagnostic_shows_steps_from_states_no_trace_reached(scorer: Scorer) -> None:
    """P4's exploration goes where the traces never went; from a sample of those states the
    reference judges the spec's steps, beside the score and not in it."""
    reference = scorer.cell(LOCKSVC, ReferenceSource()).result("invariants")
    beyond = reference.details["beyond_traces"]
    assert beyond["measured"] and beyond["states"] > 0 and beyond["over_permissive"] == {}, reference.reason
    assert "beyond the traces (a diagnostic, not scored)" in reference.reason
    anyone = scorer.cell(LOCKSVC, MutantSource("enter-for-anyone")).result("invariants")
    beyond = anyone.details["beyond_traces"]
    assert set(beyond["over_permissive"]) == {"ClientCriticalSection"}, anyone.reason
    assert "from a state the spec reaches that no trace shows" in beyond["first_extra"]
    assert anyone.score == 1.0, anyone.reason  # the templates all hold: a diagnostic takes nothing away


TRACE_VALUES = st.recursive(
    st.booleans() | st.integers(-5, 5) | st.text("t12xy", max_size=3),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text("t12xy", min_size=1, max_size=3), inner, min_size=1, max_size=3)
    | st.builds(lambda items: {"$set": items}, st.lists(inner, max_size=3)),
    max_leaves=12)


@given(TRACE_VALUES, st.dictionaries(st.sampled_from(["t1", "t2"]), st.sampled_from(["a", "b"]), max_size=2))
def test_a_state_tlc_printed_reads_back_as_the_traces_write_it(value: object, names: dict[str, str]) -> None:
    """What the traces write, renamed as a cfg names it, printed by TLC and read back with the
    names put back, is the same TLA+ value."""
    if len(set(names.values())) < len(names):
        return  # two trace names for one cfg name: never asked (the cfg runs another instance)
    printed = parse_value(tla_literal(_renamed(value, names)))
    back = {v: k for k, v in names.items()}
    assert parse_value(tla_literal(_trace_value(printed, back))) == parse_value(tla_literal(value))


def test_one_spec_constant_bound_to_two_canonical_constants_is_the_mappings_error(scorer: Scorer, tmp_path: Path) -> None:
    """Size and N mapped to the ring's one Size: P3 would run the spec with a buffer as large as
    the run's item count while P4 checks another; the mapping is refused, both named."""
    source = _reference_with(tmp_path, "ringbuffer")
    mapping = tmp_path / "ringbuffer" / "mapping.yaml"
    mapping.write_text(mapping.read_text().replace("  N: N\n", "  N: Size\n"))
    result = scorer.cell(RING, source).result("conformance")
    assert result.score == 0.0, result.reason
    assert "Size and N are both mapped to the spec's constant Size" in result.reason
    assert "Size = 4, N = " in result.reason


def _checks(cell: object) -> list[str]:
    """The P3 checks a cell ran, by the name of their TLC log."""
    return sorted(log.name.split(".")[0] for log in cell.run_dir.rglob("conformance/*/*.tlc.log"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("shared", [True, False], ids=["shares-the-run", "an-error-runs-each-alone"])
def test_the_whole_trace_diagnostic_shares_the_precision_run_and_says_what_its_own_run_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: bool) -> None:
    from pytest_sysmobench.phases import conformance

    if not shared:
        # A shared run that ends in an error (the diagnostic's part, here) decides nothing.
        own = conformance._traces_check
        monkeypatch.setattr(conformance, "_traces_check", lambda *args: dataclasses.replace(
            own(*args), next_='SysmoTraceNext /\\ TLCGet("level") = "deep"'))
    with Scorer(tmp_path / "work", traces_dir=TRACES, use_cache=False) as scorer:
        cell = scorer.cell(SPIN, _spin(tmp_path / "with", EXACT_SPIN))
        together = cell.result("conformance")
        checks = _checks(cell)
        monkeypatch.setattr(conformance, "PRECISION", False)
        alone = scorer.cell(SPIN, _spin(tmp_path / "without", EXACT_SPIN)).result("conformance")
    assert together.details["traces"] == alone.details["traces"]
    assert {t["verdict"] for t in together.details["traces"]} == {"OK"}
    assert all(t["accepted_prefix"] > 1 for t in together.details["traces"]), together.details["traces"]
    assert together.score == 1.0 and together.details["precision"]["other_steps"]["precise"] == TRACED, together.reason
    if shared:
        assert checks == ["Spin_SysmoPrec", "Spin_SysmoWin"]
    else:
        assert checks == ["Spin_SysmoPrec", "Spin_SysmoPrec", "Spin_SysmoTraces", "Spin_SysmoWin"]
