"""Named presets of the options: built in and from the ini, the command line winning over them,
an unknown one a usage error with close matches, and the profile recorded on the board."""

from __future__ import annotations

import json

import pytest
from projects import benchmark_project

from pytest_sysmobench.profiles import BUILT_IN, ProfileError, defined, expanded


def test_a_profile_expands_before_the_command_line_which_wins() -> None:
    args = ["benchmarks", "--sysmobench-profile", "nightly", "--sysmobench-samples", "2"]
    assert expanded(args, defined([])) == [*BUILT_IN["nightly"], *args]
    mine = defined(["smoke: --sysmobench-samples 1 -m 'p1 or p2'", "", "release: --sysmobench-samples 8"])
    assert mine["smoke"] == ("--sysmobench-samples", "1", "-m", "p1 or p2") and mine["release"][-1] == "8"
    assert expanded(["x"], mine) == ["x"]
    with pytest.raises(ProfileError, match="did you mean 'nightly'"):
        expanded(["--sysmobench-profile=nigthly"], mine)
    with pytest.raises(ProfileError, match="is not 'name: options'"):
        defined(["just words"])


def _items(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if "::test_phase[" in line]


def test_a_run_takes_its_profiles_options_and_records_its_name(pytester: pytest.Pytester) -> None:
    benchmark_project(pytester, "spin")
    pytester.makeini("[pytest]\nsysmobench_profiles =\n    twice: --sysmobench-samples 2\n")
    nightly = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--collect-only", "-q",
                                            "--sysmobench-profile", "nightly")
    assert len(_items(nightly)) == 3 * 4, nightly.stdout.str()[-1500:]  # three samples of spin, four phases
    overridden = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--collect-only", "-q",
                                               "--sysmobench-profile", "nightly", "--sysmobench-samples", "1")
    assert len(_items(overridden)) == 4
    mine = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-m", "p1",
                                         "--sysmobench-profile", "twice")
    mine.assert_outcomes(passed=2, deselected=6)
    board = json.loads((pytester.path / ".sysmobench" / "leaderboard.json").read_text())
    assert board["provenance"]["profile"] == "twice" and board["provenance"]["method"] == "direct"
    assert set(board["provenance"]["tasks_sha256"]) == {"spin"}
    unknown = pytester.runpytest_subprocess("benchmarks", "--sysmobench-profile", "nigthly")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR and "did you mean 'nightly'" in unknown.stderr.str()
