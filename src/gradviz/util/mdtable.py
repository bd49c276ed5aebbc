"""Tables as Markdown: rows of plain values -> a Markdown table.

The pages show their tables as Markdown rather than with st.dataframe: Streamlit turns a
dataframe into Arrow through pandas, and importing pandas and pyarrow costs the server about
76 MB of memory (docs/BENCHMARKS.md), a tenth of a Community Cloud app's allotment, for
tables of a few rows. Cell text is escaped, so a value (an error message, a program line)
shows as typed: no Markdown, no LaTeX ($), no Streamlit colour or icon codes (:red[...]).

No Streamlit here. The tests read such a table back with tests/markdown_tables.py.
"""

from __future__ import annotations

import math

from gradviz.util.mdtext import escape_all


def number(value: float) -> str:
    """A float as people read it: four significant digits, thousands grouped from 1,000."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0 or abs(value) >= 1000:
        return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:,.1f}".removesuffix(".0")
    return f"{value:.4g}"


def cell(value: object) -> str:
    """One cell's text, escaped for Markdown; None and NaN are empty, floats rounded."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        value = number(value)
    return escape_all(value)


def to_markdown(rows: list[dict], columns: list[str] | None = None) -> str:
    """A Markdown table of `rows` (dicts); columns in first-seen order unless given."""
    if columns is None:
        columns = list(dict.fromkeys(k for row in rows for k in row))
    if not columns:
        return ""
    lines = [
        "| " + " | ".join(cell(c) for c in columns) + " |",
        "|" + "|".join(" --- " for _ in columns) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines)
