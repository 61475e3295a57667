"""The ``sysmobench`` command: ``doctor`` (is the toolchain usable?), ``tasks`` (what is there,
and what its traces cover?), ``templates`` (what P4 checks of a task), ``prompt`` (what a model
is asked), ``repair`` (a spec's mechanical faults mended), ``check`` (a spec's P1 and P2),
``traces`` (capture or check the real systems' traces), ``leaderboard`` (bless, compare, merge
or render boards) and ``cache`` (carry the verdict cache between machines)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from . import __version__
from .settings import DEFAULT_METHOD, METHODS
from .tasks import load_tasks

if TYPE_CHECKING:
    from .leaderboard.records import Board
    from .sources import Candidate
    from .tasks import Task

DOCTOR_SPEC = """---- MODULE SysmoDoctor ----
EXTENDS Naturals, SequencesExt
VARIABLE x
Init == x = 0
Next == x < 3 /\\ x' = x + 1
Spec == Init /\\ [][Next]_x
Small == Len(Reverse(<<x>>)) = 1
====
"""
DOCTOR_CFG = "SPECIFICATION Spec\nINVARIANT Small\n"


def _line(label: str, value: object) -> None:
    print(f"  {label:<18} {value}")


def _check_run(jar_path: Path, java: str, javac: str | None) -> int:
    from .tla.driver import ToolRunner
    from .tla.messages import Verdict, classify_tlc
    from .tla.sany import classify_sany
    from .tla.toolchain import LIBRARY_DIR

    with tempfile.TemporaryDirectory(prefix="sysmobench-doctor-") as tmp:
        root = Path(tmp)
        spec_dir = root / "spec"
        spec_dir.mkdir()
        (spec_dir / "SysmoDoctor.tla").write_text(DOCTOR_SPEC)
        (spec_dir / "SysmoDoctor.cfg").write_text(DOCTOR_CFG)
        with ToolRunner(jar_path, java=java, javac=javac, work_dir=root / "work") as runner:
            for key, value in runner.describe().items():
                if key not in ("java", "java_version", "javac", "jar"):  # printed above
                    _line(key, value)
            sany = runner.sany(spec_dir, "SysmoDoctor", library_dirs=[LIBRARY_DIR], timeout_s=120)
            sany_ok = classify_sany(sany.output).ok
            _line("SANY check", f"{'ok' if sany_ok else 'FAILED'} ({sany.elapsed_s * 1000:.0f} ms)")
            tlc = runner.tlc(spec_dir, "SysmoDoctor", ["-config", "SysmoDoctor.cfg", "-workers", "1", "-deadlock"],
                             library_dirs=[LIBRARY_DIR], timeout_s=120)
            verdict = classify_tlc(tlc.output, tlc.exit_code, tlc.timed_out)
            tlc_ok = verdict.verdict is Verdict.OK and verdict.distinct_states == 4
            _line("TLC check", f"{'ok' if tlc_ok else 'FAILED: ' + verdict.summary()} ({tlc.elapsed_s * 1000:.0f} ms)")
    return 0 if sany_ok and tlc_ok else 1


def doctor(_: argparse.Namespace) -> int:
    from .tla.jar import ToolchainMissing, find_jar, find_java
    from .tla.toolchain import LIBRARY_DIR

    print(f"pytest-sysmobench {__version__}")
    try:
        java = find_java()
        _line("java", f"{java.java} (version {java.version})")
        _line("javac", java.javac or "not found: one JVM per check (slower)")
        jar = find_jar()
        _line("jar", jar.path)
        _line("jar version", jar.version)
        _line("jar sha256", jar.sha256)
        _line("jar source", jar.source)
    except ToolchainMissing as exc:
        print(f"  MISSING: {exc}")
        return 2
    _line("library modules", ", ".join(sorted(p.stem for p in LIBRARY_DIR.glob("*.tla"))) or "none")
    return _check_run(jar.path, java.java, java.javac)


def _tasks_folder(given: str) -> Path:
    """``--tasks`` as given; the default ``tasks`` is looked for upwards from here as well, as
    pytest finds ``<rootdir>/tasks`` from a subfolder of the project."""
    folder = Path(given)
    if given != "tasks" or folder.is_dir():
        return folder
    for parent in Path.cwd().parents:
        if any((parent / "tasks").glob("*/task.yaml")):
            return parent / "tasks"
    return folder


def tasks(args: argparse.Namespace) -> int:
    loaded = load_tasks(_tasks_folder(args.tasks))
    if args.coverage:
        return _coverage(loaded.tasks, Path(args.traces), args.markdown)
    rows = [(t.name, t.system_type, t.language, t.module, str(len(t.templates)), str(len(t.mutants)), t.title)
            for t in loaded.tasks]
    header = ("task", "kind", "lang", "module", "templates", "mutants", "title")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    if rows:
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  " + header[-1])
    for task, row in zip(loaded.tasks, rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
        print(f"{'':<{widths[0]}}  source: {task.source.package} {task.source.version}; upstream: {task.upstream.system}")
    for gone in loaded.unavailable:
        print(f"{gone.name:<12} unavailable offline  {gone.title}")
        print(f"{'':<12} upstream: {gone.upstream}; {gone.reason}")
    for name, error in loaded.errors:
        print(f"{name:<12} BROKEN: {error}")
    return 1 if loaded.errors else 0


def _coverage(tasks: Sequence[Any], traces: Path, markdown: bool) -> int:
    """Per task, what its committed traces cover (a P3 score's evidence)."""
    from . import trace_coverage
    from .traces import load_corpus

    for task in tasks:
        corpus = load_corpus(traces / task.name, task)
        found = trace_coverage.of(task, corpus)
        if markdown:
            print(f"## {task.name}\n\n{found.markdown()}")
            continue
        print(f"{task.name}: {found.traces} traces, {found.windows} windows, {found.combinations} distinct "
              "(pre-state, action, arguments)")
        for action in found.actions:
            print(f"  {action.action:<28} {action.windows:>5} windows  {action.changing:>5} change the state  "
                  f"{action.combinations:>5} distinct")
        if found.held_out_seeds:
            print(f"  held out of feedback: seed(s) {', '.join(map(str, found.held_out_seeds))}; what only they show "
                  "(distinct, changing the state): " + ", ".join(f"{h.action} {h.unseen}/{h.windows}" for h in found.held_out))
        note = trace_coverage.p3_note(found)
        if note:
            print(f"  note: {note}")
    return 0


def templates(args: argparse.Namespace) -> int:
    """What P4 checks of a task, and what each check means: from the task's own files."""
    import textwrap

    task = _task(args)
    if task is None:
        return 4
    print(f"P4 templates of {task.name} ({len(task.templates)}); a defining one weighs more than all the others together")
    for template in task.templates:
        marks = [template.kind] + (["defining"] if template.defines else []) + ([] if template.counted else ["ours"])
        print(f"\n{template.name} ({', '.join(marks)})")
        print(textwrap.fill(" ".join(template.meaning.split()), 96, initial_indent="  ", subsequent_indent="  "))
        if template.premise:
            print(textwrap.fill("counts only if some explored state has: " + " ".join(template.premise.split()), 96,
                                initial_indent="  ", subsequent_indent="    "))
    return 0


def _task(args: argparse.Namespace):  # noqa: ANN202
    from .tasks import TaskError, load_task

    from .hints import did_you_mean

    folder = _tasks_folder(args.tasks)
    if not (folder / args.task).is_dir():
        names = sorted(p.name for p in folder.glob("*") if (p / "task.yaml").is_file())
        where = f"{folder} has no task {args.task!r} ({did_you_mean(args.task, names)})" if names else (
            f"no task folder at {folder.resolve()} (run it where tasks/ is, or pass --tasks DIR)")
        print(f"error: {where}", file=sys.stderr)
        return None
    try:
        return load_task(folder / args.task)
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _spec_of(args: argparse.Namespace, label: str) -> tuple[Task, Candidate, str] | None:
    """The task and the spec a command is given (its cfg and mapping.yaml beside it, or
    --cfg), read as a run reads a replayed spec; None after saying what is wrong."""
    from .sources import Candidate, with_spec

    task = _task(args)
    if task is None:
        return None
    spec = Path(args.spec)
    if not spec.is_file():
        print(f"error: no spec at {spec}", file=sys.stderr)
        return None
    cfg = Path(args.cfg) if args.cfg else spec.with_suffix(".cfg")
    mapping = spec.parent / "mapping.yaml"
    text = spec.read_text(encoding="utf-8", errors="replace")
    base = Candidate(task.name, label, 0, task.module, origin=str(spec))
    candidate = with_spec(base, task, text, cfg.read_text(encoding="utf-8") if cfg.is_file() else None,
                          mapping if mapping.is_file() else None)
    return task, candidate, text


def repair(args: argparse.Namespace) -> int:
    """Repairs a spec mechanically and writes the repaired spec, its manifest and its diff."""
    from .repair import Repairer
    from .session import Scorer

    given = _spec_of(args, "repair")
    if given is None:
        return 4
    task, candidate, text = given
    spec = Path(args.spec)
    out = Path(args.out) if args.out else spec.parent / "repaired"
    with tempfile.TemporaryDirectory(prefix="sysmobench-repair-") as work, \
            Scorer(Path(work), traces_dir=Path(args.traces)) as scorer:
        outcome = Repairer(scorer.toolchain(), task, Path(args.traces), Path(work) / "repair").repair(candidate)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{task.module}.tla").write_text(outcome.spec or text, encoding="utf-8")
    (out / "repair_manifest.json").write_text(json.dumps(outcome.manifest(), indent=1) + "\n", encoding="utf-8")
    written = [out / f"{task.module}.tla", out / "repair_manifest.json", out / "repair.diff"]
    if outcome.cfg is not None and outcome.cfg != candidate.cfg:  # a rule bound a constant
        (out / f"{task.module}.cfg").write_text(outcome.cfg, encoding="utf-8")
        written.insert(1, out / f"{task.module}.cfg")
    (out / "repair.diff").write_text(outcome.diff(text, candidate.cfg, task.module), encoding="utf-8")
    print(f"{task.name}: {outcome.status} ({len(outcome.edits)} edit(s)): {outcome.reason}")
    for edit in outcome.edits:
        print(f"  {edit.rule} {edit.definition or '(module)'}: {edit.summary}")
    print(f"written: {', '.join(str(path) for path in written)}")
    return 0 if outcome.usable else 1


def check(args: argparse.Namespace) -> int:
    """P1 and P2 of a spec, as the benchmark scores them, printed as JSON (an agent's check tool
    says the same): exit 0 when both pass, 1 when not, 4 on a usage error."""
    from .phases import CellContext, gate_results
    from .scoring import gate_verdict
    from .session import Scorer

    given = _spec_of(args, "check")
    if given is None:
        return 4
    task, candidate, _ = given
    with tempfile.TemporaryDirectory(prefix="sysmobench-check-") as work, \
            Scorer(Path(work), traces_dir=Path(args.traces)) as scorer:
        verdict = gate_verdict(gate_results(CellContext(task, candidate, scorer.toolchain(), Path(work) / "check",
                                                        Path(args.traces))))
    print(json.dumps(verdict, indent=1))
    return 0 if verdict["passed"] else 1


def traces_capture(args: argparse.Namespace) -> int:
    from .capture import CaptureError, capture

    task = _task(args)
    if task is None:  # a task that is not there: a usage error
        return 4
    if task.harness is None:
        print(f"error: task {task.name} has no trace harness", file=sys.stderr)
        return 2
    seeds = list(range(args.seed, args.seed + args.runs)) if args.seed is not None else list(task.harness.seeds)
    out = Path(args.out) / task.name
    try:
        captured = capture(task, seeds, out, ops=args.ops)
    except CaptureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for item in captured:
        counts = ", ".join(f"{a} {n}" for a, n in sorted(item.counts().items()))
        print(f"{item.path}: {len(item.trace.events)} steps ({counts}); attempt {item.attempts}")
    return 0


def traces_check(args: argparse.Namespace) -> int:
    from .traces import load_corpus

    task = _task(args)
    if task is None:  # a task that is not there: a usage error
        return 4
    corpus = load_corpus(Path(args.out) / task.name, task)
    for trace in corpus.traces:
        print(f"{trace.name}: ok, {len(trace.events)} steps")
    for error in corpus.errors:
        print(f"BROKEN: {error}")
    if not corpus.traces and not corpus.errors:
        print(f"no traces for task {task.name} under {args.out}")
    return 1 if corpus.errors else 0


def prompt(args: argparse.Namespace) -> int:
    from .prompts import MethodError, SourceMissing, render, stages

    task = _task(args)
    if task is None:  # a task that is not there: a usage error
        return 4
    first = stages(args.method)[0]
    try:
        print(render(task, first, Path(args.traces)))
    except (SourceMissing, MethodError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if len(stages(args.method)) > 1:
        later = ", ".join(s.name for s in stages(args.method)[1:])
        print(f"\n(method {args.method}: later stage(s) {later} build on this stage's answer)", file=sys.stderr)
    return 0


def _board_path(raw: str) -> Path:
    path = Path(raw)
    return path / "leaderboard.json" if path.is_dir() else path


def _board_at(raw: str) -> Board:
    """A leaderboard given as its JSON file, a run folder or an output folder."""
    from .leaderboard.baseline import BaselineError
    from .leaderboard.board import read

    path = _board_path(raw)
    if not path.exists():
        where = "has no leaderboard.json" if Path(raw).is_dir() else "does not exist"
        raise BaselineError(f"{raw} {where} (give a leaderboard.json, a run folder or an output folder such as "
                            ".sysmobench)")
    board = read(path)
    if board is None:
        raise BaselineError(f"{path}: not a leaderboard")
    return board


def leaderboard_bless(args: argparse.Namespace) -> int:
    from .leaderboard.baseline import BaselineError, bless
    from .leaderboard.board import write_json

    try:
        blessed = bless(_board_at(args.source))
    except BaselineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(blessed, out)
    print(f"blessed {len(blessed.cells)} cells from {', '.join(blessed.blessed_from or ())} into {out}")
    return 0


def leaderboard_compare(args: argparse.Namespace) -> int:
    """Exit 1 when B regressed against A, so that a CI step can gate on it."""
    from .leaderboard.baseline import BaselineError, Tolerance, compare, counts_line, markdown, missing, regressions

    try:
        before, after = _board_at(args.before), _board_at(args.after)
        tolerance = Tolerance.parse(args.tolerance)
        _same_making(before, after, args.allow_mismatch, f"{args.before} and {args.after}")
        if args.pair:
            before, after = _paired(before, after, args.pair)
    except BaselineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    changes = compare(before, after, tolerance)
    differences = _differences(before, after)
    if args.markdown:
        print(markdown(changes, tolerance, args.before, args.after), end="")
        if differences:
            print("\n**Do they differ?** (samples permuted within each task)\n")
            print("\n".join(f"- {line}" for line in differences))
    else:
        for change in changes:
            if change.kind != "same" or args.all:
                print(change.describe(tolerance))
        # A cell phase B left out for a cause of the benchmark's is named (above) and counted, never a regression.
        print(f"{counts_line(changes)}, {sum(c.kind == 'same' for c in changes)} unchanged")
        if differences:
            print(f"do they differ (B = {args.after} against A = {args.before}):")
            print("\n".join(f"  {line}" for line in differences))
    return 1 if regressions(changes) or missing(changes) else 0


def _same_making(first: Board, second: Board, allowed: bool, which: str) -> None:
    """Boards made with another jar, library, method or task data are not compared or merged as
    if alike: refused with the difference named, unless allowed (then warned of)."""
    from .leaderboard.baseline import BaselineError, fingerprint_mismatches

    found = fingerprint_mismatches(first, second)
    if found and not allowed:
        raise BaselineError(f"{which} were made differently ({'; '.join(found)}); their verdicts are not comparable. "
                            "Pass --allow-mismatch to go on anyway")
    for difference in found:
        print(f"warning: made differently: {difference}", file=sys.stderr)


def _differences(before: Board, after: Board) -> list[str]:
    """Per model both boards have: whether B's samples differ from A's, per task and overall
    (a permutation test at the level of generations; a note where each side has one sample)."""
    from .leaderboard.significance import compare_models

    lines = []
    for model in sorted({c.model for c in before.cells} & {c.model for c in after.cells}):
        found = compare_models([c for c in before.cells if c.model == model],
                               [c for c in after.cells if c.model == model], (model,))
        lines += [f"{model}: {comparison.describe('A', 'B')}" for comparison in found]
    return lines


def _paired(before: Board, after: Board, pair: str) -> tuple[Board, Board]:
    """A's cells of the first board against B's of the second, under B's label: two models,
    or a model and the reference, on the same tasks (the boards may be the same file)."""
    from .hints import did_you_mean
    from .leaderboard.baseline import BaselineError

    a, sep, b = (part.strip() for part in pair.partition("="))
    if not sep or not a or not b:
        raise BaselineError(f"--as {pair!r}: expected A=B, a model label of the first board and one of the second")
    for label, board, which in ((a, before, "first"), (b, after, "second")):
        labels = sorted({cell.model for cell in board.cells})
        if label not in labels:
            raise BaselineError(f"--as: the {which} board has no model {label!r}; {did_you_mean(label, labels)}")
    return (dataclasses.replace(before, cells=tuple(dataclasses.replace(c, model=b) for c in before.cells if c.model == a)),
            dataclasses.replace(after, cells=tuple(c for c in after.cells if c.model == b)))


def leaderboard_merge(args: argparse.Namespace) -> int:
    from .leaderboard.baseline import BaselineError
    from .leaderboard.board import merge, write_json

    try:
        boards = [_board_at(raw) for raw in args.boards]
        for raw, board in zip(args.boards[1:], boards[1:]):
            _same_making(boards[0], board, args.allow_mismatch, f"{args.boards[0]} and {raw}")
    except BaselineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    merged: Board | None = None
    for board in boards:
        merged = merge(merged, board)
    assert merged is not None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(merged, out)
    print(f"merged {len(boards)} boards ({len(merged.cells)} cells) into {out}")
    if merged.incomplete:
        print(f"warning: {merged.incomplete}", file=sys.stderr)
    return 0


def leaderboard_html(args: argparse.Namespace) -> int:
    """The page a run writes beside its board, for any board (a merged one, or one from CI)."""
    from .leaderboard.baseline import BaselineError
    from .cache import atomic_write_text
    from .leaderboard.html import render

    try:
        board = _board_at(args.source)
    except BaselineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else _board_path(args.source).with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, render(board))
    print(f"wrote {out} ({len(board.cells)} cells)")
    return 0


def _cache_root(args: argparse.Namespace) -> Path:
    """The verdict cache a run here uses: --cache, else $SYSMOBENCH_CACHE, else .sysmobench/cache."""
    from .settings import CACHE_ENV, DEFAULT_OUTPUT

    given = args.cache or os.environ.get(CACHE_ENV)
    return Path(given).expanduser().resolve() if given else Path(DEFAULT_OUTPUT).resolve() / "cache"


def cache_transfer(args: argparse.Namespace) -> int:
    """``sysmobench cache export|import ARCHIVE``."""
    from .cache_transfer import ArchiveError, export, import_

    root = _cache_root(args)
    try:
        if args.cache_command == "export":
            line = f"exported {export(root, Path(args.archive))} verdict(s) from {root} to {args.archive}"
        else:
            line = import_(root, Path(args.archive)).line(root)
    except (ArchiveError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sysmobench", description=(
        "pytest-sysmobench's command line: check the toolchain (doctor), list the tasks (tasks) and what P4 "
        "checks of one (templates), print a generation prompt (prompt), capture or check traces of the real "
        "systems (traces), check a spec's P1 and P2 (check), repair a spec's mechanical faults (repair), bless, compare, merge or render "
        "leaderboards (leaderboard), and carry the verdict cache between machines (cache). Scoring itself "
        "runs under pytest: pytest benchmarks."))
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("doctor", help="say which Java and jar are used and whether a check runs").set_defaults(run=doctor)
    listing = commands.add_parser("tasks", help="list the tasks")
    listing.add_argument("--tasks", default="tasks", help="task folder (default: ./tasks)")
    listing.add_argument("--coverage", action="store_true",
                         help="what the traces cover per task: windows and distinct (pre-state, action) combinations "
                              "per target action, and the actions no window exercises (--markdown: as the docs show it)")
    listing.add_argument("--traces", default="data/traces", help="trace folder, for --coverage (default: ./data/traces)")
    listing.add_argument("--markdown", action="store_true", help="with --coverage: each task's section in Markdown")
    listing.set_defaults(run=tasks)
    listed = commands.add_parser("templates", help="what P4 checks of a task, and what each template means")
    listed.add_argument("task")
    listed.add_argument("--tasks", default="tasks", help="task folder (default: ./tasks)")
    listed.set_defaults(run=templates)
    show = commands.add_parser("prompt", help="print a task's generation prompt with its real source")
    show.add_argument("task")
    show.add_argument("--tasks", default="tasks", help="task folder (default: ./tasks)")
    show.add_argument("--method", default=DEFAULT_METHOD, choices=METHODS, help=f"generation method (default: {DEFAULT_METHOD})")
    show.add_argument("--traces", default="data/traces", help="trace folder, for --method traces")
    show.set_defaults(run=prompt)
    mend = commands.add_parser("repair", help="repair a spec's mechanical faults (P1/P2), with a manifest and a diff")
    mend.add_argument("task")
    mend.add_argument("spec", help="the spec's .tla file (its .cfg beside it is used, if any)")
    mend.add_argument("--cfg", help="the spec's cfg, if not beside it")
    mend.add_argument("--out", help="where the repaired spec, repair_manifest.json and repair.diff go "
                                    "(default: repaired/ beside the spec)")
    mend.add_argument("--tasks", default="tasks", help="task folder (default: ./tasks)")
    mend.add_argument("--traces", default="data/traces", help="trace folder (P2's coverage reads it)")
    mend.set_defaults(run=repair)
    checking = commands.add_parser("check", help="P1 and P2 of a spec as JSON (what an agent's check tool prints)")
    checking.add_argument("task")
    checking.add_argument("spec", help="the spec's .tla file (its .cfg and mapping.yaml beside it are used, if any)")
    checking.add_argument("--cfg", help="the spec's cfg, if not beside it")
    checking.add_argument("--tasks", default="tasks", help="task folder (default: ./tasks)")
    checking.add_argument("--traces", default="data/traces", help="trace folder (P2's coverage reads it)")
    checking.set_defaults(run=check)
    traces = commands.add_parser("traces", help="capture or check traces of the real systems")
    traces_commands = traces.add_subparsers(dest="traces_command", required=True)
    for name, run, text in (("capture", traces_capture, "build the task's harness and capture traces"),
                            ("check", traces_check, "validate the captured traces of a task")):
        sub = traces_commands.add_parser(name, help=text)
        sub.add_argument("task")
        sub.add_argument("--tasks", default="tasks", help="task folder (default: ./tasks)")
        sub.add_argument("--out", default="data/traces", help="trace folder (default: ./data/traces)")
        if name == "capture":
            sub.add_argument("--seed", type=int, default=None, help="first seed (default: the task's seeds)")
            sub.add_argument("--runs", type=int, default=1, help="how many seeds from --seed (default 1)")
            sub.add_argument("--ops", type=int, default=None, help="operations per thread (default: the task's)")
        sub.set_defaults(run=run)
    boards = commands.add_parser("leaderboard", help="bless, compare, merge or render leaderboards")
    board_commands = boards.add_subparsers(dest="leaderboard_command", required=True)
    blessing = board_commands.add_parser("bless", help="make a run's leaderboard the baseline CI gates on")
    blessing.add_argument("source", nargs="?", default=".sysmobench", help="leaderboard.json, a run folder or an output folder")
    blessing.add_argument("--out", default="data/baselines/reference.json", help="where the baseline goes")
    blessing.set_defaults(run=leaderboard_bless)
    comparing = board_commands.add_parser("compare", help="per-cell differences of B against A (exit 1 on a regression)")
    comparing.add_argument("before", help="A: the baseline or earlier leaderboard")
    comparing.add_argument("after", help="B: the leaderboard to judge")
    comparing.add_argument("--tolerance", default="0", help="0.05, or p4=0.1,composite=0.02 (default 0)")
    comparing.add_argument("--markdown", action="store_true", help="a Markdown table, for a CI summary or PR comment")
    comparing.add_argument("--all", action="store_true", help="list unchanged cell phases too")
    comparing.add_argument("--allow-mismatch", action="store_true",
                           help="compare boards made with another jar, library, method or task data (refused otherwise)")
    comparing.add_argument("--as", dest="pair", metavar="A=B",
                           help="compare model A of the first board with model B of the second (B's label is shown)")
    comparing.set_defaults(run=leaderboard_compare)
    merging = board_commands.add_parser("merge", help="the latest result of every cell phase over several boards")
    merging.add_argument("boards", nargs="+", help="leaderboards, oldest first")
    merging.add_argument("--out", required=True)
    merging.add_argument("--allow-mismatch", action="store_true",
                         help="merge boards made with another jar, library, method or task data (refused otherwise)")
    merging.set_defaults(run=leaderboard_merge)
    page = board_commands.add_parser("html", help="the HTML page of a leaderboard (self-contained, no script)")
    page.add_argument("source", nargs="?", default=".sysmobench", help="leaderboard.json, a run folder or an output folder")
    page.add_argument("--out", default=None, help="where the page goes (default: beside the board)")
    page.set_defaults(run=leaderboard_html)
    caching = commands.add_parser("cache", help="carry the SANY/TLC verdict cache to another machine (export, import)")
    cache_commands = caching.add_subparsers(dest="cache_command", required=True)
    for name, text in (("export", "write the verdict cache to a .tar.gz"),
                       ("import", "add a .tar.gz's verdicts to the cache (never overwrites)")):
        sub = cache_commands.add_parser(name, help=text)
        sub.add_argument("archive", help="the .tar.gz")
        sub.add_argument("--cache", default=None, help="the cache folder (default: $SYSMOBENCH_CACHE, else "
                                                       ".sysmobench/cache)")
        sub.set_defaults(run=cache_transfer)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:  # `sysmobench leaderboard compare a b | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
