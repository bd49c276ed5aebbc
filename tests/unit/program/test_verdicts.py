"""gradviz.program.budgets.precheck_memo: the size pre-check measures a call once per key, and every call,
measured or found, is still charged to the budgets and refused over a cap as before."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from gradviz.program.budgets import precheck as budget_module
from gradviz.program.budgets.call_sites import Sites
from gradviz.program.budgets.precheck_memo import MAX_KEY_ITEMS, Verdicts, call_key
from gradviz.program.interpreter.run import run_program
from gradviz.program.objects.forward import LayerForward
from gradviz.program.results.limits import Limits
from gradviz.program.results.trace import RunOptions

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.fixture
def meta_calls(monkeypatch):
    """How many times the pre-check ran a call on the meta device (every layer's forward
    measured there, as a layer gradviz.program.budgets.layer_verdicts does not know is)."""
    calls = []
    monkeypatch.setattr(LayerForward, "known", lambda self, args, kwargs: None)
    real = budget_module.Budget._meta_call

    def spy(self, fn, meta_args, meta_kwargs):
        calls.append(fn)
        return real(self, fn, meta_args, meta_kwargs)

    monkeypatch.setattr(budget_module.Budget, "_meta_call", spy)
    return calls


@pytest.fixture
def uncached(monkeypatch):
    """Runs with no verdict ever found: the behaviour before the cache, to compare with."""

    def run(source: str, **options):
        with monkeypatch.context() as m:
            m.setattr(Verdicts, "get", lambda self, key: None)
            m.setattr(Sites, "get", lambda self, node, fn, sig: None)
            return run_program(source, RunOptions(classic=False, **options))

    return run


def run(source: str, **options):
    return run_program(source, RunOptions(classic=False, **options))


def same_outcome(cached, plain) -> None:
    """The same error, at the same place, after the same work."""
    assert cached.error is not None and plain.error is not None
    assert cached.error.to_dict() == plain.error.to_dict()
    assert cached.stdout == plain.stdout
    assert (cached.stats.operations, cached.stats.flops, cached.stats.bytes) == (
        plain.stats.operations,
        plain.stats.flops,
        plain.stats.bytes,
    )


def test_a_loop_of_1000_identical_passes_is_measured_once(meta_calls):
    source = HEADER + (
        "net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))\n"
        "x = torch.randn(64, 8)\n"
        "y = torch.randn(64, 1)\n"
        "for step in range(1000):\n"
        "    loss = F.mse_loss(net(x), y)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    forwards = [fn for fn in meta_calls if isinstance(fn, LayerForward)]
    losses = [fn for fn in meta_calls if getattr(fn, "__name__", "") == "mse_loss"]
    assert len(forwards) == 1 and len(losses) == 1, meta_calls
    # still charged at every pass: 2 ops per pass plus the two randn
    assert trace.stats.operations == 2 + 2 * 1000
    assert trace.stats.flops == pytest.approx(1000 * 2 * 64 * (8 * 32 + 32 * 1))


def test_total_flops_are_still_refused_when_a_loop_repeats_one_call(uncached):
    source = HEADER + (
        "a = torch.randn(64, 64)\nfor i in range(100):\n    b = a @ a\n    print(i)\n"
    )
    per_call = 2 * 64**3
    limits = Limits(max_total_flops=per_call * 10.5)
    cached = run(source, limits=limits)
    assert cached.error is not None and cached.error.kind == "limit"
    assert "floating-point operations of matrix work in all" in cached.error.message
    assert cached.error.line == 6  # b = a @ a (after the three import lines)
    assert [line.strip() for line in cached.stdout] == [str(i) for i in range(10)]
    same_outcome(cached, uncached(source, limits=limits))


def test_total_values_and_bytes_are_still_refused_by_repetition(uncached):
    source = HEADER + "a = torch.randn(100, 100)\nfor i in range(1000):\n    b = a @ a\n"
    for limits in (Limits(max_total_elements=10_000 * 50), Limits(max_total_bytes=40_000 * 50)):
        cached = run(source, limits=limits)
        assert cached.error is not None and cached.error.kind == "limit", limits
        assert "in all" in cached.error.message
        same_outcome(cached, uncached(source, limits=limits))


def test_steps_and_statements_still_count_every_pass(uncached):
    source = HEADER + (
        "net = nn.Linear(4, 2)\nx = torch.randn(3, 4)\nfor i in range(1000):\n    y = net(x)\n"
    )
    for limits, words in (
        (Limits(max_steps=2_000), "steps"),
        (Limits(max_statements=500), "statements"),
    ):
        cached = run(source, limits=limits)
        assert cached.error is not None and cached.error.kind == "limit", limits
        assert words in cached.error.message, cached.error.message
        same_outcome(cached, uncached(source, limits=limits))


def test_a_different_shape_misses_the_cache(meta_calls):
    source = HEADER + (
        "net = nn.Linear(4, 2)\n"
        "for n in range(1, 4):\n"
        "    y = net(torch.randn(n, 4))\n"
        "    y = net(torch.randn(n, 4))\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert len([fn for fn in meta_calls if isinstance(fn, LayerForward)]) == 3


def test_a_different_shape_is_refused_after_a_small_one_passed():
    source = HEADER + (
        "a = torch.randn(10, 10)\n"
        "for n in [10, 10, 2000]:\n"
        "    b = torch.ones(n, n) @ torch.ones(n, n)\n"
    )
    trace = run(source, limits=Limits(max_flops_per_op=1e6))
    assert trace.error is not None and trace.error.kind == "limit"
    assert "per operation" in trace.error.message


def test_a_layer_whose_parameters_changed_shape_misses_the_cache(meta_calls):
    module = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    first = call_key(LayerForward(module), (dict(module.named_parameters()), x), {})
    again = call_key(LayerForward(module), (dict(module.named_parameters()), x), {})
    assert first is not None and first == again
    bigger = {"weight": torch.randn(5, 4), "bias": torch.randn(5)}
    assert call_key(LayerForward(module), (bigger, x), {}) != first
    as64 = {k: v.double() for k, v in module.named_parameters()}
    assert call_key(LayerForward(module), (as64, x), {}) != first
    module.eval()  # another mode
    assert call_key(LayerForward(module), (dict(module.named_parameters()), x), {}) != first


def test_a_grown_container_misses_the_cache(meta_calls):
    source = HEADER + (
        "net = nn.Sequential(nn.Linear(4, 4))\n"
        "x = torch.randn(3, 4)\n"
        "y = net(x)\n"
        "net.append(nn.Linear(4, 4))\n"
        "y = net(x)\n"
        "print(y.shape)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert len([fn for fn in meta_calls if isinstance(fn, LayerForward)]) == 2
    assert "torch.Size([3, 4])" in trace.stdout


def test_a_model_whose_layer_is_replaced_is_measured_again(meta_calls):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n"
        "    def grow(self):\n"
        "        self.fc = nn.Linear(4, 300)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "net = Net()\n"
        "x = torch.randn(3, 4)\n"
        "y = net(x)\n"
        "net.grow()\n"
        "y = net(x)\n"
        "print(y.shape)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert "torch.Size([3, 300])" in trace.stdout
    assert len([fn for fn in meta_calls if isinstance(fn, LayerForward)]) == 2


def test_size_from_a_tensor_value_is_never_kept(meta_calls):
    """torch.zeros(torch.tensor(n)) is measured from the number the tensor holds: the same
    shape of argument with another value must be measured again, and refused when big."""
    source = HEADER + "for n in [2, 3, 10**8]:\n    z = torch.zeros(torch.tensor(n))\n"
    trace = run(source)
    assert trace.error is not None and trace.error.kind == "limit", trace.error
    assert "would allocate" in trace.error.message


def test_keys():
    t = torch.randn(3, 4)
    assert call_key(torch.add, (t, 1), {}) == call_key(torch.add, (torch.randn(3, 4), 1), {})
    assert call_key(torch.add, (t, 1), {}) != call_key(torch.add, (t, 1.0), {})
    assert call_key(torch.add, (t, 1), {}) != call_key(torch.add, (t, True), {})
    assert call_key(torch.add, (t, 0.0), {}) != call_key(torch.add, (t, -0.0), {})
    assert call_key(torch.add, (t, 1), {}) != call_key(torch.add, (t.t(), 1), {})  # strides
    assert call_key(torch.add, (t, 1), {}) != call_key(torch.add, (t.double(), 1), {})
    assert call_key(torch.add, (t, 1), {}) != call_key(torch.sub, (t, 1), {})
    assert call_key(torch.sum, (t,), {"dim": 0}) != call_key(torch.sum, (t,), {"dim": 1})
    assert call_key(torch.add, (t, object()), {}) is None  # not plain: measured every time
    assert call_key(torch.tensor, (list(range(MAX_KEY_ITEMS + 1)),), {}) is None
    assert call_key(torch.tensor, (list(range(10)),), {}) is not None


def test_the_store_is_bounded():
    store = Verdicts(size=3)
    for i in range(5):
        store.put(("k", i), ([], float(i)))
    assert len(store.found) == 3
    assert store.get(("k", 0)) is None and store.get(("k", 4)) == ([], 4.0)
    store.put(None, ([], 1.0))
    assert store.get(None) is None and len(store.found) == 3


def test_each_run_has_its_own_store(meta_calls):
    source = HEADER + "a = torch.randn(4, 4)\nfor i in range(3):\n    b = a @ a\n"
    run(source)
    once = len(meta_calls)
    assert once == 1  # the product once for its three passes (randn's size needs no meta call)
    run(source)
    assert len(meta_calls) == 2 * once


def test_layers_with_the_same_weights_but_another_stride_are_apart():
    """Same parameter shapes, another output: the key holds the layer itself."""
    x = torch.randn(1, 1, 8, 8)
    one, two = nn.Conv2d(1, 1, 3), nn.Conv2d(1, 1, 3, stride=2)
    keys = [call_key(LayerForward(m), (dict(m.named_parameters()), x), {}) for m in (one, two)]
    assert None not in keys and keys[0] != keys[1]
    source = HEADER + (
        "x = torch.randn(1, 1, 8, 8)\n"
        "for s in [1, 2]:\n"
        "    y = nn.Conv2d(1, 1, 3, stride=s)(x)\n"
        "    print(y.shape)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert [line.strip() for line in trace.stdout] == [
        "torch.Size([1, 1, 6, 6])",
        "torch.Size([1, 1, 3, 3])",
    ]
    assert trace.stats.bytes == 4 * (64 + 36 + 9) + 4 * 2 * (9 + 1)
