"""gradviz as a library: gradviz.draw and gradviz.record on plain PyTorch code (names,
values and gradients, parameters and layers, errors, formats, simulated CUDA)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import gradviz
from gradviz.graph.model import DrawOptions
from gradviz.graph.render import dot_available
from gradviz.library.figure import AFTER_BACKWARD, BEFORE_BACKWARD
from gradviz.training.models import TutorialNet

ROOT = Path(__file__).resolve().parents[3]
needs_dot = pytest.mark.skipif(not dot_available(), reason="Graphviz's dot is not installed")


def labels(fig) -> list[str]:
    return [t.label for t in fig.graph.tensors]


def info(fig, label: str):
    return next(t for t in fig.graph.tensors if t.label == label)


class Net(TutorialNet):
    """The PyTorch tutorial's CIFAR-10 network (gradviz.training.models' copy of it), under
    the tutorial's own class name."""


# ---------------------------------------------------------------- names


def test_draw_names_tensors_after_the_callers_variables():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x + 2
    b = a**2
    y = b.mean()
    fig = gradviz.draw(y)
    assert set(labels(fig)) == {"x", "a", "b", "y"}
    assert info(fig, "y").value == pytest.approx(b.mean().item())
    unrelated = torch.ones(2, requires_grad=True)  # not in y's graph: not drawn
    assert "unrelated" not in labels(gradviz.draw(y)) and unrelated is not None


def test_an_unnamed_result_is_called_output():
    x = torch.ones(2, requires_grad=True)
    fig = gradviz.draw((x * 3).sum())
    assert labels(fig) == ["x", "output"]


def test_record_names_each_tensor_with_its_expression_and_line():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with gradviz.record() as rec:
        a = x + 2; b = a ** 2; y = b.mean()  # fmt: skip  # noqa: E702 (the lesson's one line)
    fig = rec.draw(y)
    assert labels(fig) == ["a", "b", "y", "x"]
    assert [info(fig, n).expr for n in ("a", "b", "y")] == ["x + 2", "a ** 2", "b.mean()"]
    assert info(fig, "a").line == info(fig, "y").line > 0
    assert "a = x + 2" in fig.dot and "b = a ** 2" in fig.dot
    assert a is not None and b is not None


def test_record_numbers_a_name_bound_in_a_loop_and_draw_sees_only_the_last():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([0.5, 3.0], requires_grad=True)
    with gradviz.record() as rec:
        h = x
        for _ in range(3):
            h = h * w
        loss = h.sum()
    assert labels(rec.draw(loss)) == ["h[1]", "h[2]", "h[3]", "loss", "x", "w"]
    assert [lab for lab in labels(gradviz.draw(loss)) if lab.startswith("h")] == ["h"]


def two_layers(x, w):
    """A helper whose local tensors the recorder names (`h`, seen before `out` is made)."""
    h = x * w
    out = h.relu()
    return out


def test_record_names_tensors_made_inside_functions():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    w = torch.tensor([2.0, 2.0], requires_grad=True)
    with gradviz.record() as rec:
        first = two_layers(x, w)
        second = two_layers(first, w)
        loss = second.sum()
    fig = rec.draw(loss)
    assert {"h[1]", "h[2]", "first", "second", "loss"} <= set(labels(fig))
    assert info(fig, "h[1]").expr == "x * w  (in two_layers)"


def test_parameters_are_named_by_params_by_model_and_by_the_callers_modules():
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    loss = net(torch.randn(4, 3)).sum()
    by_params = gradviz.draw(loss, params=dict(net.named_parameters()))
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= set(labels(by_params))
    by_model = gradviz.draw(loss, model=net)
    assert {"0.weight", "2.bias"} <= set(labels(by_model))
    by_variable = gradviz.draw(loss)  # `net` is a variable of this frame
    assert {"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"} <= set(labels(by_variable))


def test_model_gives_clusters_of_the_layers_that_own_parameters():
    net = Net()
    loss = F.cross_entropy(net(torch.randn(2, 3, 32, 32)), torch.tensor([1, 2]))
    fig = gradviz.draw(loss, model=net)
    assert {m.path for m in fig.graph.modules} == {"conv1", "conv2", "fc1", "fc2", "fc3"}
    fc1 = next(m.id for m in fig.graph.modules if m.path == "fc1")
    inside = {n.title for n in fig.graph.nodes if n.module == fc1}
    assert {"fc1.weight", "fc1.bias", "AddmmBackward0", "TBackward0"} <= inside
    assert 'label="fc1: Linear"' in fig.dot


def test_model_clusters_go_two_levels_deep_unless_asked_for_more():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)

    class Deep(nn.Module):
        def __init__(self):
            super().__init__()
            self.stage = nn.Sequential(Block(), Block())
            self.head = nn.Linear(4, 1)

        def forward(self, x):
            return self.head(self.stage(x))

    deep = Deep()
    loss = deep(torch.randn(2, 4)).sum()

    def clusters(fig):
        return sorted(re.findall(r'label="([^"]+)" fontsize=10 style="rounded', fig.dot))

    assert clusters(gradviz.draw(loss, model=deep)) == [
        "head: Linear",
        "stage.0: Block",
        "stage.1: Block",
        "stage: Sequential",
    ]  # stage.0.fc's weight and AddmmBackward0 sit in stage.0's cluster
    assert "stage.0.fc: Linear" in clusters(gradviz.draw(loss, model=deep, module_depth=3))
    assert clusters(gradviz.draw(loss, model=deep, module_depth=1)) == [
        "head: Linear",
        "stage: Sequential",
    ]


def test_record_gives_each_layer_call_its_cluster_inside_its_parent():
    net = Net()
    inputs = torch.randn(2, 3, 32, 32)
    with gradviz.record() as rec:
        outputs = net(inputs)
        loss = F.cross_entropy(outputs, torch.tensor([0, 1]))
    fig = rec.draw(loss)
    calls = {m.path: m for m in fig.graph.modules}
    assert calls["net"].kind == "Net" and calls["net"].parent is None
    assert calls["net.fc1"].parent == calls["net"].id
    relu_nodes = [n for n in fig.graph.nodes if n.title == "ReluBackward0"]
    assert all(n.module == calls["net"].id for n in relu_nodes)  # F.relu inside Net.forward
    assert {"net.conv1.weight", "outputs", "loss"} <= set(labels(fig))


def test_rec_draw_shows_the_graph_it_is_given_and_the_blocks_untracked_tensors():
    x = torch.ones(2, requires_grad=True)
    with gradviz.record() as rec:
        y = (x * 2).sum()
        z = (x * 3).sum()  # another graph
        with torch.no_grad():
            seen = x * 4  # noqa: F841  (named by the recording)
    assert labels(rec.draw(y)) == ["y", "seen", "x"]
    assert labels(rec.draw(z)) == ["z", "seen", "x"]
    assert info(rec.draw(y), "seen").note.startswith("made under torch.no_grad()")


def test_the_recording_ends_with_the_block():
    x = torch.ones(2, requires_grad=True)
    layer = nn.Linear(2, 2)
    with gradviz.record() as rec:
        y = layer(x).sum()
    before = (len(rec.bindings), len(rec.module_calls))
    z = layer(x * 2).sum()
    assert (len(rec.bindings), len(rec.module_calls)) == before
    assert "z" not in labels(rec.draw(y)) and z is not None


def test_a_transformer_encoder_layer_is_recorded_layer_by_layer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    src = torch.randn(2, 5, 8, requires_grad=True)
    with gradviz.record() as rec:
        encoded = layer(src)
        loss = encoded.pow(2).mean()
    loss.backward()
    fig = rec.draw(loss)
    paths = {m.path: m.kind for m in fig.graph.modules}
    assert paths["layer"] == "TransformerEncoderLayer"
    assert paths["layer.self_attn"] == "MultiheadAttention"
    assert {"layer.linear1", "layer.norm2"} <= set(paths)
    assert torch.equal(torch.tensor(info(fig, "src").grad), src.grad)
    assert "layer.self_attn.in_proj_weight" in labels(fig)


def test_a_block_that_raises_still_removes_the_mode_and_the_hooks():
    layer = nn.Linear(2, 2)
    with pytest.raises(RuntimeError), gradviz.record() as rec:
        layer(torch.ones(3))  # 3 features into a layer of 2
    calls = len(rec.module_calls)
    y = layer(torch.ones(2, requires_grad=True)).sum()
    assert len(rec.module_calls) == calls and not rec.bindings
    assert torch.overrides._get_current_function_mode_stack() == []
    assert y.grad_fn is not None


# ---------------------------------------------------------------- values and gradients


def test_before_backward_the_picture_says_so_after_it_shows_gradients():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with gradviz.record() as rec:
        b = (x + 2) ** 2
        y = b.mean()
    before = rec.draw(y)
    assert before.caption == BEFORE_BACKWARD and BEFORE_BACKWARD in before.dot
    assert all(t.grad_preview is None for t in before.graph.tensors)
    assert "grad —" in before.dot and "grad 0.0000" not in before.dot
    y.backward()
    after = rec.draw(y)
    assert after.caption == AFTER_BACKWARD
    assert info(after, "x").grad == pytest.approx(x.grad.tolist())
    assert info(after, "b").grad == pytest.approx([1 / 3] * 3)  # kept by record()
    assert "grad [2.0000, 2.6667, 3.3333]" in after.dot


def test_record_can_leave_intermediate_gradients_alone():
    x = torch.ones(2, requires_grad=True)
    with gradviz.record(retain_grad=False) as rec:
        b = x * 3
        y = b.sum()
    y.backward()
    assert not b.retains_grad and info(rec.draw(y), "b").grad_preview is None


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, None, "loss"])
def test_a_non_tensor_is_refused_saying_what_to_pass(value):
    with pytest.raises(TypeError, match="needs a torch.Tensor .* got "):
        gradviz.draw(value)


def test_a_model_is_refused_saying_to_draw_its_output():
    with pytest.raises(TypeError, match=r"not the model: draw\(model\(x\)\)"):
        gradviz.draw(nn.Linear(2, 2))


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.ones(3) * 2,
        lambda: (torch.ones(3, requires_grad=True) * 2).detach(),
        lambda: torch.no_grad()(lambda: torch.ones(3, requires_grad=True) * 2)(),
    ],
    ids=["constant", "detached", "no_grad"],
)
def test_a_tensor_without_a_graph_is_refused_saying_why(make):
    with pytest.raises(ValueError, match="has no autograd graph.*requires_grad=True"):
        gradviz.draw(make())


def test_unknown_options_and_formats_are_refused(tmp_path):
    y = (torch.ones(2, requires_grad=True) * 2).sum()
    with pytest.raises(ValueError, match="unknown view 'fancy'; choose one of values, classic"):
        gradviz.draw(y, view="fancy")
    with pytest.raises(ValueError, match="unknown direction"):
        gradviz.draw(y, direction="BT")
    with pytest.raises(TypeError):
        gradviz.draw(y, colour="red")
    fig = gradviz.draw(y)
    with pytest.raises(ValueError, match=r"cannot save HTML.*\.svg, \.png, \.pdf or \.dot"):
        fig.save(tmp_path / "graph.html")
    with pytest.raises(ValueError, match="choose .svg, .png, .pdf or .dot"):
        fig.save(tmp_path / "graph.jpeg")


def test_drawing_inside_the_block_is_refused():
    x = torch.ones(2, requires_grad=True)
    with gradviz.record() as rec:
        y = (x * 2).sum()
        with pytest.raises(RuntimeError, match="after the `with gradviz.record\\(\\)` block"):
            rec.draw(y)


# ---------------------------------------------------------------- drawings


@needs_dot
def test_save_writes_each_format(tmp_path):
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).sum()
    fig = gradviz.draw(y)
    magic = {"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF", "dot": b"digraph gradviz"}
    for fmt, start in magic.items():
        assert fig.save(tmp_path / f"g.{fmt}").read_bytes().startswith(start)
    svg = fig._repr_svg_()
    assert "<svg" in svg and ">x</text>" in svg and svg == fig.svg()


def test_options_reach_the_renderer():
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).sum()
    assert "rankdir=LR" in gradviz.draw(y, direction="LR").dot
    assert 'bgcolor="#1e1e1e"' in gradviz.draw(y, theme="dark").dot
    assert "saved other" in gradviz.draw((x * x).sum(), saved=True).dot
    assert "cluster_legend" not in gradviz.draw(y, legend=False).dot
    assert "cluster_devices" not in gradviz.draw(y).dot  # all on the CPU: by role
    assert '"legend_device_cpu"' in gradviz.draw(y, color="device").dot.split("cluster_devices")[1]
    classic = gradviz.draw(y, view="classic")
    assert classic.view == "classic" and "darkolivegreen1" in classic.dot  # torchviz's colours


def test_options_takes_draw_options_and_the_keywords_vary_them():
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    chosen = DrawOptions(rankdir="LR", theme="dark", saved=True, legend=False)
    fig = gradviz.draw(y, options=chosen)
    assert fig.dot == gradviz.draw(y, direction="LR", theme="dark", saved=True, legend=False).dot
    assert "rankdir=LR" in fig.dot and "saved other" in fig.dot
    lighter = gradviz.draw(y, options=chosen, theme="light", direction="TB")
    assert lighter.dot == gradviz.draw(y, saved=True, legend=False).dot
    with gradviz.record() as rec:
        z = (x * 3).sum()
    assert "rankdir=LR" in rec.draw(z, options=DrawOptions(rankdir="LR")).dot
    assert gradviz.draw(y, saved=1, legend=0).dot == gradviz.draw(y, saved=True, legend=False).dot
    with pytest.raises(TypeError, match="options= takes a gradviz.graph.model.DrawOptions"):
        gradviz.draw(y, options={"theme": "dark"})
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'; its drawing"):
        gradviz.draw(y, colour="red")
    with pytest.raises(ValueError, match="unknown theme 'neon'"):
        gradviz.draw(y, options=chosen, theme="neon")
    with pytest.raises(ValueError, match="module_depth must be a whole number"):
        gradviz.draw(y, module_depth=-1)


def test_color_by_gradient_fills_tensors_by_their_gradients_size():
    small = torch.tensor([1.0, 1.0], requires_grad=True)
    big = torch.tensor([1.0, 1.0], requires_grad=True)
    with gradviz.record() as rec:
        y = (small * 1e-3 + big * 1e3).sum()
    assert "no gradients yet" in rec.draw(y, color="grad").dot
    y.backward()
    fig = rec.draw(y, color="grad")
    fill = {
        t.label: re.search(rf'"{t.id}" \[[^\n]*fillcolor="([^"]+)"', fig.dot).group(1)
        for t in fig.graph.tensors
    }
    assert fill["small"] == "#fff5f0" and fill["big"] == "#ef3b2c"
    assert "fill: mean |grad|, light 1.0e-03 to red 1.0e+03 (log scale)" in fig.dot
    assert 'fillcolor="#cfe6ff"' not in fig.dot.split("cluster_legend")[0]  # no role fill left
    with pytest.raises(ValueError, match="unknown color 'blue'; choose one of role, device, grad"):
        rec.draw(y, color="blue")


def test_draw_leaves_out_the_stats_the_page_computes_over_every_value(monkeypatch):
    """min/max/mean/norm pass over every value (resnet18: 11 million parameters, most of
    draw's time); the drawing shows previews, so the library does not compute them."""
    from gradviz.graph import build

    def refuse(t):
        raise AssertionError("tensor_stats called")

    net = Net()
    loss = net(torch.randn(1, 3, 32, 32)).sum()
    loss.backward()
    monkeypatch.setattr(build, "tensor_stats", refuse)
    fig = gradviz.draw(loss, model=net)
    assert all(t.stats is None for t in fig.graph.tensors)
    assert info(fig, "fc1.weight").preview.startswith("[")  # the previews stay
    assert info(fig, "fc1.weight").grad_preview.startswith("[")


def test_module_depth_and_collapse_depth():
    net = Net()
    inputs = torch.randn(1, 3, 32, 32)
    with gradviz.record() as rec:
        loss = net(inputs).sum()
    flat = rec.draw(loss, module_depth=1)
    assert flat.dot.count('subgraph "cluster_m') == 1  # only net's
    folded = rec.draw(loss, collapse_depth=2)
    titles = {n.title for n in folded.graph.nodes if n.kind == "module"}
    assert "net.fc1: Linear\n(4 nodes)" in titles  # weight, bias, TBackward0, AddmmBackward0
    assert all(n.module in (None, "m0") for n in folded.graph.nodes)


@pytest.mark.slow
def test_resnet18_is_drawn_whole_resnet50_folds_by_block_automatically():
    torchvision = pytest.importorskip("torchvision")
    x = torch.randn(2, 3, 32, 32)
    small = torchvision.models.resnet18(weights=None)
    with gradviz.record() as rec:
        loss = small(x).sum()
    whole = rec.draw(loss)
    assert 100 < len(whole.graph.nodes) <= 300 and not any(
        n.kind == "module" for n in whole.graph.nodes
    )
    assert {"small.layer1.0", "small.layer1.0.conv1", "small.fc"} <= {
        m.path for m in whole.graph.modules
    }
    model = torchvision.models.resnet50(weights=None)
    with gradviz.record() as rec:
        out = model(x)
        loss = out.sum()
    fig = rec.draw(loss)
    assert len(fig.graph.nodes) <= 300
    titles = {n.title.split("\n")[0] for n in fig.graph.nodes if n.kind == "module"}
    assert "model.layer1.0: Bottleneck" in titles and "model.layer4.2: Bottleneck" in titles
    full = rec.draw(loss, collapse_depth=False)
    assert len(full.graph.nodes) > 300


def test_a_simulated_gpu_is_drawn_and_labelled_as_such():
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = torch.randn(2, 4, requires_grad=True)
    with FakeTensorMode(allow_non_fake_inputs=True):
        net = nn.Linear(4, 1, device="cuda")
        with gradviz.record() as rec:
            xc = x.to("cuda")
            loss = net(xc).sum()
    fig = rec.draw(loss)
    assert fig.graph.simulated and info(fig, "loss").device == "cuda:0"
    assert info(fig, "loss").preview == "(no data: simulated device)"
    assert "cuda:0 (simulated)" in fig.dot
    copies = [e.copy for e in fig.graph.edges if e.copy]
    assert copies == ["cpu→cuda:0"] and "copy cpu→cuda:0" in fig.dot


def test_importing_gradviz_does_not_import_torch():
    code = "import sys, gradviz; print('torch' in sys.modules, callable(gradviz.draw))"
    env_path = str(ROOT / "src")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.split() == ["False", "True"]


# ---------------------------------------------------------------- naming helpers


def test_whose_frames_and_names_are_read(tmp_path):
    from gradviz.library import naming

    assert not naming.is_user_file(torch.__file__)  # site-packages
    assert not naming.is_user_file(naming.__file__)  # gradviz itself
    assert naming.is_user_file(__file__) and naming.is_user_file("<ipython-input-3>")
    assert not naming.is_user_file("<frozen runpy>")
    assert [naming.visible(n) for n in ("loss", "_", "_5", "Out", "In")] == [
        True,
        False,
        False,
        False,
        False,
    ]
    source = tmp_path / "lesson.py"
    source.write_text("a = x + 2; b: int = a ** 2\nc += 1\nnot python (\n")
    assert naming.source_exprs(str(source), 1) == {"a": "x + 2", "b": "a ** 2"}
    assert naming.source_exprs(str(source), 2) == {"c": "1"}
    assert naming.source_exprs(str(source), 3) == {}


def test_lists_and_tuples_of_tensors_are_named_by_index():
    x = torch.ones(2, requires_grad=True)
    outs = [x * 2, x * 3]
    _hidden = x * 4  # an underscore name is left out
    fig = gradviz.draw(outs[0] + outs[1] + _hidden)
    assert {"outs[0]", "outs[1]", "x", "output"} == set(labels(fig))
