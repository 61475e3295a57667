"""The repairs a program can make from a spec's text and the tools' own messages.

Each rule is one of the allowed edits of the original benchmark's repair guide (its ids kept, so
repairs compare across the two): it fires on a typed SANY or TLC message, rewrites tokens (never
inside strings or comments), and says which definitions it changed and what a checker must find
true of the change.  A rule never adds or removes an action, changes a guard, changes what an
action writes, or touches the variables: those are the forbidden edits, and ``intent`` rejects a
repair that made one, whatever rule it cites.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..tasks import RepairBounds
from ..tla import modules
from ..tla.cfg import KEYWORDS, Config, masked
from ..tla.sany import SanyResult, unknown_operators
from ..tla.tree import SpecTree
from ..tla.unicode import protected_mask


@dataclass(frozen=True)
class Edit:
    """One edit of a repair: a rule applied to one definition (or to the module's header)."""

    rule: str
    definition: str | None
    location: str
    summary: str
    #: What the intent check must find: ``none`` (no definition's meaning changed), or
    #: ``unchanged-added`` (the definition is its old body and UNCHANGED of the named variables).
    check: str
    variables: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"rule": self.rule, "definition": self.definition, "location": self.location,
                                   "summary": self.summary, "check": self.check}
        if self.variables:
            data["variables"] = list(self.variables)
        return data


@dataclass(frozen=True)
class Fix:
    text: str
    edits: tuple[Edit, ...]
    #: The cfg after the fix; None when the fix leaves it as it was.
    cfg: str | None = None


@dataclass(frozen=True)
class Problem:
    """What the tools said about the spec as it stands."""

    module: str
    sany: SanyResult | None = None
    #: TLC's reason, when SANY accepted the spec and the runtime check failed.
    runtime: str = ""
    tree: SpecTree | None = None
    cfg: str = ""
    #: The values the task gives its constants (``Threads: {"t1", "t2"}``), by the names the
    #: spec declares them under (the task's own, or the mapping's).
    constants: Mapping[str, str] = field(default_factory=dict)
    #: How far the task lets a repair bound a domain TLC cannot enumerate (A10).
    bounds: RepairBounds = field(default_factory=RepairBounds)
    #: Which standard module defines which name, as SANY reads them (A1, A6).
    standard: Mapping[str, frozenset[str]] = field(default_factory=dict)


# -- A16: Python-isms ---------------------------------------------------------------------------

#: Tokens from other languages, and the TLA+ they mean.  ``true``/``false`` only where the spec
#: declares and defines no such name.
PYTHON_ISMS: dict[str, str] = {"!=": "#", "&&": "/\\", "||": "\\/", "True": "TRUE", "true": "TRUE",
                               "False": "FALSE", "false": "FALSE"}
_PYTHON_TOKEN = re.compile(r"!=|&&|\|\||\b(?:[Tt]rue|[Ff]alse)\b")


def python_isms(text: str, problem: Problem) -> Fix | None:
    if problem.sany is None or problem.sany.ok:
        return None
    mask = protected_mask(text)
    named = _declared_or_defined(text)
    hits = [m for m in _PYTHON_TOKEN.finditer(text) if not mask[m.start()] and m.group() not in named]
    if not hits:
        return None
    out, last, touched = [], 0, {}
    for match in hits:
        out += [text[last:match.start()], PYTHON_ISMS[match.group()]]
        last = match.end()
        line = text.count("\n", 0, match.start()) + 1
        where = modules.definition_at(text, line) or "(module)"
        touched.setdefault(where, []).append(f"{match.group()} -> {PYTHON_ISMS[match.group()]} (line {line})")
    out.append(text[last:])
    edits = tuple(Edit("A16", None if where == "(module)" else where, ", ".join(t.split("(")[-1].rstrip(")")
                                                                               for t in found[:3]),
                       f"{len(found)} token(s) from another language read as TLA+: "
                       f"{'; '.join(t.split(' (')[0] for t in found[:4])}", "tokens")
                  for where, found in touched.items())
    return Fix("".join(out), edits)


def _declared_or_defined(text: str) -> set[str]:
    constants, variables = modules.declared(text)
    return {*constants, *variables, *(u.name for u in modules.top_level_units(text))}


# -- A7: the module's name ----------------------------------------------------------------------


def module_name(text: str, problem: Problem) -> Fix | None:
    spans = modules.module_spans(text)
    if not spans or spans[0].name == problem.module:
        return None
    renamed = re.sub(rf"^([ \t]*-{{4,}}[ \t]*MODULE[ \t]+){re.escape(spans[0].name)}(?=[ \t]*-{{4,}})",
                     lambda m: m.group(1) + problem.module, text, count=1, flags=re.MULTILINE)
    if renamed == text:
        return None
    return Fix(renamed, (Edit("A7", None, "line 1", f"module {spans[0].name} renamed {problem.module}, as its "
                                                     "file must be named", "none"),))


# -- A1: a missing EXTENDS ----------------------------------------------------------------------

#: Standard modules, in the order a name found in several is taken from (Integers extends
#: Naturals: ``+`` comes from Naturals unless only Integers has it, as ``Int`` does).
STANDARD_MODULES = ("Naturals", "Integers", "Sequences", "FiniteSets", "TLC", "Bags", "Reals")
#: The other spellings TLA+ gives a standard operator; the modules define each under one.
_SYNONYMS = {"<=": "\\leq", "=<": "\\leq", ">=": "\\geq", "\\circ": "\\o"}
_INFIX = re.compile(r"(?:Could not find declaration or definition of symbol|Couldn't resolve infix operator symbol)"
                    r" [`'](\S+?)'")


def missing_extends(text: str, problem: Problem) -> Fix | None:
    """A1, with the problem's ``standard`` names saying which standard module defines which name."""
    if problem.sany is None or problem.sany.ok:
        return None
    wanted = unknown_operators(problem.sany)
    wanted = list(dict.fromkeys(wanted + [m.group(1) for e in problem.sany.errors
                                          for m in [_INFIX.search(e.message)] if m]))
    have = set(modules.extends(text))
    adds: dict[str, list[str]] = {}
    for name in wanted:
        defined = _SYNONYMS.get(name, name)
        home = next((m for m in STANDARD_MODULES if defined in problem.standard.get(m, ())), None)
        if home is not None and home not in have:
            adds.setdefault(home, []).append(name)
    if not adds:
        return None
    extended = _extend(text, list(adds))
    if extended is None:
        return None
    summary = "; ".join(f"EXTENDS {m} (unknown: {', '.join(names)})" for m, names in adds.items())
    return Fix(extended, (Edit("A1", None, "EXTENDS", summary, "none"),))


_EXTENDS_LINE = re.compile(r"^([ \t]*EXTENDS[ \t]+)", re.MULTILINE)
_HEADER = re.compile(r"^[ \t]*-{4,}[ \t]*MODULE[ \t]+\S+[ \t]*-{4,}[^\n]*\n", re.MULTILINE)


def _extend(text: str, names: list[str]) -> str | None:
    mask = protected_mask(text)
    found = next((m for m in _EXTENDS_LINE.finditer(text) if not mask[m.start(1) + len(m.group(1)) - 1]), None)
    if found is not None:
        return text[:found.end()] + ", ".join(names) + ", " + text[found.end():]
    header = _HEADER.search(text)
    if header is None:
        return None
    return text[:header.end()] + f"EXTENDS {', '.join(names)}\n" + text[header.end():]


# -- A6: a name written in another case ---------------------------------------------------------


def case_mismatch(text: str, problem: Problem) -> Fix | None:
    """A6, for case only: an unknown name that exactly one name in scope (the spec's own, or a
    standard module's) matches but for case is that name, written wrong."""
    if problem.sany is None or problem.sany.ok:
        return None
    known = _declared_or_defined(text) | {n for names in problem.standard.values() for n in names}
    for name in unknown_operators(problem.sany):
        matches = sorted(k for k in known if k.lower() == name.lower() and k != name)
        if len(matches) != 1:
            continue
        fixed, places = _rename(text, name, matches[0])
        if not places:
            continue
        return Fix(fixed, tuple(Edit("A6", None if where == "(module)" else where, f"{count} place(s)", f"{name} -> {matches[0]} (the only name "
                                     "in scope that differs only in case)", "tokens")
                                for where, count in places.items()))
    return None


def _rename(text: str, old: str, new: str) -> tuple[str, dict[str, int]]:
    """Every token ``old`` outside strings and comments renamed ``new``; per definition, how many."""
    mask = protected_mask(text)
    out, last, places = [], 0, {}
    for match in re.finditer(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])", text):
        if mask[match.start()]:
            continue
        out += [text[last:match.start()], new]
        last = match.end()
        where = modules.definition_at(text, text.count("\n", 0, match.start()) + 1) or "(module)"
        places[where] = places.get(where, 0) + 1
    out.append(text[last:])
    return "".join(out), places


# -- A15: a variable an action leaves unassigned ------------------------------------------------

_NOT_SPECIFIED = re.compile(r"not completely specified by (?:action (\w+) of the next-state relation|the next-state "
                            r"action)\. The following variables? (?:is|are) not assigned: ([\w, ]+)\.")


def missing_unchanged(text: str, problem: Problem) -> Fix | None:
    match = _NOT_SPECIFIED.search(problem.runtime)
    tree = problem.tree
    if match is None or tree is None:
        return None
    named = match.group(1)
    if named is None:  # a single action: TLC names none
        actions = [a for a in tree.actions() if not a.startswith("<")]
        named = actions[0] if len(actions) == 1 else "Next"
    variables = tuple(v.strip() for v in match.group(2).split(",") if v.strip())
    action = tree.actions().get(named)
    if named not in tree.definitions or (action is not None and set(variables) & action.writes):
        return None  # a variable the action primes somewhere is a modelling question, not a mechanical one
    rewritten = _and_unchanged(text, named, variables)
    if rewritten is None:
        return None
    listed = ", ".join(variables)
    return Fix(rewritten, (Edit("A15", named, named, f"UNCHANGED <<{listed}>> (TLC: not assigned in {named})",
                                "unchanged-added", variables),))


_DEFINITION_HEAD = r"^{name}\b[^\n=]*?=="


def _and_unchanged(text: str, name: str, variables: tuple[str, ...]) -> str | None:
    """``name``'s body conjoined with UNCHANGED of ``variables``: one more bullet when the body is a
    conjunction list, else ``name == (body) /\\ UNCHANGED v``."""
    mask = protected_mask(text)
    head = next((m for m in re.finditer(_DEFINITION_HEAD.format(name=re.escape(name)), text, re.MULTILINE)
                 if not mask[m.start()]), None)
    if head is None:
        return None
    end = _definition_end(text, head.end())
    body = _without_trailing_comments(text, head.end(), end, mask)
    stop = head.end() + len(body)
    unchanged = f"UNCHANGED {variables[0]}" if len(variables) == 1 else f"UNCHANGED <<{', '.join(variables)}>>"
    bullet = re.match(r"[ \t]*\n([ \t]+)/\\", body)
    if bullet is not None:
        return f"{text[:stop]}\n{bullet.group(1)}/\\ {unchanged}{text[stop:]}"
    return f"{text[:head.end()]} ({body}\n    ) /\\ {unchanged}{text[stop:]}"


def _without_trailing_comments(text: str, start: int, end: int, mask: bytearray) -> str:
    """The definition's text without the blank and comment-only lines that end it (they belong to
    what follows, such as the next definition's comment)."""
    lines = text[start:end].split("\n")
    offset = start + sum(len(line) + 1 for line in lines[:-1])
    while len(lines) > 1:
        last = lines[-1]
        if any(not ch.isspace() and not mask[offset + i] for i, ch in enumerate(last)):
            break
        lines.pop()
        offset -= len(lines[-1]) + 1
    return "\n".join(lines).rstrip()


def _definition_end(text: str, start: int) -> int:
    """Where the definition that starts before ``start`` ends: the next line that starts in
    column 0 (another definition, a keyword, the module's end), outside comments."""
    mask = protected_mask(text)
    at = start
    while True:
        newline = text.find("\n", at)
        if newline < 0:
            return len(text)
        following = newline + 1
        if following < len(text) and text[following] not in " \t\n" and not mask[following]:
            return newline
        at = following


# -- A4: a constant the cfg leaves unbound ------------------------------------------------------

_UNBOUND = re.compile(r"The constant parameter (\w+) is not assigned a value by the configuration file")


def unbound_constant(text: str, problem: Problem) -> Fix | None:
    """The value the task gives a constant the spec declares and the cfg does not bind (a cfg
    the model wrote, missing one): bound as the task binds it, never a value of our choosing."""
    match = _UNBOUND.search(problem.runtime)
    if match is None or match.group(1) not in problem.constants:
        return None
    name, value = match.group(1), problem.constants[match.group(1)]
    cfg = problem.cfg.rstrip("\n") + f"\nCONSTANT {name} = {value}\n"
    return Fix(text, (Edit("A4", None, "cfg", f"CONSTANT {name} = {value} (as the task binds it)", "cfg-only"),), cfg)


# -- A8: the Spec the cfg names is missing ------------------------------------------------------

_NO_SPEC = re.compile(r"The name (\w+) specified in the configuration file is not defined in the specification")


def missing_spec(text: str, problem: Problem) -> Fix | None:
    """``Spec == Init /\\ [][Next]_vars`` when the cfg's SPECIFICATION names a definition the
    spec lacks and it has an Init and a Next.  No fairness is added: it would credit P4's
    liveness templates with a claim the model never made."""
    match = _NO_SPEC.search(problem.runtime)
    tree = problem.tree
    if match is None or tree is None or match.group(1) in tree.definitions:
        return None
    if "Init" not in tree.definitions or "Next" not in tree.definitions or not tree.variables:
        return None
    if not re.search(rf"\bSPECIFICATION\s+{re.escape(match.group(1))}\b", problem.cfg):
        return None
    frame = "vars" if "vars" in tree.definitions else f"<<{', '.join(tree.variables)}>>"
    added = _before_module_end(text, f"{match.group(1)} == Init /\\ [][Next]_{frame}\n")
    if added is None:
        return None
    return Fix(added, (Edit("A8", match.group(1), match.group(1), f"{match.group(1)} == Init /\\ [][Next]_{frame} "
                                                                  "(named by the cfg, not defined; no fairness added)",
                            "spec-added"),))


def _before_module_end(text: str, line: str) -> str | None:
    """``line`` added just before the root module's closing ``====``."""
    mask = protected_mask(text)
    end = next((m for m in re.finditer(r"^={4,}[ \t]*$", text, re.MULTILINE) if not mask[m.start()]), None)
    if end is None:
        return None
    return f"{text[:end.start()]}{line}{text[end.start():]}"


# -- A11: a CHOOSE sentinel ---------------------------------------------------------------------

_UNBOUNDED_CHOOSE = re.compile(r"line (\d+), col \d+ of module (\w+): TLC attempted to evaluate an unbounded CHOOSE")


def choose_sentinel(text: str, problem: Problem) -> Fix | None:
    """``None == CHOOSE v : v \\notin S``, a value outside S that TLC cannot pick: declared a
    constant instead, bound to a model value of its own name (a value unlike every other, which
    is all the definition asked for)."""
    match = _UNBOUNDED_CHOOSE.search(problem.runtime)
    if match is None or match.group(2) != problem.module:
        return None
    name = modules.definition_at(text, int(match.group(1)))
    if name is None:
        return None
    mask = protected_mask(text)
    # The plain sentinel only: a value outside a named set (or a union of named sets), nothing more.
    pattern = (rf"^{re.escape(name)}[ \t]*==[ \t]*CHOOSE[ \t]+(\w+)[ \t]*:[ \t]*\1[ \t]*\\notin[ \t]*"
               r"\w+(?:[ \t]*\\cup[ \t]*\w+)*[ \t]*(?:\\\*[^\n]*)?\n")
    found = next((m for m in re.finditer(pattern, text, re.MULTILINE) if not mask[m.start()]), None)
    if found is None or _definition_end(text, found.start() + len(name)) > found.end():
        return None  # the body goes on past its first line: not the plain sentinel
    fixed = f"{text[:found.start()]}CONSTANT {name}\n{text[found.end():]}"
    cfg = problem.cfg.rstrip("\n") + f"\nCONSTANT {name} = {name}\n"
    return Fix(fixed, (Edit("A11", name, f"line {match.group(1)}", f"{name}, a CHOOSE sentinel TLC cannot evaluate, "
                                                                 f"declared CONSTANT {name} = {name} (a model value)",
                            "sentinel-constant", (name,)),), cfg)


# -- A3 and A2: a name that is no variable, in vars or in an UNCHANGED tuple ---------------------


def stray_name(text: str, problem: Problem) -> Fix | None:
    """SANY cannot resolve a name in ``vars`` (A3: ``vars`` becomes the tuple of the declared
    variables, in declaration order) or in an ``UNCHANGED <<...>>`` tuple (A2: the name is
    dropped from it).  Only a plain tuple of identifiers is rewritten."""
    if problem.sany is None or problem.sany.ok:
        return None
    _, variables = modules.declared(text)
    for error in problem.sany.errors:
        if not error.name or error.line is None or error.name in variables:
            continue
        where = modules.definition_at(text, error.line)
        fixed = _vars_declared(text, variables) if where == "vars" else _dropped_from_unchanged(text, error.line, error.name)
        if fixed is not None and fixed != text:
            if where == "vars":
                return Fix(fixed, (Edit("A3", "vars", f"line {error.line}", f"vars == <<{', '.join(variables)}>> "
                                        f"(the declared variables; {error.name} is none)", "tokens"),))
            return Fix(fixed, (Edit("A2", where, f"line {error.line}", f"{error.name} dropped from UNCHANGED "
                                    "(no variable of that name)", "tokens"),))
    return None


_PLAIN_TUPLE = r"<<[ \t]*\w+(?:[ \t]*,[ \t]*\w+)*[ \t]*>>"


def _vars_declared(text: str, variables: list[str]) -> str | None:
    mask = protected_mask(text)
    found = next((m for m in re.finditer(rf"^vars[ \t]*==[ \t]*({_PLAIN_TUPLE})", text, re.MULTILINE)
                  if not mask[m.start()]), None)
    if found is None or not variables:
        return None
    return f"{text[:found.start(1)]}<<{', '.join(variables)}>>{text[found.end(1):]}"


def _dropped_from_unchanged(text: str, line: int, name: str) -> str | None:
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    match = re.search(rf"UNCHANGED[ \t]*({_PLAIN_TUPLE})", lines[line - 1])
    if match is None:
        return None
    names = [n.strip() for n in match.group(1)[2:-2].split(",")]
    if name not in names or len(names) < 2:
        return None
    kept = [n for n in names if n != name]
    tuple_ = f"<<{', '.join(kept)}>>"
    lines[line - 1] = lines[line - 1][:match.start(1)] + tuple_ + lines[line - 1][match.end(1):]
    return "\n".join(lines)


# -- A9: the cfg's directives ------------------------------------------------------------------

_CFG_UNDEFINED = re.compile(r"The (?:name|invariant|property) (\w+) specified in the configuration file is not defined")


def cfg_name(text: str, problem: Problem) -> Fix | None:
    """The cfg names ``spec`` or ``TypeOk`` and the spec defines exactly one name that differs from
    it in case alone (``Spec``, ``TypeOK``): the cfg names that one.  Before A8, which would
    otherwise add a plain ``spec`` without the fairness the spec's own ``Spec`` has."""
    match = _CFG_UNDEFINED.search(problem.runtime)
    if match is None or problem.tree is None:
        return None
    wrong = match.group(1)
    same = [name for name in problem.tree.definitions if name.lower() == wrong.lower() and name != wrong]
    if len(same) != 1:
        return None
    spans = [m.span() for m in re.finditer(rf"(?<![\w!]){re.escape(wrong)}(?![\w!])", masked(problem.cfg))]
    if not spans:
        return None
    cfg = problem.cfg
    for start, end in reversed(spans):
        cfg = cfg[:start] + same[0] + cfg[end:]
    return Fix(text, (Edit("A9", None, "cfg", f"{wrong} -> {same[0]} in the cfg (the name the spec defines)",
                           "cfg-only"),), cfg)


_NO_INIT = "The configuration file did not specify the initial state predicate"
_NO_NEXT = "No next state actions defined to generate successor states from"


def cfg_behaviour(text: str, problem: Problem) -> Fix | None:
    """A cfg that names no behaviour (no SPECIFICATION, or an INIT without a NEXT): the spec's own
    ``Spec`` when it defines a temporal formula of that name, else its ``Init`` and ``Next``.
    Nothing the spec does not define is named, and no fairness is added."""
    if problem.tree is None or not (_NO_INIT in problem.runtime or _NO_NEXT in problem.runtime):
        return None
    keywords = {section.canonical for section in Config.parse(problem.cfg).sections}
    definitions = problem.tree.definitions
    if "SPECIFICATION" in keywords:
        return None
    if not keywords & {"INIT", "NEXT"} and "Spec" in definitions and definitions["Spec"].level == 3:
        added = ["SPECIFICATION Spec"]
    else:
        missing = [(keyword, name) for keyword, name in (("INIT", "Init"), ("NEXT", "Next")) if keyword not in keywords]
        if not missing or any(name not in definitions or definitions[name].params for _, name in missing):
            return None
        added = [f"{keyword} {name}" for keyword, name in missing]
    cfg = "\n".join([*added, problem.cfg.rstrip("\n")]).rstrip("\n") + "\n"
    return Fix(text, (Edit("A9", None, "cfg", f"{' and '.join(added)} added to the cfg (it lacked "
                                              f"{'a behaviour' if len(added) > 1 or added[0].startswith('SPEC') else 'it'}; "
                                              "no fairness added)", "cfg-only"),), cfg)


_CFG_NOT_KEYWORD = re.compile(r"error in the configuration file at line (\d+) It was expecting a keyword")


def cfg_keyword(text: str, problem: Problem) -> Fix | None:
    """A directive misspelt (``SPECIFICATIONS``, ``Invariant``, ``INVARIENT``): the one keyword it is
    closest to, on the first line that starts with such a word.  A word the spec declares or
    defines (a constant's continuation line) is never taken for a directive."""
    if _CFG_NOT_KEYWORD.search(problem.runtime) is None:
        return None
    known = set(problem.tree.definitions) | set(problem.tree.constants) if problem.tree is not None else set()
    for found in re.finditer(r"^[ \t]*([A-Za-z_]+)\b", masked(problem.cfg), re.MULTILINE):
        word = found.group(1)
        if word in KEYWORDS or word in known:
            continue
        close = [word.upper()] if word.upper() in KEYWORDS else difflib.get_close_matches(word.upper(), KEYWORDS, 1, 0.85)
        if not close:
            continue
        cfg = problem.cfg[:found.start(1)] + close[0] + problem.cfg[found.end(1):]
        return Fix(text, (Edit("A9", None, "cfg", f"{word} -> {close[0]} in the cfg (a misspelt directive)",
                               "cfg-only"),), cfg)
    return None



# -- A10: a domain TLC cannot enumerate ---------------------------------------------------------

_NOT_ENUMERABLE = re.compile(r"line (\d+), col (\d+) of module (\w+): (?:TLC encountered a non-enumerable quantifier "
                             r"bound|Attempted to enumerate \{ x \\in S : p\(x\) \} when S: )")


def infinite_domain(text: str, problem: Problem) -> Fix | None:
    """``\\E n \\in Nat``, ``{x \\in Int : ...}`` or ``\\E s \\in Seq(S)`` where TLC must enumerate it:
    the one domain TLC names, bounded as the task bounds it (``0..3``, ``-3..3``, the sequences
    of S up to length 2), nothing else.  Only where the task declares bounds: a bound of our
    choosing would decide what the spec can do."""
    match = _NOT_ENUMERABLE.search(problem.runtime)
    if match is None or match.group(3) != problem.module:
        return None
    start = _offset(text, int(match.group(1)), int(match.group(2)))
    if start is None:
        return None
    if text[start] == "{":  # a set filter: TLC points at its brace, the domain follows \in
        after = re.compile(r"\{[ \t\n]*\w+[ \t\n]*\\in[ \t\n]*").match(text, start)
        if after is None:
            return None
        start = after.end()
    bounded = _bounded(text, start, problem.bounds)
    if bounded is None:
        return None
    end, domain, why = bounded
    line = match.group(1)
    where = modules.definition_at(text, int(line))
    return Fix(f"{text[:start]}{domain}{text[end:]}",
               (Edit("A10", where, f"line {line}", f"{text[start:end]} read as {domain} ({why}; the task's bound)",
                     "domain-bounded"),))


def _offset(text: str, line: int, col: int) -> int | None:
    lines = text.split("\n")
    if not 0 < line <= len(lines) or not 0 < col <= len(lines[line - 1]):
        return None
    return sum(len(l) + 1 for l in lines[:line - 1]) + col - 1


def _bounded(text: str, start: int, bounds: RepairBounds) -> tuple[int, str, str] | None:
    """Where the infinite domain at ``start`` ends, what it is read as, and why."""
    word = re.compile(r"(Nat|Int|Seq)\b").match(text, start)
    if word is None or protected_mask(text)[start]:
        return None
    if word.group(1) in ("Nat", "Int"):
        low = "0" if word.group(1) == "Nat" else f"-{bounds.nat}"
        return (word.end(), f"{low}..{bounds.nat}", f"{word.group(1)} has no end") if bounds.nat else None
    close = _closing_paren(text, word.end())
    if close is None or not bounds.seq:
        return None
    length = next((name for name in ("len", "len1", "len2", "seqLen") if not re.search(rf"\b{name}\b", text)), None)
    if length is None:
        return None
    return (close + 1, f"UNION {{[1..{length} -> {text[word.end() + 1:close]}] : {length} \\in 0..{bounds.seq}}}",
            "Seq(S) has sequences of every length")


def _closing_paren(text: str, at: int) -> int | None:
    """The parenthesis that closes the one at ``at``, outside strings and comments."""
    if at >= len(text) or text[at] != "(":
        return None
    mask = protected_mask(text)
    depth = 0
    for index in range(at, len(text)):
        if mask[index]:
            continue
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return None


# -- The registry -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One mechanical repair: the original guide's ids of the edits it makes, which tool's
    message it answers (``sany``: SANY rejected the spec; ``tlc``: SANY accepted it and TLC
    did not run it), and the function, which returns None unless the message is its own."""

    ids: tuple[str, ...]
    tool: str
    apply: Callable[[str, Problem], Fix | None]


#: Every rule, in the order they are tried within a tool's stage (the first that applies wins):
#: adding a rule is a function above and a row here (and its line in docs/repair.md).
RULES: tuple[Rule, ...] = (
    Rule(("A7",), "sany", module_name),
    Rule(("A16",), "sany", python_isms),
    Rule(("A1",), "sany", missing_extends),
    Rule(("A6",), "sany", case_mismatch),
    Rule(("A2", "A3"), "sany", stray_name),
    Rule(("A15",), "tlc", missing_unchanged),
    # The cfg's own words first: a misnamed Spec is named right (A9), not added plain (A8).
    Rule(("A9",), "tlc", cfg_keyword),
    Rule(("A9",), "tlc", cfg_name),
    Rule(("A9",), "tlc", cfg_behaviour),
    Rule(("A4",), "tlc", unbound_constant),
    Rule(("A8",), "tlc", missing_spec),
    Rule(("A11",), "tlc", choose_sentinel),
    Rule(("A10",), "tlc", infinite_domain),
)


def first_fix(text: str, problem: Problem, tool: str) -> Fix | None:
    """The first fix a rule of the stage gives, if any."""
    return next((fix for rule in RULES if rule.tool == tool for fix in [rule.apply(text, problem)] if fix is not None),
                None)
