"""Shared test fixtures."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# litellm reads this when it is first imported: use its bundled model cost map instead of
# fetching one over the network. Set here so it is in place before any test imports litellm.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# Every board the tests write (in this process and in the pytest runs they start) is held to
# the published schema.
os.environ["SYSMOBENCH_SCHEMA_CHECK"] = str(Path(__file__).resolve().parents[1] / "schemas" / "leaderboard.schema.json")

from fresh_traces import capture_fresh, fresh_traces_root  # noqa: E402  (tests/ is on sys.path)
from llm_server import LocalModelServer  # noqa: E402

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


@pytest.fixture(scope="session", autouse=True)
def fresh_traces_ahead(request: pytest.FixtureRequest, shared_verdicts: Path) -> Iterator[None]:
    """Capturing traces is mostly waiting on the real systems' timers (a minute for OVSDB's
    elections): one worker captures every selected task's traces in a thread, in the order the
    tests need them, while its tests run; a test's fixture then finds them there (or captures
    them itself, if it comes first). A capture that fails here is left to the test's own try,
    which reports it."""
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        yield
        return
    tasks: list[str] = []
    for item in request.session.items:
        task = getattr(getattr(item, "callspec", None), "params", {}).get("fresh")
        if task is not None and task.name not in tasks:
            tasks.append(task.name)
    stop = threading.Event()

    def capture_all() -> None:
        for task in tasks:
            if stop.is_set():
                return
            capture_fresh(fresh_traces_root(shared_verdicts), task, stop)

    ahead = threading.Thread(target=capture_all, name="fresh-traces-ahead", daemon=True)
    if tasks:
        ahead.start()
    yield
    stop.set()
    if ahead.is_alive():
        ahead.join()


@pytest.fixture
def model_server() -> Iterator[LocalModelServer]:
    """A running OpenAI-compatible server on 127.0.0.1; ``model_server.base_url`` is its ``/v1`` URL."""
    with LocalModelServer() as server:
        yield server


#: Tests that take minutes (measured under -n 2 on the 2-core machine), longest first.  xdist
#: hands tests out in collection order, two at a time per worker, so running these first keeps
#: the end of the run from waiting on one long test while the other worker idles.
LONGEST_FIRST = (
    "test_a_spec_that_allows_any_next_state_is_decided_by_work_not_seconds",
    "test_a_foreign_spec_scores_full_marks_in_every_phase[records-etcd]",
    "test_reference_conforms_to_fresh_traces_and_conformance_mutants_do_not[etcd]",
    "test_a_foreign_spec_scores_full_marks_in_every_phase[sets-etcd]",
    "[etcd-",
    "etcd-conformance]",
    "[etcd]",
    "raftkvs",
    "zookeeper",
    "redisraft",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((k for k, part in enumerate(LONGEST_FIRST) if part in item.nodeid), len(LONGEST_FIRST))

    items.sort(key=rank)
