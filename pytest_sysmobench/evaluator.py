"""An evaluator model: relates a spec that does not speak the canonical vocabulary to the task.

P3 needs a mapping from the task's canonical state to the spec's variables; P4 needs the
task's invariant templates restated over the spec's own names.  When a spec declares the
canonical names (identity mapping) or a mapping file comes with it, neither is needed; when
not, an evaluator model is asked, its answer is cached by content hash (the prompt holds the
whole spec, so the cache is per spec and evaluator), and nothing it says is trusted unchecked:
mappings are validated against the vocabulary, every invariant is parsed, screened (safety
ones may not prime a variable or use temporal operators; liveness ones must be temporal) and
SANY-checked on its own against the spec.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .llm import Answer, Client, GenerationError
from .mapping import Mapping, MappingError, mapping_from_data
from .answers import AnswerStore
from .tasks import InvariantTemplate, Task, TaskError
from .tla import modules

MAPPING_STAGE = "evaluator-mapping"
INVARIANT_STAGE = "evaluator-invariants"
_FENCE = re.compile(r"^\s*```[A-Za-z]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
_DEFINITION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*==\s*(.+)$", re.DOTALL)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_TEMPORAL = re.compile(r"\[\]|<>|~>|\bENABLED\b|\bWF_|\bSF_|\\EE|\\AA")
_PRIME = re.compile(r"[A-Za-z0-9_)\]}]\s*'")
_CASE_ARM = re.compile(r"([A-Za-z0-9_)\]}\"]\s*)\[\]\s*(?=OTHER\b|[^\n]*?->)")


class EvaluatorError(RuntimeError):
    """The evaluator model could not be asked (``unanswered``: the benchmark's loss, no score), or
    its answer has nothing usable in it (the evaluator's proposal failed: scored, like a spec's
    own mapping that does not fit)."""

    def __init__(self, message: str, unanswered: bool = False) -> None:
        super().__init__(message)
        self.unanswered = unanswered


def json_answer(text: str) -> Any:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if start >= 0 and end > start:
            try:
                return json.loads(body[start : end + 1])
            except json.JSONDecodeError:
                pass
    return None


@dataclass(frozen=True)
class Translation:
    """One template restated over the spec's names, or why there is no usable one."""

    name: str
    kind: str
    definition: str | None
    problem: str | None = None


@dataclass
class EvaluatorUse:
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    #: False once an answer came from a model without a known price (its cost is then a lower bound).
    cost_complete: bool = True
    extras: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "extras"} | self.extras

    def add(self, answer: Answer, cached: bool) -> None:
        """One answer's share: a request sent, or one answered from the store."""
        self.requests += 0 if cached else 1
        self.cached += 1 if cached else 0
        self.prompt_tokens += answer.prompt_tokens
        self.completion_tokens += answer.completion_tokens
        self.cost_usd += answer.cost_usd or 0.0
        self.cost_complete = self.cost_complete and answer.cost_usd is not None


def screen(template: InvariantTemplate, expression: str) -> str | None:
    """Why a translated expression is not acceptable for its template's kind, or None."""
    bare = _STRING.sub('""', modules.strip_comments(expression))
    if "CASE" in bare:
        bare = _CASE_ARM.sub(lambda m: m.group(1) + " ", bare)  # CASE separates its arms with [], which is not "always"
    temporal = bool(_TEMPORAL.search(bare))
    if template.kind == "safety":
        if _PRIME.search(bare):
            return "a safety invariant may not prime a variable"
        if temporal:
            return "a safety invariant may not use temporal operators"
    elif not re.search(r"<>|~>", bare):
        return "a liveness property must use <> or ~>"
    return None


def _templates_text(task: Task) -> str:
    parts = []
    for t in task.templates:
        parts.append(f"### {t.name} ({t.kind.upper()})\n{t.meaning.strip()}\nTLA+ over the canonical vocabulary:\n{t.tla.strip()}")
    return "\n\n".join(parts)


def mapping_prompt(task: Task, spec: str) -> str:
    return f"""You relate a TLA+ specification to the canonical vocabulary in which an evaluator speaks.

## Canonical vocabulary

{task.vocabulary.render()}

## Specification

```tla
{spec.strip()}
```

Answer with one JSON object and nothing else (a version-2 mapping):
{{"version": 2,
 "constants": {{"<canonical constant>": "<TLA+ expression over the spec, usually a spec constant>"}},
 "variables": {{"<canonical variable>": {{"var": "<spec variable>", "shape": "scalar" or "function",
                "values": {{"<canonical value as TLA+>": "<spec value as TLA+>"}}}}
                or {{"expr": "<TLA+ expression over the spec's variables giving the canonical value>"}}}},
 "state": {{"<spec variable>": "<TLA+ expression of the canonical state>"
            or {{"in": "<TLA+ set of candidate values, may depend on the canonical state>"}}}},
 "actions": {{"<canonical action>": "<spec action with the same parameters>"
              or {{"action": "<spec action>", "args": ["<TLA+ expression of the canonical parameters>", ...],
                  "exists": {{"<name>": "<TLA+ set>"}}, "before": 0, "after": 0}}
              or {{"stutter": "<condition over the spec's variables where it takes the action as a step that changes nothing>"}}
              or [<several of those: the canonical step may be any of them>]}},
 "internal": [{{"action": "<spec action that may take unobserved steps>", "args": [...], "exists": {{...}}}}],
 "unmodelled": ["<canonical variable the spec has no counterpart for>", "<variable>.<record field its values lack>"],
 "absent": ["<canonical action the spec does not have>"]}}

Rules:
- Give every canonical variable under "variables" (or "unmodelled") and every canonical action
  under "actions" (or "absent", also when the spec has an operator of that name that is something else).
- Use "var" when one spec variable holds the canonical variable (with "values" when the spec
  encodes values differently); use "expr" when the canonical value must be computed.
- Under "state", give each spec variable that is not simply a "var" above as a function of the
  canonical state, which expressions see as the record `canon` (e.g. `canon.log[i]`); a spec
  variable with no canonical counterpart may be left out (it starts at its initial value) or
  given candidate values with "in".
- In "args" and "exists", the canonical action's parameters are bound by their names and the
  canonical state before the step is `canon`. "before"/"after" (at most {task.conformance.max_internal_steps})
  allow unobserved spec steps of the "internal" actions around the observed one. A call that fails
  and changes nothing, where the spec's threads wait instead, is a "stutter" with the condition
  under which it fails.
- Every expression is a single TLA+ expression in ASCII: no comments, no `==` outside LET ... IN.
"""


def invariants_prompt(task: Task, spec: str) -> str:
    names = ", ".join(t.name for t in task.templates)
    return f"""You restate properties of a system over the names of one TLA+ specification of it.

## Specification

```tla
{spec.strip()}
```

## Properties (written over a canonical vocabulary the specification may not use)

{_templates_text(task)}

## Canonical vocabulary

{task.vocabulary.render()}

Rewrite each property over the specification's own constants, variables and definitions, keeping
its exact name ({names}). SAFETY properties must be state predicates: no primed variables, no
temporal operators, no actions. LIVENESS properties must use <> or ~>. Answer with one JSON object
and nothing else: {{"invariants": ["Name == <TLA+ expression>", ...]}}.
"""


class Evaluator:
    """Asks one model, through the shared answer store, for mappings and invariant translations."""

    def __init__(self, name: str, client: Client, store: AnswerStore) -> None:
        self.name = name
        self.client = client
        self.store = store

    def _ask(self, prompt: str, stage: str, use: EvaluatorUse) -> Any:
        try:
            answer, cached = self.store.answer(self.client, prompt, 0, stage, json_mode=True)
        except GenerationError as exc:
            raise EvaluatorError(f"evaluator {self.name} failed: {exc}", unanswered=True) from exc
        use.add(answer, cached)
        data = json_answer(answer.text)
        if data is None:
            raise EvaluatorError(f"evaluator {self.name} answered no JSON object: {answer.text.strip()[:200]!r}")
        return data

    def mapping(self, task: Task, spec: str) -> tuple[Mapping, EvaluatorUse]:
        use = EvaluatorUse()
        data = self._ask(mapping_prompt(task, spec), MAPPING_STAGE, use)
        try:
            mapping = mapping_from_data(data, task, f"mapping from evaluator {self.name}")
        except (MappingError, TaskError) as exc:
            raise EvaluatorError(f"the evaluator's mapping is unusable: {exc}") from exc
        return mapping, use

    def invariants(self, task: Task, spec: str) -> tuple[list[Translation], EvaluatorUse]:
        use = EvaluatorUse()
        data = self._ask(invariants_prompt(task, spec), INVARIANT_STAGE, use)
        items = data.get("invariants") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise EvaluatorError(f"evaluator {self.name} answered no 'invariants' list")
        found: dict[str, str] = {}
        for item in items:
            match = _DEFINITION.match(str(item))
            if match:
                found.setdefault(match.group(1).lower(), match.group(2).strip())
        translations = []
        for template in task.templates:
            expression = found.get(template.name.lower())
            if expression is None:
                translations.append(Translation(template.name, template.kind, None, "no translation given"))
                continue
            problem = screen(template, expression)
            translations.append(Translation(template.name, template.kind, None if problem else expression, problem))
        return translations, use
