"""Untrusted TLA+ expressions (from mapping files and evaluator answers), screened before use.

A mapping's expression becomes the body of a definition in a module the harness generates.
It must stay one expression: it may not close that definition and open another one (an
injected ``Sysmo_MutualExclusion == TRUE`` would forge a verdict), end the module, or bring
in declarations.  The screen is a single left-to-right scan, linear in the text: brackets
balance, strings close, there are no comments, no module syntax, and a ``==`` appears only
between a ``LET`` and its ``IN``.
"""

from __future__ import annotations

MAX_EXPRESSION = 20_000

_OPEN = {"(": ")", "[": "]", "{": "}", "<<": ">>"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_FORBIDDEN_WORDS = frozenset({
    "MODULE", "EXTENDS", "CONSTANT", "CONSTANTS", "VARIABLE", "VARIABLES", "ASSUME", "ASSUMPTION",
    "AXIOM", "THEOREM", "LEMMA", "PROPOSITION", "COROLLARY", "INSTANCE", "LOCAL", "PROOF", "QED",
})


class ExpressionError(ValueError):
    """The text is not a single, self-contained TLA+ expression."""


def check_expression(text: str) -> str:
    """The expression, stripped, if it is safe to place in a generated definition; else raise."""
    if not isinstance(text, str):
        raise ExpressionError(f"expected a TLA+ expression as text, got {type(text).__name__}")
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise ExpressionError("the expression is empty")
    if len(text) > MAX_EXPRESSION:
        raise ExpressionError(f"the expression is {len(text):,} characters long, over the limit of {MAX_EXPRESSION:,}")
    if not text.isascii():
        bad = next(c for c in text if not c.isascii())
        raise ExpressionError(f"non-ASCII character {bad!r} (write TLA+ operators in ASCII, e.g. \\in, /\\, ==)")
    _scan(text)
    return text


def _scan(text: str) -> None:
    stack: list[tuple[str, int]] = []  # open bracket, and how many LETs are open inside it
    lets = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        pair = text[i : i + 2]
        if char == '"':
            i = _string_end(text, i)
            continue
        if pair in ("(*", "\\*"):
            raise ExpressionError("comments are not allowed in a mapping expression")
        if pair in ("--", "==") and text.startswith(pair * 2, i):
            raise ExpressionError(f"'{pair * 2}' (module syntax) is not allowed in an expression")
        if char.isalnum() or char == "_":
            end = i
            while end < n and (text[end].isalnum() or text[end] == "_"):
                end += 1
            word = text[i:end]
            if word in _FORBIDDEN_WORDS:
                raise ExpressionError(f"'{word}' is not allowed in an expression")
            if word == "LET":
                lets += 1
            elif word == "IN" and lets:
                lets -= 1
            i = end
            continue
        if pair == "<-":
            raise ExpressionError("'<-' (a substitution) is not allowed in an expression")
        if pair == "==":
            if not lets:
                raise ExpressionError("'==' outside a LET ... IN would start a new definition")
            i += 2
            continue
        token = pair if pair in ("<<", ">>") else char
        if token in _OPEN:
            stack.append((token, lets))
            lets = 0
        elif token in _CLOSE:
            if not stack or stack[-1][0] != _CLOSE[token]:
                raise ExpressionError(f"unbalanced '{token}' at character {i + 1}")
            _, lets = stack.pop()
        i += len(token)
    if stack:
        raise ExpressionError(f"unclosed '{stack[-1][0]}'")


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "\n":
            break
        if text[i] == '"':
            return i + 1
        i += 1
    raise ExpressionError(f"unterminated string starting at character {start + 1}")


def indented(text: str, by: str = "    ") -> str:
    """The expression as a definition body: every line indented, so none starts a new unit."""
    return "\n".join(by + line for line in text.split("\n"))
