"""The benchmark cells as pytest items: ``pytest benchmarks [-k spin] [-m p4] [-n 2]``.

Thin on purpose: the plugin parametrizes ``sysmobench_phase`` with every
task x model x sample x phase and evaluates it; this test only turns the result into a
pytest outcome.
"""

from __future__ import annotations

from pytest_sysmobench import PhaseResult, check_phase


def test_phase(sysmobench_phase: PhaseResult) -> None:
    check_phase(sysmobench_phase)
