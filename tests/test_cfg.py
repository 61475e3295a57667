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


_VALUES = st.sampled_from(['{"a", "b"}', "3", '<<1, "x = y">>', "[a |-> 1, b |-> {2}]", "{}", '"N <- M"'])


@given(st.lists(st.tuples(st.sampled_from(["N", "Procs", "Max_1", "T"]), _VALUES), min_size=1, max_size=4,
                unique_by=lambda pair: pair[0]),
       st.lists(st.sampled_from([" ", "\n    ", "\n", "  \\* note\n  "]), min_size=4, max_size=4),
       st.booleans())
def test_the_constants_a_cfg_gives_values_are_read_whatever_the_layout(bindings: list[tuple[str, str]],
                                                                        spaces: list[str], defined: bool) -> None:
    """Several bindings to a line or one per line, comments between them, values that hold '=' or
    '<-' in a string, and a binding to a definition (``<-``), which gives no value."""
    body = "".join(f"{spaces[k % 4]}{name} = {value}" for k, (name, value) in enumerate(bindings))
    if defined:
        body += f"{spaces[0]}Def <- Other"
    config = Config.parse(f"SPECIFICATION Spec\nCONSTANTS{body}\nINVARIANT TypeOK\n")
    assert config.constants() == dict(bindings)
