"""Where specs come from: ``reference`` (the task's expert spec), ``replay:DIR`` (specs
written elsewhere, found at ``DIR/<task>/<Module>.tla``), ``mutant:NAME`` (a seeded bug), and
any other name: a model asked through litellm.  Every source yields the same :class:`Candidate`.
"""

from __future__ import annotations

from ._base import Candidate, SpecSource, UnknownModel
from ._generated import AnswerStore, GeneratedSource
from ._sources import MutantSource, ReferenceSource, ReplaySource, resolve_source

__all__ = [
    "AnswerStore",
    "Candidate",
    "GeneratedSource",
    "MutantSource",
    "ReferenceSource",
    "ReplaySource",
    "SpecSource",
    "UnknownModel",
    "resolve_source",
]
