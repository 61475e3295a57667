"""Unicode TLA+ operators, read as their ASCII forms before SANY sees a spec.

Why this exists: the TLA+ Unicode standard (tlaplus/tlaplus-standard, ``unicode/``) gives every
operator symbol a Unicode form (``≜ ∧ ∨ ¬ ∈ ∀ ⟨ ⟩ □ ↦`` ...), and current TLA+ tools read a spec
written with them exactly as its ASCII twin.  The TLA+ 2.15 jar this benchmark bundles predates
that and stops at the first one with a lexical error.  A model that writes ``≜`` has not written
a different spec, so it must score exactly what the ASCII twin scores: this module gives that
twin.  It is not a repair of the spec, only another reading of the same text.

Two things make it more than a character substitution:

* Only operator tokens are read anew.  Strings and comments (``"..."``, ``(* ... *)``, ``\\* ...``)
  are left byte for byte; the tree-sitter-tlaplus grammar says where they are (a small scanner
  of our own does when the grammar is not installed or cannot parse the text).
* Layout is syntax in TLA+: the bullets of a conjunction or disjunction list must stand in one
  column.  ``≜`` becoming ``==`` widens a line by one character, so after the substitution the
  bullets that a Unicode author aligned are realigned by inserting spaces before line-leading
  tokens (never inside a token, a string or a comment).
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import grammar

#: Unicode operator symbol -> its ASCII form.  The rows of the TLA+ Unicode standard
#: (tlaplus/tlaplus-standard ``unicode/tla-unicode.csv``; where it lists several ASCII forms the
#: first, which it names the one to translate back to), then the alternative glyphs the
#: tree-sitter-tlaplus grammar also reads, then the few glyphs of the earlier TLA+ Unicode work
#: (the prime, set difference, middle dot) that the standard leaves out.
STANDARD: dict[str, str] = {
    "≜": "==", "∈": "\\in", "←": "<-", "∀": "\\A", "∃": "\\E", "↦": "|->", "→": "->",
    "⟨": "<<", "⟩": ">>", "□": "[]", "∷": "::", "¬": "~", "◇": "<>", "⇒": "=>", "⇸": "-+->",
    "≡": "\\equiv", "⇔": "<=>", "↝": "~>", "∧": "/\\", "∨": "\\/", "≔": ":=", "⩴": "::=",
    "≠": "/=", "≤": "<=", "≥": ">=", "≈": "\\approx", "⊢": "|-", "⊨": "|=", "⊣": "-|", "⫤": "=|",
    "≍": "\\asymp", "≅": "\\cong", "≐": "\\doteq", "≫": "\\gg", "≪": "\\ll", "∉": "\\notin",
    "≺": "\\prec", "≻": "\\succ", "⪯": "\\preceq", "⪰": "\\succeq", "∝": "\\propto", "∼": "\\sim",
    "≃": "\\simeq", "⊏": "\\sqsubset", "⊐": "\\sqsupset", "⊑": "\\sqsubseteq", "⊒": "\\sqsupseteq",
    "⊂": "\\subset", "⊃": "\\supset", "⊆": "\\subseteq", "⊇": "\\supseteq", "∩": "\\intersect",
    "∪": "\\union", "‥": "..", "…": "...", "⊕": "(+)", "⊖": "(-)", "‖": "||", "⊙": "(.)",
    "⊘": "(/)", "⊗": "(\\X)", "◯": "\\bigcirc", "●": "\\bullet", "÷": "\\div", "∘": "\\o",
    "⋆": "\\star", "‼": "!!", "⁇": "??", "⊓": "\\sqcap", "⊔": "\\sqcup", "⊎": "\\uplus",
    "×": "\\X", "≀": "\\wr", "⋅": "\\cdot", "⁺": "^+", "ℕ": "Nat", "ℤ": "Int", "ℝ": "Real",
}
GRAMMAR_ALTERNATIVES: dict[str, str] = {
    "⟵": "<-", "⟼": "|->", "⟶": "->", "〈": "<<", "〉": ">>", "⋄": "<>", "⟹": "=>", "⥅": "-+->",
    "⟺": "<=>", "⇝": "~>",
}
EARLIER_WORK: dict[str, str] = {"′": "'", "∖": "\\", "·": "\\cdot"}
TABLE: dict[str, str] = {**STANDARD, **GRAMMAR_ALTERNATIVES, **EARLIER_WORK}

#: Box-drawing module lines (``┌── MODULE M ──┐``, ``├──┤``, ``└──┘``), read as ``----``/``====``.
_BOX = "─━═┌┐└┘├┤┏┓┗┛┣┫╔╗╚╝╠╣"
_BOX_END = frozenset("└┘┗┛╚╝")
_BOX_LINE = re.compile(rf"[ \t]*([{_BOX}]{{4,}}(?:[ \t]*MODULE[ \t]+\w+[ \t]*[{_BOX}]{{4,}})?)[ \t\r]*$")

#: ASCII characters that could glue onto a symbolic ASCII form into another token.
_GLUE = frozenset("=<>+-*/\\#.|~!$&:'^%@?")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_BULLET = re.compile(r"∧|∨|/\\|\\/")
_CONJ = frozenset({"∧", "/\\"})
_HEADER = re.compile(r"^[ \t]*-{4,}[ \t]*MODULE\b", re.MULTILINE)
_SCANNED = re.compile(r'"(?:[^"\\\n]|\\.)*"?|\(\*|\\\*[^\n]*|/\\|\\/')
_COMMENT_MARK = re.compile(r"\(\*|\*\)")
#: Conjunction/disjunction bullets looked at per line beyond the first token (real specs have a few).
MAX_BULLETS_PER_LINE = 64
MAX_ALIGN_ROUNDS = 8
TAB = 8  # SANY's JavaCC char stream puts tab stops every 8 columns
#: Larger texts, or parses that run longer, are left to the scanner (no spec a model writes is near).
MAX_GRAMMAR_CHARS = 512_000
GRAMMAR_DEADLINE_S = 2.0


def to_ascii(text: str) -> tuple[str, int]:
    """``text`` with every Unicode TLA+ operator outside strings and comments in its ASCII form,
    and the number of symbols (box-drawing lines counting one each) so read."""
    if text.isascii():
        return text, 0
    regions = _regions(text)
    edits, count = _edits(text, regions)
    if not edits:
        return text, 0
    inserts = _align(text, regions, edits)
    return _render(text, edits, inserts), count


# -- where strings and comments are -------------------------------------------------------------


def protected_mask(text: str) -> bytearray:
    """One byte per character of ``text``: 1 inside a string or a comment (which no token-level
    rewrite may touch), else 0."""
    return _regions(text).mask


@dataclass
class _Regions:
    """Spans of the text no substitution may touch; ``comments`` are the ones that are not tokens."""

    comments: list[tuple[int, int]] = field(default_factory=list)
    strings: list[tuple[int, int]] = field(default_factory=list)
    mask: bytearray = field(default_factory=bytearray)
    _starts: list[int] = field(default_factory=list)
    _ends: list[int] = field(default_factory=list)

    def seal(self, size: int) -> _Regions:
        self.mask = bytearray(size)
        for start, end in (*self.comments, *self.strings):
            self.mask[start:end] = b"\x01" * (end - start)
        merged = _merge(self.comments)
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]
        return self

    def comment_end(self, index: int) -> int | None:
        """The end of the comment holding ``index``, if one does."""
        at = bisect.bisect_right(self._starts, index) - 1
        return self._ends[at] if at >= 0 and index < self._ends[at] else None


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _regions(text: str) -> _Regions:
    """Strings and comments, as the grammar parses them.  Where it cannot parse the text cleanly
    (errors, no module) its error recovery can invent strings, so the scanner decides there: SANY
    itself tells strings and comments apart lexically, as the scanner does."""
    parsed = _grammar_regions(text)
    regions = parsed[0] if parsed is not None and not parsed[1] else _scanned_regions(text)
    return regions.seal(len(text))


_PROTECTED_NODES = "[(comment) (block_comment)] @comment (string) @string"


def _grammar_regions(text: str) -> tuple[_Regions, bool] | None:
    """(regions, whether the parse is unsure: errors, or no module found), or None where the
    grammar cannot be used: not installed, an incompatible version, a text too large, or a parse
    past its deadline (some inputs, thousands of nested parentheses say, take it seconds)."""
    if len(text) > MAX_GRAMMAR_CHARS:
        return None
    try:
        import tree_sitter

        language = grammar.language()
        # The grammar has no Unicode prime; ' takes its place one character for one, offsets kept.
        data = text.replace("′", "'").encode("utf-8")
        view = memoryview(data)  # slices of a view: the read callback then allocates nothing
        deadline = time.monotonic() + GRAMMAR_DEADLINE_S
        tree = tree_sitter.Parser(language).parse(lambda offset, _point: view[offset:offset + 4096],
                                                  progress_callback=lambda *_: time.monotonic() > deadline)
        captures = tree_sitter.QueryCursor(tree_sitter.Query(language, _PROTECTED_NODES)).captures(tree.root_node)
    except Exception:  # the scanner decides instead
        return None
    byte_spans = {kind: [(n.start_byte, n.end_byte) for n in captures.get(kind, [])] for kind in ("comment", "string")}
    to_char = _byte_to_char(data, [b for spans in byte_spans.values() for span in spans for b in span])
    regions = _Regions(
        comments=[(to_char[s], to_char[e]) for s, e in byte_spans["comment"]],
        strings=[(to_char[s], to_char[e]) for s, e in byte_spans["string"]],
    )
    root = tree.root_node
    return regions, root.has_error or not any(child.type == "module" for child in root.children)


def _byte_to_char(data: bytes, offsets: list[int]) -> dict[int, int]:
    """Character index of each UTF-8 byte offset (all on character boundaries)."""
    result: dict[int, int] = {}
    chars = previous = 0
    for offset in sorted(set(offsets)):
        chars += len(data[previous:offset].decode("utf-8"))
        previous = offset
        result[offset] = chars
    return result


def _scanned_regions(text: str) -> _Regions:
    """SANY's own lexical view, for when the grammar is unavailable or unsure: strings, nested
    block comments and line comments, from the first module header on (prose before it is not
    TLA+, and a stray ``(*`` there must not swallow the module)."""
    regions = _Regions()
    header = _HEADER.search(text)
    position = header.start() if header else 0
    while (match := _SCANNED.search(text, position)) is not None:
        token = match.group()
        if token.startswith('"'):
            regions.strings.append(match.span())
        elif token.startswith("\\*"):
            regions.comments.append(match.span())
        elif token == "(*":
            end = _block_comment_end(text, match.end())
            regions.comments.append((match.start(), end))
            position = end
            continue
        position = match.end()
    return regions


def _block_comment_end(text: str, position: int) -> int:
    depth = 1
    for mark in _COMMENT_MARK.finditer(text, position):
        depth += 1 if mark.group() == "(*" else -1
        if depth == 0:
            return mark.end()
    return len(text)


# -- what is replaced ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Edit:
    """The ASCII form of one character, with the spaces that keep it a token of its own."""

    before: str
    ascii: str
    after: str

    @property
    def text(self) -> str:
        return self.before + self.ascii + self.after


def _edits(text: str, regions: _Regions) -> tuple[dict[int, _Edit], int]:
    edits: dict[int, _Edit] = {}
    count = 0
    for match in _NON_ASCII.finditer(text):
        index = match.start()
        ascii_form = TABLE.get(match.group())
        if ascii_form is not None and not regions.mask[index]:
            edits[index] = _spaced(text, index, ascii_form)
            count += 1
    for start, line in _box_lines(text, regions):
        ascii_char = "=" if _BOX_END & set(line) or set(line.replace(" ", "")) == {"═"} else "-"
        for offset, char in enumerate(line):
            if char in _BOX:
                edits[start + offset] = _Edit("", ascii_char, "")
        count += 1
    return edits, count


def _spaced(text: str, index: int, ascii_form: str) -> _Edit:
    """Spaces around the ASCII form where it would otherwise run into its neighbours
    (``x∈S`` must become ``x \\in S``, not ``x\\inS``)."""
    before = text[index - 1] if index > 0 else "\n"
    after = text[index + 1] if index + 1 < len(text) else "\n"
    if ascii_form[0] == "\\" or ascii_form[0].isalpha():
        return _Edit("" if before.isspace() or before in "([{" else " ", ascii_form,
                     "" if after.isspace() or after in ")]}" else " ")
    return _Edit(" " if before in _GLUE else "", ascii_form, " " if after in _GLUE else "")


def _box_lines(text: str, regions: _Regions) -> Iterator[tuple[int, str]]:
    if not any(char in text for char in _BOX):
        return
    start = 0
    for line in text.split("\n"):
        match = _BOX_LINE.match(line)
        if match and not any(regions.mask[start:start + len(line)]):
            yield start + match.start(1), match.group(1)
        start += len(line) + 1


# -- keeping conjunction and disjunction lists aligned ------------------------------------------


@dataclass
class _List:
    """A (possible) bullet list: the column of its first bullet in the input, its kind, the
    column its bullets have in the output, and the largest shift of it and the lists it is in."""

    column: int
    conj: bool
    target: int
    key: int
    widest: int

    @property
    def shift(self) -> int:
        return self.target - self.column


class _Aligner:
    """One pass over the lines, keeping a stack of the lists whose items are still open.

    A bullet list ends at the first line whose first token stands at or left of its column
    (unless that token is its next bullet).  So the only columns that matter are those of
    bullets and of line-leading tokens, and the layout is kept by giving every bullet of a list
    one output column, and every line inside a list's item at least that list's shift.
    Bullets that are really infix operators are taken for lists too; that only moves lines
    further right inside an expression, which changes no parse.
    """

    def __init__(self, text: str, regions: _Regions, edits: dict[int, _Edit], floors: dict[int, int]) -> None:
        self.text, self.regions, self.edits, self.floors = text, regions, edits, floors
        self.positions = sorted(edits)
        self.inserts: dict[int, int] = {}
        self.line_inserts: list[int] = []
        self.stack: list[_List] = []
        self.raised = False

    def run(self) -> dict[int, int]:
        start = 0
        for line in self.text.split("\n"):
            self.line(start, start + len(line))
            start += len(line) + 1
        return self.inserts

    def line(self, start: int, end: int) -> None:
        first = self.first_token(start, end)
        if first is None:
            return
        self.line_inserts = []
        column = _width(self.text[start:first])
        conj = self.bullet_kind(first)
        while self.stack and (self.stack[-1].column > column
                              or (self.stack[-1].column == column and self.stack[-1].conj != conj)):
            self.stack.pop()
        member = bool(self.stack) and self.stack[-1].column == column
        outer = self.stack[:-1] if member else self.stack
        enclosing = outer[-1].widest if outer else 0
        natural = column + enclosing
        if member:
            bullets = self.stack[-1]
            if natural > bullets.target:
                self.floors[bullets.key] = natural
                self.raised = True
            self.insert(first, max(natural, bullets.target) - column)
        elif conj is not None:
            self.open(first, column, conj, natural, enclosing)
        else:
            self.insert(first, enclosing)
        self.mid_line_bullets(start, first, end)

    def mid_line_bullets(self, start: int, first: int, end: int) -> None:
        leading = _BULLET.match(self.text, first)
        for seen, match in enumerate(_BULLET.finditer(self.text, leading.end() if leading else first + 1, end)):
            if seen >= MAX_BULLETS_PER_LINE:
                return
            index = match.start()
            if not self.regions.mask[index]:
                self.open(index, _width(self.text[start:index]), match.group() in _CONJ,
                          self.output_column(start, index), 0)

    def open(self, index: int, column: int, conj: bool, natural: int, inserted: int) -> None:
        """A list whose first bullet is at ``index``; ``natural`` is its output column given
        ``inserted`` spaces before it."""
        target = max(natural, self.floors.get(index, 0))
        self.insert(index, inserted + target - natural)
        widest = max(target - column, self.stack[-1].widest if self.stack else 0)
        self.stack.append(_List(column, conj, target, index, widest))

    def insert(self, index: int, spaces: int) -> None:
        if spaces > 0:
            self.inserts[index] = spaces
            self.line_inserts.append(index)

    def first_token(self, start: int, end: int) -> int | None:
        """The first character of the line that is neither blank nor inside a comment."""
        index = start
        while index < end:
            if self.text[index] in " \t\r\f\v":
                index += 1
                continue
            comment_end = self.regions.comment_end(index)
            if comment_end is None:
                return index
            index = comment_end
        return None

    def bullet_kind(self, index: int) -> bool | None:
        """True for a conjunction bullet at ``index``, False for a disjunction one, else None."""
        match = _BULLET.match(self.text, index)
        return None if match is None else match.group() in _CONJ

    def output_column(self, start: int, index: int) -> int:
        """The output column of the token at ``index``, before any spaces inserted there."""
        low, high = bisect.bisect_left(self.positions, start), bisect.bisect_left(self.positions, index)
        before = sorted({*self.positions[low:high], *(p for p in self.line_inserts if p < index)})
        parts: list[str] = []
        last = start
        for position in before:
            parts.append(self.text[last:position])
            parts.append(" " * self.inserts.get(position, 0))
            edit = self.edits.get(position)
            parts.append(edit.text if edit else self.text[position])
            last = position + 1
        parts.append(self.text[last:index])
        edit = self.edits.get(index)
        parts.append(edit.before if edit else "")
        return _width("".join(parts))


def _width(prefix: str) -> int:
    return len(prefix.expandtabs(TAB))


def _align(text: str, regions: _Regions, edits: dict[int, _Edit]) -> dict[int, int]:
    """Spaces to insert before some tokens so that every bullet list keeps its shape."""
    floors: dict[int, int] = {}
    inserts: dict[int, int] = {}
    for _ in range(MAX_ALIGN_ROUNDS):
        aligner = _Aligner(text, regions, edits, floors)
        inserts = aligner.run()
        if not aligner.raised:
            break
    return inserts


def _render(text: str, edits: dict[int, _Edit], inserts: dict[int, int]) -> str:
    parts: list[str] = []
    last = 0
    for position in sorted(edits.keys() | inserts.keys()):
        parts.append(text[last:position])
        parts.append(" " * inserts.get(position, 0))
        edit = edits.get(position)
        parts.append(edit.text if edit else text[position])
        last = position + 1
    parts.append(text[last:])
    return "".join(parts)
