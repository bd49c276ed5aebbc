"""Tables as Markdown: rows of plain values -> a Markdown table, and back.

The pages show their tables as Markdown rather than with st.dataframe: Streamlit turns a
dataframe into Arrow through pandas, and importing pandas and pyarrow costs the server about
76 MB of memory (docs/BENCHMARKS.md), a tenth of a Community Cloud app's allotment, for
tables of a few rows. Cell text is escaped, so a value (an error message, a program line)
shows as typed: no Markdown, no LaTeX ($), no Streamlit colour or icon codes (:red[...]).

`parse(text)` reads such a table back into rows of strings (tests and scripts use it).
No Streamlit here.
"""

from __future__ import annotations

import math
import string

from gradviz.util.mdtext import JOINER, escape_all


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


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in string.punctuation:
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out).replace(JOINER, "").strip()


def _split(line: str) -> list[str]:
    """Cells of one table line, splitting on unescaped pipes."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells, cur, i = [], [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            cur.append(line[i : i + 2])
            i += 2
            continue
        if line[i] == "|":
            cells.append("".join(cur))
            cur = []
        else:
            cur.append(line[i])
        i += 1
    cells.append("".join(cur))
    return [_unescape(c) for c in cells]


def parse(text: str) -> list[dict[str, str]]:
    """Rows of the first Markdown table in `text` (as written by to_markdown), as strings."""
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return []
    header = _split(lines[0])
    return [dict(zip(header, _split(ln), strict=False)) for ln in lines[2:]]


def tables_in(texts) -> list[list[dict[str, str]]]:
    """Every table among Markdown texts (e.g. a page's markdown elements), in order."""
    return [rows for text in texts if (rows := parse(text)) or _is_table(text)]


def find(texts, column: str) -> list[dict[str, str]] | None:
    """The first table among `texts` that has `column`, or None."""
    for text in texts:
        if _is_table(text):
            lines = [ln for ln in text.splitlines() if ln.strip().startswith("|")]
            if column in _split(lines[0]):
                return parse(text)
    return None


def _is_table(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("|")]
    return len(lines) >= 2 and set(lines[1].replace("|", "").split()) == {"---"}
