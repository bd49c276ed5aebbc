"""gradviz.util.mdtable: rows -> Markdown table -> rows, with hostile cell text kept as typed."""

from __future__ import annotations

import math
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from gradviz.util import mdtable
from tests import markdown_tables


def test_round_trip_and_column_order():
    rows = [{"name": "x", "shape": "[2, 3]", "grad": None}, {"name": "y", "extra": 1.5}]
    text = mdtable.to_markdown(rows)
    assert text.splitlines()[0] == "| name | shape | grad | extra |"
    assert markdown_tables.parse(text) == [
        {"name": "x", "shape": "[2, 3]", "grad": "", "extra": ""},
        {"name": "y", "shape": "", "grad": "", "extra": "1.5"},
    ]


def test_given_columns_and_empty():
    assert mdtable.to_markdown([{"a": 1, "b": 2}], ["b"]) == "| b |\n| --- |\n| 2 |"
    assert mdtable.to_markdown([]) == ""
    assert markdown_tables.parse("no table here") == []


def _bare_punctuation(text: str) -> str:
    """ASCII punctuation in `text` that is not escaped with a backslash."""
    bare, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text[i] in string.punctuation:
            bare.append(text[i])
        i += 1
    return "".join(bare)


def test_cells_are_escaped():
    hostile = "a | b $x^2$ **bold** :red[red] `code` <b>html</b>\nnext line \\ end"
    text = mdtable.to_markdown([{"v": hostile}])
    body = text.splitlines()[2]
    assert _bare_punctuation(body.strip("| ")) == ""  # every special character is escaped
    assert "\n" not in body
    assert markdown_tables.parse(text) == [{"v": hostile.replace("\n", " ")}]


def test_values():
    assert mdtable.cell(None) == "" and mdtable.cell(math.nan) == ""
    assert mdtable.cell(True) == "yes" and mdtable.cell(False) == "no"
    assert mdtable.cell(1234) == "1234"  # ints as they are (sizes, line numbers)


def test_floats_are_rounded_for_reading():
    cases = {
        0.030388000595849007: "0.03039",
        42.25281072439577: "42.25",
        0.0009864997991826385: "0.0009865",
        1234.5678: "1,234.6",
        2000.0: "2,000",
        123456.7: "123,457",
        0.0: "0",
        -3.5: "-3.5",
        math.inf: "inf",
    }
    for value, text in cases.items():
        assert mdtable.number(value) == text, value
    assert mdtable.cell(0.5) == "0\\.5"  # escaped like any text


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.text()), max_size=5))
def test_any_text_round_trips(rows):
    text = mdtable.to_markdown(rows)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    if not columns:
        assert text == ""
        return
    want = [{c: " ".join(str(r.get(c, "")).splitlines()).strip() for c in columns} for r in rows]
    got = markdown_tables.parse(text)
    assert got == [{c: v.strip() for c, v in row.items()} for row in want]


def test_find_and_tables_in_page_texts():
    texts = [
        "**Devices**\n- cpu",
        mdtable.to_markdown([{"device": "cpu", "bytes": 24}]),
        "a | b without a separator line",
        mdtable.to_markdown([{"name": "x", "grad": "[1.0]"}]),
    ]
    assert markdown_tables.find(texts, "grad") == [{"name": "x", "grad": "[1.0]"}]
    assert markdown_tables.find(texts, "missing") is None
    assert markdown_tables.tables_in(texts) == [
        [{"device": "cpu", "bytes": "24"}],
        [{"name": "x", "grad": "[1.0]"}],
    ]
