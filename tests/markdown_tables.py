"""The pages' Markdown tables read back into rows (gradviz.util.mdtable writes them): what the
tests use to look at a table a page showed."""

from __future__ import annotations

import string

from gradviz.util.mdtext import JOINER


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
    """Rows of the first Markdown table in `text` (as mdtable.to_markdown writes it), as
    strings."""
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
