"""The backward walk-through as frames (gradviz.graph.walkthrough): a frame per backward step
plus the final graph, as PDF pages and GIF frames; `render --walkthrough`; the lecture theme."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pypdf import PdfReader

from gradviz.cli.main import main
from gradviz.graph import render, walkthrough
from gradviz.graph.collapse import fold_calls
from gradviz.graph.model import DrawOptions
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions

needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")
LESSON = PRESETS_BY_KEY["lesson"].source


@pytest.fixture(scope="module")
def lesson():
    trace = run_program(LESSON, RunOptions(backward="y"))
    assert trace.error is None
    return trace


def _id(trace, name: str) -> str:
    return next(n.id for n in trace.graph.nodes if n.title == name)


def test_gradients_arrive_from_the_output_back_to_the_leaf(lesson):
    record = lesson.backward[-1]
    assert [s.fn.split("::")[-1] for s in record.steps][:2] == ["MeanBackward0", "AddBackward0"]
    names = {n.id: n.title for n in lesson.graph.nodes}
    seen = [
        sorted(names[i] for i in walkthrough.arrived(lesson.graph, record, k))
        for k in range(len(record.steps) + 1)
    ]
    assert seen[0] == ["y"]  # before any step: only the output's own gradient
    assert seen[1] == ["c", "y"]  # MeanBackward0 ran: c's gradient is there
    assert seen[-1] == ["a", "b", "c", "x", "y"]


def test_a_frame_per_step_highlights_it_and_shows_only_what_arrived(lesson):
    record = lesson.backward[-1]
    dots = walkthrough.frames(lesson.graph, record)
    assert len(dots) == len(record.steps) + 1
    assert "step 1 of 5: MeanBackward0" in dots[0]
    first_fn = record.steps[0].node
    assert f'"{first_fn}" [' in dots[0] and "#d62728" in dots[0]  # the running node, in red
    assert "grad [2.0000, 2.6667, 3.3333]" not in dots[0]  # x's gradient has not arrived
    assert "grad [0.3333, 0.3333, 0.3333]" in dots[1]  # c's, from MeanBackward0's output
    assert "grad [2.0000, 2.6667, 3.3333]" in dots[-1]
    assert "every gradient" in dots[-1]


def test_lecture_theme_is_16_by_9_with_big_fonts(lesson):
    dot = render.draw(lesson, DrawOptions(theme="lecture"))
    assert "ratio=0.5625" in dot and "fontsize=20" in dot
    assert "#56B4E9" in dot  # Okabe-Ito sky blue for leaves


@needs_dot
def test_render_walkthrough_pdf_has_a_page_per_step_and_gif_a_frame(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")
    prog = tmp_path / "lesson.py"
    prog.write_text(LESSON, encoding="utf-8")
    steps = len(run_program(LESSON, RunOptions(backward="y")).backward[-1].steps)
    pdf, gif = tmp_path / "walk.pdf", tmp_path / "walk.gif"
    assert main(["render", str(prog), "--backward", "y", "--walkthrough", "-o", str(pdf)]) == 0
    assert len(PdfReader(io.BytesIO(pdf.read_bytes())).pages) == steps + 1
    args = ["render", str(prog), "--backward", "y", "--walkthrough", "--theme", "lecture"]
    assert main([*args, "-o", str(gif)]) == 0
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == steps + 1
        width, height = im.size
        assert 1.6 < width / height < 1.9  # 16:9-ish


def test_render_walkthrough_needs_a_backward_and_pdf_or_gif(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")
    prog = tmp_path / "lesson.py"
    prog.write_text(LESSON, encoding="utf-8")
    assert main(["render", str(prog), "--walkthrough", "-o", str(tmp_path / "w.pdf")]) == 1
    assert "needs a backward pass" in capsys.readouterr().err
    out = str(tmp_path / "w.svg")
    assert main(["render", str(prog), "--backward", "y", "--walkthrough", "-o", out]) == 2
    assert "writes .pdf or .gif" in capsys.readouterr().err


def test_a_step_s_flow_is_the_edges_into_its_function_with_the_gradients_they_carry(lesson):
    record, graph = lesson.backward[-1], lesson.graph
    mean, c = _id(lesson, "MeanBackward0"), _id(lesson, "c")
    assert walkthrough.flow(graph, record, mean) == [
        {"src": c, "dst": mean, "to": c, "grad": "[0.3333, 0.3333, 0.3333]"}
    ]
    x = _id(lesson, "x")
    assert walkthrough.flow(graph, record, x) == []  # AccumulateGrad: into .grad, no edge
    assert walkthrough.flow(graph, record, None) == []
    assert walkthrough.flow(graph, None, mean) == []


def test_each_input_of_a_product_gets_its_own_gradient():
    source = (
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "w = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "y = (x * w).sum()\n"
    )
    trace = run_program(source, RunOptions(backward="y"))
    mul = _id(trace, "MulBackward0")
    got = {f["to"]: f["grad"] for f in walkthrough.flow(trace.graph, trace.backward[-1], mul)}
    assert got == {_id(trace, "x"): "[3.0000, 4.0000]", _id(trace, "w"): "[1.0000, 2.0000]"}


def _flow_by_title(trace, fn_title: str, graph=None) -> dict:
    """A step's flow as {the input's title: the gradient written on its edge}."""
    graph = graph or trace.graph
    titles = {n.id: n.title for n in graph.nodes}
    node = _id(trace, fn_title)
    return {titles[f["src"]]: f["grad"] for f in walkthrough.flow(graph, trace.backward[-1], node)}


def test_a_leaf_used_twice_in_one_function_and_again_elsewhere_gets_both_gradients():
    # x * x: two of MulBackward0's inputs are x, drawn as one edge; x also goes into the +
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x + x\nz = y.sum()\n"
    trace = run_program(source, RunOptions(backward="z"))
    assert _flow_by_title(trace, "MulBackward0") == {"x": "[1.0000, 2.0000] + [1.0000, 2.0000]"}
    assert _flow_by_title(trace, "AddBackward0") == {
        "MulBackward0": "[1.0000, 1.0000]",
        "x": "[1.0000, 1.0000]",
    }


def test_an_input_taken_twice_by_its_only_user_gets_the_sum_that_arrives():
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x * x).sum()\n"
    trace = run_program(source, RunOptions(backward="y"))
    assert _flow_by_title(trace, "MulBackward0") == {"x": "[2.0000, 4.0000]"}


def test_cat_of_a_list_with_a_constant_gives_each_drawn_input_its_own_slice():
    # CatBackward0 gives the constant c a gradient too (autograd has no edge for it), and
    # a goes into the cat and into a sum of its own
    source = (
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "c = torch.tensor([5.0])\n"
        "z = torch.cat([a, c, a * 3])\n"
        "loss = (z * 2).sum() + a.sum()\n"
    )
    trace = run_program(source, RunOptions(backward="loss"))
    assert _flow_by_title(trace, "CatBackward0") == {
        "a": "[2.0000, 2.0000]",
        "MulBackward0": "[2.0000, 2.0000]",
    }


def test_a_matrix_times_itself_plus_itself_labels_the_product_s_edge():
    source = (
        "w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\ny = (w @ w + w).sum()\n"
    )
    trace = run_program(source, RunOptions(backward="y"))
    got = _flow_by_title(trace, "MmBackward0")
    assert got == {
        "w": "[[3.0000, 7.0000], [3.0000, 7.0000]] + [[4.0000, 4.0000], [6.0000, 6.0000]]"
    }


def test_a_constant_input_keeps_no_gradient_on_its_edge_and_the_step_still_lists_it():
    source = (
        "torch.manual_seed(0)\n"
        "w = torch.randn(2, 3, requires_grad=True)\n"
        "x = torch.ones(3)\n"
        "b = torch.zeros(2, requires_grad=True)\n"
        "y = w @ x + b\n"
        "loss = y.sum()\n"
    )
    trace = run_program(source, RunOptions(backward="loss"))
    mv = _id(trace, "MvBackward0")
    assert [e.kind for e in trace.graph.edges if e.dst == mv and e.src == _id(trace, "x")] == [
        "input"
    ]
    step = next(s for s in trace.backward[-1].steps if s.node == mv)
    assert step.produced == ["[[1.0000, 1.0000, 1.0000], [1.0000, 1.0000, 1.0000]]", "None"]
    assert _flow_by_title(trace, "MvBackward0") == {"w": step.produced[0]}  # x: none


def test_edges_into_a_function_name_the_inputs_they_stand_for():
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x + x\nz = y.sum()\n"
    trace = run_program(source, RunOptions(backward="z"))
    mul, add = _id(trace, "MulBackward0"), _id(trace, "AddBackward0")
    slots = {(e.src, e.dst): e.slots for e in trace.graph.edges}
    assert slots[(_id(trace, "x"), mul)] == (0, 1)
    assert slots[(mul, add)] == (0,) and slots[(_id(trace, "x"), add)] == (1,)
    assert slots[(add, _id(trace, "y"))] == ()  # into a tensor: no inputs


def test_a_folded_layer_s_edge_into_the_next_function_keeps_its_gradient():
    source = (
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
        "x = torch.randn(2, 3)\n"
        "c = torch.ones(2, 1)\n"
        "loss = (net(x) * c).sum()\n"
    )
    trace = run_program(source, RunOptions(backward="loss"))
    folded = fold_calls(trace.graph, [trace.graph.modules[0].id])
    # the constant c's edge stays an input edge: no gradient travels along it
    assert _flow_by_title(trace, "MulBackward0", folded) == {
        "net: Sequential\n(9 nodes)": "[[1.0000], [1.0000]]"
    }
    kinds = {(e.src, e.dst): e.kind for e in folded.edges}
    assert kinds[(_id(trace, "c"), _id(trace, "MulBackward0"))] == "input"
