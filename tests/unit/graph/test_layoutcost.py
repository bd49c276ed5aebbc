"""gradviz.graph.layoutcost: a layout's cost read from the DOT before `dot` runs, and the
public host refusing a graph shaped to take `dot` its whole CPU limit (a leaf added at
every step of a loop: every step's arrow from it skips every row above)."""

from __future__ import annotations

import pytest

from gradviz.graph import layoutcost, render
from gradviz.graph.model import RANKDIRS, DrawOptions
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS
from gradviz.program.results.trace import RunOptions


def shared_leaf(steps: int) -> str:
    return (
        "x = torch.ones(2, requires_grad=True)\nh = x\n"
        f"for i in range({steps}):\n    h = h * 1.01 + x\ny = h.sum()\n"
    )


@pytest.fixture(scope="module")
def slow_dot() -> str:
    """60 steps: 139 nodes and 193 arrows, far inside the node and edge limits; `dot` takes
    about 10 s of CPU on it (docs/BENCHMARKS.md)."""
    trace = run_program(shared_leaf(60), RunOptions())
    assert trace.error is None
    return render.draw(trace)


def _chain_dot(n: int, shortcuts: bool = False, boxed: bool = False, one_box: bool = False) -> str:
    """A chain n0 -> n1 -> ...; with `shortcuts`, x -> every node; with `boxed`, each chain
    node in a cluster of its own, with `one_box` all in one cluster (x outside)."""
    lines = ["digraph g {", '  "x" [label="x -> y"];']
    if one_box:
        lines.append('  subgraph "cluster_all" {')
    for i in range(n):
        node = f'  "n{i}" [label="step {i}"];'
        lines.append(f'  subgraph "cluster_{i}" {{ {node} }}' if boxed else node)
    if one_box:
        lines.append("  }")
    lines += [f'  "n{i}" -> "n{i + 1}";' for i in range(n - 1)]
    if shortcuts:
        lines += [f'  "x" -> "n{i}";' for i in range(n)]
    return "\n".join(lines + ["}"])


def test_a_chain_is_cheap():
    cost = layoutcost.layout_cost(_chain_dot(500))
    assert (cost.nodes, cost.edges, cost.long_steps, cost.clusters) == (500, 499, 0, 0)


def test_arrows_from_one_node_to_every_step_are_counted_row_by_row():
    # x sits above n0 (the first it points at); its arrow to n_i skips i rows
    cost = layoutcost.layout_cost(_chain_dot(100, shortcuts=True))
    assert cost.edges == 199 and cost.long_steps == sum(range(100))
    assert cost.clusters == 0  # the arrow in x's label is text, not an arrow


def test_arrows_into_layer_boxes_are_not_counted_and_boxes_are():
    """Each step in a cluster of its own: `dot` may fold the chain, as it does (0.07 s for a
    leaf added at each of 100 steps, each step a layer call)."""
    cost = layoutcost.layout_cost(_chain_dot(100, shortcuts=True, boxed=True))
    assert cost.long_steps == 0 and cost.clusters == 100


def test_arrows_into_one_box_count_the_rows_between_their_heads():
    """The whole chain in one cluster: its rows are fixed, and x's arrows into it span them
    however far x is moved (the same loop inside one layer call, 80 steps: 10 s of `dot`)."""
    cost = layoutcost.layout_cost(_chain_dot(100, shortcuts=True, one_box=True))
    assert cost.long_steps == sum(range(100)) and cost.clusters == 1


LOOPS = {  # steps, and whether the public host refuses the drawing (dot CPU here)
    "a layer call around the whole loop": (  # 80 steps: 10.5 s
        "class M(nn.Module):\n    def forward(self, x):\n        h = x\n"
        "        for i in range(80):\n            h = h * 1.01 + x\n        return h\n"
        "x = torch.ones(2, requires_grad=True)\ny = M()(x).sum()\n",
        True,
    ),
    "a layer's bias added at every step": (  # 60 steps: 5.6 s
        "lin = nn.Linear(2, 2)\nx = torch.ones(2, requires_grad=True)\nh = lin(x)\n"
        "for i in range(60):\n    h = h * 1.01 + lin.bias\ny = h.sum()\n",
        True,
    ),
    "a layer call for every step": (  # 100 steps: 0.07 s
        "class M(nn.Module):\n    def forward(self, h, x):\n        return h * 1.01 + x\n"
        "m = M()\nx = torch.ones(2, requires_grad=True)\nh = x\n"
        "for i in range(100):\n    h = m(h, x)\ny = h.sum()\n",
        False,
    ),
    "a Sequential called 30 times": (  # 121 clusters: 0.05 s
        "net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))\n"
        "h = torch.randn(2, 4)\nfor i in range(30):\n    h = net(h)\ny = h.sum()\n",
        False,
    ),
}


@pytest.mark.parametrize("name", LOOPS)
def test_loops_with_layers_are_refused_only_when_dot_is_slow_on_them(name):
    source, refused = LOOPS[name]
    trace = run_program(source, RunOptions())
    assert trace.error is None
    limits = render.PUBLIC_LIMITS
    why = layoutcost.refusal(render.draw(trace), limits.max_long_steps, limits.max_clusters)
    assert (why is not None) == refused, why


def test_a_source_sits_next_to_what_it_feeds():
    # w only feeds the chain's last node: one row above it, not at the top
    dot = _chain_dot(50)[:-1] + '  "w" -> "n49";\n}'
    assert layoutcost.layout_cost(dot).long_steps == 0


def test_a_labelled_arrow_doubles_every_arrow_s_rows():
    """`dot` makes room for an arrow's `label` by doubling every rank of the graph."""
    plain = "digraph { a -> b -> c -> d; a -> d %s }"
    assert layoutcost.layout_cost(plain % "").long_steps == 2
    # every arrow's rows doubled: three of 1 row (1 hidden point each), one of 3 rows (5)
    assert layoutcost.layout_cost(plain % '[label="input"]').long_steps == 8
    assert layoutcost.layout_cost(plain % '; edge [label="x"]').long_steps == 8
    for other in ('[xlabel="input"]', '[headlabel="x" taillabel="y"]', '; d [label="x"]'):
        assert layoutcost.layout_cost(plain % other).long_steps == 2, other


def test_an_rnn_sharing_its_weight_for_40_steps_is_refused_on_the_public_host():
    """135 nodes, more than 30 s of `dot`: its inputs' labelled arrows double the rows."""
    trace = run_program(
        "torch.manual_seed(0)\nW = torch.randn(8, 8, requires_grad=True)\nh = torch.zeros(1, 8)\n"
        "for t in range(40):\n    h = torch.tanh(h @ W + torch.randn(1, 8))\ny = h.sum()\n",
        RunOptions(),
    )
    dot = render.draw(trace)
    limits = render.PUBLIC_LIMITS
    assert "label=" in dot and layoutcost.layout_cost(dot).long_steps > 2 * 2_600
    assert "too long to lay out" in layoutcost.refusal(
        dot, limits.max_long_steps, limits.max_clusters
    )


def test_a_cycle_is_counted_turned_round():
    cost = layoutcost.layout_cost("digraph { a -> b -> c -> a; c -> c }")
    assert cost.edges == 4 and cost.long_steps == 1  # c -> a turned round: a -> c skips b


def test_the_slow_graph_is_refused_in_public_mode_before_dot_runs(slow_dot, monkeypatch):
    nodes, edges = render.graph_size(slow_dot)
    assert nodes <= 1000 and edges <= 2000  # inside every public ceiling
    assert layoutcost.layout_cost(slow_dot).long_steps > render.PUBLIC_LIMITS.max_long_steps
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.setattr(render, "_run_dot", lambda *a: pytest.fail("dot was started"))
    render.forget_failures()
    for fmt in ("svg", "png", "pdf"):
        with pytest.raises(render.RenderUnavailable, match="too long to lay out") as refused:
            render.render_bytes(slow_dot, fmt)
        assert "4,145 rows" in str(refused.value) and "fewer" in str(refused.value)
    assert render.render_bytes(slow_dot, "dot") == slow_dot.encode()  # export still works
    render.forget_failures()


def test_the_slow_graph_is_drawn_locally(slow_dot, monkeypatch):
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)
    monkeypatch.setattr(render.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(render, "_run_dot", lambda *a: (None, b"<svg/>"))
    render.forget_failures()
    assert render.render_bytes(slow_dot, "svg") == b"<svg/>"
    assert render.render_bytes(slow_dot, "svg", limits=render.CLI_LIMITS) == b"<svg/>"
    render.forget_failures()


def test_too_many_layer_boxes_are_refused():
    dot = _chain_dot(30, boxed=True)
    assert layoutcost.refusal(dot, None, 30) is None
    assert "30 layer boxes (the limit here is 29)" in layoutcost.refusal(dot, None, 29)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_is_drawn_on_the_public_host(preset):
    limits = render.PUBLIC_LIMITS
    for options in (RunOptions(), RunOptions(backward=preset.backward)):
        trace = run_program(preset.source, options)
        dots = [render.draw(trace, DrawOptions(rankdir=d)) for d in RANKDIRS]
        dots.append(render.draw(trace, DrawOptions(view="classic")))
        for dot in filter(None, dots):
            assert layoutcost.refusal(dot, limits.max_long_steps, limits.max_clusters) is None
            assert layoutcost.layout_cost(dot).long_steps <= 300  # far under the limit
