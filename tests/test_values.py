"""TLA+ value <-> Python: TLC's printed forms parse, and formatting round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sysmobench.tla.modules import wrap_long_lines
from pytest_sysmobench.tla.values import RESERVED as RESERVED_WORDS
from pytest_sysmobench.tla.values import (
    ModelValue,
    Record,
    TlaFunction,
    Value,
    ValueParseError,
    format_value,
    parse_value,
)

# ---------------------------------------------------------------------------
# Parsing what TLC prints


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("-3", -3),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("TRUE", True),
        ("FALSE", False),
        ('"abc"', "abc"),
        ('""', ""),
        ("p1", ModelValue("p1")),
        ("null", ModelValue("null")),
        ("{}", frozenset()),
        ("{1, 2, 3}", frozenset({1, 2, 3})),
        ("<<>>", ()),
        ("<< >>", ()),
        ("<<1, \"a\", TRUE>>", (1, "a", True)),
        ("[a |-> 1, b |-> \"x\"]", Record({"a": 1, "b": "x"})),
        ("(p1 :> \"idle\" @@ p2 :> \"cs\")", TlaFunction({ModelValue("p1"): "idle", ModelValue("p2"): "cs"})),
        ("(2 :> 2 @@ 3 :> 3)", TlaFunction({2: 2, 3: 3})),
        ("1..3", frozenset({1, 2, 3})),
        ("-5..-3", frozenset({-5, -4, -3})),
        ("3..1", frozenset()),
        ("(7)", 7),
    ],
)
def test_parse_scalar_and_composite_forms(text: str, expected: Value) -> None:
    assert parse_value(text) == expected


def test_parse_string_escapes_as_tlc_prints_them() -> None:
    # Exactly the line TLC 2.15 printed in tests/data/tool_output/tlc/invariant_values.
    assert parse_value(r'"quote\" back\\ tab\t nl\n end"') == 'quote" back\\ tab\t nl\n end'
    assert parse_value(r'"r\rf\f"') == "r\rf\f"
    assert parse_value('"raw\x01ctl h\u00e9"') == "raw\x01ctl h\u00e9"


def test_parse_pretty_printed_multiline_value() -> None:
    text = """<< [ id |-> 1,
     name |-> "some longer text here",
     tags |-> {"alpha", "beta", "gamma"},
     ok |-> FALSE ],
   [ id |-> 2,
     name |-> "x",
     tags |-> {},
     ok |-> TRUE ] >>"""
    value = parse_value(text)
    assert isinstance(value, tuple) and len(value) == 2
    first = value[0]
    assert isinstance(first, Record)
    assert first["tags"] == frozenset({"alpha", "beta", "gamma"})
    assert list(first) == ["id", "name", "tags", "ok"]  # field order kept for display


def test_parse_deeply_nested() -> None:
    text = "{<<[a |-> (1 :> {<<>>} @@ 2 :> [b |-> <<p1, -2>>])]>>}"
    expected = frozenset(
        {
            (
                Record(
                    {
                        "a": TlaFunction(
                            {1: frozenset({()}), 2: Record({"b": (ModelValue("p1"), -2)})}
                        )
                    }
                ),
            )
        }
    )
    assert parse_value(text) == expected


def test_function_merge_keeps_left_operand_like_tla() -> None:
    assert parse_value("(1 :> 1 @@ 1 :> 2)") == TlaFunction({1: 1})


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("{1,", 1, 4),
        ("<<1 2>>", 1, 5),
        ("[x \\in S |-> 1]", 1, 4),  # TLC never prints this form
        ("1.5", 1, 2),
        ('"open', 1, 1),
        ('"bad \\q"', 1, 6),
        ("{1}\n  junk", 2, 3),
        ("", 1, 1),
        ("-x", 1, 1),
        ("1..x", 1, 4),
        ("1..1000000000", 1, 1),
    ],
)
def test_parse_errors_carry_position(text: str, line: int, column: int) -> None:
    with pytest.raises(ValueParseError) as caught:
        parse_value(text)
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.line, error.column) == (line, column)
    assert f"line {error.line}, column {error.column}" in str(error)


def test_parse_error_position_exact() -> None:
    with pytest.raises(ValueParseError) as caught:
        parse_value("{1}\n  junk")
    assert (caught.value.line, caught.value.column, caught.value.position) == (2, 3, 6)


def test_nesting_bound_is_a_parse_error_not_a_recursion_error() -> None:
    with pytest.raises(ValueParseError, match="nested deeper"):
        parse_value("{" * 5000 + "}" * 5000)


# ---------------------------------------------------------------------------
# Formatting


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "TRUE"),
        (False, "FALSE"),
        (-7, "-7"),
        ('a"b\\c\nd\te', r'"a\"b\\c\nd\te"'),
        (ModelValue("p1"), "p1"),
        ((), "<<>>"),
        ([1, "x"], '<<1, "x">>'),
        ({3, 1, 2}, "{1, 2, 3}"),
        (frozenset({"b", "a"}), '{"a", "b"}'),
        ({"b": 1, "a": [True]}, "[a |-> <<TRUE>>, b |-> 1]"),
        ({"not ident": 1}, '("not ident" :> 1)'),
        ({2: "y", 1: "x"}, '(1 :> "x" @@ 2 :> "y")'),
        (TlaFunction({ModelValue("p2"): 0, ModelValue("p1"): 1}), "(p1 :> 1 @@ p2 :> 0)"),
        ({}, "<<>>"),
        ({frozenset({2}), frozenset({1})}, "{{1}, {2}}"),
    ],
)
def test_format(value: object, text: str) -> None:
    assert format_value(value) == text


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (1.5, "float"),
        (None, "NoneType"),
        (object(), "object"),
        ([1, None], "NoneType"),
        ("\u4e2d", "Latin-1"),
        (ModelValue("has space"), "identifier"),
        (ModelValue("TRUE"), "identifier"),
    ],
)
def test_format_rejects_unsupported(value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        format_value(value)


def test_record_and_function_are_the_same_tla_value() -> None:
    record = Record({"a": 1})
    function = TlaFunction({"a": 1})
    assert record == function and hash(record) == hash(function)
    assert format_value(record) == format_value(function) == "[a |-> 1]"
    assert len(frozenset({record, function})) == 1


def test_mappings_are_immutable_and_hashable() -> None:
    record = Record({"a": 1})
    with pytest.raises(AttributeError):
        record._data = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        record["a"] = 2  # type: ignore[index]
    assert {record: "ok"}[Record([("a", 1)])] == "ok"
    with pytest.raises(TypeError):
        Record({1: 2})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------
# Properties

identifiers = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,7}\Z").filter(
    lambda name: any(c.isalpha() for c in name) and name not in RESERVED_WORDS
)
tla_strings = st.text(alphabet=st.characters(max_codepoint=0xFF), max_size=12)
leaves = st.one_of(st.integers(), st.booleans(), tla_strings, identifiers.map(ModelValue))


def _extend(children: st.SearchStrategy[Value]) -> st.SearchStrategy[Value]:
    return st.one_of(
        st.frozensets(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(identifiers, children, min_size=1, max_size=4).map(Record),
        st.dictionaries(children, children, min_size=1, max_size=4).map(TlaFunction),
    )


values = st.recursive(leaves, _extend, max_leaves=25)
# Hypothesis builds the repr of a recursive strategy lazily and it grows with depth; it is noise here.
quiet_repr = pytest.mark.filterwarnings("ignore:Generating overly large repr")


@quiet_repr
@settings(max_examples=400)
@given(values)
def test_round_trip(value: Value) -> None:
    text = format_value(value)
    assert parse_value(text) == value


@quiet_repr
@settings(max_examples=200)
@given(values)
def test_formatting_is_deterministic(value: Value) -> None:
    text = format_value(value)
    assert format_value(parse_value(text)) == text


def _no_bool_int_mix(items: list[Value]) -> bool:
    """Python's ``True == 1`` would make the two sets differ in *which* element survives."""
    kinds = {type(item) for item in items}
    return not {bool, int} <= kinds


@given(st.lists(leaves, max_size=8).filter(_no_bool_int_mix))
def test_set_and_dict_order_do_not_change_text(items: list[Value]) -> None:
    assert format_value(set(items)) == format_value(frozenset(reversed(items)))
    forward = {f"f{index}": item for index, item in enumerate(items)}
    backward = dict(reversed(list(forward.items())))
    assert format_value(forward) == format_value(backward)


_TOKENS = [
    "{", "}", "<<", ">>", "[", "]", "(", ")", ",", "|->", ":>", "@@", '"', "\\", "-", "..",
    "1", "42", "x", "p1", "TRUE", " ", "\n", "\\n", "é", "1.5",
]


@settings(max_examples=500)
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join)))
def test_parser_raises_only_value_parse_error(text: str) -> None:
    try:
        parse_value(text)
    except ValueParseError as error:
        assert 0 <= error.position <= len(text)
        assert error.line >= 1 and error.column >= 1


# ---------------------------------------------------------------------------
# Long generated lines are wrapped between tokens, and mean the same


@quiet_repr
@settings(max_examples=300)
@given(values, st.integers(min_value=10, max_value=80))
def test_a_wrapped_value_line_reads_back_as_the_same_value(value: Value, width: int) -> None:
    prefix = "    /\\ sysmo_x = "
    line = prefix + format_value(value)
    wrapped = wrap_long_lines(line, width)
    assert wrapped.startswith(prefix)
    assert parse_value(wrapped[len(prefix):]) == value
    assert " ".join(wrapped.split()) == " ".join(line.split())  # only white space moved
    for piece in wrapped.split("\n")[1:]:
        assert len(piece) - len(piece.lstrip(" ")) > prefix.index("/\\")  # past the bullet


def test_a_line_with_a_junction_after_its_first_bracket_is_left_alone() -> None:
    line = "    /\\ x = <<1, 2>> /\\ y = <<" + ", ".join(map(str, range(60))) + ">>"
    assert wrap_long_lines(line, 40) == line
    commented = "x = <<" + ", ".join(map(str, range(60))) + ">> (* a, b *)"
    assert wrap_long_lines(commented, 40) == commented
