from __future__ import annotations

import time

from hypothesis import given, strategies as st

from pytest_sysmobench.tla import modules
from pytest_sysmobench.prompts import render, stages
from pytest_sysmobench.sources.extract import extract_spec

MODULE = "---- MODULE Spin ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n====\n"
CFG = "SPECIFICATION Spec\nCONSTANT N = 3\n"


def render_prompt(task):  # noqa: ANN001, ANN201
    """The direct method's one prompt: the task's template with the real source filled in."""
    return render(task, stages("direct")[0])


def test_fenced_tla_and_cfg_with_chatter() -> None:
    answer = f"Here is the spec:\n\n```tla\n{MODULE}```\n\nAnd the config:\n```cfg\n{CFG}```\nHope it helps!"
    got = extract_spec(answer)
    assert got.problem is None
    assert got.tla == MODULE and got.cfg == CFG and got.declared_module == "Spin"
    assert "spec taken from a fenced code block" in got.notes


def test_bare_module_with_trailing_chatter() -> None:
    got = extract_spec("Sure.\n" + MODULE + "\nThis models the lock.")
    assert got.tla == MODULE and got.cfg is None


def test_empty_and_moduleless_answers_are_problems_not_crashes() -> None:
    assert extract_spec("").problem == "the answer is empty"
    assert extract_spec("   \n").problem == "the answer is empty"
    got = extract_spec("def lock():\n    while cas(): pass\n")
    assert got.tla is None and "no TLA+ module" in (got.problem or "")


def test_several_blocks_keep_every_module_with_the_task_module_as_root() -> None:
    other = MODULE.replace("Spin", "Other")
    got = extract_spec(f"```tla\n{other}```\n```tla\n{MODULE}```", "Spin")
    assert got.declared_module == "Spin" and got.tla is not None and "MODULE Spin" in got.tla
    assert [name for name, _ in got.extra_modules] == ["Other"]
    assert any("2 modules in the answer" in n for n in got.notes)
    first = extract_spec(f"```tla\n{other}```\n```tla\n{MODULE}```")
    assert first.declared_module == "Other", "without a task module the first one is the root"


def test_a_nested_module_stays_inside_its_parent() -> None:
    nested = """---- MODULE Spin ----
---- MODULE Inner ----
CONSTANT c
====
I == INSTANCE Inner WITH c <- 1
(* a comment line of equal signs does not end anything:
========
*)
VARIABLE x
Init == x = 0
====
"""
    got = extract_spec(f"Here it is:\n```tla\n{nested}```\nThanks.", "Spin")
    assert got.tla == nested and got.extra_modules == ()
    assert modules.declared(got.tla) == ([], ["x"]), "the nested module's declarations are not the root's"


def test_a_module_repeated_in_an_answer_is_taken_once() -> None:
    got = extract_spec(f"```tla\n{MODULE}```\n```tla\n{MODULE}```", "Spin")
    assert got.extra_modules == () and any("more than once" in n for n in got.notes)


def test_lone_carriage_returns_end_lines() -> None:
    got = extract_spec(MODULE.replace("\n", "\r"), "Spin")
    assert got.tla == MODULE
    assert modules.declared(MODULE.replace("\n", "\r")) == modules.declared(MODULE)


def test_reading_a_huge_hostile_answer_takes_linear_time() -> None:
    """2 MB of blank lines, dashes, equal signs and unclosed fences: every scan is line by line."""
    started = time.process_time()
    hostile = "\n" * 1_000_000 + "-" * 200_000 + "\n" + ("=" * 40 + "\n") * 10_000 + "```a\n" * 100_000
    extract_spec(hostile + MODULE, "Spin")
    modules.declared(hostile)
    modules.top_level_units(hostile)
    assert time.process_time() - started < 30, "quadratic text processing"


def test_missing_footer_is_noted() -> None:
    got = extract_spec("---- MODULE Spin ----\nVARIABLE x\n")
    assert got.tla is not None and "no closing ====" in " ".join(got.notes)


@given(st.text(max_size=400))
def test_extraction_never_raises(answer: str) -> None:
    got = extract_spec(answer)
    assert (got.tla is None) == (got.problem is not None)


@given(prefix=st.text(alphabet=st.characters(blacklist_characters="`-="), max_size=80),
       suffix=st.text(alphabet=st.characters(blacklist_characters="`-="), max_size=80))
def test_module_survives_any_chatter(prefix: str, suffix: str) -> None:
    got = extract_spec(f"{prefix}\n```tla\n{MODULE}```\n{suffix}")
    assert got.tla == MODULE


def test_prompt_embeds_the_installed_source_and_the_vocabulary() -> None:
    from pathlib import Path

    from pytest_sysmobench import load_task
    task = load_task(Path(__file__).resolve().parents[1] / "tasks" / "spin")
    prompt = render_prompt(task)
    assert "===== FILE: src/mutex/spin.rs =====" in prompt
    assert "compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)" in prompt
    assert "{source_code}" not in prompt and "{module}" not in prompt
    assert "MODULE Spin" in prompt and "request \\in" in prompt


def test_prompt_without_the_package_names_what_to_install(tmp_path) -> None:  # noqa: ANN001
    import dataclasses
    from pathlib import Path

    import pytest

    from pytest_sysmobench import load_task
    from pytest_sysmobench.prompts import SourceMissing

    task = load_task(Path(__file__).resolve().parents[1] / "tasks" / "spin")
    missing = dataclasses.replace(task, source=dataclasses.replace(task.source, root=tmp_path / "nowhere"))
    with pytest.raises(SourceMissing, match="apt-get install -y librust-spin-dev"):
        render_prompt(missing)


def test_a_large_file_is_shown_by_its_line_ranges_and_bad_ranges_are_task_errors(tmp_path) -> None:  # noqa: ANN001
    import shutil
    from pathlib import Path

    import pytest

    from pytest_sysmobench import load_task
    from pytest_sysmobench.prompts import source_code
    from pytest_sysmobench.tasks import TaskError

    folder = tmp_path / "spin"
    shutil.copytree(Path(__file__).resolve().parents[1] / "tasks" / "spin", folder,
                    ignore=shutil.ignore_patterns("target"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "big.rs").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    text = (folder / "task.yaml").read_text()
    start = text.index("  root:")
    end = text.index("\nupstream:")
    source = f"  root: {tmp_path}\n  files:\n    - path: src/big.rs\n      description: big\n      lines: [3-4, 98-120]\n"
    (folder / "task.yaml").write_text(text[:start] + source + text[end:])
    shown = source_code(load_task(folder))
    assert "line 3\nline 4\n" in shown and "line 5\n" not in shown
    assert "// ----- lines 98-100 -----\nline 98\nline 99\nline 100" in shown and "line 97" not in shown
    (folder / "task.yaml").write_text(text[:start] + source.replace("3-4", "9-2") + text[end:])
    with pytest.raises(TaskError, match="lines: '9-2' is not a line range"):
        load_task(folder)


def test_the_zookeeper_prompt_names_the_command_that_fetches_its_source(tmp_path) -> None:  # noqa: ANN001
    import dataclasses
    from pathlib import Path

    import pytest

    from pytest_sysmobench import load_task
    from pytest_sysmobench.prompts import SourceMissing

    task = load_task(Path(__file__).resolve().parents[1] / "tasks" / "zookeeper")
    missing = dataclasses.replace(task, source=dataclasses.replace(task.source, root=tmp_path / "nowhere"))
    with pytest.raises(SourceMissing, match="apt-get source zookeeper"):
        render_prompt(missing)
