"""Close matches for a misspelt name: a task, a mutant, a built-in spec source."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def close_matches(name: str, known: Sequence[str], n: int = 3) -> list[str]:
    """The known names a misspelt one was probably meant to be, closest first."""
    return difflib.get_close_matches(name, known, n=n, cutoff=0.75)


def did_you_mean(name: str, known: Sequence[str], shown: int = 12) -> str:
    """Close matches of a misspelt name, else a short sample of the names there are (a list of
    a hundred names helps nobody find the one they meant)."""
    close = close_matches(name, known)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    more = f", ... ({len(known)} in all)" if len(known) > shown else ""
    return f"known: {', '.join(known[:shown])}{more}"
