"""The published schema of the board: valid JSON Schema, in step with the code's statuses,
causes and phases, met by the committed baseline and by every board the tests write (the
suite runs with ``SYSMOBENCH_SCHEMA_CHECK`` set, see conftest), and refusing what is no board."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_sysmobench.leaderboard import board as report
from pytest_sysmobench.leaderboard.schema import SCHEMA_CHECK_ENV, SchemaViolation, problems
from pytest_sysmobench.leaderboard.records import SCHEMA as SCHEMA_VERSION
from pytest_sysmobench.record import KINDS
from pytest_sysmobench.scoring import PHASES, Cause, Charge, Status
from pytest_sysmobench.sources import MutantSource, ReferenceSource, ReplaySource

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schemas" / "leaderboard.schema.json"


def _schema() -> dict:
    return json.loads(SCHEMA.read_text())


def test_the_schema_is_json_schema_and_names_what_the_code_writes() -> None:
    schema = _schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    phase = schema["$defs"]["phase"]["properties"]
    assert phase["status"]["enum"] == [s.value for s in Status]
    assert phase["cause"]["enum"] == [c.value for c in Cause] + [None]
    assert phase["charged_to"]["enum"] == [c.value for c in Charge]
    assert schema["properties"]["weights"]["propertyNames"]["enum"] == list(PHASES)
    assert schema["properties"]["schema"]["const"] == SCHEMA_VERSION
    assert schema["$defs"]["cell"]["properties"]["kind"]["enum"] == list(KINDS)
    assert {source.kind for source in (ReferenceSource(), MutantSource("m"), ReplaySource(Path("x")))} <= set(KINDS)


def test_the_committed_baseline_and_a_run_board_meet_the_schema(tmp_path: Path) -> None:
    assert problems(json.loads((ROOT / "data" / "baselines" / "reference.json").read_text()), SCHEMA) == []
    assert Path(__import__("os").environ[SCHEMA_CHECK_ENV]) == SCHEMA  # every board the suite writes is checked


def test_what_is_no_board_is_refused_with_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads((ROOT / "data" / "baselines" / "reference.json").read_text())
    data["cells"][1]["phases"]["syntax"]["status"] = "great"
    data["cells"][1]["composite"] = 1.5
    data["surprise"] = True
    found = problems(data, SCHEMA)
    assert any("$.cells[1].phases.syntax.status" in p for p in found), found
    assert any("$.cells[1].composite" in p for p in found), found
    assert any("surprise" in p for p in found), found
    board = report.as_board(json.loads((ROOT / "data" / "baselines" / "reference.json").read_text()))
    broken = board.__class__(**{**board.__dict__, "schema": 1})
    monkeypatch.setenv(SCHEMA_CHECK_ENV, str(SCHEMA))
    with pytest.raises(SchemaViolation, match=r"\$.schema"):
        report.write(broken, tmp_path / "out")
    assert not (tmp_path / "out" / "leaderboard.json").exists()
