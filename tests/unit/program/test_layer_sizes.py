"""gradviz.program.budgets.layer_sizes: the parameters of a Linear or Conv2d worked out from its
arguments are the ones the layer made on the meta device has (shapes, dtype, order), and
whatever is not plain is left to the meta device (None); programs still refuse giant and
invalid layers at their line."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from gradviz.program.budgets.layer_sizes import made
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions


def on_meta(target, given):
    """What the meta device says: [(shape, dtype)] or None when torch refuses."""
    try:
        with torch.device("meta"):
            layer = target(**given)
    except Exception:  # noqa: BLE001 - any refusal
        return None
    return [(tuple(p.shape), p.dtype) for p in layer.parameters()] + [
        (tuple(b.shape), b.dtype) for b in layer.buffers()
    ]


LINEAR = [
    dict(zip(("in_features", "out_features"), sizes, strict=True)) | extra
    for sizes in [(400, 120), (1, 1), (3, 0), (0, 3), (-1, 3), (2.0, 3), (True, 3)]
    for extra in [{}, {"bias": False}, {"dtype": torch.float64}, {"dtype": torch.int64}]
]
CONV = [
    {"in_channels": i, "out_channels": o, "kernel_size": k} | extra
    for (i, o), k in itertools.product(
        [(3, 6), (6, 16), (4, 8), (3, 4), (0, 4)], [5, (3, 2), [1, 1], 0, (3,), (2, 2, 2)]
    )
    for extra in [
        {},
        {"groups": 2},
        {"stride": 2, "padding": 1, "dilation": 2},
        {"stride": (1, 2), "padding": (0, 3)},
        {"padding": "same"},
        {"padding": -1},
        {"stride": 0},
        {"bias": False, "dtype": torch.float16},
        {"padding_mode": "reflect"},
        {"padding_mode": "circular", "padding": 1},
    ]
]


@pytest.mark.parametrize(
    ("target", "given"), [(nn.Linear, g) for g in LINEAR] + [(nn.Conv2d, g) for g in CONV]
)
def test_known_sizes_are_the_meta_devices(target, given):
    ours = made(target, given)
    if ours is not None:  # what it answers, torch makes exactly (None: torch refuses)
        assert ours == on_meta(target, given)


def test_plain_layers_are_answered_and_others_left_to_the_meta_device():
    assert made(nn.Linear, {"in_features": 400, "out_features": 120}) is not None
    assert made(nn.Conv2d, {"in_channels": 3, "out_channels": 6, "kernel_size": 5}) is not None
    for target, given in [
        (nn.Linear, {"in_features": 4, "out_features": True}),
        (nn.Conv2d, {"in_channels": 3, "out_channels": 6, "kernel_size": 5, "groups": 2}),
        (nn.Conv2d, {"in_channels": 3, "out_channels": 6, "kernel_size": 5, "padding": "same"}),
        (nn.BatchNorm1d, {"num_features": 4}),
        (nn.Embedding, {"num_embeddings": 10, "embedding_dim": 3}),
    ]:
        assert made(target, given) is None, (target, given)
    with torch.device("meta"):
        default = nn.Linear(2, 3).weight.dtype
    try:
        torch.set_default_dtype(torch.float64)
        assert made(nn.Linear, {"in_features": 2, "out_features": 3})[0][1] == torch.float64
    finally:
        torch.set_default_dtype(default)


def run(source: str):
    return run_program("import torch\nimport torch.nn as nn\n" + source, RunOptions(classic=False))


def test_programs_still_refuse_giant_and_invalid_layers_at_their_line():
    for source, words in [
        ("net = nn.Linear(10**6, 10**6)", "budget of parameters per model"),
        ("c = nn.Conv2d(1000, 1000, 100)", "10,000,001,000 parameters"),
        ("c = nn.Conv2d(3, 6, 5, groups=2)", "in_channels must be divisible by groups"),
        ("c = nn.Conv2d(3, 6, 5, padding_mode='odd')", "padding_mode"),
    ]:
        trace = run(source)
        assert trace.error is not None and words in trace.error.message, trace.error
        assert (trace.error.line, trace.error.col) == (3, source.index("nn.") + 1)
    trace = run("net = nn.Linear(400, 120)\nc = nn.Conv2d(3, 6, 5, bias=False)\n")
    assert trace.error is None and trace.stats.bytes == (400 * 120 + 120 + 6 * 3 * 25) * 4
