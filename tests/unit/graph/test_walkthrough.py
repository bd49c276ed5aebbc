"""The backward walk-through as frames (gradviz.graph.walkthrough): a frame per backward step
plus the final graph, as PDF pages and GIF frames; `render --walkthrough`; the lecture theme."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pypdf import PdfReader

from gradviz.cli.main import main
from gradviz.graph import render, walkthrough
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
