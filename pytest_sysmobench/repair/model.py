"""Model repair: for what no rule of a program can fix, a model proposes edits, each tied to an
allowed rule and to the definition it changes, and the program applies them.

The model never writes the spec: it answers with exact replacements (``old`` text, ``new``
text) inside named definitions, and an edit that does not match exactly once, or lies outside
the definition it names, or cites a rule the repair does not allow, is not applied.  What the
edits did is then judged like any repair: the benchmark's own P1 and P2, then the intent check on
SANY's reading (same variables, constants, actions and writes; only the definitions the model
named may change, and each is marked ``unverified``: nothing proves the model kept its meaning).
Answers are stored like every model answer, and their cost is counted apart from generation's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..answers import AnswerStore
from ..evaluator import EvaluatorUse, json_answer
from ..llm import Client, GenerationError
from ..tasks import Task
from ..tla import modules
from .rules import Edit, Fix

STAGE = "repair"
#: How many times one repair may ask the model (each answer is one round of edits).
MODEL_ROUNDS = 2
#: The allowed edits a model may make, in the original guide's ids (the mechanical ones too: a
#: model may see what a rule of ours does not).
MODEL_RULES: dict[str, str] = {
    "A1": "add a standard module to EXTENDS",
    "A2": "complete or correct an UNCHANGED tuple",
    "A3": "make vars the tuple of the declared variables",
    "A5": "widen an Init that leaves a variable without a value, giving it the value the system starts with",
    "A6": "fix a misspelt name",
    "A12": "rewrite an expression TLC cannot evaluate as an equivalent one it can",
    "A13": "rename a definition that clashes with a standard module's name, and its uses",
    "A14": "rename a bound variable that shadows another name",
    "A16": "rewrite broken syntax, keeping every guard and what every action writes",
    "A17": "replace a construct TLC cannot run by its runnable equivalent",
}
FORBIDDEN = ("F1 add or remove an action", "F2 change what a guard means", "F3 change what an action writes",
             "F4 add, remove or rename a variable or constant", "F5 add, weaken or remove an invariant or property",
             "F6 change fairness", "F7 shrink a constant's set")
#: At most this many edits are taken from one answer, and so many characters of each side.
MAX_EDITS = 12
MAX_EDIT_CHARS = 4000


class RepairModelError(RuntimeError):
    """The repair model could not be asked (its endpoint did not answer)."""


@dataclass(frozen=True)
class ModelEdit:
    rule: str
    definition: str | None
    old: str
    new: str
    summary: str


def repair_prompt(task: Task, spec: str, cfg: str, failure: str) -> str:
    allowed = "\n".join(f"- {rule}: {what}" for rule, what in MODEL_RULES.items())
    return f"""You repair a TLA+ specification of {task.name} that the TLA+ tools reject, without changing what it models.

## Specification (module {task.module})

```tla
{spec.strip()}
```

## Its TLC configuration

```
{cfg.strip()}
```

## What the tools said

{failure.strip()}

## Allowed edits (cite the id)

{allowed}

## Forbidden (a repair that does any of these is refused, whatever it cites)

{chr(10).join(f"- {f}" for f in FORBIDDEN)}

Answer with one JSON object and nothing else:
{{"edits": [{{"rule": "<allowed id>", "definition": "<the definition the edit is inside>",
             "old": "<exact text of the specification to replace, found once>",
             "new": "<its replacement>", "summary": "<what and why, one line>"}}]}}
Make the fewest edits that let the tools accept the specification; copy "old" exactly.
"""


class Mender:
    """Asks one model, through the shared answer store, for edits."""

    def __init__(self, name: str, client: Client, store: AnswerStore) -> None:
        self.name = name
        self.client = client
        self.store = store

    def propose(self, task: Task, spec: str, cfg: str, failure: str, use: EvaluatorUse) -> list[ModelEdit] | str:
        """The edits the model proposes, or why its answer has none usable."""
        try:
            answer, cached = self.store.answer(self.client, repair_prompt(task, spec, cfg, failure), 0, STAGE,
                                               json_mode=True)
        except GenerationError as exc:
            raise RepairModelError(f"repair model {self.name} failed: {exc}") from exc
        use.add(answer, cached)
        data = json_answer(answer.text)
        items = data.get("edits") if isinstance(data, dict) else None
        if not isinstance(items, list) or not items:
            return f"the repair model {self.name} answered no list of edits: {answer.text.strip()[:200]!r}"
        edits = []
        for item in items[:MAX_EDITS]:
            if not isinstance(item, dict):
                continue
            fields = {k: item.get(k) for k in ("rule", "definition", "old", "new", "summary")}
            if not all(isinstance(fields[k], str) for k in ("rule", "old", "new")):
                continue
            edits.append(ModelEdit(str(fields["rule"]).strip().upper(), _text(fields["definition"]) or None,
                                   str(fields["old"])[:MAX_EDIT_CHARS], str(fields["new"])[:MAX_EDIT_CHARS],
                                   _text(fields["summary"])[:200]))
        return edits or f"the repair model {self.name} answered no edit with a rule, an old and a new text"


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def apply(text: str, edits: list[ModelEdit]) -> Fix | str:
    """The spec with every edit applied, or why one cannot be: each must cite an allowed rule,
    match exactly once, and lie inside the definition it names."""
    applied: list[Edit] = []
    for edit in edits:
        if edit.rule not in MODEL_RULES:
            return f"an edit cites {edit.rule!r}, which is no allowed rule ({', '.join(MODEL_RULES)})"
        if not edit.old or text.count(edit.old) != 1:
            return (f"an edit's old text ({edit.old[:60]!r}) is found {text.count(edit.old) if edit.old else 0} "
                    "times in the spec, not once")
        start = text.index(edit.old)
        line = text.count("\n", 0, start) + 1
        where = modules.definition_at(text, line)
        if edit.definition is not None and where != edit.definition:
            return f"an edit said to be in {edit.definition} lies in {where or 'no definition'} (line {line})"
        text = text[:start] + edit.new + text[start + len(edit.old):]
        applied.append(Edit(edit.rule, where, f"line {line}", edit.summary or f"{edit.rule} by the model", "model"))
    return Fix(text, tuple(applied))
