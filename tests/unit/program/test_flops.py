"""gradviz.program.budgets.flops.FlopCount: the same total as torch's FlopCounterMode, with the same
formulas and extra ones, for the matrix work and layers the pre-check measures on the meta
device; nothing is counted outside it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from gradviz.program.budgets.flops import FlopCount
from gradviz.program.budgets.precheck import WINDOW_WORK


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


def _inputs():
    base = meta(4, 6, 8, 8)
    yield base
    yield base.transpose(1, 3)  # strided
    yield base.to(memory_format=torch.channels_last)
    yield meta(5).double()
    yield torch.empty((), device="meta")


CALLS = {
    torch.ops.aten.relu.default: lambda x: (x,),
    torch.ops.aten.gelu.default: lambda x: (x,),
    torch.ops.aten.silu.default: lambda x: (x,),
    torch.ops.aten.leaky_relu.default: lambda x: (x, 0.1),
    torch.ops.aten.hardtanh.default: lambda x: (x, -1.0, 1.0),
    torch.ops.aten.elu.default: lambda x: (x, 1.0, 1.0, 1.0),
    torch.ops.aten.threshold.default: lambda x: (x, 0.0, 0.0),
    torch.ops.aten.native_dropout.default: lambda x: (x, 0.5, True),
}


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert (a.shape, a.stride(), a.dtype, a.device) == (b.shape, b.stride(), b.dtype, b.device)


def test_every_shortcut_is_tested_and_never_decomposed():
    from gradviz.program.budgets.flops import SHORTCUTS

    assert set(SHORTCUTS) == {*CALLS, torch.ops.aten.addmm.default}
    for op in SHORTCUTS:  # torch's counter would not have walked into them either
        assert not torch._C._dispatch_has_kernel_for_dispatch_key(
            op.name(), "CompositeImplicitAutograd"
        )


@pytest.mark.parametrize("op", list(CALLS), ids=str)
def test_activations_make_what_torchs_meta_kernels_make(op):
    for x in _inputs():
        args = CALLS[op](x)
        with FlopCount() as counter:
            ours = op(*args)
        _same(ours, op(*args))
        assert counter.total == 0


def test_addmm_as_torch_makes_and_refuses_it():
    cases = [
        (meta(120), meta(4, 400), meta(400, 120)),
        (meta(1, 120), meta(4, 400), meta(120, 400).t()),
        (meta(4, 120), meta(4, 400), meta(400, 120)),
        (meta(4, 1), meta(4, 400), meta(400, 120)),
        (torch.empty((), device="meta"), meta(4, 400), meta(400, 120)),
        (meta(120).double(), meta(4, 400).double(), meta(400, 120).double()),
    ]
    for bias, a, b in cases:
        with FlopCount() as counter:
            ours = torch.addmm(bias, a, b)
        _same(ours, torch.addmm(bias, a, b))
        assert counter.total == 2 * 4 * 400 * 120
    refused = [
        (meta(7), meta(4, 400), meta(400, 120)),  # biases that do not broadcast
        (meta(2, 120), meta(4, 400), meta(400, 120)),
        (meta(1, 4, 120), meta(4, 400), meta(400, 120)),
        (meta(120), meta(4, 400), meta(401, 120)),  # matrices that do not fit
        (meta(120).double(), meta(4, 400), meta(400, 120)),  # dtypes apart (torch's meta
        # kernel would promote them: the real call refuses them, as the shortcut does)
        (meta(120), meta(4, 400), meta(400, 120).double()),
    ]
    for bias, a, b in refused:
        with pytest.raises(RuntimeError):  # torch's own kernel, on real tensors
            torch.addmm(*(torch.zeros(t.shape, dtype=t.dtype) for t in (bias, a, b)))
        with pytest.raises(RuntimeError), FlopCount():
            torch.addmm(bias, a, b)


def test_real_tensors_take_no_shortcut():
    x = torch.tensor([-1.0, 2.0])
    with FlopCount():
        y = torch.relu(x)
        z = torch.addmm(torch.ones(2), torch.eye(2), torch.eye(2))
    assert y.tolist() == [0.0, 2.0]
    assert z.tolist() == [[2.0, 1.0], [1.0, 2.0]]


def test_shapes_as_torchs_shape_wrapper_gives_them():
    from torch.utils._pytree import tree_map
    from torch.utils.flop_counter import get_shape

    from gradviz.program.budgets.flops import shapes_of

    t = meta(2, 3)
    values = [
        t,
        (t, [t, 2], None),
        {"a": t, "b": [1.5, "x", torch.float32]},
        torch.return_types.max((t, t)),  # a structseq: torch's own walk
        [],
        (),
    ]
    for v in values:
        assert shapes_of(v) == tree_map(get_shape, v)
        assert type(shapes_of(v)) is type(tree_map(get_shape, v))
