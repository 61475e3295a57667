"""Shared test fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# litellm reads this when it is first imported: use its bundled model cost map instead of
# fetching one over the network. Set here so it is in place before any test imports litellm.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from llm_server import LocalModelServer  # noqa: E402  (tests/ is on sys.path for conftest and tests)

from pytest_sysmobench.settings import CACHE_ENV  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def shared_verdicts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One SANY/TLC verdict cache for the whole test run, every xdist worker and every pytest
    session the tests start: a verdict that several test files need (a reference cell, a
    mutant's P1 and P2 before its P3 is checked on fresh traces) is computed once, by real
    tools. Tests that must see tools run, or a cold cache, use a cache of their own."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "shared-verdicts"
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before


@pytest.fixture
def model_server() -> Iterator[LocalModelServer]:
    """A running OpenAI-compatible server on 127.0.0.1; ``model_server.base_url`` is its ``/v1`` URL."""
    with LocalModelServer() as server:
        yield server
