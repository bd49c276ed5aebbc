"""gradviz.graph.render: DOT text of both views, themes, escaping, and bytes via Graphviz."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from gradviz.graph import render
from gradviz.graph.dot import BIG_RANKING, COMPACT_NODES, THEMES, restyle_classic, to_dot
from gradviz.graph.model import DrawOptions, GraphModel
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions

LESSON = PRESETS_BY_KEY["lesson"].source
needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")


@pytest.fixture(scope="module")
def lesson_after():
    trace = run_program(LESSON, RunOptions(backward="y"))
    assert trace.error is None
    return trace


@pytest.fixture(scope="module")
def lesson_before():
    return run_program(LESSON, RunOptions())


def node_line(dot: str, node_id: str) -> str:
    return next(line for line in dot.splitlines() if line.strip().startswith(f'"{node_id}" ['))


def test_values_dot_has_names_values_and_grads(lesson_after):
    dot = render.draw(lesson_after)
    assert dot.startswith("digraph gradviz {")
    for name in ("x", "a", "b", "c", "y"):
        assert f"{{{name} = " in dot or f'label="{{{name}|' in dot
    assert "data [1.0000, 2.0000, 3.0000]" in dot  # x
    assert "data [9.0000, 16.0000, 25.0000]" in dot  # b
    assert "data 19.6667" in dot  # y
    assert "grad [2.0000, 2.6667, 3.3333]" in dot  # x.grad after backward
    for fn in ("MeanBackward0", "PowBackward0", "AddBackward0"):
        assert fn in dot
    assert "AccumulateGrad" not in dot
    assert "(3,) float32 · cpu" in dot
    assert "cluster_legend" in dot


def test_values_dot_before_backward_has_no_grad(lesson_before):
    dot = render.draw(lesson_before)
    assert "grad —" in dot
    assert "2.6667" not in dot


def test_every_edge_names_known_nodes(lesson_after):
    dot = to_dot(lesson_after.graph, DrawOptions(legend=False))
    ids = set(re.findall(r'^\s*"([^"]+)" \[', dot, flags=re.M))
    edges = re.findall(r'^\s*"([^"]+)" -> "([^"]+)";', dot, flags=re.M)
    assert len(edges) == 8
    for src, dst in edges:
        assert src in ids and dst in ids


@pytest.mark.parametrize("theme", ["light", "dark", "print"])
def test_themes(lesson_after, theme):
    dot = render.draw(lesson_after, DrawOptions(theme=theme))
    th = THEMES[theme]
    assert f'bgcolor="{th.bg}"' in dot
    assert f'fontcolor="{th.font}"' in dot
    if theme == "print":
        assert "shape=Mrecord" in node_line(dot, lesson_after.graph.by_title("x").id)
        assert "style=solid" in node_line(dot, lesson_after.graph.by_title("x").id)
        assert "penwidth=2" in node_line(dot, lesson_after.graph.by_title("x").id)


def test_dark_theme_differs_from_light(lesson_after):
    assert render.draw(lesson_after, DrawOptions(theme="dark")) != render.draw(lesson_after)


def test_rankdir(lesson_after):
    assert "rankdir=LR" in render.draw(lesson_after, DrawOptions(rankdir="LR"))
    assert "rankdir=TB" in render.draw(lesson_after)
    with pytest.raises(ValueError, match="unknown direction 'sideways'"):
        DrawOptions(rankdir="sideways")


def test_legend_can_be_left_out(lesson_after):
    assert "legend" not in render.draw(lesson_after, DrawOptions(legend=False))


def test_show_saved(lesson_after, lesson_before):
    assert "saved exponent: 2" in render.draw(lesson_before, DrawOptions(saved=True))
    assert "saved self: (freed by backward)" in render.draw(lesson_after, DrawOptions(saved=True))
    assert "saved " not in render.draw(lesson_after)


def test_highlight_and_done(lesson_after):
    model = lesson_after.graph
    mean = model.by_title("MeanBackward0").id
    pow_ = model.by_title("PowBackward0").id
    dot = to_dot(model, highlight=pow_, done={mean})
    assert "penwidth=3" in node_line(dot, pow_)
    assert f'color="{THEMES["light"].highlight}"' in node_line(dot, pow_)
    assert "penwidth=2" in node_line(dot, mean)
    assert "penwidth" not in node_line(dot, model.by_title("x").id)


def test_classic_view_is_torchviz(lesson_after):
    dot = render.draw(lesson_after, DrawOptions(view="classic"))
    assert dot is not None
    assert "lightblue" in dot  # torchviz's colour for parameters (x)
    assert "darkolivegreen1" in dot  # ... and for outputs (y)
    assert "MeanBackward0" in dot
    assert "rankdir=TB" in dot
    assert "rankdir=LR" in render.draw(lesson_after, DrawOptions(view="classic", rankdir="LR"))


def test_restyle_classic():
    source = 'digraph {\n\tnode [shape=box]\n\t1 [label="x" fillcolor=lightblue]\n}\n'
    out = restyle_classic(source, DrawOptions(rankdir="LR", theme="dark"))
    assert out.startswith("digraph {")
    assert "rankdir=LR" in out
    assert THEMES["dark"].bg in out
    assert "fillcolor=lightblue" in out
    assert restyle_classic("not dot at all") == "not dot at all"


def test_classic_view_nothing_requires_grad():
    trace = run_program("x = torch.ones(3)\ny = x * 2\n", RunOptions())
    assert trace.classic_dot is None
    assert render.draw(trace, DrawOptions(view="classic")) is None


def test_refused_program_draws_an_empty_graph():
    trace = run_program("import os\n", RunOptions())
    assert trace.graph is None
    dot = render.draw(trace)
    assert dot.startswith("digraph")
    assert "legend" not in dot  # nothing to explain
    assert to_dot(GraphModel()).startswith("digraph")


def escaping_trace():
    source = (
        'w = torch.ones(3, requires_grad=True)\nx = w + ("<b>|{&\\"]" == "a")\ny = (x * 2).sum()\n'
    )
    trace = run_program(source, RunOptions(backward="y"))
    assert trace.error is None, trace.error
    return trace


def test_record_escaping_in_labels():
    dot = render.draw(escaping_trace())
    # Record fields escape their structure characters, and the DOT string its quotes.
    assert '(\\"\\<b\\>\\|\\{&' in dot
    assert "<b>" not in dot


@needs_dot
def test_html_escaping_renders():
    data = render.render_bytes(render.draw(escaping_trace()), "svg")
    assert b"<svg" in data


@needs_dot
@pytest.mark.parametrize(
    ("fmt", "check"),
    [
        ("svg", lambda b: b.startswith(b"<?xml") or b"<svg" in b),
        ("png", lambda b: b.startswith(b"\x89PNG\r\n\x1a\n")),
        ("pdf", lambda b: b.startswith(b"%PDF")),
    ],
)
def test_render_bytes_formats(lesson_after, fmt, check):
    data = render.render_bytes(render.draw(lesson_after), fmt)
    assert check(data)


@needs_dot
def test_png_scale_changes_size(lesson_after):
    dot = render.draw(lesson_after)
    small = render.render_bytes(dot, "png", scale=0.5)
    large = render.render_bytes(dot, "png", scale=2.0)

    def width(png: bytes) -> int:
        return int.from_bytes(png[16:20], "big")

    assert width(large) > width(small)


def test_render_bytes_dot_needs_no_binary(lesson_after, monkeypatch):
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    dot = render.draw(lesson_after)
    assert render.render_bytes(dot, "dot") == dot.encode("utf-8")


def test_render_unavailable_without_dot(lesson_after, monkeypatch):
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    assert render.dot_available() is False
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes(render.draw(lesson_after), "svg")
    assert "apt-get install graphviz" in str(info.value)


def test_unknown_format(lesson_after):
    with pytest.raises(ValueError):
        render.render_bytes(render.draw(lesson_after), "jpg")


@needs_dot
def test_graphviz_failure_is_render_unavailable():
    with pytest.raises(render.RenderUnavailable) as info:
        render.render_bytes("digraph { this is not dot ", "svg")
    assert "Graphviz could not draw" in str(info.value)


def test_big_graphs_are_drawn_compact():
    lines = ["h = torch.ones(2, requires_grad=True)"] + ["h = h * 1.01"] * 160 + ["y = h.sum()"]
    trace = run_program("\n".join(lines) + "\n", RunOptions(backward="y"))
    assert len(trace.graph.nodes) > COMPACT_NODES
    dot = to_dot(trace.graph)
    assert "splines=line" in dot
    assert "float32 · cpu" not in dot  # the dtype/device line is dropped
    assert "data [" in dot and "grad [" in dot  # values stay
    small = render.draw(run_program("x = torch.ones(2, requires_grad=True)\ny = x.sum()\n"))
    assert "splines=line" not in small and "float32 · cpu" in small


def test_only_a_big_graph_without_layer_clusters_is_ranked_by_the_newer_ranking():
    """newrank=true halves dot's time on a long chain and draws the same SVG; a drawing
    with clusters keeps the classic ranking (newrank took minutes on a loop of layer calls),
    and so does a small one (some came out different)."""
    lines = ["h = torch.ones(2, requires_grad=True)"] + ["h = h * 1.01"] * 160 + ["y = h.sum()"]
    big = to_dot(run_program("\n".join(lines) + "\n", RunOptions(backward="y")).graph)
    assert BIG_RANKING == "newrank=true"
    assert big.splitlines()[1].startswith("  graph [") and "newrank=true" in big.splitlines()[1]
    assert big.count("newrank") == 1
    loop = "import torch.nn as nn\nnet = nn.Linear(2, 2)\nh = torch.ones(1, 2)\n"
    layers = run_program(loop + "for i in range(160):\n    h = net(h)\ny = h.sum()\n")
    assert len(layers.graph.nodes) > COMPACT_NODES
    clustered = to_dot(layers.graph)
    assert 'subgraph "cluster_' in clustered and "splines=line" in clustered
    assert "newrank" not in clustered
    small = to_dot(run_program("x = torch.ones(2, requires_grad=True)\ny = x.sum()\n").graph)
    assert "newrank" not in small


@needs_dot
def test_the_newer_ranking_draws_a_big_chain_as_the_classic_one_does():
    lines = ["h = torch.ones(2, requires_grad=True)"] + ["h = h * 1.01"] * 160 + ["y = h.sum()"]
    dot = to_dot(run_program("\n".join(lines) + "\n", RunOptions(backward="y")).graph)
    classic = dot.replace(" " + BIG_RANKING, "")
    assert classic != dot
    svg = render.render_bytes(dot, "svg", limits=render.CLI_LIMITS)
    assert svg == render.render_bytes(classic, "svg", limits=render.CLI_LIMITS)


def test_a_long_value_preview_is_cut_after_a_whole_value_keeping_its_count():
    trace = run_program(
        "w = torch.full((512, 1000), -0.0203, requires_grad=True)\ny = (w * 2).sum()\n",
        RunOptions(backward="y"),
    )
    line = node_line(to_dot(trace.graph), trace.graph.tensors[0].id)
    assert "data [-0.0203, -0.0203, -0.0203, -0.0203, … (512,000 values)]" in line
    assert "grad [2.0000, 2.0000, 2.0000, 2.0000, 2.0000, … (512,000 values)]" in line


@needs_dot
def test_dot_too_short_to_pass_the_ceilings_is_not_counted(monkeypatch):
    render.forget_failures()
    dot = 'digraph { a [label="x"]; b [label="y"]; c [label="z"]; a -> b; b -> c; }'
    tiny = render.RenderLimits(max_nodes={"svg": 2}, max_edges={"svg": 100})
    with pytest.raises(render.RenderUnavailable, match="3 nodes and 2 edges; the limit is 2"):
        render.render_bytes(dot, "svg", limits=tiny)  # counted, and refused

    def counted(source):
        raise AssertionError("counted")

    real_size = render.graph_size
    monkeypatch.setattr(render, "graph_size", counted)
    roomy = render.RenderLimits(max_nodes={"svg": len(dot) // 2}, max_edges={"svg": len(dot)})
    assert b"<svg" in render.render_bytes(dot, "svg", limits=roomy)
    # longer than that, but with no more `[` than max_nodes and arrows than max_edges in
    # all, quoted text included: not counted either
    few = replace(roomy, max_nodes={"svg": 3}, max_edges={"svg": 2})
    assert b"<svg" in render.render_bytes(dot, "svg", limits=few)
    # a `[` or an arrow in a label passes those bounds: then it must count ...
    labelled = 'digraph { a [label="[x] -> y"]; b [label="y"]; a -> b; }'
    for limits in (replace(few, max_nodes={"svg": 2}), replace(few, max_edges={"svg": 1})):
        with pytest.raises(AssertionError, match="counted"):
            render.render_bytes(labelled, "svg", limits=limits)
        # ... and finds the graph within them: 2 nodes, 1 edge
        monkeypatch.setattr(render, "graph_size", real_size)
        assert b"<svg" in render.render_bytes(labelled, "svg", limits=limits)
        monkeypatch.setattr(render, "graph_size", counted)
