"""gradviz.program.budgets.layer_verdicts: a plain layer's verdict worked out from shapes is
the one the meta device measures (outputs' shapes, counts, element sizes and dtypes; FLOPs
and pooling windows), for layers, shapes and dtypes torch accepts; whatever torch refuses or
the module does not know is left to the meta device (None); programs still refuse a layer's
call over a cap at its line, and a class Net's run is charged what it was."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch
from torch import nn

from gradviz.program.budgets import precheck as precheck_module
from gradviz.program.budgets.layer_verdicts import verdict
from gradviz.program.interpreter.run import run_program
from gradviz.program.objects.forward import LayerForward, layer_tensors
from gradviz.program.recording.state import RunState
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions


class _Measured(LayerForward):
    """A layer's forward that is always measured on the meta device."""

    def known(self, args, kwargs):
        return None


def _budget():
    options = RunOptions(simulate_cuda=False, classic=False, limits=DEFAULT_LIMITS)
    return precheck_module.Budget(RunState("x = 1\n", options))


def measured(module: nn.Module, x: torch.Tensor):
    """The meta device's verdict of module(x), or None where it refuses the call."""
    tensors = layer_tensors(module, {})
    found = _budget().measure(_Measured(module), (tensors, x), {})
    return None if found is None else found[0]


def ours(module: nn.Module, x: torch.Tensor):
    return verdict(module, layer_tensors(module, {}), (x,), {})


def _x(*shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")


LAYERS = [
    nn.Linear(400, 120),
    nn.Linear(3, 4, bias=False),
    nn.Linear(5, 2, dtype=torch.float64),
    nn.Conv2d(3, 6, 5),
    nn.Conv2d(4, 8, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), bias=False),
    nn.Conv2d(4, 6, 3, groups=2, padding=2, stride=3),
    nn.Conv2d(3, 4, 3, padding="same"),
    nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"),
    nn.Conv2d(3, 4, 1, dtype=torch.float64),
    nn.MaxPool2d(2, 2),
    nn.MaxPool2d(3, 2, 1),
    nn.MaxPool2d((3, 2), stride=(1, 2)),
    nn.MaxPool2d(2, ceil_mode=True),
    nn.MaxPool2d(3, padding=2),
    nn.MaxPool2d(2, return_indices=True),
    nn.ReLU(),
    nn.Flatten(),
    nn.Flatten(0, 2),
    nn.Flatten(2, 1),
    nn.Tanh(),
    nn.Sequential(
        nn.Conv2d(3, 6, 5),
        nn.ReLU(),
        nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(6 * 14 * 14, 10),
    ),
    nn.Sequential(nn.Linear(4, 3), nn.Tanh()),
    nn.Sequential(nn.Sequential(nn.Linear(4, 3)), nn.ReLU()),
]
INPUTS = [
    _x(4, 3, 32, 32),
    _x(2, 4, 9, 11),
    _x(1, 6, 2, 2),
    _x(4, 400),
    _x(7, 3),
    _x(7, 5, dtype=torch.float64),
    _x(2, 5),
    _x(3, 4),
    _x(4, 4, 8),
    _x(0, 3, 8, 8),
    _x(2, 3, 8, 8, dtype=torch.float64),
    _x(2, 3, 8, 8, dtype=torch.float16),
    _x(4, 400, dtype=torch.int64),
    _x(3),
]


CLASS_NET = """import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
inputs = torch.randn(4, 3, 32, 32)
labels = torch.tensor([1, 0, 3, 9])
out = net(inputs)
loss = F.cross_entropy(out, labels)
"""


@pytest.mark.parametrize(("layer", "x"), list(itertools.product(LAYERS, INPUTS)))
def test_a_known_verdict_is_the_meta_devices(layer, x):
    found = ours(layer, x)
    if found is not None:  # what it answers, the meta device measures exactly
        assert found == measured(layer, x)


def test_the_tutorials_layers_are_answered_and_others_left_to_the_meta_device():
    net = LAYERS[20]
    assert ours(net, _x(4, 3, 32, 32)) == measured(net, _x(4, 3, 32, 32))
    for layer, x in [
        (nn.Conv2d(3, 6, 5), _x(4, 3, 32, 32)),
        (nn.MaxPool2d(2, 2), _x(4, 6, 28, 28)),
        (nn.Linear(400, 120), _x(4, 400)),
        (nn.Linear(400, 120, bias=False), _x(4, 400)),
    ]:
        found = ours(layer, x)
        assert found is not None and found[1] > 0 and found == measured(layer, x)
    for layer, x, args, kwargs in [
        (nn.Linear(400, 120), _x(4, 400, dtype=torch.float64), None, {}),  # torch refuses
        (nn.Linear(400, 120), _x(4, 399), None, {}),
        (nn.Linear(4, 3), _x(2, 5, 4), None, {}),  # more than a matrix: measured
        (nn.Conv2d(3, 6, 5), _x(4, 3, 4, 4), None, {}),  # smaller than the kernel
        (nn.Conv2d(3, 6, 5), _x(3, 32, 32), None, {}),  # one image without its batch
        (nn.Conv2d(3, 6, 5, padding="same"), _x(4, 3, 32, 32), None, {}),
        (nn.Tanh(), _x(4, 3), None, {}),
        (nn.Linear(4, 3), _x(2, 4), (_x(2, 4), _x(2, 4)), {}),  # two inputs
        (nn.Linear(4, 3), _x(2, 4), None, {"x": 1}),
        (nn.Sequential(nn.Linear(4, 3), nn.Tanh()), _x(2, 4), None, {}),
    ]:
        tensors = layer_tensors(layer, {})
        assert verdict(layer, tensors, args or (x,), kwargs) is None, layer
    grown = nn.Linear(4, 3)
    grown.register_buffer("scale", torch.ones(3))  # a buffer the forward may read: measured
    assert verdict(grown, layer_tensors(grown, {}), (_x(2, 4),), {}) is None
    layer = nn.Linear(4, 3)
    assert verdict(layer, {"weight": layer.weight}, (_x(2, 4),), {}) is None  # bias not given
    extra = {**layer_tensors(layer, {}), "other": layer.weight}
    assert verdict(layer, extra, (_x(2, 4),), {}) is None  # a tensor no layer reads
    square = nn.Linear(4, 4)
    twice = nn.Sequential(square, square)  # one layer twice: its tensors named once
    assert verdict(twice, layer_tensors(twice, {}), (_x(2, 4),), {}) is None
    assert measured(twice, _x(2, 4)) is not None


def test_given_tensors_are_the_ones_sized():
    """A gradient check's float64 copies stand in for a layer's parameters: the verdict is
    of the tensors the forward is given, not of the layer's own."""
    layer = nn.Linear(4, 3)
    copies = {k: torch.empty(t.shape, dtype=torch.float64) for k, t in layer.named_parameters()}
    found = verdict(layer, copies, (_x(2, 4, dtype=torch.float64),), {})
    assert found is not None and found[0][0][3] == torch.float64
    assert verdict(layer, copies, (_x(2, 4),), {}) is None


def test_known_verdicts_skip_the_meta_device(monkeypatch):
    """The tutorial's class Net measures no layer call on the meta device, and its run is
    charged the same bytes and FLOPs, refused over a cap at the same line."""
    calls = []
    meta_call = precheck_module.Budget._meta_call

    def counted(self, fn, args, kwargs):
        calls.append(fn)
        return meta_call(self, fn, args, kwargs)

    source = CLASS_NET
    trace = run_program(source, RunOptions(backward="loss", classic=False))
    assert trace.error is None
    monkeypatch.setattr(precheck_module.Budget, "_meta_call", counted)
    again = run_program(source, RunOptions(backward="loss", classic=False))
    assert again.error is None
    assert not [fn for fn in calls if isinstance(fn, LayerForward)]
    monkeypatch.setattr(LayerForward, "known", _Measured.known)
    measured_run = run_program(source, RunOptions(backward="loss", classic=False))
    for run in (trace, again):
        assert (run.stats.bytes, run.stats.flops, run.stats.operations) == (
            measured_run.stats.bytes,
            measured_run.stats.flops,
            measured_run.stats.operations,
        )
    monkeypatch.undo()
    limits = dataclasses.replace(DEFAULT_LIMITS, max_total_flops=trace.stats.flops - 1)
    capped = run_program(source, RunOptions(backward="loss", classic=False, limits=limits))
    assert capped.error is not None and capped.error.kind == "limit"
    conv1 = 28 * 28 * 5 * 5 * 4 * 6 * 3 * 2  # output pixels, kernel, batch, channels, 2
    small = dataclasses.replace(DEFAULT_LIMITS, max_flops_per_op=conv1 - 1)
    capped = run_program(source, RunOptions(backward="loss", classic=False, limits=small))
    assert capped.error is not None and capped.error.kind == "limit"
    assert (
        capped.error.line
        == source.splitlines().index("        x = self.pool(F.relu(self.conv1(x)))") + 1
    )
