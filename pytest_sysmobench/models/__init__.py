"""Where specs come from: ``reference`` (the task's expert spec), ``replay:DIR`` (specs
written elsewhere, found at ``DIR/<task>/<Module>.tla``).  A model answer from an API will be
one more source; every source yields the same :class:`Candidate`.
"""

from __future__ import annotations

from ._base import Candidate, SpecSource, UnknownModel
from ._sources import MutantSource, ReferenceSource, ReplaySource, resolve_source

__all__ = ["Candidate", "MutantSource", "ReferenceSource", "ReplaySource", "SpecSource", "UnknownModel", "resolve_source"]
