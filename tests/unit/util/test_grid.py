"""gradviz.util.grid: tensor values as grids."""

from gradviz.util.grid import VECTOR_ROW, grids


def test_matrix_is_rows_and_columns():
    ((title, rows),) = grids([[1.0, 2.0], [3.0, 4.0]])
    assert title == "values"
    assert rows == [
        {"": "row 0", "col 0": 1.0, "col 1": 2.0},
        {"": "row 1", "col 0": 3.0, "col 1": 4.0},
    ]


def test_vector_wraps_into_rows():
    ((_, rows),) = grids(list(range(25)))
    assert len(rows) == 3 and len(rows[0]) == VECTOR_ROW + 1
    assert rows[2] == {"": "[20:]", "+0": 20, "+1": 21, "+2": 22, "+3": 23, "+4": 24}


def test_scalar_and_three_dims():
    assert grids(2.5) == [("value", [{"": "value", "value": 2.5}])]
    slices = grids([[[1, 2]], [[3, 4]]])
    assert [t for t, _ in slices] == ["[0, :, :]", "[1, :, :]"]
    assert slices[1][1] == [{"": "row 0", "col 0": 3, "col 1": 4}]
    assert grids([]) == [("values", [])]
