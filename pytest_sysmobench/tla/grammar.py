"""The tree-sitter-tlaplus grammar, loaded once: where TLA+ text is read as tokens rather than
characters (strings, comments, the names an expression refers to).  SANY stays the judge of
validity; the grammar only says what the text is made of."""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

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
    found = _identifiers(text, lambda node: node.type == "identifier_ref" and not _field(node))  # r.f, !.f
    return frozenset(n for n in found if _NAME.fullmatch(n))


def fields_named(text: str) -> frozenset[str]:
    """The record fields a piece of TLA+ names (``r.f``, ``[f |-> v]``, ``[f : S]``)."""
    return _identifiers(text, lambda node: node.type in ("identifier", "identifier_ref") and _field(node))


def _identifiers(text: str, wanted: Callable[[Any], bool]) -> frozenset[str]:
    """The text of every node of the parse of ``text`` (wrapped in a module) that ``wanted`` keeps."""
    import tree_sitter

    source = f"---- MODULE SysmoNames ----\n{text}\n====\n".encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    found: set[str] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if wanted(node):
            found.add(_text(source, node))
        stack.extend(node.children)
    return frozenset(found)


def _text(source: bytes, node: object) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8")  # type: ignore[attr-defined]


def premise(definition: str) -> str | None:
    """What must hold somewhere for a template to say anything: for ``\\A x \\in S : P => Q``
    (or ``P ~> Q``), ``\\E x \\in S : P``.  None for any other shape."""
    import tree_sitter

    source = f"---- MODULE SysmoPremise ----\n{definition}\n====\n".encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    unit = next((n for n in _kids(_kids(tree.root_node)[0]) if n.type == "operator_definition"), None)
    if tree.root_node.has_error or unit is None or _kids(unit)[1].type != "def_eq":
        return None
    node = _kids(unit)[-1]
    bounds: list[str] = []
    while True:
        while node.type == "parentheses":
            node = _kids(node)[1]
        if node.type == "bounded_quantification" and _kids(node)[0].type == "forall":
            bounds.append(", ".join(_text(source, b) for b in _kids(node) if b.type == "quantifier_bound"))
            node = _kids(node)[-1]
            continue
        break
    if node.type != "bound_infix_op" or _kids(node)[1].type not in ("implies", "leads_to"):
        return None
    text = _text(source, _kids(node)[0])
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
            if len(_kids(unit)) >= 3 and _kids(unit)[1].type == "def_eq":
                definitions[_text(source, _kids(unit)[0])] = (source, _kids(unit)[-1])
    if name not in definitions:
        return None
    init: list[str] = []
    nexts: list[tuple[str, str]] = []
    temporal: list[str] = []

    def take(source: bytes, node: Any, depth: int = 0) -> None:
        while node.type == "parentheses":
            node = _kids(node)[1]
        if node.type == "bound_infix_op" and _kids(node)[1].type == "land":
            take(source, _kids(node)[0], depth)
            take(source, _kids(node)[2], depth)
        elif node.type == "conj_list":
            for item in _kids(node):
                if item.type == "conj_item":  # not a comment the grammar placed among the items
                    take(source, _kids(item)[-1], depth)
        elif node.type == "bound_prefix_op" and _kids(node)[0].type == "always" \
                and _kids(node)[1].type == "step_expr_or_stutter":
            step = _kids(node)[1]
            nexts.append((_text(source, _kids(step)[1]), _text(source, _kids(step)[3])))
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
    for module in (c for c in _kids(root) if c.type == "module"):
        found += [c for c in _kids(module) if c.type == "operator_definition"]
    return found


def _kids(node: Any) -> list[Any]:
    """A node's children without the comments the grammar places among them (a comment may sit
    between any two tokens: ``Init /\\ (* x *) [][Next]_v`` is still a conjunction)."""
    return [child for child in node.children if child.type not in _COMMENTS]


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
        if node.type == "identifier_ref" and _text(source, node) in names and not _field(node):
            spans.append((node.start_byte, node.end_byte, names[_text(source, node)]))
        stack.extend(node.children)
    out = source
    for start, end, new in sorted(spans, reverse=True):
        out = out[:start] + new.encode("utf-8") + out[end:]
    return out.decode("utf-8")[len(prefix):-len("\n====\n")]


@dataclass(frozen=True)
class NextParts:
    """A next-state relation taken apart around the operators a mapping names.

    ``transparent``: the named operators that occur as a disjunct of it (through disjunctions,
    existential quantifiers and the definitions they call), so that every step of theirs is a
    step of the relation.  ``rest``: the relation with those disjuncts made FALSE, an action
    of its own (``definitions`` are the copies of the definitions it calls, renamed), or None
    when nothing is left: the steps of no named operator."""

    transparent: frozenset[str]
    rest: str | None
    definitions: tuple[str, ...] = ()


#: How deep the decomposition follows definitions that a next-state relation calls.
NEXT_DEPTH = 8
REST_PREFIX = "SysmoRest_"
_COMMENTS = frozenset({"comment", "block_comment"})


def next_parts(modules: Iterable[str], expression: str, named: Iterable[str]) -> NextParts | None:
    """``expression`` (a next-state relation over the spec's definitions) as the disjuncts that
    are the ``named`` operators and the rest.  None when the text cannot be read."""
    return _next_parts(tuple(modules), expression, frozenset(named))


@functools.lru_cache(maxsize=64)
def _next_parts(modules: tuple[str, ...], expression: str, named: frozenset[str]) -> NextParts | None:
    import tree_sitter

    parser = tree_sitter.Parser(language())
    definitions: dict[str, tuple[bytes, Any, str]] = {}
    for text in modules:
        source = text.encode("utf-8")
        tree = parser.parse(source)
        for unit in _definitions(tree.root_node):
            equals = next((k for k, c in enumerate(_kids(unit)) if c.type == "def_eq"), None)
            if equals is None or _kids(unit)[0].type != "identifier":
                continue
            head = source[_kids(unit)[0].end_byte:_kids(unit)[equals].start_byte].decode("utf-8")
            definitions[_text(source, _kids(unit)[0])] = (source, _kids(unit)[-1], head)
    prefix = "---- MODULE SysmoNext ----\nSysmoE == "
    source = f"{prefix}{expression}\n====\n".encode("utf-8")
    tree = parser.parse(source)
    units = _definitions(tree.root_node)
    if tree.root_node.has_error or len(units) != 1:
        return None
    walk = _NextWalk(definitions, named)
    rest = walk.rewrite(source, units[0].children[-1], 0)
    return NextParts(frozenset(walk.transparent), rest, tuple(walk.copies.values()))


class _NextWalk:
    def __init__(self, definitions: Mapping[str, tuple[bytes, Any, str]], named: frozenset[str]) -> None:
        self.definitions = definitions
        self.named = named
        self.transparent: set[str] = set()
        #: Definitions the rest calls, each rewritten once (None while being rewritten, or all FALSE).
        self.copies: dict[str, str] = {}
        self._done: dict[str, bool | None] = {}

    def rewrite(self, source: bytes, node: Any, depth: int) -> str | None:
        """The node's text with the named disjuncts made FALSE; None when nothing else is left."""
        spans: list[tuple[int, int, str]] = []
        if not self._walk(source, node, depth, spans):
            return None
        text = source[node.start_byte:node.end_byte]
        for start, end, new in sorted(spans, reverse=True):
            text = text[:start - node.start_byte] + new.encode("utf-8") + text[end - node.start_byte:]
        return text.decode("utf-8")

    def _walk(self, source: bytes, node: Any, depth: int, spans: list[tuple[int, int, str]]) -> bool:
        """Whether anything but named disjuncts is left under ``node`` (recording the rewrites)."""
        kind = node.type
        if kind == "parentheses":
            return self._walk(source, _kids(node)[1], depth, spans)
        if kind == "bound_infix_op" and _kids(node)[1].type == "lor":
            left = self._walk(source, _kids(node)[0], depth, spans)
            right = self._walk(source, _kids(node)[2], depth, spans)
            return left or right
        if kind == "disj_list":
            items = [_kids(item)[-1] for item in _kids(node) if item.type == "disj_item"]
            found = [self._walk(source, item, depth, spans) for item in items]
            return any(found)
        if kind in ("bounded_quantification", "unbounded_quantification") and _kids(node)[0].type == "exists":
            return self._walk(source, _kids(node)[-1], depth, spans)
        name = _applied(source, node)
        if name is not None and name in self.named:
            self.transparent.add(name)
            spans.append((node.start_byte, node.end_byte, "FALSE"))
            return False
        if name is not None and name in self.definitions and depth < NEXT_DEPTH:
            kept = self._kept(name, depth)
            if kept is None:
                spans.append((node.start_byte, node.end_byte, "FALSE"))
                return False
            if kept:
                callee = _kids(node)[0] if kind == "bound_op" else node
                spans.append((callee.start_byte, callee.end_byte, REST_PREFIX + name))
            return True
        return kind not in _COMMENTS

    def _kept(self, name: str, depth: int) -> bool | None:
        """What is left of a definition once its named disjuncts are FALSE: None if nothing,
        False if all of it (it is called as it is), True if a part (its renamed copy)."""
        if name not in self._done:
            self._done[name] = False  # a recursive definition is kept whole where it calls itself
            source, body, head = self.definitions[name]
            spans: list[tuple[int, int, str]] = []
            if not self._walk(source, body, depth + 1, spans):
                self._done[name] = None
            elif spans:
                self._done[name] = True
                self.copies[name] = f"{REST_PREFIX}{name}{head}==\n    {self.rewrite(source, body, depth + 1)}"
        return self._done[name]


def _applied(source: bytes, node: Any) -> str | None:
    """The operator a node applies (``Op`` or ``Op(args)``), else None."""
    if node.type == "identifier_ref":
        return _text(source, node)
    if node.type == "bound_op" and _kids(node) and _kids(node)[0].type == "identifier_ref":
        return _text(source, _kids(node)[0])
    return None


#: Where an identifier names a record's field, not something the module declares.
_FIELD_PARENTS = frozenset({"record_literal", "set_of_records"})


def _field(node: Any) -> bool:
    """Whether an identifier is a record's field (``[f |-> v]``, ``[f : S]``, ``r.f``, ``!.f``)."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in _FIELD_PARENTS:
        return node.type == "identifier"
    return parent.type == "except_update_record_field" or (parent.type == "record_value" and _kids(parent)[0] != node)


def rename_names(module: str, names: Mapping[str, str]) -> str:
    """A whole module with every declaration and use of ``names`` renamed (definitions, LET
    definitions, parameters, bound variables, constants and variables), never a record's field,
    a string or a comment: how a module the benchmark instances beside a spec keeps its own
    names apart from the spec's (TLC 2.15 can read a name of the instanced module as a variable
    of the instancing one's state when the two are spelled alike)."""
    import tree_sitter

    if not names:
        return module
    source = module.encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    spans: list[tuple[int, int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "identifier_ref") and _text(source, node) in names and not _field(node):
            spans.append((node.start_byte, node.end_byte, names[_text(source, node)]))
        stack.extend(node.children)
    out = source
    for start, end, new in sorted(spans, reverse=True):
        out = out[:start] + new.encode("utf-8") + out[end:]
    return out.decode("utf-8")


def declared_names(module: str) -> frozenset[str]:
    """Every name a module declares anywhere: definitions (LET ones too), parameters, bound
    variables, constants and variables."""
    import tree_sitter

    source = module.encode("utf-8")
    tree = tree_sitter.Parser(language()).parse(source)
    found: set[str] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "identifier" and node.parent is not None and node.parent.type != "module" and not _field(node):
            found.add(_text(source, node))
        stack.extend(node.children)
    return frozenset(found)
