"""The budgets of layers (gradviz.program.results.limits.Limits): parameters per model and in all,
FLOPs per operation and in all, each refused at its line and column with the budget named,
smaller on a public host; and every layer of the table is sized on the meta device first."""

from __future__ import annotations

import ast

import pytest
import torch

from gradviz.program.allowlists import nntables
from gradviz.program.interpreter.statements import Interpreter
from gradviz.program.objects.forward import LayerForward, layer_tensors
from gradviz.program.results.limits import DEFAULT_LIMITS, PUBLIC_PROGRAM_LIMITS, Limits
from gradviz.program.results.trace import RunOptions
from gradviz.program.syntax.program_error import ProgramError
from tests.unit.program.test_nn import ok, refused


def test_public_budgets_are_smaller():
    for name in (
        "max_model_parameters",
        "max_total_parameters",
        "max_flops_per_op",
        "max_total_flops",
    ):
        assert getattr(PUBLIC_PROGRAM_LIMITS, name) < getattr(DEFAULT_LIMITS, name), name
    assert DEFAULT_LIMITS.max_model_parameters == 20_000_000
    assert PUBLIC_PROGRAM_LIMITS.max_model_parameters == 2_000_000


def test_giant_layers_are_refused_before_they_exist():
    err = refused("net = nn.Linear(10**6, 10**6)", "limit", "budget of parameters per model")
    assert (err.line, err.col) == (1, 7)
    assert "1,000,001,000,000 parameters" in err.message and "20,000,000" in err.message
    refused("c = nn.Conv2d(1000, 1000, 100)", "limit", "10,000,001,000 parameters")
    refused("e = nn.Embedding(10**12, 10**12)", "limit", "budget of parameters per model")


def test_the_public_budget_per_model():
    source = "net = nn.Linear(2000, 2000)\n"  # 4,002,000 parameters
    ok(source)
    err = refused(source, "limit", "2,000,000", limits=PUBLIC_PROGRAM_LIMITS)
    assert "budget of parameters per model" in err.message


def test_a_model_counts_its_layers_together():
    small = Limits(max_model_parameters=100)
    source = "a = nn.Linear(7, 7)\nb = nn.Linear(7, 7)\nnet = nn.Sequential(a, nn.ReLU(), b)\n"
    err = refused(source, "limit", "112 parameters", limits=small)
    assert (err.line, err.col) == (3, 7)
    err = refused(
        "a = nn.ModuleList([nn.Linear(7, 7)])\na.append(nn.Linear(7, 7))\n",
        "limit",
        "budget of parameters per model",
        limits=small,
    )
    assert err.line == 2


def test_parameters_in_all():
    source = "\n".join(f"a{i} = nn.Linear(3000, 3000)" for i in range(7))
    err = refused(source, "limit", "budget of parameters in all is 50,000,000")
    assert (err.line, err.col) == (6, 6)
    assert "54,018,000" in err.message


def test_a_layer_counts_its_bytes():
    trace = ok("net = nn.Linear(1000, 1000)\n")
    assert trace.stats.bytes >= 1000 * 1001 * 4
    err = refused(
        "net = nn.Linear(1000, 1000)\n",
        "limit",
        "would allocate",
        limits=Limits(max_tensor_bytes=10**6),
    )
    assert err.line == 1


def test_flops_per_operation_through_a_layer():
    err = refused(
        "fc = nn.Linear(4000, 4000)\nx = torch.ones(1000, 4000)\ny = fc(x)\n",
        "limit",
        "floating-point operations",
    )
    assert (err.line, err.col) == (3, 5)
    assert "3.2e+10" in err.message and "5e+09 per operation" in err.message


def test_flops_of_a_whole_model_are_one_operation():
    source = (
        "net = nn.Sequential(nn.Linear(100, 100), nn.Linear(100, 100))\n"
        "x = torch.ones(100, 100)\n"
        "y = net(x)\n"
    )
    trace = ok(source)
    assert trace.stats.flops == pytest.approx(2 * 2 * 100**3)
    err = refused(source, "limit", "per operation", limits=Limits(max_flops_per_op=3e6))
    assert err.line == 3


def test_flops_in_all_and_pooling_windows():
    err = refused(
        "fc = nn.Linear(1000, 1000)\nx = torch.ones(1000, 1000)\n"
        + "".join(f"y{i} = fc(x)\n" for i in range(6)),
        "limit",
        "in all",
        limits=Limits(max_total_flops=1e10),
    )
    assert err.line == 8  # the sixth call: 1.2e10, each 2e9
    trace = ok("p = nn.MaxPool2d(4)\nx = torch.ones(1, 8, 8)\ny = p(x)\n")
    assert trace.stats.flops == 4 * 16  # 4 outputs, each reads a 4x4 window


def test_attention_is_sized_before_it_runs():
    err = refused(
        "m = nn.MultiheadAttention(64, 1)\nq = torch.ones(8000, 1, 64)\no = m(q, q, q)\n",
        "limit",
        "would allocate",
    )
    assert "8000x8000" in err.message


# ---------------------------------------------------------------- the table, on meta

X4 = (torch.rand(2, 3),)
LAYER_CALLS: dict[str, tuple[dict, tuple]] = {
    "Linear": ({"in_features": 3, "out_features": 4}, X4),
    "Conv2d": ({"in_channels": 3, "out_channels": 2, "kernel_size": 3}, (torch.rand(1, 3, 5, 5),)),
    "LazyLinear": ({"out_features": 4}, X4),
    "LazyConv2d": ({"out_channels": 2, "kernel_size": 3}, (torch.rand(1, 3, 5, 5),)),
    "MaxPool2d": ({"kernel_size": 2}, (torch.rand(1, 3, 4, 4),)),
    "AvgPool2d": ({"kernel_size": 2}, (torch.rand(1, 3, 4, 4),)),
    "BatchNorm1d": ({"num_features": 3}, X4),
    "BatchNorm2d": ({"num_features": 3}, (torch.rand(2, 3, 4, 4),)),
    "LayerNorm": ({"normalized_shape": 3}, X4),
    "Embedding": ({"num_embeddings": 5, "embedding_dim": 3}, (torch.tensor([1, 2]),)),
    "Softmax": ({"dim": 1}, X4),
    "LogSoftmax": ({"dim": 1}, X4),
    "MultiheadAttention": ({"embed_dim": 4, "num_heads": 2}, (torch.rand(3, 1, 4),) * 3),
    "TransformerEncoderLayer": (
        {"d_model": 4, "nhead": 2, "dim_feedforward": 8},
        (torch.rand(3, 1, 4),),
    ),
    "CrossEntropyLoss": ({}, (torch.rand(2, 3), torch.tensor([0, 2]))),
    "NLLLoss": ({}, (torch.rand(2, 3), torch.tensor([0, 2]))),
    "MSELoss": ({}, (torch.rand(2, 3), torch.rand(2, 3))),
    "L1Loss": ({}, (torch.rand(2, 3), torch.rand(2, 3))),
    "BCEWithLogitsLoss": ({}, (torch.rand(2, 3), torch.rand(2, 3))),
}


@pytest.mark.parametrize("name", [n for n, s in nntables.LAYERS.items() if s.kind == "layer"])
def test_every_layer_runs_on_meta_first(name):
    """A layer's forward is pre-checked on shape-only tensors: with a cap no output can
    pass, a pre-check that really ran refuses (one that fell through would refuse nothing)."""
    spec = nntables.LAYERS[name]
    kwargs, inputs = LAYER_CALLS.get(name, ({}, X4))
    module = spec.target(**kwargs)
    if name.startswith("Lazy"):  # sized at its first call (gradviz.program.objects.lazy)
        module(*inputs)
    options = RunOptions(limits=Limits(max_tensor_elements=-1), classic=False)
    interp = Interpreter("", ast.Module(body=[], type_ignores=[]), options)
    forward = LayerForward(module)
    with pytest.raises(ProgramError) as info:
        interp.budget.precheck(name, forward, (layer_tensors(module, {}), *inputs), {}, None)
    assert info.value.kind == "limit" and "would allocate" in info.value.message


def test_every_row_names_real_arguments():
    import inspect

    for table in (nntables.LAYERS, nntables.OPTIMIZERS, nntables.SCHEDULERS, nntables.DATA):
        for name, spec in table.items():
            params = inspect.signature(spec.target.__init__).parameters
            for arg in spec.allowed():
                assert arg in params, (name, arg)
            assert "device" not in spec.allowed() and not any(
                a.startswith("_") for a in spec.allowed()
            )


def test_classification_losses_count_the_values_they_read():
    # cross_entropy and nll_loss are sized without the meta device (they make nothing
    # bigger than their input), but what they read still counts toward the values in all
    source = (
        "logits = torch.randn(1000, 100)\n"
        "labels = torch.zeros(1000, dtype=torch.long)\n"
        "for i in range(100):\n"
        "    loss = F.cross_entropy(logits, labels)\n"
        "    nll = F.nll_loss(logits, labels)\n"
    )
    ok(source)
    err = refused(source, "limit", "values in all", limits=Limits(max_total_elements=2_000_000))
    assert err.line == 4
    refused(
        "a = torch.randn(4, 10)\nb = F.cross_entropy(a, torch.zeros(5).long())",
        "runtime",
        "batch_size",
    )
