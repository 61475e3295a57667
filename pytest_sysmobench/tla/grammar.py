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
