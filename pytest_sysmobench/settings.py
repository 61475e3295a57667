"""What a user names on the command line or in a file, and its default: read by the pytest
plugin before (and without) loading the benchmark, and by the modules that act on it."""

from __future__ import annotations

#: How models are asked for a spec (``--sysmobench-method``).
METHODS: tuple[str, ...] = ("direct", "translate", "traces", "agent_based", "feedback")
DEFAULT_METHOD = "direct"
#: ``agent_based``: how many times a spec P1 or P2 rejects is sent back with the tools' errors;
#: ``feedback``: also with what P3 and P4 find (``--sysmobench-corrections``).
DEFAULT_CORRECTIONS = 3
#: How many requests a sweep keeps in flight per model (``--sysmobench-max-connections``; a
#: model's ``max_connections`` overrides it; 0: each cell asks when it runs).
DEFAULT_MAX_CONNECTIONS = 8
#: Where the leaderboard, the run folders and the cache go, under the rootdir.
DEFAULT_OUTPUT = ".sysmobench"
#: The SANY/TLC verdict cache's folder, when it is not ``<output>/cache``: one cache for several
#: output folders, or one kept between CI runs (verdicts are keyed by everything that decides
#: them, so a shared cache never answers for different inputs).
CACHE_ENV = "SYSMOBENCH_CACHE"
#: The model configuration: this file in the rootdir, or the file this variable names.
CONFIG_FILE = "sysmobench-models.yaml"
CONFIG_ENV = "SYSMOBENCH_MODEL_CONFIG"
#: How a spec that P1 or P2 leaves unusable is repaired for the repaired composite
#: (``--sysmobench-repair``): not at all, by the allow-listed mechanical rules, or by those and
#: then a model (``mechanical+MODEL``) for what no rule fixes.
REPAIR_MODES: tuple[str, ...] = ("none", "mechanical", "mechanical+MODEL")
DEFAULT_REPAIR = "mechanical"


def repair_model(mode: str) -> str | None:
    """The model a repair mode names (``mechanical+sonnet``: ``sonnet``), or None."""
    if not mode.startswith("mechanical+"):
        return None
    return mode.split("+", 1)[1].strip() or None


def repair_mode_problem(mode: str) -> str | None:
    """Why a --sysmobench-repair value is none of the modes, or None."""
    if mode in ("none", "mechanical") or repair_model(mode):
        return None
    return f"--sysmobench-repair {mode!r}: expected one of none, mechanical, mechanical+MODEL (a model's name)"
