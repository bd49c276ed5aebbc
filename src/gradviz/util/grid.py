"""A tensor's values (nested lists, as a result carries them) laid out as grids: a matrix as
rows and columns, a vector wrapped into rows, a 3-D or bigger tensor as one grid per leading
index. Plain data in, plain rows out (for gradviz.util.mdtable); no torch, no Streamlit."""

from __future__ import annotations

VECTOR_ROW = 10  # a vector's values per grid row


def _matrix_rows(matrix: list) -> list[dict]:
    return [
        {"": f"row {i}", **{f"col {j}": v for j, v in enumerate(row)}}
        for i, row in enumerate(matrix)
    ]


def _vector_rows(vector: list) -> list[dict]:
    rows = []
    for start in range(0, len(vector), VECTOR_ROW):
        chunk = vector[start : start + VECTOR_ROW]
        rows.append({"": f"[{start}:]", **{f"+{j}": v for j, v in enumerate(chunk)}})
    return rows


def grids(value, prefix: tuple[int, ...] = ()) -> list[tuple[str, list[dict]]]:
    """(title, rows) for each grid that shows `value`: one for a scalar, vector or matrix,
    one per 2-D slice (titled t[0, 1, :, :]) for more dimensions."""
    if not isinstance(value, list):
        return [("value", [{"": "value", "value": value}])]
    if not value or not isinstance(value[0], list):
        return [(_title(prefix, 1), _vector_rows(value))]
    if not value[0] or not isinstance(value[0][0], list):
        return [(_title(prefix, 2), _matrix_rows(value))]
    out = []
    for i, inner in enumerate(value):
        out.extend(grids(inner, (*prefix, i)))
    return out


def _title(prefix: tuple[int, ...], dims: int) -> str:
    if not prefix:
        return "values"
    return "[" + ", ".join([*map(str, prefix), *[":"] * dims]) + "]"
