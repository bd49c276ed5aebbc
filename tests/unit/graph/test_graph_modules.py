"""The graph of a program with layers: parameters named by their path (net.0.weight), each
layer call a cluster (gradviz.graph.model.ModuleCall), drawn nested and labelled."""

from __future__ import annotations

import pytest

from gradviz.graph.dot import MAX_CLUSTER_DEPTH, to_dot
from gradviz.graph.model import GraphModel, GraphNode, ModuleCall
from gradviz.graph.render import dot_available, render_bytes
from tests.unit.program.test_nn import ok

MLP = (
    "torch.manual_seed(0)\n"
    "fc1 = nn.Linear(3, 4)\n"
    "net = nn.Sequential(fc1, nn.ReLU(), nn.Linear(4, 1))\n"
    "x = torch.randn(2, 3)\n"
    "out = net(x)\n"
    "loss = nn.MSELoss()(out, torch.zeros(2, 1))\n"
    "loss.backward()\n"
)


@pytest.fixture(scope="module")
def mlp():
    return ok(MLP)


def test_parameters_are_named_by_their_path(mlp):
    labels = [t.label for t in mlp.tensors if t.is_leaf and t.requires_grad]
    assert labels == [
        "fc1.weight = net.0.weight",
        "fc1.bias = net.0.bias",
        "net.2.weight",
        "net.2.bias",
    ]
    info = mlp.tensor("net.2.weight")
    assert info.expr.startswith("Linear(in_features=4, out_features=1")
    assert info.grad is not None


def test_each_layer_call_is_recorded_with_its_parent(mlp):
    calls = [(c.path, c.kind, c.line, c.parent) for c in mlp.graph.modules]
    assert calls == [
        ("net", "Sequential", 5, None),
        ("net.0", "Linear", 5, "m0"),
        ("net.1", "ReLU", 5, "m0"),
        ("net.2", "Linear", 5, "m0"),
        ("nn.MSELoss()", "MSELoss", 6, None),
    ]


def test_nodes_belong_to_the_call_that_made_them(mlp):
    graph = mlp.graph
    path = {c.id: c.path for c in graph.modules}
    where = {n.title: path.get(n.module) for n in graph.nodes}
    assert where["fc1.weight = net.0.weight"] == "net.0"
    assert where["net.2.bias"] == "net.2"
    assert where["ReluBackward0"] == "net.1"
    assert where["MseLossBackward0"] == "nn.MSELoss()"
    assert where["x"] is None and where["out"] is None and where["loss"] is None
    linear = [n for n in graph.nodes if n.title == "AddmmBackward0"]
    assert sorted(path[n.module] for n in linear) == ["net.0", "net.2"]


def test_two_calls_are_two_clusters():
    trace = ok("net = nn.Linear(2, 2)\nx = torch.ones(1, 2)\na = net(x)\nb = net(a)\nc = b.sum()\n")
    calls = trace.graph.modules
    assert [(c.path, c.line) for c in calls] == [("net", 3), ("net", 4)]
    params = {n.title: n.module for n in trace.graph.nodes if n.title.startswith("net.")}
    assert set(params.values()) == {calls[0].id}  # a parameter is drawn in its first call


def test_clusters_in_the_drawing(mlp):
    dot = to_dot(mlp.graph)
    assert 'subgraph "cluster_m0" {' in dot
    assert 'label="net: Sequential (line 5)"' in dot
    assert 'label="net.0: Linear"' in dot
    inner = dot.index('subgraph "cluster_m1"')
    assert dot.index('subgraph "cluster_m0"') < inner < dot.index('"t0" [', inner)
    if dot_available():
        assert b"<svg" in render_bytes(dot, "svg")


def _chain(depth: int, nodes: int) -> GraphModel:
    calls = [
        ModuleCall(f"m{i}", "net" + ".0" * i, "Sequential", 1, f"m{i - 1}" if i else None)
        for i in range(depth)
    ]
    graph = [GraphNode(f"f{i}", "function", "AddBackward0", "function", module=f"m{depth - 1}")
             for i in range(nodes)]  # fmt: skip
    return GraphModel(nodes=graph, modules=calls)


def test_deep_models_fold_and_big_ones_keep_the_outermost_cluster():
    dot = to_dot(_chain(10, 3))
    assert dot.count('subgraph "cluster_m') == MAX_CLUSTER_DEPTH
    assert f'"cluster_m{MAX_CLUSTER_DEPTH - 1}"' in dot and '"cluster_m9"' not in dot
    big = to_dot(_chain(3, 301))
    assert big.count('subgraph "cluster_m') == 1 and '"cluster_m0"' in big


def test_a_program_without_layers_has_no_clusters():
    trace = ok("x = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n")
    assert trace.graph.modules == []
    assert "cluster_m" not in to_dot(trace.graph)


def test_each_layer_is_hooked_once_and_records_only_its_real_calls(monkeypatch):
    """gradviz's forward hooks go on a layer once, however often it is called, and record
    one ModuleCall per real call of each layer (never its pre-check or a fake run)."""
    import torch
    from torch import nn

    from gradviz.program.objects import forward

    hooked = []
    real = forward.LayerCalls.recording

    def spy(self, module, path, line):
        hooked.append(module)
        return real(self, module, path, line)

    monkeypatch.setattr(forward.LayerCalls, "recording", spy)
    source = (
        "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)).to('cuda')\n"
        "x = torch.randn(2, 3, device='cuda')\n"
        "for i in range(5):\n"
        "    out = net(x)\n"
        "first = net[0](x)\n"
    )
    trace = ok(source)  # on simulated CUDA: each call runs on fake twins first
    assert len(hooked) == 6
    net = hooked[0]
    assert isinstance(net, nn.Sequential)
    for layer in net.modules():
        assert len(layer._forward_pre_hooks) == 1 and len(layer._forward_hooks) == 1
    paths = [c.path for c in trace.graph.modules]
    assert paths == ["net", "net.0", "net.1", "net.2"] * 5 + ["net.0"]
    assert trace.simulated and torch.is_tensor(net[0].weight)
