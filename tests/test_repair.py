"""Mechanical spec repair, with real SANY and TLC: each allowed edit a program can make repairs a
reference broken in that one way back to a spec SANY reads exactly as the reference, and no edit
that changes what a spec models passes the intent check (every seeded mutant is refused)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import LocalModelServer, Reply

from pytest_sysmobench import Task, composite, load_tasks
from pytest_sysmobench.leaderboard.baseline import bless
from pytest_sysmobench.answers import AnswerStore
from pytest_sysmobench.llm import Client, load_catalog
from pytest_sysmobench.repair import Edit, Mender, Repairer, RepairModelError, judge
from pytest_sysmobench.repair.rules import RULES, Problem, python_isms
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.sources import Candidate, MutantSource, ReferenceSource, ReplaySource
from pytest_sysmobench.tla.cfg import Config
from pytest_sysmobench.tla.sany import SanyResult

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "data" / "traces"
TASKS = {t.name: t for t in load_tasks(ROOT / "tasks").tasks}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scorer]:
    with Scorer(tmp_path_factory.mktemp("repair"), traces_dir=TRACES) as scorer:
        yield scorer


def _candidate(scorer: Scorer, task: Task, source: object) -> Candidate:
    return scorer.cell(task, source).candidate()  # type: ignore[arg-type]


def _repairer(scorer: Scorer, task: Task, tmp_path: Path) -> Repairer:
    return Repairer(scorer.toolchain(), task, TRACES, tmp_path / "repair")


#: (task, the rule that must repair it, the breakage: (reference text, broken text) pairs of the
#: spec, then of its cfg)
BREAKAGES = [
    ("spin", "A16", [("/\\ lock = FALSE\n    /\\ lock' = TRUE", "/\\ lock = false\n    /\\ lock' = True"),
                     ("/\\ lock = TRUE\n    /\\ UNCHANGED vars", "/\\ lock = true\n    /\\ UNCHANGED vars")], []),
    ("dqueue", "A16", [("Init /\\ [][Next]_vars /\\ WF_vars(Produce)", "Init && [][Next]_vars && WF_vars(Produce)")], []),
    ("spin", "A7", [("MODULE Spin ", "MODULE spin_lock ")], []),
    ("ringbuffer", "A1", [("EXTENDS Naturals\n", "")], []),
    ("mutex", "A6", [("\\E w \\in Threads \\ {t} : HandOff(t, w)", "\\E w \\in Threads \\ {t} : Handoff(t, w)")], []),
    ("spin", "A15", [("    /\\ UNCHANGED callType\n", "")], []),
    # A cfg the model wrote without the task's constant: bound as the task binds it, under the
    # spec's own name for it where the mapping gives one (locksvc's Procs is the task's Clients).
    ("spin", "A4", [], [('CONSTANT Threads = {"t1", "t2", "t3", "t4"}\n', "")]),
    ("locksvc", "A4", [], [('CONSTANT Procs = {"c1", "c2", "c3"}\n', "")]),
    ("zookeeper", "A8", [("Spec == Init /\\ [][Next]_vars\n", "")], []),
    ("spin", "A3", [("vars == <<lock, pc, callType>>", "vars == <<lock, pc, kind>>")], []),
    ("dqueue", "A2", [("    /\\ UNCHANGED <<made, got>>", "    /\\ UNCHANGED <<made, got, total>>")], []),
    # The cfg's directives (A9): a name in the wrong case (named right, not added plain by A8), no
    # behaviour named, a misspelt keyword, an INIT without its NEXT.
    ("spin", "A9", [], [("SPECIFICATION Spec", "SPECIFICATION spec")]),
    ("mutex", "A9", [], [("SPECIFICATION Spec\n", "")]),
    ("rwmutex", "A9", [], [("SPECIFICATION Spec", "Specification Spec")]),
    ("dqueue", "A9", [], [("SPECIFICATION Spec", "INIT Init")]),
]


@pytest.mark.parametrize(("task_name", "rule", "breakage", "cfg_breakage"), BREAKAGES,
                         ids=[f"{t}-{r}" for t, r, *_ in BREAKAGES])
def test_a_reference_broken_one_way_repairs_back_to_the_reference(scorer: Scorer, tmp_path: Path, task_name: str,
                                                                  rule: str, breakage: list[tuple[str, str]],
                                                                  cfg_breakage: list[tuple[str, str]]) -> None:
    task = TASKS[task_name]
    reference = _candidate(scorer, task, ReferenceSource())
    broken, broken_cfg = reference.tla or "", reference.cfg or ""
    for old, new in breakage:
        assert old in broken, old
        broken = broken.replace(old, new, 1)
    for old, new in cfg_breakage:
        assert old in broken_cfg, old
        broken_cfg = broken_cfg.replace(old, new, 1)
    repairer = _repairer(scorer, task, tmp_path)
    repair = repairer.repair(dataclasses.replace(reference, tla=broken, cfg=broken_cfg))
    assert repair.status == "minor" and repair.usable, repair.reason
    assert {e.rule for e in repair.edits} == {rule}, repair.manifest()["ops"]
    assert [r.phase for r in repair.before if not r.usable], "the breakage must make the spec unusable"
    repaired = repairer.tree(dataclasses.replace(reference, tla=repair.spec, cfg=repair.cfg), "repaired")
    original = repairer.tree(reference, "reference")
    assert repaired is not None and original is not None
    assert repaired.definitions == original.definitions and repaired.variables == original.variables
    manifest = repair.manifest()
    assert manifest["p1_passed"] and manifest["p2_passed"] and manifest["edit_count"] == len(repair.edits)
    if rule == "A15":  # the spec parsed before: its reading was compared, and one definition changed
        assert manifest["intent"]["violations"] == [] and manifest["intent"]["changed_definitions"] == ["Acquire"]
    if rule == "A4":
        assert (repair.spec, manifest["cfg_edited"]) == (broken, True)
        assert repair.cfg is not None and repair.cfg.rstrip().endswith('= {"c1", "c2", "c3"}' if task_name == "locksvc"
                                                                        else '= {"t1", "t2", "t3", "t4"}')
    if rule == "A8":
        assert manifest["intent"]["changed_definitions"] == ["Spec"]
    if rule == "A9":  # the cfg names what the reference's does (its INIT kept, where it had one)
        assert (repair.spec, manifest["cfg_edited"]) == (broken, True)
        expected = _directives(reference.cfg if "INIT" not in broken_cfg else broken_cfg + "NEXT Next\n")
        assert _directives(repair.cfg) == expected, repair.cfg


def _directives(cfg: str | None) -> list[tuple[str, list[str]]]:
    return sorted((s.canonical, s.names()) for s in Config.parse(cfg or "").sections)


@pytest.mark.parametrize("spelling", ["<=", "=<", ">="])
def test_a1_reads_sanys_message_for_an_unknown_infix_operator(scorer: Scorer, tmp_path: Path, spelling: str) -> None:
    """SANY says "Could not find declaration or definition of symbol '<='" for an infix
    operator no module brought in, and the standard modules define it under another spelling
    (``\\leq``): A1 still finds Naturals."""
    task = TASKS["spin"]
    reference = _candidate(scorer, task, ReferenceSource())
    old = "    /\\ lock \\in BOOLEAN\n"
    assert old in (reference.tla or "")
    broken = (reference.tla or "").replace(old, f"{old}    /\\ 1 {spelling} 1\n", 1)
    broken = broken.replace("EXTENDS Naturals, FiniteSets, TLC", "EXTENDS FiniteSets, TLC", 1)
    repair = _repairer(scorer, task, tmp_path).repair(dataclasses.replace(reference, tla=broken))
    assert repair.status == "minor" and repair.usable, repair.reason
    assert [(e.rule, e.summary) for e in repair.edits] == [("A1", f"EXTENDS Naturals (unknown: {spelling})")]


def test_a_choose_sentinel_becomes_a_constant_bound_to_a_model_value(scorer: Scorer, tmp_path: Path) -> None:
    """A11: ``Nil == CHOOSE v : v \\notin Servers`` is no value TLC can compute; as a constant bound
    to a model value it is a value unlike every server, which is all it asked for.  Every other
    definition reads as before."""
    task = TASKS["etcd"]
    reference = _candidate(scorer, task, ReferenceSource())
    broken = (reference.tla or "").replace('Nil == "none"\n', "Nil == CHOOSE v : v \\notin Servers\n", 1)
    assert broken != reference.tla
    repairer = _repairer(scorer, task, tmp_path)
    repair = repairer.repair(dataclasses.replace(reference, tla=broken))
    assert (repair.status, [e.rule for e in repair.edits]) == ("minor", ["A11"]), repair.reason
    assert "CONSTANT Nil\n" in repair.spec and (repair.cfg or "").rstrip().endswith("CONSTANT Nil = Nil")
    repaired = repairer.tree(dataclasses.replace(reference, tla=repair.spec, cfg=repair.cfg), "repaired")
    original = repairer.tree(reference, "reference")
    assert repaired is not None and original is not None
    assert repaired.constants == (*original.constants, "Nil") or set(repaired.constants) == {*original.constants, "Nil"}
    assert {k: v for k, v in original.definitions.items() if k != "Nil"} == repaired.definitions
    # The same definition made anything else than the plain sentinel is left alone.
    guarded = (reference.tla or "").replace('Nil == "none"\n', "Nil == CHOOSE v : v \\notin Servers /\\ v # 0\n", 1)
    assert repairer.repair(dataclasses.replace(reference, tla=guarded)).status == "unrepairable"


_ETCD_NEXT = "    \\/ \\E i \\in Servers :\n          \\/ ElectionTimeout(i)"
#: A10: (guard written over an infinite domain, the same guard over the task's bound).
INFINITE_DOMAINS = [
    ("\\E i \\in Servers, n \\in Nat :\n          \\/ n = 0 /\\ ElectionTimeout(i)",
     "\\E i \\in Servers, n \\in 0..3 :\n          \\/ n = 0 /\\ ElectionTimeout(i)"),
    ("\\E i \\in Servers :\n          \\/ {n \\in Int : n * n = 4} = {-2, 2} /\\ ElectionTimeout(i)",
     "\\E i \\in Servers :\n          \\/ {n \\in -3..3 : n * n = 4} = {-2, 2} /\\ ElectionTimeout(i)"),
    ("\\E i \\in Servers, s \\in Seq(Servers) :\n          \\/ s = <<>> /\\ ElectionTimeout(i)",
     "\\E i \\in Servers, s \\in UNION {[1..len -> Servers] : len \\in 0..2} :\n          \\/ s = <<>> /\\ ElectionTimeout(i)"),
]


@pytest.mark.parametrize(("infinite", "bounded"), INFINITE_DOMAINS, ids=["Nat", "Int", "Seq"])
def test_an_infinite_domain_is_bounded_as_the_task_bounds_it_and_nothing_else(scorer: Scorer, tmp_path: Path,
                                                                              infinite: str, bounded: str) -> None:
    """A10: the one domain TLC cannot enumerate, read as the task's ``repair.bounds`` say (etcd:
    ``nat: 3``, ``seq: 2``); the repaired spec reads as the same guard written over the bound."""
    task = TASKS["etcd"]
    reference = _candidate(scorer, task, ReferenceSource())
    text = reference.tla or ""
    assert _ETCD_NEXT in text
    broken = text.replace(_ETCD_NEXT, "    \\/ " + infinite, 1)
    meant = text.replace(_ETCD_NEXT, "    \\/ " + bounded, 1)
    repairer = _repairer(scorer, task, tmp_path)
    repair = repairer.repair(dataclasses.replace(reference, tla=broken))
    assert (repair.status, [e.rule for e in repair.edits]) == ("minor", ["A10"]), repair.reason
    assert repair.intent is not None and repair.intent.changed == ("Next",)
    repaired = repairer.tree(dataclasses.replace(reference, tla=repair.spec), "repaired")
    expected = repairer.tree(dataclasses.replace(reference, tla=meant), "meant")
    assert repaired is not None and expected is not None and repaired.definitions == expected.definitions


def test_a_bounded_domain_that_also_changes_a_guard_is_refused_and_no_bounds_no_repair(scorer: Scorer,
                                                                                        tmp_path: Path) -> None:
    """An edit citing A10 explains a domain read as a range of it, nothing more; and a task that
    declares no bounds (spin) gets none of our choosing."""
    task = TASKS["etcd"]
    repairer = _repairer(scorer, task, tmp_path)
    reference = _candidate(scorer, task, ReferenceSource())
    text = reference.tla or ""
    infinite, bounded = INFINITE_DOMAINS[0]
    before = repairer.tree(dataclasses.replace(reference, tla=text.replace(_ETCD_NEXT, "    \\/ " + infinite, 1)), "b")
    also = text.replace(_ETCD_NEXT, "    \\/ " + bounded.replace("n = 0", "n = 1"), 1)
    edit = Edit("A10", "Next", "line 468", "Nat read as 0..3", "domain-bounded")
    refused = judge(before, repairer.tree(dataclasses.replace(reference, tla=also), "also"), [edit])  # type: ignore[arg-type]
    assert not refused.kept and "Next" in refused.violations[0]
    spin = TASKS["spin"]
    spin_reference = _candidate(scorer, spin, ReferenceSource())
    unbounded = (spin_reference.tla or "").replace("    \\E t \\in Threads :\n        \\/ Lock(t)",
                                                   "    \\E t \\in Threads, n \\in Nat :\n        \\/ n = 0 /\\ Lock(t)", 1)
    assert unbounded != spin_reference.tla
    repair = _repairer(scorer, spin, tmp_path / "spin").repair(dataclasses.replace(spin_reference, tla=unbounded))
    assert repair.status == "unrepairable" and "non-enumerable" in repair.reason


def test_an_action_the_model_changed_says_whether_its_guard_is_the_same(scorer: Scorer, tmp_path: Path) -> None:
    """What the repair model changed is its word only; of an action, the guard (the conjuncts that
    prime nothing) is compared on SANY's reading, and the note says whether it stayed."""
    task = TASKS["spin"]
    repairer = _repairer(scorer, task, tmp_path)
    reference = _candidate(scorer, task, ReferenceSource())
    text = reference.tla or ""
    effect = text.replace("    /\\ lock' = TRUE\n    /\\ pc' = [pc EXCEPT ![t] = \"cs\"]",
                          "    /\\ lock' = ~lock\n    /\\ pc' = [pc EXCEPT ![t] = \"cs\"]", 1)
    guard = text.replace("    /\\ lock = FALSE\n    /\\ lock' = TRUE", "    /\\ lock # TRUE\n    /\\ lock' = TRUE", 1)
    assert text != effect and text != guard
    before = repairer.tree(reference, "before")
    edit = Edit("A17", "Acquire", "Acquire", "model edit", "model")
    notes = [judge(before, repairer.tree(dataclasses.replace(reference, tla=changed), name), [edit]).unverified  # type: ignore[arg-type]
             for name, changed in (("effect", effect), ("guard", guard))]
    assert notes[0] == ("Acquire: changed by the repair model (A17); its guard is the same (2 conjunct(s)), "
                        "what it does is not checked",)
    assert notes[1] == ("Acquire: changed by the repair model (A17), its guard too; its meaning is not checked",)


def test_a_usable_spec_is_left_as_it_is(scorer: Scorer, tmp_path: Path) -> None:
    reference = _candidate(scorer, TASKS["spin"], ReferenceSource())
    repair = _repairer(scorer, TASKS["spin"], tmp_path).repair(reference)
    assert (repair.status, repair.edits, repair.spec) == ("none", (), reference.tla)


def test_a_spec_that_needs_an_action_it_lacks_is_unrepairable(scorer: Scorer, tmp_path: Path) -> None:
    task = TASKS["spin"]
    reference = _candidate(scorer, task, ReferenceSource())
    broken = (reference.tla or "").replace("        \\/ Unlock(t)", "        \\/ Unlock(t)\n        \\/ Release(t)")
    repair = _repairer(scorer, task, tmp_path).repair(dataclasses.replace(reference, tla=broken))
    assert repair.status == "unrepairable" and not repair.usable
    assert "no rule applies" in repair.reason and "Release" in repair.reason


def test_every_seeded_mutant_offered_as_a_repair_of_its_reference_is_refused(scorer: Scorer, tmp_path: Path) -> None:
    """A mutant changes what the spec models (a guard, an effect, a template's premise): on
    SANY's reading it must show as a forbidden change, whatever it is."""
    missed, checked = [], 0
    for task in TASKS.values():
        repairer = _repairer(scorer, task, tmp_path / task.name)
        reference = _candidate(scorer, task, ReferenceSource())
        before = repairer.tree(reference, "reference")
        assert before is not None
        for mutant in [m for m in task.mutants if m.phase != "syntax"]:
            after = repairer.tree(_candidate(scorer, task, MutantSource(mutant.name)), f"mutant-{mutant.name}")
            assert after is not None, mutant.name
            checked += 1
            if judge(before, after, ()).kept:
                missed.append(f"{task.name}/{mutant.name}")
    assert checked >= 90 and missed == []


def test_a_syntax_mutant_is_repaired_back_to_its_reference_or_not_at_all(scorer: Scorer, tmp_path: Path) -> None:
    outcomes = {}
    for task in TASKS.values():
        repairer = _repairer(scorer, task, tmp_path / task.name)
        reference = repairer.tree(_candidate(scorer, task, ReferenceSource()), "reference")
        for mutant in [m for m in task.mutants if m.phase == "syntax"]:
            candidate = _candidate(scorer, task, MutantSource(mutant.name))
            repair = repairer.repair(candidate)
            if repair.usable:
                repaired = repairer.tree(dataclasses.replace(candidate, tla=repair.spec), f"repaired-{mutant.name}")
                assert repaired is not None and reference is not None
                assert repaired.definitions == reference.definitions, mutant.name
            outcomes[f"{task.name}/{mutant.name}"] = repair.status
    assert outcomes["mutex/unknown-operator"] == "minor"  # Handoff for HandOff: A6
    assert outcomes["spin/unknown-operator"] == "unrepairable"  # Release(t) is an action nobody wrote


def test_an_edit_that_cites_a_rule_but_changes_a_guard_is_refused(scorer: Scorer, tmp_path: Path) -> None:
    task = TASKS["spin"]
    repairer = _repairer(scorer, task, tmp_path)
    reference = _candidate(scorer, task, ReferenceSource())
    text = reference.tla or ""
    without = text.replace("    /\\ UNCHANGED callType\n", "", 1)
    honest = text
    dishonest = text.replace("    /\\ pc[t] = \"spin\"\n    /\\ lock = FALSE\n", "    /\\ pc[t] = \"spin\"\n", 1)
    before = repairer.tree(dataclasses.replace(reference, tla=without), "broken")
    edit = Edit("A15", "Acquire", "Acquire", "UNCHANGED callType", "unchanged-added", ("callType",))
    assert before is not None
    kept = judge(before, repairer.tree(dataclasses.replace(reference, tla=honest), "honest"), [edit])  # type: ignore[arg-type]
    refused = judge(before, repairer.tree(dataclasses.replace(reference, tla=dishonest), "dishonest"), [edit])  # type: ignore[arg-type]
    assert kept.kept and kept.changed == ("Acquire",)
    assert not refused.kept and "Acquire" in refused.violations[0]


def test_the_repair_command_writes_the_spec_its_manifest_and_its_diff(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from pytest_sysmobench.cli import main

    reference = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    spec = tmp_path / "mine" / "Spin.tla"
    spec.parent.mkdir()
    spec.write_text(reference.replace("    /\\ UNCHANGED callType\n", "", 1))
    (tmp_path / "mine" / "Spin.cfg").write_text((ROOT / "tasks" / "spin" / "reference" / "Spin.cfg").read_text())
    args = ["repair", "spin", str(spec), "--tasks", str(ROOT / "tasks"), "--traces", str(TRACES)]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    assert "spin: minor (1 edit(s))" in capsys.readouterr().out
    assert (tmp_path / "out" / "Spin.tla").read_text() == reference
    manifest = json.loads((tmp_path / "out" / "repair_manifest.json").read_text())
    assert manifest["status"] == "minor" and [op["rule"] for op in manifest["ops"]] == ["A15"]
    assert "+    /\\ UNCHANGED callType" in (tmp_path / "out" / "repair.diff").read_text()
    spec.write_text(reference.replace("        \\/ Unlock(t)", "        \\/ Unlock(t)\n        \\/ Release(t)"))
    assert main([*args, "--out", str(tmp_path / "out2")]) == 1
    assert "unrepairable" in capsys.readouterr().out
    assert main(["repair", "spni", str(spec), "--tasks", str(ROOT / "tasks")]) == 4
    assert "did you mean 'spin'" in capsys.readouterr().err


# -- token-level rewrites, without the tools ------------------------------------------------------

_PIECES = st.sampled_from(["x != y", "a && b", "p || q", "true", "False", "x = 1", " ", "\n    ",
                           '"a != b && true"', "(* != && true *)", "\\* || False\n", "trueish", "x_true"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_python_isms_are_rewritten_only_outside_strings_and_comments(pieces: list[str]) -> None:
    body = " ".join(pieces)
    text = f"---- MODULE M ----\nVARIABLE x\nInv ==\n    {body}\n====\n"
    fix = python_isms(text, Problem("M", sany=SanyResult(ok=False)))
    expected = " ".join(p if p.startswith(('"', "(*", "\\*")) or p in ("trueish", "x_true") else
                       p.replace("!=", "#").replace("&&", "/\\").replace("||", "\\/").replace("true", "TRUE")
                       .replace("False", "FALSE") for p in pieces)
    assert (fix.text if fix else text) == f"---- MODULE M ----\nVARIABLE x\nInv ==\n    {expected}\n====\n"
    assert fix is None or {e.rule for e in fix.edits} == {"A16"}


# -- the repaired composite of a cell ----------------------------------------------------------------


def _replayed(tmp_path: Path, task: Task, text: str) -> ReplaySource:
    folder = tmp_path / "specs" / task.name
    folder.mkdir(parents=True)
    (folder / f"{task.module}.tla").write_text(text)
    reference = ROOT / "tasks" / task.name / "reference"
    for extra in ("cfg",):
        (folder / f"{task.module}.{extra}").write_text((reference / f"{task.module}.{extra}").read_text())
    if (reference / "mapping.yaml").is_file():
        (folder / "mapping.yaml").write_text((reference / "mapping.yaml").read_text())
    return ReplaySource(tmp_path / "specs")


def test_a_broken_reference_scores_its_own_p1_and_p2_and_the_repairs_p3_and_p4(scorer: Scorer, tmp_path: Path) -> None:
    task = TASKS["spin"]
    reference = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    cell = scorer.cell(task, _replayed(tmp_path, task, reference.replace("    /\\ UNCHANGED callType\n", "", 1)))
    strict = cell.evaluate()
    assert not strict["runtime"].usable and strict["conformance"].status.value == "blocked"
    outcome = cell.repaired()
    assert outcome.status == "minor" and outcome.results is not None
    assert outcome.results["conformance"].score == 1.0 and outcome.results["invariants"].score == 1.0
    expected = round(0.15 * strict["syntax"].score + 0.15 * strict["runtime"].score + 0.70, 6)
    assert outcome.composite == expected and cell.composite() == composite(strict) < expected
    assert cell.evaluate() == strict  # the strict results never change
    manifest = cell.run_dir / "repaired" / "repair_manifest.json"
    assert manifest.is_file() and '"repaired_composite"' in manifest.read_text()
    assert (cell.run_dir / "repaired" / "Spin.tla").read_text() == reference


def test_an_unrepairable_or_usable_cell_has_its_strict_composite_repaired_too(scorer: Scorer, tmp_path: Path) -> None:
    task = TASKS["spin"]
    reference = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    needs_action = reference.replace("        \\/ Unlock(t)", "        \\/ Unlock(t)\n        \\/ Release(t)")
    broken = scorer.cell(task, _replayed(tmp_path / "a", task, needs_action))
    outcome = broken.repaired()
    assert outcome.status == "unrepairable" and outcome.results is None
    assert outcome.composite == broken.composite()
    usable = scorer.cell(task, ReferenceSource())
    assert (usable.repaired().status, usable.repaired().composite) == ("none", usable.composite())
    assert not (usable.run_dir / "repaired").exists()


def test_a_tree_nested_past_any_spec_is_refused_cleanly() -> None:
    """SANY's XML of a hostile spec may nest tens of thousands of levels: reading it ends in a
    TreeError (the repair then cannot check its intent), never in a crash of the session."""
    from pytest_sysmobench.tla.tree import MAX_DEPTH, TreeError, read_tree

    opening = "<OpApplNode><operator><BuiltInKindRef><UID>1</UID></BuiltInKindRef></operator><operands>"

    def module(depth: int) -> str:
        body = opening * depth + "<NumeralNode><IntValue>1</IntValue></NumeralNode>" + "</operands></OpApplNode>" * depth
        return ('<?xml version="1.0"?><modules><RootModule>M</RootModule><context>'
                "<entry><UID>1</UID><BuiltInKind><uniquename>\\lnot</uniquename></BuiltInKind></entry>"
                "<entry><UID>2</UID><UserDefinedOpKind><location><filename>M</filename></location><level>0</level>"
                f"<uniquename>D</uniquename><body>{body}</body></UserDefinedOpKind></entry>"
                "<entry><UID>3</UID><ModuleNode><location><filename>M</filename></location><uniquename>M</uniquename>"
                "<UserDefinedOpKindRef><UID>2</UID></UserDefinedOpKindRef></ModuleNode></entry></context></modules>")

    assert read_tree(module(200)).definitions["D"].body[1] == "\\lnot"
    with pytest.raises(TreeError, match="nested deeper"):
        read_tree(module(MAX_DEPTH + 1000))


# -- a run with repair: the board, the CSV, the terminal and the gate ------------------------------


@pytest.fixture
def needs_unchanged(pytester: pytest.Pytester) -> pytest.Pytester:
    """The spin task, its traces, and a replayed spin spec whose Acquire forgets UNCHANGED callType."""
    shutil.copytree(ROOT / "tasks" / "spin", pytester.path / "tasks" / "spin")
    shutil.copytree(TRACES / "spin", pytester.path / "data" / "traces" / "spin")
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    reference = ROOT / "tasks" / "spin" / "reference"
    specs = pytester.path / "specs" / "spin"
    specs.mkdir(parents=True)
    (specs / "Spin.tla").write_text((reference / "Spin.tla").read_text().replace("    /\\ UNCHANGED callType\n", "", 1))
    for name in ("Spin.cfg", "mapping.yaml"):
        shutil.copy(reference / name, specs / name)
    return pytester


def _run(bench: pytest.Pytester, *args: str) -> pytest.RunResult:
    return bench.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--sysmobench-models", "replay:specs", *args)


def test_a_run_shows_the_repaired_composite_beside_the_strict_one_and_can_gate_on_it(needs_unchanged: pytest.Pytester) -> None:
    bench = needs_unchanged
    result = _run(bench)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # P2 fails as written: repair never changes an item's outcome
    board = json.loads((bench.path / ".sysmobench" / "leaderboard.json").read_text())
    (cell,) = board["cells"]
    p1, p2 = cell["phases"]["syntax"]["score"], cell["phases"]["runtime"]["score"]
    assert cell["phases"]["conformance"]["status"] == "blocked" and cell["composite"] == round(0.15 * p1 + 0.15 * p2, 6)
    assert (cell["repair"]["status"], cell["repair"]["edits"]) == ("minor", 1)
    assert {p: r["score"] for p, r in cell["repair"]["phases"].items()} == {"conformance": 1.0, "invariants": 1.0}
    assert cell["repaired_composite"] == round(0.15 * p1 + 0.15 * p2 + 0.70, 6) > cell["composite"]
    (model,) = board["models"]
    assert model["repairs"] == {"minor": 1} and model["repaired_composite"] == cell["repaired_composite"]
    assert model["composite"] == cell["composite"]  # never merged into one number
    last = (bench.path / ".sysmobench" / "leaderboard.csv").read_text().splitlines()[-1]
    assert last.endswith(f",minor,1,{float(cell['repaired_composite'])!r},")
    result.stdout.fnmatch_lines(["task*composite*repaired*", f"spin*{cell['repaired_composite']:.3f} (minor, 1 edit)*",
                                 f"replay:specs: repairs minor 1; repaired composite {cell['repaired_composite']:.3f} "
                                 f"(strict {cell['composite']:.3f})"])
    run_dir = bench.path / ".sysmobench" / "runs" / board["run_id"] / "spin" / "replay_specs" / "s0" / "repaired"
    manifest = json.loads((run_dir / "repair_manifest.json").read_text())
    assert manifest["status"] == "minor" and manifest["repaired_composite"] == cell["repaired_composite"]
    assert [op["rule"] for op in manifest["ops"]] == ["A15"]
    assert manifest["diff"] == "repair.diff" and "+    /\\ UNCHANGED callType" in (run_dir / "repair.diff").read_text()

    # The gate: a baseline whose repaired composite was higher fails the run only when asked to gate on it.
    blessed = bless(board).to_json()
    blessed["cells"][0]["repaired_composite"] = 1.0
    baseline = bench.path / "baseline.json"
    baseline.write_text(json.dumps(blessed))
    strict_gate = _run(bench, "--sysmobench-baseline", str(baseline))
    assert strict_gate.ret == pytest.ExitCode.OK, strict_gate.stdout.str()[-2000:]
    strict_gate.stdout.fnmatch_lines(["*spin/replay:specs repaired_composite: regressed: baseline 1.00, now 0.*"])
    repaired_gate = _run(bench, "--sysmobench-baseline", str(baseline), "--sysmobench-gate", "repaired_composite")
    assert repaired_gate.ret == pytest.ExitCode.TESTS_FAILED

    # Without repair: the strict board alone, as before.
    plain = _run(bench, "--sysmobench-repair", "none", "--sysmobench-output", "plain")
    (cell,) = json.loads((bench.path / "plain" / "leaderboard.json").read_text())["cells"]
    assert "repair" not in cell and "repaired_composite" not in cell
    assert "repairs" not in plain.stdout.str() and " repaired " not in plain.stdout.str()


def test_gating_on_the_repaired_composite_needs_a_baseline_and_repair(needs_unchanged: pytest.Pytester) -> None:
    result = _run(needs_unchanged, "--sysmobench-gate", "both")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--sysmobench-gate needs --sysmobench-baseline" in result.stderr.str()


def test_a_replayed_spec_shows_the_repair_its_sysmobench_manifest_declares(tmp_path: Path) -> None:
    """SysMoBench's repaired board keeps a repair_manifest.json beside each spec: replaying that
    folder shows what it declares beside the benchmark's own repair status; a file that is no
    manifest says so and the cell is scored all the same."""
    task = TASKS["spin"]
    reference = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    source = _replayed(tmp_path, task, reference)
    folder = tmp_path / "specs" / "spin"
    (folder / "repair_manifest.json").write_text(json.dumps(
        {"applied": True, "status": "minor", "p1_passed": True, "p2_passed": True, "edit_count": 2,
         "ops": [{"rule": "A1", "location": "line 2", "summary": "Added EXTENDS Bags"}] * 2}))
    assert source.candidate(task, 0).declared_repair == {"status": "minor", "edits": 2, "by": "repair_manifest.json"}
    (folder / "repair_manifest.json").write_text('{"status": "glorious", "ops": [1, 2, 3]}')
    assert source.candidate(task, 0).declared_repair == {"status": "unknown", "edits": 3, "by": "repair_manifest.json"}
    (folder / "repair_manifest.json").write_text("[not json")
    declared = source.candidate(task, 0).declared_repair
    assert declared is not None and declared["status"] == "unreadable" and "JSONDecodeError" in declared["problem"]
    assert source.candidate(task, 0).tla == reference
    (folder / "repair_manifest.json").unlink()
    assert source.candidate(task, 0).declared_repair is None


# -- model repair: what no rule fixes, proposed by a model, applied and checked by the program -------

NO_CALLTYPE_INIT = ('    /\\ callType = [t \\in Threads |-> "none"]\n', "")
#: What a good repair model answers for that spec: widen Init (A5) with the value the system starts with.
WIDEN_INIT = {"edits": [{"rule": "A5", "definition": "Init", "old": '    /\\ pc = [t \\in Threads |-> "idle"]\n',
                         "new": '    /\\ pc = [t \\in Threads |-> "idle"]\n    /\\ callType = [t \\in Threads |-> "none"]\n',
                         "summary": "Init gives callType its starting value"}]}


def _without_calltype_init(scorer: Scorer) -> tuple[Candidate, Candidate]:
    """The spin reference, and it with an Init that leaves callType without a value."""
    reference = _candidate(scorer, TASKS["spin"], ReferenceSource())
    return reference, dataclasses.replace(reference, tla=(reference.tla or "").replace(*NO_CALLTYPE_INIT, 1))


def _mender(model_server: LocalModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Mender:
    monkeypatch.setenv("SYSMO_LOCAL_KEY", "sk-local")
    config = tmp_path / "models.yaml"
    config.write_text(yaml.safe_dump({"models": {"judge": {
        "route": "openai/judge", "api_base": model_server.base_url, "api_key_env": "SYSMO_LOCAL_KEY", "temperature": 0.0,
        "timeout": 20, "attempts": 2, "backoff_s": 0.01, "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}}))
    client = Client(load_catalog(config).get("judge"), tmp_path / "cooldown")
    return Mender("judge", client, AnswerStore(tmp_path / "answers"))


def test_the_repair_model_fixes_what_no_rule_can_and_is_marked_unverified(scorer: Scorer, tmp_path: Path,
                                                                          model_server: LocalModelServer,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    task = TASKS["spin"]
    reference, broken = _without_calltype_init(scorer)
    mechanical = _repairer(scorer, task, tmp_path / "mechanical").repair(broken)
    assert mechanical.status == "unrepairable" and "no rule applies" in mechanical.reason
    model_server.respond(lambda body: json.dumps(WIDEN_INIT))
    mender = _mender(model_server, tmp_path, monkeypatch)
    repairer = Repairer(scorer.toolchain(), task, TRACES, tmp_path / "model", mender)
    repair = repairer.repair(broken)
    assert (repair.status, [e.rule for e in repair.edits], repair.spec) == ("minor", ["A5"], reference.tla), repair.reason
    assert "You repair a TLA+ specification" in str(next(model_server.iter_bodies("judge"))["messages"][-1]["content"])
    manifest = repair.manifest()
    assert manifest["repairer"]["model"] == "judge" and manifest["repairer"]["usage"]["requests"] == 1
    assert manifest["ops"][0]["check"] == "model"
    # Init parsed before: its change is allowed by the model's edit, and said to be unchecked.
    assert manifest["intent"]["changed_definitions"] == ["Init"]
    assert manifest["intent"]["unverified"] == ["Init: changed by the repair model (A5); its meaning is not checked"]
    again = Repairer(scorer.toolchain(), task, TRACES, tmp_path / "again", mender).repair(broken)
    assert again.spec == repair.spec and model_server.count("judge") == 1  # the answer is stored: asked once


@pytest.mark.parametrize(("answer", "refusal"), [
    # A new action (F1), however it is cited.
    ({"edits": [*WIDEN_INIT["edits"],
                {"rule": "A12", "definition": "Next", "old": "        \\/ Unlock(t)",
                 "new": "        \\/ Unlock(t)\n        \\/ UNCHANGED vars", "summary": "stutter"}]}, "F1"),
    ({"edits": [{"rule": "F2", "definition": "Init", "old": "x", "new": "y"}]}, "no allowed rule"),
    ({"edits": [{"rule": "A5", "definition": "Init", "old": "not in the spec", "new": "y"}]}, "not once"),
    ({"edits": [{"rule": "A5", "definition": "Acquire", "old": '    /\\ lock = FALSE\n    /\\ pc = [t \\in Threads |-> "idle"]',
                 "new": "x"}]}, "lies in Init"),
    ("I would rather not.", "no list of edits"),
])
def test_a_model_edit_that_changes_what_the_spec_models_or_does_not_fit_is_not_taken(
        scorer: Scorer, tmp_path: Path, model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch,
        answer: object, refusal: str) -> None:
    task = TASKS["spin"]
    reference, broken = _without_calltype_init(scorer)
    model_server.respond(lambda body: answer if isinstance(answer, str) else json.dumps(answer))
    repair = Repairer(scorer.toolchain(), task, TRACES, tmp_path / "r", _mender(model_server, tmp_path, monkeypatch)
                      ).repair(broken)
    assert repair.status == "unrepairable" and refusal in repair.reason, repair.reason


def test_a_repair_model_that_does_not_answer_is_the_benchmarks_loss(scorer: Scorer, tmp_path: Path,
                                                                     model_server: LocalModelServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    task = TASKS["spin"]
    reference, broken = _without_calltype_init(scorer)
    model_server.respond(lambda body: Reply.status(500))
    with pytest.raises(RepairModelError, match="repair model judge failed"):
        Repairer(scorer.toolchain(), task, TRACES, tmp_path / "r", _mender(model_server, tmp_path, monkeypatch)
                 ).repair(broken)


def test_a_run_with_a_repair_model_counts_its_cost_apart(needs_unchanged: pytest.Pytester,
                                                         model_server: LocalModelServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    bench = needs_unchanged
    reference = (ROOT / "tasks" / "spin" / "reference" / "Spin.tla").read_text()
    (bench.path / "specs" / "spin" / "Spin.tla").write_text(reference.replace(*NO_CALLTYPE_INIT, 1))
    monkeypatch.setenv("SYSMO_LOCAL_KEY", "sk-local")
    (bench.path / "sysmobench-models.yaml").write_text(yaml.safe_dump({"models": {"judge": {
        "route": "openai/judge", "api_base": model_server.base_url, "api_key_env": "SYSMO_LOCAL_KEY",
        "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}}))
    model_server.respond(lambda body: json.dumps(WIDEN_INIT))
    result = _run(bench, "--sysmobench-repair", "mechanical+judge")
    (cell,) = json.loads((bench.path / ".sysmobench" / "leaderboard.json").read_text())["cells"]
    assert (cell["repair"]["status"], cell["repair"]["edits"]) == ("minor", 1)
    assert cell["repaired_composite"] == round(0.15 + 0.15 * cell["phases"]["runtime"]["score"] + 0.70, 6)
    assert cell["repair"]["use"]["requests"] == 1 and cell["repair"]["use"]["cost_usd"] > 0
    board = json.loads((bench.path / ".sysmobench" / "leaderboard.json").read_text())
    assert board["usage"]["repairer"]["requests"] == 1
    result.stdout.fnmatch_lines(["*the repair model used * prompt + * completion tokens, cost $0.00*"])
    wrong = _run(bench, "--sysmobench-repair", "mechanical+nobody")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR and "--sysmobench-repair mechanical+nobody" in wrong.stderr.str()
    typo = _run(bench, "--sysmobench-repair", "mechanic")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR and "expected one of none, mechanical" in typo.stderr.str()


def test_edits_after_the_spec_first_parses_are_judged_on_that_reading(scorer: Scorer, tmp_path: Path) -> None:
    """A Python-ism (the spec does not parse) and a missing UNCHANGED: the first edit has nothing
    to be compared with and says so; the second is checked on the reading the first made."""
    task = TASKS["spin"]
    reference = _candidate(scorer, task, ReferenceSource())
    broken = (reference.tla or "").replace("/\\ lock = TRUE\n    /\\ UNCHANGED vars", "/\\ lock = true\n    /\\ UNCHANGED vars", 1)
    broken = broken.replace("    /\\ UNCHANGED callType\n", "", 1)
    repair = _repairer(scorer, task, tmp_path).repair(dataclasses.replace(reference, tla=broken))
    assert (repair.status, [e.rule for e in repair.edits], repair.spec) == ("minor", ["A16", "A15"], reference.tla)
    intent = repair.manifest()["intent"]
    assert intent["changed_definitions"] == ["Acquire"] and intent["violations"] == []
    assert intent["unverified"] == ["the first 1 edit(s) (A16) made the spec parse: there is no reading before them to "
                                    "compare, so they are checked token by token only; the later ones are checked on "
                                    "SANY's reading"]


def test_the_documented_rules_are_the_registered_ones() -> None:
    """A rule is a function and a row of the registry; the table in docs/repair.md lists the
    same ids, so neither can gain a rule the other does not know."""
    table = (ROOT / "docs" / "repair.md").read_text().split("| rule | when | edit |", 1)[1].split("\n\n", 1)[0]
    documented = {line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| A")}
    assert documented == {i for rule in RULES for i in rule.ids}
    assert {rule.tool for rule in RULES} == {"sany", "tlc"}
