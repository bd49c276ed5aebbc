"""gradviz.program.objects.layers: torch.nn layers in the language give PyTorch's own numbers, answer
what the table allows, and refuse the rest with a line and column."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions, Trace


def run(source: str, **options) -> Trace:
    return run_program(source, RunOptions(classic=False, **options))


def ok(source: str, **options) -> Trace:
    trace = run(source, **options)
    assert trace.error is None, trace.error
    return trace


def refused(source: str, kind: str, words: str = "", **options):
    trace = run(source, **options)
    assert trace.error is not None, "expected an error"
    assert trace.error.kind == kind, trace.error
    assert words.lower() in trace.error.message.lower(), trace.error.message
    assert trace.error.line and trace.error.col, trace.error
    return trace.error


def reference(source: str) -> dict:
    """The same program in PyTorch itself (trusted test code), without touching the global
    generator of the tests around it."""
    env: dict = {"torch": torch, "nn": nn, "optim": optim, "F": F}
    with torch.random.fork_rng():
        exec(compile(source, "<reference>", "exec"), env)
    return env


def value(trace: Trace, name: str) -> torch.Tensor:
    info = trace.tensor(name)
    assert info is not None and info.value is not None, name
    return torch.tensor(info.value)


def same_as_torch(source: str, names: list[str], atol: float = 0.0) -> Trace:
    trace = ok(source)
    env = reference(source)
    for name in names:
        expected = env
        for part in name.split("."):
            expected = (
                expected[int(part)]
                if part.isdigit()
                else (expected[part] if isinstance(expected, dict) else getattr(expected, part))
            )
        got = value(trace, name)
        assert torch.allclose(got, expected.detach().float(), atol=atol, rtol=0), name
    return trace


# ---------------------------------------------------------------- each family of layers


def test_linear_and_activations_match_torch():
    source = (
        "torch.manual_seed(0)\n"
        "fc = nn.Linear(3, 4)\n"
        "x = torch.randn(2, 3)\n"
        "h = fc(x)\n"
        "r = nn.ReLU()(h)\n"
        "g = nn.GELU()(h)\n"
        "t = nn.Tanh()(h)\n"
        "s = nn.Sigmoid()(h)\n"
        "p = nn.Softmax(dim=1)(h)\n"
    )
    same_as_torch(source, ["fc.weight", "fc.bias", "x", "h", "r", "g", "t", "s", "p"])


def test_conv_pool_batchnorm_flatten_match_torch():
    source = (
        "torch.manual_seed(1)\n"
        "conv = nn.Conv2d(2, 3, 3, padding=1)\n"
        "x = torch.randn(2, 2, 6, 6)\n"
        "c = conv(x)\n"
        "m = nn.MaxPool2d(2)(c)\n"
        "a = nn.AvgPool2d(2)(c)\n"
        "bn = nn.BatchNorm2d(3)\n"
        "b = bn(m)\n"
        "f = nn.Flatten()(b)\n"
        "mean = bn.running_mean\n"
    )
    trace = same_as_torch(source, ["conv.weight", "c", "m", "a", "b", "f", "mean"], atol=1e-6)
    assert trace.tensor("f").shape == [2, 27]


def test_norms_embedding_dropout_match_torch():
    source = (
        "torch.manual_seed(2)\n"
        "emb = nn.Embedding(10, 4)\n"
        "i = torch.tensor([[1, 2], [3, 9]])\n"
        "e = emb(i)\n"
        "ln = nn.LayerNorm(4)\n"
        "n = ln(e)\n"
        "bn = nn.BatchNorm1d(4)\n"
        "b = bn(e.reshape(4, 4))\n"
        "d = nn.Dropout(0.5)(n)\n"
    )
    same_as_torch(source, ["emb.weight", "e", "n", "b", "d"], atol=1e-6)


def test_attention_and_transformer_layer_match_torch():
    source = (
        "torch.manual_seed(3)\n"
        "att = nn.MultiheadAttention(8, 2, batch_first=True)\n"
        "q = torch.randn(2, 5, 8)\n"
        "o, w = att(q, q, q)\n"
        "enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, "
        "batch_first=True)\n"
        "z = enc(q)\n"
    )
    same_as_torch(source, ["o", "w", "z"], atol=1e-6)


def test_losses_match_torch():
    source = (
        "torch.manual_seed(4)\n"
        "x = torch.randn(4, 3, requires_grad=True)\n"
        "y = torch.tensor([0, 2, 1, 2])\n"
        "ce = nn.CrossEntropyLoss(label_smoothing=0.1)(x, y)\n"
        "nll = nn.NLLLoss()(F.log_softmax(x, dim=1), y)\n"
        "mse = nn.MSELoss()(x, torch.ones(4, 3))\n"
        "bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 2.0, 3.0]))(x, torch.ones(4, 3))\n"
        "total = ce + nll + mse + bce\n"
        "total.backward()\n"
    )
    trace = same_as_torch(source, ["ce", "nll", "mse", "bce"], atol=1e-6)
    env = reference(source)
    assert torch.allclose(torch.tensor(trace.tensor("x").grad), env["x"].grad, atol=1e-6)


def test_sequential_mlp_forward_backward_matches_torch():
    source = (
        "torch.manual_seed(5)\n"
        "net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))\n"
        "x = torch.randn(4, 3)\n"
        "loss = net(x).pow(2).mean()\n"
        "loss.backward()\n"
    )
    trace = ok(source)
    env = reference(source)
    for name, p in env["net"].named_parameters():
        info = trace.tensor(f"net.{name}")
        assert torch.allclose(torch.tensor(info.value), p.detach(), atol=0, rtol=0), name
        assert torch.allclose(torch.tensor(info.grad), p.grad, atol=1e-7), name


def test_initial_values_follow_the_seed_and_leave_torch_alone():
    before = torch.get_rng_state()
    a = ok("torch.manual_seed(7)\nfc = nn.Linear(2, 2)\n")
    b = ok("torch.manual_seed(7)\nfc = nn.Linear(2, 2)\n")
    c = ok("torch.manual_seed(8)\nfc = nn.Linear(2, 2)\n")
    assert a.tensor("fc.weight").value == b.tensor("fc.weight").value
    assert a.tensor("fc.weight").value != c.tensor("fc.weight").value
    assert torch.equal(before, torch.get_rng_state())


# ---------------------------------------------------------------- what a program can do with one


def test_containers_index_len_and_attributes():
    trace = ok(
        "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))\n"
        "print(len(net), net[0].in_features, net[-1].out_features, net[0].weight.shape)\n"
        "head = net[1:]\n"
        "print(len(head))\n"
        "layers = nn.ModuleList([nn.Linear(2, 2)])\n"
        "layers.append(nn.Tanh())\n"
        "print(len(layers))\n"
        "y = layers[1](layers[0](torch.ones(1, 2)))\n"
        "print(net.training)\n"
        "net.eval()\n"
        "print(net.training, net[0].training)\n"
    )
    assert trace.stdout == [
        "3 3 2 torch.Size([4, 3])",
        "2",
        "2",
        "True",
        "False False",
    ]


def test_parameters_state_dict_and_load_state_dict():
    trace = ok(
        "a = nn.Linear(2, 3)\n"
        "b = nn.Linear(2, 3)\n"
        "sd = a.state_dict()\n"
        "print(sd.keys(), len(sd), sd['bias'].shape)\n"
        "keys = b.load_state_dict(sd)\n"
        "print(keys, torch.equal(a.weight, b.weight))\n"
        "ps = b.parameters()\n"
        "names = b.named_parameters()\n"
        "b.requires_grad_(False)\n"
        "print(b.weight.requires_grad)\n"
        "b.zero_grad()\n"
    )
    assert trace.stdout == [
        "['weight', 'bias'] 2 torch.Size([3])",
        "([], []) True",
        "False",
    ]


def test_module_list_is_not_callable():
    refused("layers = nn.ModuleList([nn.ReLU()])\ny = layers(torch.ones(2))", "type", "no forward")


def test_parameters_iterate_through_python_protocol():
    """A `for` loop or next() (the statements side) reaches the values through Python's
    iterator protocol on the objects: checked here directly."""
    from gradviz.program.interpreter.statements import RESERVED_NAMES, Interpreter
    from gradviz.program.syntax.checker import parse

    source = (
        "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\nps = net.parameters()\n"
    )
    interp = Interpreter(source, parse(source, RunOptions().limits, RESERVED_NAMES), RunOptions())
    interp.run()
    env = interp.state.env
    shapes = [tuple(p.shape) for p in env["ps"]]
    assert shapes == [(4, 3), (4,), (1, 4), (1,)]
    assert list(env["ps"]) == []  # one pass, like a generator
    assert [type(r.module).__name__ for r in env["net"]] == ["Linear", "ReLU", "Linear"]


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        ("net = nn.Linear(2, 2)\nnet.register_forward_hook(print)", "name", "hooks"),
        (
            'net = nn.Linear(2, 2)\nnet.register_buffer("b", torch.ones(1))',
            "name",
            "register_buffer",
        ),
        ("net = nn.Linear(2, 2)\nm = net.modules()", "name", "indexing"),
        ("net = nn.Linear(2, 2)\nn = net.lol", "name", "no attribute"),
        ("net = nn.Linear(2, 2)\nf = net.forward", "type", "method"),
        ("net = nn.Linear(2, 2, device='cuda')", "forbidden", "device="),
        ("net = nn.Linear(2, 2, 3, 4)", "type", "positional"),
        ("net = nn.Linear(2, 2, color=3)", "type", "no argument `color`"),
        ("net = nn.TransformerEncoderLayer(8, 2, activation=print)", "type", "activation"),
        ("net = nn.Sequential(print)", "type", "holds layers"),
        ("net = nn.Linear(2, 2)\nnet.load_state_dict('w.pt')", "type", "no files"),
        ("net = nn.Linear(2, 2)\nnet.to(print)", "type", "device or a dtype"),
        ("net = nn.Linear(2, 2)\ny = net(print)", "type", "cannot be a"),
        ("net = nn.Linear(2, 2)\ny = net + 1", "type", "torch.nn.Linear layer"),
        ("net = nn.Linear(2, 2)\ny = torch.tensor(net)", "type", "takes tensors and numbers"),
        ("net = nn.Linear(2, 2)\ny = torch.ones(2).add(net)", "type", "not a torch.nn.Linear"),
        ("net = nn.Linear(2, 2)\ny = torch.cat([torch.ones(1), net])", "type", "not a torch"),
        ("net = nn.Linear(2, 2)\nn = len(net)", "type", "no len()"),
        ("L = nn.Linear\nm = L(10 ** 6, 10 ** 6)", "limit", "parameters"),
        ("m = nn.Module()", "type", "cannot be called"),
        ("s = nn.Sequential(nn.ReLU())\ns.append(s)", "type", "itself"),
        ("net = nn.Linear(2, 2)\ny = net(torch.ones(1, 3))", "runtime", "cannot be multiplied"),
    ],
)
def test_refusals_have_a_place_and_a_reason(source, kind, words):
    refused(source, kind, words)


def test_nesting_is_bounded():
    deep = "a = nn.ReLU()\n" + "a = nn.Sequential(a)\n" * 33
    err = refused(deep, "limit", "containers deep")
    assert err.line == 34


# ---------------------------------------------------------------- devices


def test_model_to_simulated_cuda_moves_its_parameters():
    trace = ok(
        "net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))\n"
        "net = net.to('cuda')\n"
        "x = torch.randn(2, 3).to('cuda')\n"
        "y = net(x).sum()\n"
        "y.backward()\n"
        "print(net[0].weight.device, net[0].weight.grad.device, net[1].running_mean.device)\n",
        simulate_cuda=True,
    )
    assert trace.stdout == ["cuda:0 cuda:0 cuda:0"]
    assert trace.tensor("net.0.weight").device == "cuda:0"


def test_device_mixing_inside_a_layer_names_the_layer_and_the_input():
    err = refused(
        "net = nn.Linear(3, 4)\nnet.to('cuda')\nx = torch.randn(2, 3)\ny = net(x)\n",
        "runtime",
        "same device",
        simulate_cuda=True,
    )
    assert (err.line, err.col) == (4, 5)
    assert dict(err.details.device.tensors) == {"next(net.parameters())": "cuda:0", "x": "cpu"}
    assert err.details.device.fix_code == "x = x.to(next(net.parameters()).device)"
    err = refused(
        "net = nn.Linear(3, 4)\nx = torch.randn(2, 3).cuda()\ny = net(x)\n",
        "runtime",
        "same device",
        simulate_cuda=True,
    )
    assert err.details.device.fix_code == "net = net.to(x.device)"


def test_a_missing_simulated_gpu_is_refused():
    refused("net = nn.Linear(2, 2)\nnet.cuda(5)", "runtime", "does not exist", simulate_cuda=True)


# ---------------------------------------------------------------- gradient check


def test_gradient_check_covers_layer_parameters():
    from gradviz.program.gradcheck import check_gradients

    source = (
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))\n"
        "x = torch.randn(4, 2, requires_grad=True)\n"
        "y = net(x).sum()\n"
    )
    trace = ok(source, backward="y")
    result = check_gradients(source, "y", {t.name: t.grad for t in trace.tensors})
    assert result.ok, result.message
    assert {c.name for c in result.leaves} == {
        "net.0.weight",
        "net.0.bias",
        "net.2.weight",
        "net.2.bias",
        "x",
    }


@pytest.mark.parametrize(("move", "expected"), [("", "cpu"), ("net.to('cuda:1')\n", "cuda:1")])
def test_next_parameters_device_follows_the_device_mode(move, expected):
    """`next(net.parameters()).device`: next() is Python's on the object (the statements side
    binds the built-in), .device is the language's own attribute read."""
    from gradviz.program.interpreter.statements import RESERVED_NAMES, Interpreter
    from gradviz.program.syntax.checker import parse

    source = "net = nn.Sequential(nn.Linear(3, 4))\n" + move + "ps = net.parameters()\n"
    options = RunOptions(simulate_cuda=True)
    interp = Interpreter(source, parse(source, options.limits, RESERVED_NAMES), options)
    interp.run()
    first = next(interp.state.env["ps"])
    assert first is interp.state.env["net"].module[0].weight
    assert str(interp.state.device_of(first)) == expected
