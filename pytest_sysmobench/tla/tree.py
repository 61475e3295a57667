"""A spec as SANY resolved it: variables, constants, definitions and the actions of its next-state
relation, read from the semantic tree the jar's XML exporter writes.

Why SANY's tree and not the text: whether an edit kept what a spec means is a question about
what the names refer to and how the expressions are built, not about spacing, comments, line
breaks or how a conjunction list was laid out.  Each definition's body is kept as a canonical
tree (source locations and SANY's internal ids dropped, references by name, LET-local
definitions inline), so two specs that SANY reads alike compare equal definition by definition,
and any change to an expression, however deep, shows.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: How deep the reader follows a nested expression (Python frames).
MAX_DEPTH = 20_000
#: A canonical expression: nested tuples of strings, comparable and hashable.
Node = tuple[Any, ...]

#: The XML exporter's node kinds that carry no meaning for a comparison.
_NOISE = frozenset({"location", "level", "UID"})
#: Operators whose operands are each a disjunct of a next-state relation.
_DISJUNCTIONS = frozenset({"\\lor", "$DisjList"})
_EXISTS = frozenset({"$BoundedExists", "$UnboundedExists"})
#: SANY's kinds of declaration (OpDeclNode ``kind``).
_CONSTANT, _VARIABLE = "2", "3"


class TreeError(Exception):
    """The exporter's output is not a semantic tree this reader knows."""


@dataclass(frozen=True)
class Definition:
    name: str
    params: tuple[str, ...]
    #: 0 constant, 1 state, 2 action, 3 temporal.
    level: int
    body: Node


@dataclass(frozen=True)
class Action:
    """A disjunct of the next-state relation: a definition it calls, or an inline expression
    (named ``<inline N>``), with the variables it primes and the ones it leaves UNCHANGED."""

    name: str
    writes: frozenset[str]
    unchanged: frozenset[str]


@dataclass(frozen=True)
class SpecTree:
    module: str
    variables: tuple[str, ...]
    constants: tuple[str, ...]
    definitions: Mapping[str, Definition] = field(default_factory=dict)

    def actions(self, next_name: str = "Next") -> dict[str, Action]:
        """The actions reached from ``next_name`` through disjunctions and existential
        quantifiers, stopping at a user definition of action level."""
        found: dict[str, Action] = {}
        start = self.definitions.get(next_name)
        if start is None:
            return found
        inline = 0
        for disjunct in self._disjuncts(start.body):
            if disjunct[0] == "apply" and self._is_action(disjunct[1]):
                name = disjunct[1]
            else:
                inline += 1
                name = f"<inline {inline}>"
            writes, unchanged = self._effects(disjunct, set())
            found[name] = Action(name, frozenset(writes), frozenset(unchanged))
        return found

    def guard(self, name: str) -> tuple[Node, ...] | None:
        """The conjuncts of an action's definition that neither prime nor leave a variable
        unchanged, directly or through an action it calls: what decides whether it can be
        taken.  None for a definition that is no action."""
        definition = self.definitions.get(name)
        if definition is None or definition.level != 2:
            return None
        return tuple(c for c in _conjuncts(definition.body) if not self._steps(c))

    def _steps(self, node: Node) -> bool:
        return any(sub[0] == "apply" and (sub[1] in ("'", "UNCHANGED") or self._is_action(sub[1])) for sub in _walk(node))

    def _is_action(self, name: str) -> bool:
        definition = self.definitions.get(name)
        return definition is not None and definition.level == 2

    def _disjuncts(self, node: Node) -> Iterator[Node]:
        if node[0] == "apply" and node[1] in _DISJUNCTIONS:
            for operand in node[2]:
                yield from self._disjuncts(operand)
        elif node[0] == "apply" and node[1] in _EXISTS:
            yield from self._disjuncts(node[2][-1])
        else:
            yield node

    def _effects(self, node: Node, seen: set[str]) -> tuple[set[str], set[str]]:
        """The variables primed and those named in UNCHANGED under ``node``, through the user
        definitions it uses (each once)."""
        writes: set[str] = set()
        unchanged: set[str] = set()
        for sub in _walk(node):
            if sub[0] != "apply":
                continue
            name = sub[1]
            if name == "'" and sub[2] and sub[2][0][0] == "apply" and sub[2][0][1] in self.variables:
                writes.add(sub[2][0][1])
            elif name == "UNCHANGED" and sub[2]:
                unchanged |= self._named_variables(sub[2][0], set())
            elif name in self.definitions and name not in seen and self.definitions[name].level >= 1:
                seen.add(name)
                more_writes, more_unchanged = self._effects(self.definitions[name].body, seen)
                writes |= more_writes
                unchanged |= more_unchanged
        return writes, unchanged

    def _named_variables(self, node: Node, seen: set[str]) -> set[str]:
        """The variables a tuple (or a definition of one, such as ``vars``) names."""
        names: set[str] = set()
        for sub in _walk(node):
            if sub[0] == "apply" and sub[1] in self.variables:
                names.add(sub[1])
            elif sub[0] == "apply" and sub[1] in self.definitions and sub[1] not in seen:
                seen.add(sub[1])
                names |= self._named_variables(self.definitions[sub[1]].body, seen)
        return names


def _conjuncts(node: Node) -> Iterator[Node]:
    if node[0] == "apply" and node[1] in ("\\land", "$ConjList"):
        for operand in node[2]:
            yield from _conjuncts(operand)
    else:
        yield node


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, tuple) and current and isinstance(current[0], str):
            yield current
            stack.extend(child for child in current[1:] if isinstance(child, tuple))
        elif isinstance(current, tuple):
            stack.extend(child for child in current if isinstance(child, tuple))


def xml_part(output: str) -> str | None:
    """The XML document in the exporter's output (SANY's progress lines come before it)."""
    start = output.find("<?xml")
    end = output.rfind("</modules>")
    return output[start:end + len("</modules>")] if start >= 0 and end > start else None


def read_tree(xml: str) -> SpecTree:
    """The root module of the exporter's XML as a :class:`SpecTree`."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise TreeError(f"the exporter's XML does not parse: {exc}") from exc
    reader = _Reader(root)
    limit = sys.getrecursionlimit()
    # Deeply nested expressions: the reader recurses through Python frames only (comprehensions,
    # no generator inside a C call), so a spec nested deeper still ends in RecursionError.
    sys.setrecursionlimit(max(limit, MAX_DEPTH))
    try:
        return reader.tree()
    except RecursionError as exc:
        raise TreeError(f"the spec's expressions are nested deeper than {MAX_DEPTH:,} levels") from exc
    finally:
        sys.setrecursionlimit(limit)


def exported_names(xml: str) -> dict[str, frozenset[str]]:
    """Every module in the exporter's XML with the operators it defines itself (the standard
    modules' ``+``, ``Len``, ``Cardinality`` ...): where a name a spec uses comes from."""
    reader = _Reader(ET.fromstring(xml))
    names: dict[str, set[str]] = {}
    for node in reader.entries.values():
        if node.tag == "UserDefinedOpKind":
            home = reader._home(node)
            if home:
                names.setdefault(home, set()).add(node.findtext("uniquename") or "")
    return {module: frozenset(found) for module, found in names.items()}


class _Reader:
    def __init__(self, root: ET.Element) -> None:
        self.module = root.findtext("RootModule") or ""
        context = root.find("context")
        if context is None or not self.module:
            raise TreeError("the exporter's XML has no context or root module")
        self.entries: dict[str, ET.Element] = {}
        for entry in context:
            uid, node = entry.findtext("UID"), next((c for c in entry if c.tag != "UID"), None)
            if uid is not None and node is not None:
                self.entries[uid] = node

    def tree(self) -> SpecTree:
        module = next((n for n in self.entries.values()
                       if n.tag == "ModuleNode" and n.findtext("uniquename") == self.module), None)
        if module is None:
            raise TreeError(f"the exporter's XML has no module {self.module}")
        variables, constants, definitions = [], [], {}
        for ref in module:
            node = self.entries.get(ref.findtext("UID") or "")
            if node is None or self._home(node) != self.module:
                continue
            name = node.findtext("uniquename") or ""
            if node.tag == "OpDeclNode":
                (variables if node.findtext("kind") == _VARIABLE else
                 constants if node.findtext("kind") == _CONSTANT else []).append(name)
            elif node.tag == "UserDefinedOpKind":
                definitions[name] = self.definition(node)
        return SpecTree(self.module, tuple(variables), tuple(constants), definitions)

    @staticmethod
    def _home(node: ET.Element) -> str | None:
        return node.findtext("location/filename")

    def definition(self, node: ET.Element) -> Definition:
        params = tuple(self._name(ref) for ref in node.iterfind("params/leibnizparam/FormalParamNodeRef"))
        body = node.find("body")
        canonical = self.canon(body[0]) if body is not None and len(body) else ("builtin",)
        return Definition(node.findtext("uniquename") or "", params, int(node.findtext("level") or 0), canonical)

    def _name(self, ref: ET.Element) -> str:
        target = self.entries.get(ref.findtext("UID") or "")
        return (target.findtext("uniquename") if target is not None else None) or "?"

    def canon(self, node: ET.Element) -> Node:
        tag = node.tag
        if tag == "OpApplNode":
            operator = node.find("operator")
            name = self._name(operator[0]) if operator is not None and len(operator) else "?"
            operands = node.find("operands")
            args = tuple([self.canon(child) for child in operands]) if operands is not None else ()
            bound = node.find("boundSymbols")
            return ("apply", name, args, self.canon(bound) if bound is not None else ())
        if tag == "LetInNode":
            defs = tuple([self._let_definition(ref) for ref in node.iterfind("opDefs/UserDefinedOpKindRef")])
            body = node.find("body")
            return ("let", defs, self.canon(body[0]) if body is not None and len(body) else ())
        if tag.endswith("Ref"):
            return ("name", self._name(node))
        children = [child for child in node if child.tag not in _NOISE]
        if not children:
            return (tag, (node.text or "").strip())
        return (tag, *[self.canon(child) for child in children])

    def _let_definition(self, ref: ET.Element) -> Node:
        node = self.entries.get(ref.findtext("UID") or "")
        if node is None or node.tag != "UserDefinedOpKind":
            return ("name", self._name(ref))
        definition = self.definition(node)
        return ("define", definition.name, definition.params, definition.body)
