"""The tree-sitter-tlaplus grammar, loaded once: where TLA+ text is read as tokens rather than
characters (strings, comments, the names an expression refers to).  SANY stays the judge of
validity; the grammar only says what the text is made of."""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

#: The grammar, with the tree_sitter module it was made by: a host that imports tree_sitter
#: afresh (pytester's in-process runs restore ``sys.modules``) has a new ``Language`` type, and
#: its parser refuses a language of the old one.
_LANGUAGE: tuple[object, object] | None = None
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def language() -> object:
    global _LANGUAGE
    import tree_sitter

    if _LANGUAGE is None or _LANGUAGE[0] is not tree_sitter:
        import tree_sitter_tlaplus

        with warnings.catch_warnings():  # the binding hands over an int, which tree-sitter 0.25+ deprecates
            warnings.simplefilter("ignore", DeprecationWarning)
            _LANGUAGE = (tree_sitter, tree_sitter.Language(tree_sitter_tlaplus.language()))
    return _LANGUAGE[1]


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


@dataclass(frozen=True)
class SpecParts:
    """A specification formula taken apart: what TLC needs to run it with one more variable."""

    init: tuple[str, ...]
    next: str
    subscript: str
    temporal: tuple[str, ...]


_TEMPORAL = frozenset({"always", "eventually", "fairness", "leads_to", "step_expr_or_stutter", "step_expr_no_stutter"})


def spec_parts(modules: Iterable[str], name: str) -> SpecParts | None:
    """``Init /\\ [][Next]_v /\\ fairness``, however the conjuncts are spelled and through the
    definitions they name.  None for any other shape (more or fewer than one ``[][...]_v``).
    Read once per spec: every window and trace module of a cell asks for it."""
    return _spec_parts(tuple(modules), name)


@functools.lru_cache(maxsize=64)
def _spec_parts(modules: tuple[str, ...], name: str) -> SpecParts | None:
    import tree_sitter

    definitions: dict[str, tuple[bytes, object]] = {}
    for text in modules:
        source = text.encode("utf-8")
        tree = tree_sitter.Parser(language()).parse(source)
        for unit in _definitions(tree.root_node):
            if len(unit.children) >= 3 and unit.children[1].type == "def_eq":
                definitions[_text(source, unit.children[0])] = (source, unit.children[-1])
    if name not in definitions:
        return None
    init: list[str] = []
    nexts: list[tuple[str, str]] = []
    temporal: list[str] = []

    def take(source: bytes, node: Any, depth: int = 0) -> None:
        while node.type == "parentheses":
            node = node.children[1]
        if node.type == "bound_infix_op" and node.children[1].type == "land":
            take(source, node.children[0], depth)
            take(source, node.children[2], depth)
        elif node.type == "conj_list":
            for item in node.children:
                take(source, item.children[-1], depth)
        elif node.type == "bound_prefix_op" and node.children[0].type == "always" \
                and node.children[1].type == "step_expr_or_stutter":
            step = node.children[1]
            nexts.append((_text(source, step.children[1]), _text(source, step.children[3])))
        elif node.type == "identifier_ref" and _text(source, node) in definitions and depth < 8 \
                and _has(definitions[_text(source, node)][1], _TEMPORAL):
            take(*definitions[_text(source, node)], depth + 1)
        elif _has(node, _TEMPORAL):
            temporal.append(_text(source, node))
        else:
            init.append(_text(source, node))

    take(*definitions[name])
    if len(nexts) != 1:
        return None
    return SpecParts(tuple(init), nexts[0][0], nexts[0][1], tuple(temporal))


def _definitions(root: Any) -> list[Any]:
    found = []
    for module in (c for c in root.children if c.type == "module"):
        found += [c for c in module.children if c.type == "operator_definition"]
    return found


def _has(node: Any, types: frozenset[str]) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in types:
            return True
        stack.extend(current.children)
    return False


def rename_references(expression: str, names: Mapping[str, str]) -> str:
    """The expression with every reference to one of ``names`` replaced (never a string, a
    comment, a record field or another name that merely contains it): how the generated
    modules give a mapping's bound names their own, which no spec can define."""
    import tree_sitter

    if not names:
        return expression
    prefix = "---- MODULE SysmoRename ----\nSysmoE == "
    source = f"{prefix}{expression}\n====\n".encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    spans: list[tuple[int, int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "identifier_ref" and _text(source, node) in names:
            spans.append((node.start_byte, node.end_byte, names[_text(source, node)]))
        elif node.type == "record_value":
            stack.extend(node.children[:1])
            continue
        stack.extend(node.children)
    out = source
    for start, end, new in sorted(spans, reverse=True):
        out = out[:start] + new.encode("utf-8") + out[end:]
    return out.decode("utf-8")[len(prefix):-len("\n====\n")]
