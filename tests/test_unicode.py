"""A spec written with Unicode TLA+ operators scores exactly what its ASCII twin scores.

Before SANY sees a spec, its Unicode operator symbols are read as their ASCII forms
(``pytest_sysmobench.tla.unicode``): token-aware (never inside strings or comments) and keeping
conjunction/disjunction lists aligned, the one place TLA+ layout is syntax.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_sysmobench import PHASES, load_task
from pytest_sysmobench.sources import ReplaySource
from pytest_sysmobench.session import Scorer
from pytest_sysmobench.tla import grammar, unicode
from pytest_sysmobench.tla.unicode import TABLE, to_ascii

ROOT = Path(__file__).resolve().parents[1]
SPIN = ROOT / "tasks" / "spin"
REFERENCES = sorted((ROOT / "tasks").glob("*/reference/*.tla"))
NOTE = "Unicode operator(s) read as their ASCII forms"

#: ASCII operator -> Unicode form, to render an ASCII spec in Unicode (``\\land``/``\\lor`` stay:
#: as ``∧``/``∨`` they could become list bullets, which they cannot be).
TO_UNICODE = {
    "==": "≜", "/\\": "∧", "\\/": "∨", "~": "¬", "\\lnot": "¬", "\\neg": "¬", "\\in": "∈", "\\notin": "∉",
    "\\A": "∀", "\\forall": "∀", "\\E": "∃", "\\exists": "∃", "'": "′", "->": "→", "|->": "↦", "<<": "⟨",
    ">>": "⟩", "/=": "≠", "#": "≠", "<=": "≤", "=<": "≤", "\\leq": "≤", ">=": "≥", "\\geq": "≥", "=>": "⇒",
    "<=>": "⇔", "\\equiv": "≡", "\\cup": "∪", "\\union": "∪", "\\cap": "∩", "\\intersect": "∩",
    "\\subseteq": "⊆", "\\subset": "⊂", "\\supseteq": "⊇", "\\X": "×", "\\times": "×", "\\o": "∘",
    "<>": "◇", "[]": "□", "~>": "↝", "..": "‥", "\\div": "÷", "\\cdot": "⋅", ":=": "≔",
}
#: Strings and comments (skipped), backslash words, symbolic operators (longest first).
_ASCII_TOKEN = re.compile(r'''(?P<skip>"(?:[^"\\\n]|\\.)*"|\(\*[\s\S]*?\*\)|\\\*[^\n]*)
    | (?P<word>\\[A-Za-z]+)
    | (?P<op><=>|\|->|~>|<<|>>|<=|=<|>=|=>|/=|/\\|\\/|(?<!-)->|<>|\[\]|(?<!\.)\.\.(?!\.)|:=|(?<!=)==(?!=)|[#~'])''',
                          re.VERBOSE)


def render_unicode(text: str, chosen: Callable[[str], bool] = lambda _: True, pad: bool = False) -> str:
    """``text`` with the chosen ASCII operators in Unicode; ``pad`` keeps every column where it was."""
    def swap(match: re.Match[str]) -> str:
        token = match.group()
        if match.group("skip") or token not in TO_UNICODE or not chosen(token):
            return token
        return TO_UNICODE[token] + (" " * (len(token) - 1) if pad else "")

    return _ASCII_TOKEN.sub(swap, text)


def tree(text: str) -> str:
    """The tree-sitter-tlaplus parse of ``text`` (node kinds only), which reads both forms."""
    import tree_sitter

    return str(tree_sitter.Parser(grammar.language()).parse(text.encode()).root_node)


# -- properties ---------------------------------------------------------------------------------

ASCII_TEXT = st.text(alphabet=st.characters(max_codepoint=127), max_size=400)


@given(ASCII_TEXT)
def test_ascii_text_comes_back_byte_identical(text: str) -> None:
    out, count = to_ascii(text)
    assert out is text and count == 0


SYMBOLS = sorted(TABLE)
CODE = st.lists(st.sampled_from([*SYMBOLS, "x", "y1", "Foo", " ", " ", "\n", "  ", "=", "+", "(", ")", "[", "]",
                                 "{", "}", ",", "1", ":"]), max_size=14).map("".join)
FREE = st.sampled_from([*SYMBOLS, "a", "Z", " ", "é", "κ", "=", "\\", "/", "'", "─"])
STRING = st.lists(st.sampled_from([*SYMBOLS, "a", " ", "é", "(", ")", "*", "'", "─"]), max_size=8).map(
    lambda chars: '"' + "".join(chars) + '"')
BLOCK = st.lists(st.one_of(FREE, st.just("\n")), max_size=10).map(lambda chars: "(*" + "".join(chars) + "*)")
LINE = st.lists(st.one_of(FREE, st.sampled_from(["*", "(", ")", '"'])), max_size=10).map(
    lambda chars: "\\*" + "".join(chars) + "\n")
SEGMENTS = st.lists(st.one_of(st.tuples(st.just("code"), CODE), st.tuples(st.just("kept"), STRING),
                              st.tuples(st.just("kept"), BLOCK), st.tuples(st.just("kept"), LINE)),
                    max_size=10)
HEADER, FOOTER = "---- MODULE M ----\n", "\n====\n"


def _check_segments(segments: list[tuple[str, str]]) -> str:
    text = HEADER + "".join(part for _, part in segments) + FOOTER
    out, count = to_ascii(text)
    assert count == sum(part.count(symbol) for kind, part in segments if kind == "code" for symbol in SYMBOLS)
    position = len(HEADER)
    for kind, part in segments:  # every string and comment is in the output, verbatim and in order
        if kind == "kept":
            found = out.find(part, position)
            assert found >= 0, f"{part!r} changed"
            assert not any(symbol in out[position:found] for symbol in SYMBOLS)
            position = found + len(part)
    assert not any(symbol in out[position:] for symbol in SYMBOLS)
    return out


@settings(max_examples=300, deadline=None)
@given(SEGMENTS)
def test_strings_and_comments_are_never_changed(segments: list[tuple[str, str]]) -> None:
    _check_segments(segments)


@settings(max_examples=150, deadline=None)
@given(SEGMENTS)
def test_the_fallback_scanner_reads_strings_and_comments_as_the_grammar_does(segments: list[tuple[str, str]]) -> None:
    with_grammar = _check_segments(segments)
    with mock.patch.object(unicode, "_grammar_regions", lambda _text: None):
        assert _check_segments(segments) == with_grammar


def _operators(text: str) -> list[str]:
    return sorted({m.group() for m in _ASCII_TOKEN.finditer(text) if not m.group("skip") and m.group() in TO_UNICODE})


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(REFERENCES), st.data(), st.booleans())
def test_a_unicode_rendering_reads_back_with_the_same_parse(reference: Path, data: st.DataObject, pad: bool) -> None:
    """The ASCII reading parses exactly as the Unicode text does (tree-sitter reads both), lists
    and their alignment included; with columns kept, that is the original spec's parse."""
    ascii_spec = reference.read_text()
    chosen = data.draw(st.sets(st.sampled_from([op for op in _operators(ascii_spec) if op != "'"])))
    rendering = render_unicode(ascii_spec, chosen.__contains__, pad)
    out, count = to_ascii(rendering)
    assert count == sum(char in TABLE for char in rendering)
    assert out.isascii()
    assert tree(out) == tree(rendering)
    if pad:
        assert tree(out) == tree(ascii_spec)


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scorer]:
    with Scorer(tmp_path_factory.mktemp("unicode")) as scorer:
        yield scorer


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(REFERENCES), st.data(), st.booleans())
def test_sany_accepts_the_ascii_reading_of_a_unicode_rendering(
    scorer: Scorer, tmp_path_factory: pytest.TempPathFactory, reference: Path, data: st.DataObject, pad: bool
) -> None:
    """Any rendering that is the same spec (its columns kept, or its lists still aligned in
    characters) reads back as a spec SANY accepts, as the original."""
    ascii_spec = reference.read_text()
    chosen = data.draw(st.sets(st.sampled_from(_operators(ascii_spec)), min_size=1))
    if not pad:  # an unpadded rendering can misalign a list (``x ≜ ∨ a`` over ``      \/ b``): another spec
        assume(tree(render_unicode(ascii_spec, lambda op: op in chosen and op != "'")) == tree(ascii_spec))
    out, count = to_ascii(render_unicode(ascii_spec, chosen.__contains__, pad))
    assert count > 0 and out.isascii()
    workdir = tmp_path_factory.mktemp("sany")
    run = scorer.toolchain().sany(workdir, {reference.name: out}, reference.stem)
    assert run.raw.exit_code == 0 and not run.result.errors, run.raw.output[-2000:]


# -- examples -----------------------------------------------------------------------------------


@pytest.mark.parametrize("unicode_text, ascii_text", [
    ("x∈S", "x \\in S"),
    ("∀x∈S:x∉T", "\\A x \\in S:x \\notin T"),
    ("f ≜ [n ∈ ℕ ↦ n]", "f == [n \\in Nat |-> n]"),
    ("⟨a, b⟩_v ≠ ⟨⟩", "<<a, b>>_v /= <<>>"),
    ("□[Next]_vars ∧ ◇P ↝ Q", "[][Next]_vars /\\ <>P ~> Q"),
    ("x′=¬y", "x' = ~y"),
    ("A∖B ∪ C", "A \\ B \\union C"),
    ('s ≜ "a ≜ ∧" \\* ∈ kept\n(* ∀ kept (* ∃ *) *) ∧', 's == "a ≜ ∧" \\* ∈ kept\n(* ∀ kept (* ∃ *) *) /\\'),
])
def test_examples(unicode_text: str, ascii_text: str) -> None:
    assert to_ascii(unicode_text)[0] == ascii_text


def test_lists_keep_their_shape_when_the_ascii_forms_are_wider() -> None:
    text = ("---- MODULE M ----\n"
            "Init ≜ ∧ x ∈ ℕ\n"
            "       ∧ ∨ y = ⟨1⟩\n"
            "         ∨ y = ⟨2⟩\n"
            "       ∧ z = 0\n"
            "====\n")
    out, count = to_ascii(text)
    assert out.splitlines()[1:5] == [
        "Init == /\\ x \\in Nat",
        "        /\\ \\/ y = <<1>>",
        "           \\/ y = <<2>>",
        "        /\\ z = 0",
    ]
    assert count == 12 and tree(out) == tree(text)


def test_tabs_count_to_the_next_multiple_of_eight_as_in_sany(scorer: Scorer, tmp_path: Path) -> None:
    """``Init1 ≜`` is 7 characters and ``Init1 ==`` 8: the tab after it then reaches column 16, not
    8, and the lines below must follow; misaligned, the nested list is a precedence conflict."""
    text = ("---- MODULE Tabs ----\nVARIABLES a, b\n"
            "Init1 ≜\t∧ a = 1\n"
            "\t∧ ∨ b = 1\n"
            "\t  ∨ b = 2\n"
            "====\n")
    out, _ = to_ascii(text)
    assert out.splitlines()[2:5] == ["Init1 ==\t/\\ a = 1", "\t        /\\ \\/ b = 1", "\t           \\/ b = 2"]
    run = scorer.toolchain().sany(tmp_path, {"Tabs.tla": out}, "Tabs")
    assert run.raw.exit_code == 0 and not run.result.errors, run.raw.output[-2000:]


def test_a_clean_spec_is_read_through_the_grammar() -> None:
    rendering = render_unicode((SPIN / "reference" / "Spin.tla").read_text())
    parsed = unicode._grammar_regions(rendering)
    assert parsed is not None and parsed[1] is False, "tree-sitter-tlaplus should parse the rendering cleanly"
    assert parsed[0].comments and parsed[0].strings


def test_box_drawing_module_lines_are_read_as_dashes_and_equals() -> None:
    text = "┌──── MODULE M ────┐\nx ≜ 1\n├──────┤\n(* ──── *)\n└──────┘\n"
    out, count = to_ascii(text)
    assert out == "----- MODULE M -----\nx == 1\n--------\n(* ──── *)\n========\n" and count == 4


def test_unicode_only_in_comments_and_strings_leaves_the_text_alone() -> None:
    text = '---- MODULE M ----\nx == "≜" \\* ∧\n(* ∀ *)\n====\n'
    assert to_ascii(text) == (text, 0)


# -- the twins, scored by SANY and TLC ----------------------------------------------------------


def _reflow(text: str) -> str:
    """Start every definition's body on its ``==``/``≜`` line, the other body lines moved so that
    the body keeps its shape (widths counted in characters, as the tools count columns)."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index].rstrip()
        body_end = index + 1
        while body_end < len(lines) and lines[body_end].startswith("    "):
            body_end += 1
        if re.fullmatch(r"\w+(\(\w+\))? (==|≜)", line) and body_end > index + 1:
            first = lines[index + 1]
            indent = len(first) - len(first.lstrip())
            prefix = len(line) + 1
            out.append(f"{line} {first.strip()}")
            out += [" " * (len(b) - len(b.lstrip()) - indent + prefix) + b.strip() for b in lines[index + 2:body_end]]
            index = body_end
            continue
        out.append(lines[index])
        index += 1
    return "\n".join(out)


def _nested_spin() -> str:
    """Spin's reference with a disjunction list inside a conjunction list (same meaning)."""
    spec = (SPIN / "reference" / "Spin.tla").read_text()
    nested = spec.replace('Acquire(t) ==\n    /\\ pc[t] = "spin"\n    /\\ lock = FALSE\n',
                          'Acquire(t) ==\n    /\\ pc[t] = "spin"\n    /\\ \\/ lock = FALSE\n       \\/ FALSE\n', 1)
    assert nested != spec
    return nested


def _twins() -> dict[str, tuple[str, str]]:
    reference = (SPIN / "reference" / "Spin.tla").read_text()
    nested = _nested_spin()
    return {
        # the reference as it is, and its Unicode rendering
        "reference": (reference, render_unicode(reference)),
        # bodies begin on the definition line, where ≜ is one character narrower than ==
        "reflowed": (_reflow(nested), _reflow(render_unicode(nested, pad=True))),
    }


def _replay(directory: Path, spec: str) -> ReplaySource:
    folder = directory / "spin"
    folder.mkdir(parents=True)
    (folder / "Spin.tla").write_text(spec, encoding="utf-8")
    shutil.copy(SPIN / "reference" / "Spin.cfg", folder)
    if (SPIN / "reference" / "mapping.yaml").is_file():
        shutil.copy(SPIN / "reference" / "mapping.yaml", folder)
    return ReplaySource(directory)


@pytest.mark.parametrize("twin", ["reference", "reflowed"])
def test_a_unicode_spec_scores_exactly_what_its_ascii_twin_scores(twin: str, tmp_path: Path) -> None:
    ascii_spec, unicode_spec = _twins()[twin]
    assert ascii_spec.isascii() and not unicode_spec.isascii()
    if twin == "reflowed":  # the lists start on the definition line, in both twins
        assert "Acquire(t) == /\\ pc" in ascii_spec and "Acquire(t) ≜ ∧" in unicode_spec
    task = load_task(SPIN)
    results = {}
    notes = {}
    with Scorer(tmp_path / "out", use_cache=False) as scorer:
        for name, spec in (("ascii", ascii_spec), ("unicode", unicode_spec)):
            cell = scorer.cell(task, _replay(tmp_path / name, spec), traces_dir=ROOT / "data" / "traces")
            results[name] = {phase: cell.result(phase) for phase in PHASES}
            notes[name] = cell.candidate().notes
    for phase in PHASES:
        ascii_result, unicode_result = results["ascii"][phase], results["unicode"][phase]
        assert (unicode_result.status, unicode_result.score) == (ascii_result.status, ascii_result.score), \
            f"{phase}: {unicode_result.reason} vs {ascii_result.reason}"
    assert results["ascii"]["syntax"].score == 1.0, results["ascii"]["syntax"].reason
    assert any(NOTE in note for note in notes["unicode"]), notes["unicode"]
    assert not any(NOTE in note for note in notes["ascii"])
