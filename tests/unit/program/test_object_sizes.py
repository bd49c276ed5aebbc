"""What a tensor call makes in Python objects (gradviz.program.budgets.object_sizes), against
what torch and tree_flatten give."""

from __future__ import annotations

import pytest
import torch
from torch.utils._pytree import tree_flatten

from gradviz.program.budgets.object_sizes import leaves, listed, longest_list


@pytest.mark.parametrize(
    "shape", [(3,), (0,), (2, 3), (0, 5), (5, 0), (2, 0, 4), (2, 3, 4), (1, 1, 1, 1)]
)
def test_listed_counts_what_tolist_makes(shape):
    made = listed(shape)
    stack, lists, numbers, longest = [torch.zeros(shape).tolist()], 0, 0, 0
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            lists, longest = lists + 1, max(longest, len(v))
            stack.extend(v)
        else:
            numbers += 1
    assert made.items == lists - 1 + numbers  # every item of every list
    assert made.longest == longest == longest_list(shape)
    assert made.depth == len(shape)
    assert listed(()) is None  # a 0-d tensor's tolist() is one number


def test_leaves_are_tree_flattens():
    t = torch.ones(2)
    values = [
        t,
        [t, [1, 2.0, [None, "a"]], (t, t)],
        torch.max(torch.ones(2, 3), 0),  # a named tuple of torch
        {"a": [t, 1], "b": (2,)},
        [torch.Size([2, 3]), [], ()],
        torch.zeros(3, 0, 2).tolist(),
    ]
    for v in values:
        got, want = leaves(v), tree_flatten(v)[0]
        assert len(got) == len(want)
        assert all(a is b or (type(a) is int and a == b) for a, b in zip(got, want, strict=True))
