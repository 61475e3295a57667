from __future__ import annotations

from hypothesis import given, strategies as st

from pytest_sysmobench.tla.cfg import KEYWORDS, UNSUPPORTED_IN_215, Config, default_config

NAMES = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in KEYWORDS)


def test_strip_removes_every_assertion_section_and_keeps_the_rest() -> None:
    text = (
        "\\* generated\r\nSPECIFICATION Spec\r\nCONSTANTS\r\n  Threads = {\"INVARIANT\", \"t2\"}\r\n"
        "(* PROPERTY in a comment *)\r\nINVARIANTS TypeOK\r\n  Safe\r\nPROPERTY Live\r\nCONSTRAINT Bound\r\n"
        "ACTION_CONSTRAINT Step\r\nPOSTCONDITION Done\r\n"
    )
    config, removed = Config.parse(text).strip_assertions()
    rendered = config.render()
    assert "SPECIFICATION Spec" in rendered
    assert '{"INVARIANT", "t2"}' in rendered
    assert "TypeOK" not in rendered and "Live" not in rendered and "Bound" not in rendered
    assert "Step" not in rendered and "Done" not in rendered
    assert [r.split()[0] for r in removed] == ["INVARIANTS", "PROPERTY", "CONSTRAINT", "ACTION_CONSTRAINT", "POSTCONDITION"]


def _specification(config: Config) -> str:
    return next(s.names()[0] for s in config.sections if s.keyword == "SPECIFICATION")


def test_behaviour_spec_and_unsupported_keywords() -> None:
    config = Config.parse("SPECIFICATION MySpec\nALIAS Alias\nCHECK_DEADLOCK FALSE\n")
    assert _specification(config) == "MySpec"
    assert sorted(config.keywords() & UNSUPPORTED_IN_215) == ["ALIAS", "CHECK_DEADLOCK"]


def test_default_config_binds_the_task_constants() -> None:
    text = default_config({"Threads": '{"t1", "t2"}', "N": "3"})
    parsed = Config.parse(text)
    assert _specification(parsed) == "Spec"
    assert 'Threads = {"t1", "t2"}' in text and "N = 3" in text


@given(
    spec=NAMES,
    invariants=st.lists(NAMES, min_size=0, max_size=4),
    properties=st.lists(NAMES, min_size=0, max_size=3),
    crlf=st.booleans(),
)
def test_strip_then_add_is_exactly_ours(spec: str, invariants: list[str], properties: list[str], crlf: bool) -> None:
    lines = [f"SPECIFICATION {spec}"]
    if invariants:
        lines.append("INVARIANT " + "\n  ".join(invariants))
    if properties:
        lines.append("PROPERTIES " + " ".join(properties))
    text = ("\r\n" if crlf else "\n").join(lines)
    stripped, removed = Config.parse(text).strip_assertions()
    assert len(removed) == bool(invariants) + bool(properties)
    final = stripped.with_section("INVARIANT", ["Sysmo_A", "Sysmo_B"])
    reparsed = Config.parse(final.render())
    sections = [(s.keyword, s.names()) for s in reparsed.sections]
    assert sections == [("SPECIFICATION", [spec]), ("INVARIANT", ["Sysmo_A", "Sysmo_B"])]


@given(st.text(max_size=300))
def test_parse_never_raises_and_round_trips(text: str) -> None:
    config = Config.parse(text)
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    rendered = config.render()
    assert rendered.rstrip("\n") == normalized.rstrip("\n") or rendered == normalized
