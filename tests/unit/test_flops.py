"""gradviz.program.flops.FlopCount: the same total as torch's FlopCounterMode, with the same
formulas and extra ones, for the matrix work and layers the pre-check measures on the meta
device; nothing is counted outside it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from gradviz.program.budget import WINDOW_WORK
from gradviz.program.flops import FlopCount


def meta(*shape):
    return torch.empty(*shape, device="meta")


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5, stride=2, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(144, 10),
    ).to("meta")  # fmt: skip


CASES = {
    "matmul": lambda: meta(7, 5) @ meta(5, 3),
    "bmm": lambda: torch.bmm(meta(4, 7, 5), meta(4, 5, 3)),
    "batched matmul": lambda: torch.matmul(meta(2, 4, 7, 5), meta(5, 3)),
    "mv": lambda: torch.mv(meta(7, 5), meta(5)),
    "einsum": lambda: torch.einsum("ij,jk->ik", meta(7, 5), meta(5, 3)),
    "linear": lambda: F.linear(meta(4, 400), meta(120, 400), meta(120)),
    "conv1d": lambda: F.conv1d(meta(2, 3, 50), meta(8, 3, 5), padding=2),
    "conv2d groups": lambda: F.conv2d(meta(2, 4, 20, 20), meta(8, 2, 3, 3), groups=2),
    "a network": lambda: cnn()(meta(4, 3, 32, 32)),
    "no matrix work": lambda: F.relu(meta(4, 10)) + 1,
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("extra", [None, WINDOW_WORK])
def test_the_same_total_as_torchs_counter(name, extra):
    with torch.no_grad(), FlopCounterMode(display=False, custom_mapping=extra) as torchs:
        CASES[name]()
    with torch.no_grad(), FlopCount(extra) as ours:
        out = CASES[name]()
    assert ours.total == torchs.get_total_flops()
    assert isinstance(out, torch.Tensor) and out.device.type == "meta"
    if name == "a network":
        assert ours.total > 0
        if extra is not None:  # the pooling windows are counted by the extra formulas
            with torch.no_grad(), FlopCount() as plain:
                CASES[name]()
            assert ours.total > plain.total


def test_counts_only_while_entered():
    counter = FlopCount()
    with counter:
        meta(7, 5) @ meta(5, 3)
    first = counter.total
    assert first == 2 * 7 * 5 * 3
    meta(70, 50) @ meta(50, 30)
    assert counter.total == first
