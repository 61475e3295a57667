"""Shared test fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# litellm reads this when it is first imported: use its bundled model cost map instead of
# fetching one over the network. Set here so it is in place before any test imports litellm.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from llm_server import LocalModelServer  # noqa: E402  (tests/ is on sys.path for conftest and tests)


@pytest.fixture
def model_server() -> Iterator[LocalModelServer]:
    """A running OpenAI-compatible server on 127.0.0.1; ``model_server.base_url`` is its ``/v1`` URL."""
    with LocalModelServer() as server:
        yield server
