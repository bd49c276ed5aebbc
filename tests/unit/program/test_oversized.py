"""gradviz.program.runtime.iteration.oversized: lists and tuples of plain items only (a
dataset's rows) are sized at once, with the verdicts of the general walk: the items read
in full, a list held twice counted twice, one that holds itself never ending, and the
nesting depth."""

from __future__ import annotations

import torch

from gradviz.program.runtime.iteration import oversized


def test_rows_of_plain_items_count_every_item():
    rows = [[0, 1, 2] for _ in range(10)]  # 10 + 30 items read in full
    assert oversized(rows, 40) is None
    assert oversized(rows, 39) == "big"
    assert oversized([1, 2.5, "a", None, True, torch.ones(2)], 6) is None
    assert oversized([1, 2.5, "a", None, True, torch.ones(2)], 5) == "big"
    assert oversized((1, 2, 3), 2) == "big"


def test_a_row_held_twice_counts_twice_and_one_holding_itself_never_ends():
    row = [1, 2, 3]
    assert oversized([row, row], 8) is None
    assert oversized([row, row], 7) == "big"
    looped: list = [1, 2]
    looped.append(looped)
    assert oversized(looped, 10**6) == "big"
    assert oversized([row, looped], 10**6) == "big"


def test_nesting_is_counted_through_rows_of_plain_items():
    deep: list = [1]
    for _ in range(5):
        deep = [deep]
    assert oversized(deep, 100, max_depth=6) is None
    assert oversized(deep, 100, max_depth=5) == "deep"
    assert oversized([1, 2], 100, max_depth=0) == "deep"
    # a row with something not plain inside goes the general way: its dict is read
    assert oversized([[1, {"a": [1, 2]}]], 100, max_depth=4) is None
    assert oversized([[1, {"a": [1, 2]}]], 100, max_depth=3) == "deep"
    assert oversized([[1, range(50)]], 52) == "big"
