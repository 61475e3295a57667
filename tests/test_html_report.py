"""The HTML leaderboard: escaped and self-contained by construction, and read in a real Chromium.

The browser tests need Debian's Chromium and Playwright (both installed by ``scripts/setup``):
marked ``browser`` so they can be deselected with ``-m "not browser"``.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings, strategies as st

from pytest_sysmobench.leaderboard import board as report
from pytest_sysmobench.leaderboard.html import render
from pytest_sysmobench.scoring import PHASES

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
#: Every tag the page is made of: anything else on it came from a board's text, unescaped.
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "code", "b", "small", "table", "thead",
             "tbody", "tr", "th", "td", "details", "summary", "div", "figure", "figcaption", "svg", "rect", "line",
             "text", "span", "i", "dl", "dt", "dd", "a"}
HOSTILE = '<img src="http://127.0.0.1:9/leak.png"><script>alert(1)</script>" onmouseover="x'


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def _parsed(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def _record(task: str, model: str, phase: str, status: str, score: float | None, reason: str = "",
            sample: int = 0, **extra: Any) -> dict[str, Any]:
    return {"task": task, "model": model, "sample": sample, "phase": phase, "status": status, "score": score,
            "reason": reason, **extra}


def _hostile_board() -> dict[str, Any]:
    records = [_record("spin", "reference", p, "passed", 1.0, "fine") for p in PHASES]
    records += [_record("spin", HOSTILE, "syntax", "failed", 0.5, f"parse error </td></tr></table>{HOSTILE}",
                        failure_class=HOSTILE)]
    records += [_record("spin", HOSTILE, p, "blocked", 0.0, "blocked by syntax") for p in PHASES[1:]]
    records += [_record("mutex", "reference", p, "passed", 1.0) for p in PHASES[:3]]
    records += [_record("mutex", "reference", "invariants", "inconclusive", None, "inconclusive: budget")]
    return report.build(records, {"jar_sha256": HOSTILE}, HOSTILE).to_json()


def test_every_string_from_a_board_is_escaped_and_the_page_loads_nothing() -> None:
    page = render(_hostile_board())
    parsed = _parsed(page)
    assert parsed.tags <= PAGE_TAGS, parsed.tags - PAGE_TAGS
    assert not {"src", "href", "onmouseover", "onload"} & parsed.attributes
    assert "default-src 'none'" in page and "<script" not in page
    assert "&lt;img src=&quot;http://127.0.0.1:9/leak.png&quot;&gt;" in page  # shown, as text
    assert page.count('<tr class="cell">') == 3


def test_a_board_from_elsewhere_cannot_break_the_page() -> None:
    """A board read from a file may hold anything where numbers belong: it is shown, not trusted."""
    board = {"cells": [{"task": 1, "model": None, "sample": "x", "composite": "1.0<b>", "phases": {
        "syntax": {"status": "passed", "score": float("inf")}, "runtime": "not a mapping",
        "conformance": {"status": "failed", "score": 7, "reason": "x" * 100_000}}}],
        "models": [{"model": ["a"], "syntax": -3, "composite": True, "failure_classes": {"syntax": {"c": "many"}}}],
        "tasks": "nope", "provenance": [], "weights": None, "usage": {"cost_usd": "free"}}
    page = render(board)
    assert _parsed(page).tags <= PAGE_TAGS
    assert "1.0<b>" not in page and "x" * 2001 not in page


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                    max_leaves=30)
BOARDS = st.fixed_dictionaries({}, optional={
    "cells": st.lists(st.fixed_dictionaries({}, optional={
        "task": JSON, "model": JSON, "sample": JSON, "composite": JSON, "runs": JSON, "charged_to": JSON, "cause": JSON,
        "phases": st.dictionaries(st.sampled_from(PHASES), st.dictionaries(
            st.sampled_from(["status", "score", "reason", "failure_class", "charged_to", "cause"]), JSON)) | JSON}),
        max_size=4) | JSON,
    "models": st.lists(st.dictionaries(st.sampled_from(["model", *PHASES, "composite", "failure_classes", "usage",
                                                         "pass_at_k", "cells", "unscored", "scored_cells", "left_out"]),
                                       JSON), max_size=3) | JSON,
    "tasks": st.lists(st.dictionaries(st.sampled_from(["task", "model", "samples", "scored_samples", "left_out",
                                                        "best_of_k", "pass_at_k"]), JSON), max_size=3) | JSON, "provenance": JSON, "weights": JSON, "usage": JSON, "run_id": JSON, "interrupted": JSON})


@given(BOARDS)
@settings(max_examples=200, deadline=None)
def test_any_board_shaped_json_renders_to_the_page_tags_only(board: dict[str, Any]) -> None:
    assert _parsed(render(board)).tags <= PAGE_TAGS


def _charged_board() -> dict[str, Any]:
    """spin scored in full, curp unavailable offline, mutex without traces (a record from before charges)."""
    records = [_record("spin", "reference", p, "passed", 1.0, charged_to="spec") for p in PHASES]
    records += [_record("curp", "reference", p, "skipped", None, "unavailable offline: no CURP", charged_to="benchmark",
                        cause="system_unavailable") for p in PHASES]
    records += [_record("mutex", "reference", p, "passed", 1.0) for p in ("syntax", "runtime", "invariants")]
    records += [_record("mutex", "reference", "conformance", "skipped", None, "skipped: no traces for task mutex")]
    return report.build(records, {}, "run").to_json()


def _text(fragment: str) -> str:
    """What a reader sees of some HTML: its text, with tags as spaces."""
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


def _row_of(page: str, table: str, first: str) -> str:
    body = page[page.index(f'<table class="{table}">'):]
    body = body[:body.index("</table>")]
    rows = [r for r in body.split("<tr") if _text("<tr" + r).startswith(first)]
    assert len(rows) == 1, (first, rows)
    return _text("<tr" + rows[0])


def _without_charges(board: dict[str, Any]) -> dict[str, Any]:
    strip = lambda d: {k: v for k, v in d.items() if k not in ("charged_to", "cause")}  # noqa: E731
    return {**board, "cells": [{**strip(c), "phases": {p: strip(r) for p, r in c["phases"].items()}}
                               for c in board["cells"]]}


def test_the_page_shows_scored_cells_left_out_causes_and_who_each_phase_is_charged_to() -> None:
    board = _charged_board()
    page = render(board)
    assert _parsed(page).tags <= PAGE_TAGS
    models = _row_of(page, "models", "reference")
    assert models.startswith("reference 3 1 2 no_traces 1 system_unavailable 1 1.000"), models
    curp = _row_of(page, "cells left-out", "curp")
    assert curp.count("benchmark: system_unavailable") == 4 and "left out: system_unavailable" in curp
    # Left-out cells are folded under their count, after the scored ones; every column is explained.
    assert "2 cells left out by the benchmark (no composite, kept out of every mean): show" in _text(page)
    assert page.index('<table class="cells">') < page.index('<details class="fold">')
    assert page.count("What the columns mean") == 3
    assert '<th title="cells the benchmark could not score' in page
    mutex = _row_of(page, "cells left-out", "mutex")
    assert mutex.count("benchmark:") == 1 and "benchmark: no_traces" in mutex and "left out: no_traces" in mutex
    assert "benchmark" not in _row_of(page, "cells", "spin")  # the spec's outcomes are not marked
    samples = _row_of(page, "samples", "curp")
    assert samples.startswith("curp reference 1 0 1 system_unavailable 1 -"), samples
    # A board from before charges: the same marks, derived from scores and statuses.
    old = _without_charges(board)
    assert "charged_to" not in str(old["cells"])
    again = render(old)
    assert _row_of(again, "cells left-out", "curp") == curp and _row_of(again, "cells left-out", "mutex") == mutex


# ------------------------------------------------------------------ in a real browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: run scripts/setup, or deselect with -m 'not browser'")
    if chromium is None:
        pytest.fail("Debian's chromium is not installed: run scripts/setup, or deselect with -m 'not browser'")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


class _Visit:
    """One page load, with everything the page said and asked for."""

    def __init__(self, browser: Any, path: Path, screenshot: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1300, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.screenshot(path=str(screenshot), full_page=True)

    def count(self, selector: str) -> int:
        return int(self.page.locator(selector).count())


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.browser
def test_a_runs_html_leaderboard_reads_in_chromium(pytester: pytest.Pytester, browser: Any, tmp_path: Path) -> None:
    """A real run (passed, failed, blocked and a hostile replay label), its page opened in Chromium."""
    shutil.copytree(ROOT / "tasks" / "spin", pytester.path / "tasks" / "spin")
    (pytester.path / "data" / "traces" / "spin").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "traces" / "spin" / "seed-1.ndjson", pytester.path / "data" / "traces" / "spin")
    (pytester.path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "test_sysmobench.py", pytester.path / "benchmarks")
    hostile = pytester.path / "<b onmouseover=x>specs"
    shutil.copytree(ROOT / "tasks" / "spin" / "reference", hostile / "spin")
    result = pytester.runpytest_subprocess(
        "benchmarks", "-p", "no:cacheprovider", "--sysmobench-models",
        f"reference,mutant:acquire-ignores-lock,mutant:unknown-operator,replay:{hostile}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the two mutants fail their phases
    output = pytester.path / ".sysmobench"
    board = json.loads((output / "leaderboard.json").read_text())
    run_page = output / "runs" / board["run_id"] / "leaderboard.html"
    assert run_page.is_file() and (output / "leaderboard.html").is_file()

    visit = _Visit(browser, run_page, tmp_path / "leaderboard.png")
    assert visit.console == []
    assert visit.requests == [visit.url]  # self-contained: nothing fetched at view time
    assert visit.count("table.cells > tbody > tr") == len(board["cells"]) == 4
    assert visit.count("table.cells table.rates") >= 1  # P3's recall and precision per action, in the cell
    assert visit.count("table.models tbody tr") == len(board["models"]) == 4
    assert visit.count("svg rect.bar") == 4 * len(PHASES)
    assert visit.count("svg rect.failure") == 3  # P3 extra_steps, P4 safety_violation, P1 undefined_operator
    assert visit.count("table.heat td") == 4
    assert visit.count("table.cells td.failed") == 3 and visit.count("table.cells td.passed") >= 10
    assert visit.page.locator("table.cells").inner_text().count("<b onmouseover=x>specs") == 1
    reference = visit.page.locator("table.models tbody tr", has_text="reference").first.inner_text()
    assert "1.000" in reference
    width, height = _png_size(tmp_path / "leaderboard.png")
    assert width == 1300 and height > 900


@pytest.mark.browser
def test_chromium_shows_what_each_model_left_out_and_why(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "charged.html").write_text(render(_charged_board()))
    visit = _Visit(browser, tmp_path / "charged.html", tmp_path / "charged.png")
    assert visit.console == [] and visit.requests == [visit.url]
    row = visit.page.locator("table.models tbody tr", has_text="reference").first
    assert row.locator("td.scored").inner_text() == "1"
    left = row.locator("td.left-out").inner_text().split()
    assert left == ["2", "no_traces", "1", "system_unavailable", "1"], left
    curp = visit.page.locator("table.cells tr.cell", has_text="curp").first
    assert not curp.is_visible()  # folded: the scored cells come first
    visit.page.locator("details.fold > summary").click()
    assert curp.is_visible()
    assert curp.locator("small.charge").all_inner_texts() == ["benchmark: system_unavailable"] * 4 + [
        "left out: system_unavailable"]
    assert visit.page.locator("table.cells tr.cell", has_text="spin").first.locator("small.charge").count() == 0
    # Each mark sits on its own line, under the outcome it explains.
    outcome, mark = curp.locator("summary").first.bounding_box(), curp.locator("small.charge").first.bounding_box()
    assert mark["y"] >= outcome["y"] + 10, (outcome, mark)
    # The columns are explained: folded under the table, and opened they read as a list.
    legend = visit.page.locator("details.help").first
    assert not legend.locator("dd").first.is_visible()
    legend.locator("> summary").click()
    assert "left out" in legend.inner_text() and legend.locator("dd").first.is_visible()


@pytest.mark.browser
def test_the_console_check_sees_a_page_that_fetches(browser: Any, tmp_path: Path) -> None:
    """The check above could pass by hearing nothing: a page with one unescaped image is heard."""
    page = render(_hostile_board()).replace("<h1>", '<img src="http://127.0.0.1:9/leak.png"><h1>', 1)
    (tmp_path / "leaky.html").write_text(page)
    visit = _Visit(browser, tmp_path / "leaky.html", tmp_path / "leaky.png")
    assert any("Content Security Policy" in line for line in visit.console), visit.console


def test_the_cli_renders_any_board_and_refuses_what_is_not_one(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_sysmobench.cli import main

    report.write(_hostile_board(), tmp_path / "run")
    (tmp_path / "run" / "leaderboard.html").unlink()
    assert main(["leaderboard", "html", str(tmp_path / "run")]) == 0
    assert _parsed((tmp_path / "run" / "leaderboard.html").read_text()).tags <= PAGE_TAGS
    assert main(["leaderboard", "html", str(tmp_path / "run" / "leaderboard.json"), "--out", str(tmp_path / "x.html")]) == 0
    assert (tmp_path / "x.html").read_text() == (tmp_path / "run" / "leaderboard.html").read_text()
    (tmp_path / "junk.json").write_text("[1, 2]")
    assert main(["leaderboard", "html", str(tmp_path / "junk.json")]) == 2
    assert "not a leaderboard" in capsys.readouterr().err


def _repaired_board() -> dict[str, Any]:
    """Three spin samples of one model: usable as written, repaired with one edit, unrepairable."""
    usable = {p: ("passed", 1.0) for p in PHASES}
    broken = {"syntax": ("passed", 1.0), "runtime": ("failed", 0.4), "conformance": ("blocked", 0.0),
              "invariants": ("blocked", 0.0)}
    cells = [(usable, {"status": "none", "edits": 0, "reason": ""}, None),
             (broken, {"status": "minor", "edits": 1, "reason": "usable after 1 edit(s)"}, 1.0),
             (broken, {"status": "unrepairable", "edits": 0, "reason": "no rule applies: runtime: <b>x</b>"}, None)]
    records = []
    for sample, (strict, repair, repaired) in enumerate(cells):
        for phase, (status, score) in strict.items():
            extra: dict[str, Any] = {}
            if phase in ("conformance", "invariants"):
                extra["repair"] = repair
                if repaired is not None:
                    extra["repaired"] = {"status": "passed", "score": repaired, "reason": "", "charged_to": "spec"}
            records.append(_record("spin", "sonnet", phase, status, score, sample=sample, **extra))
    return report.build(records, {}, "run").to_json()


def test_the_repaired_composite_stands_beside_the_strict_one_with_counts_per_status() -> None:
    board = _repaired_board()
    (model,) = board["models"]
    assert model["repairs"] == {"none": 1, "minor": 1, "unrepairable": 1}
    assert model["composite"] == round((1.0 + 0.21 + 0.21) / 3, 6)
    assert model["repaired_composite"] == round((1.0 + 0.91 + 0.21) / 3, 6)
    page = render(board)
    assert _parsed(page).tags <= PAGE_TAGS and "<b>x</b>" not in page
    row = _row_of(page, "models", "sonnet")
    assert f"{model['composite']:.3f} {model['repaired_composite']:.3f} none 1 minor 1 unrepairable 1" in row, row
    assert "repaired composite = the same weights" in _text(page)


@pytest.mark.browser
def test_chromium_shows_each_cells_repair_and_why_it_could_not_be_made(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "repaired.html").write_text(render(_repaired_board()))
    visit = _Visit(browser, tmp_path / "repaired.html", tmp_path / "repaired.png")
    assert visit.console == [] and visit.requests == [visit.url]
    heads = visit.page.locator("table.cells thead th").all_inner_texts()
    assert heads.index("repaired") == heads.index("composite") + 1
    repaired = visit.page.locator("table.cells td.repaired").all_inner_texts()
    assert [" ".join(t.split()) for t in repaired] == ["1.000 none", "0.910 minor · 1 edit", "0.210 unrepairable"]
    why = visit.page.locator("table.cells td.repaired details").last
    assert not why.locator("div").is_visible()
    why.locator("summary").click()
    assert why.locator("div").inner_text() == "no rule applies: runtime: <b>x</b>"
