"""Named presets of the benchmark's options (``--sysmobench-profile pr|nightly|release``).

A profile is a list of command-line options inserted before the user's own, so that an option
given on the command line wins over the profile's.  Three are built in; a project adds or
overrides profiles in its ini file::

    [pytest]
    sysmobench_profiles =
        smoke: --sysmobench-samples 1 -m "p1 or p2"
        release: --sysmobench-samples 8 --sysmobench-gate-rule significance

The profile's name is recorded on the board, beside the fingerprint of what decides verdicts.
"""

from __future__ import annotations

import shlex
from typing import Iterable, Sequence

from .hints import did_you_mean

BUILT_IN: dict[str, tuple[str, ...]] = {
    # A pull request: one sample a cell, every cell phase held to the baseline's tolerance.
    "pr": ("--sysmobench-samples", "1", "--sysmobench-gate-rule", "tolerance"),
    # Every night: three samples a cell; a drop fails only beyond the model's 95% interval.
    "nightly": ("--sysmobench-samples", "3", "--sysmobench-gate-rule", "interval"),
    # A release: five samples a cell, the strict composite, a drop fails only if significant.
    "release": ("--sysmobench-samples", "5", "--sysmobench-gate", "composite", "--sysmobench-gate-rule",
                "significance"),
}
OPTION = "--sysmobench-profile"


class ProfileError(ValueError):
    """An unknown profile, or an ini line that is no ``name: options``."""


def defined(lines: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The built-in profiles, and those of the ini's ``sysmobench_profiles`` lines over them."""
    found = dict(BUILT_IN)
    for line in lines:
        if not line.strip():
            continue
        name, sep, rest = line.partition(":")
        if not sep or not name.strip() or " " in name.strip():
            raise ProfileError(f"sysmobench_profiles: {line.strip()!r} is not 'name: options'")
        try:
            found[name.strip()] = tuple(shlex.split(rest))
        except ValueError as exc:
            raise ProfileError(f"sysmobench_profiles: {name.strip()}: {exc}") from exc
    return found


def chosen(args: Sequence[str]) -> str | None:
    """The profile the command line names (the last one, as for any option)."""
    name = None
    for i, arg in enumerate(args):
        if arg == OPTION and i + 1 < len(args):
            name = args[i + 1]
        elif arg.startswith(OPTION + "="):
            name = arg.split("=", 1)[1]
    return name


def expanded(args: list[str], profiles: dict[str, tuple[str, ...]]) -> list[str]:
    """The profile's options, then the command line as given (which therefore wins)."""
    name = chosen(args)
    if name is None:
        return args
    if name not in profiles:
        raise ProfileError(f"{OPTION} {name}: no such profile; {did_you_mean(name, sorted(profiles))} "
                           f"(defined: {', '.join(sorted(profiles))})")
    return [*profiles[name], *args]
