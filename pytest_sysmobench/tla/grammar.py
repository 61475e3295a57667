"""The tree-sitter-tlaplus grammar, loaded once: where TLA+ text is read as tokens rather than
characters (strings, comments, the names an expression refers to).  SANY stays the judge of
validity; the grammar only says what the text is made of."""

from __future__ import annotations

import re
import warnings

_LANGUAGE: object | None = None
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def language() -> object:
    global _LANGUAGE
    if _LANGUAGE is None:
        import tree_sitter
        import tree_sitter_tlaplus

        with warnings.catch_warnings():  # the binding hands over an int, which tree-sitter 0.25+ deprecates
            warnings.simplefilter("ignore", DeprecationWarning)
            _LANGUAGE = tree_sitter.Language(tree_sitter_tlaplus.language())
    return _LANGUAGE


def referenced_names(text: str) -> frozenset[str]:
    """The names a piece of TLA+ (definitions, or one expression) refers to, bound names
    included: never a word inside a string or a comment, never a record's field.  Read from a
    module wrapped around it; callers look for the names they know."""
    import tree_sitter

    source = f"---- MODULE SysmoNames ----\n{text}\n====\n".encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    found: set[str] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "identifier_ref":
            found.add(source[node.start_byte:node.end_byte].decode("utf-8"))
        elif node.type == "record_value":  # r.field: the field is no name of the module's
            stack.extend(node.children[:1])
            continue
        stack.extend(node.children)
    return frozenset(n for n in found if _NAME.fullmatch(n))


def _text(source: bytes, node: object) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8")  # type: ignore[attr-defined]


def premise(definition: str) -> str | None:
    """What must hold somewhere for a template to say anything: for ``\\A x \\in S : P => Q``
    (or ``P ~> Q``), ``\\E x \\in S : P``.  None for any other shape."""
    import tree_sitter

    source = f"---- MODULE SysmoPremise ----\n{definition}\n====\n".encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    unit = next((n for n in tree.root_node.children[0].children if n.type == "operator_definition"), None)
    if tree.root_node.has_error or unit is None or unit.children[1].type != "def_eq":
        return None
    node = unit.children[-1]
    bounds: list[str] = []
    while True:
        while node.type == "parentheses":
            node = node.children[1]
        if node.type == "bounded_quantification" and node.children[0].type == "forall":
            bounds.append(", ".join(_text(source, b) for b in node.children if b.type == "quantifier_bound"))
            node = node.children[-1]
            continue
        break
    if node.type != "bound_infix_op" or node.children[1].type not in ("implies", "leads_to"):
        return None
    text = _text(source, node.children[0])
    for bound in reversed(bounds):
        text = f"\\E {bound} : {text}"
    return text
