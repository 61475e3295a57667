"""Where specs come from: ``reference`` (the task's expert spec), ``replay:DIR`` (specs
written elsewhere, found at ``DIR/<task>/<Module>.tla``), ``mutant:NAME`` (a seeded bug),
``agent:NAME`` (a coding agent run in a sandbox), ``floor:noop`` and ``floor:loose`` (what a
spec that does nothing, or allows too much, scores), and any other name: a model asked through
litellm.  Every source yields the same :class:`Candidate`.
"""

from __future__ import annotations

from ._agent import AgentSource
from ._builtin import MutantSource, ReferenceSource, ReplaySource, resolve_source
from ._floor import FloorSource
from ._candidate import Candidate, IdentityCheck, SpecSource, UnknownModel, identity_mapping, with_spec
from ._generated import GeneratedSource

__all__ = [
    "AgentSource",
    "Candidate",
    "FloorSource",
    "GeneratedSource",
    "IdentityCheck",
    "MutantSource",
    "ReferenceSource",
    "ReplaySource",
    "SpecSource",
    "UnknownModel",
    "identity_mapping",
    "resolve_source",
    "with_spec",
]
