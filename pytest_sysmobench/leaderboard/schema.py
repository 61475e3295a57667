"""The published schema of ``leaderboard.json`` (``schemas/leaderboard.schema.json``).

A run can be told to hold every board it writes to the schema (``SYSMOBENCH_SCHEMA_CHECK``
names the schema file): the project's tests do, so that no board the code writes drifts from
what dashboards are promised.  Users never pay for it: the check is off unless asked for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: The schema file every written board is checked against, when set.
SCHEMA_CHECK_ENV = "SYSMOBENCH_SCHEMA_CHECK"


class SchemaViolation(ValueError):
    """A board the code wrote does not match the published schema: a defect of ours."""


def problems(board: Any, schema_file: Path) -> list[str]:
    """Where ``board`` departs from the schema, one line each (at most ten)."""
    import jsonschema  # only where asked for: a test dependency

    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    found = sorted(validator.iter_errors(board), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message[:300]}" for e in found[:10]]


def check_written(board: Any) -> None:
    """Raises SchemaViolation when the run was asked to check and ``board`` does not match."""
    given = os.environ.get(SCHEMA_CHECK_ENV)
    if not given:
        return
    found = problems(board, Path(given))
    if found:
        raise SchemaViolation(f"the board does not match {given}: " + "; ".join(found))
