"""AppTest: a second derivative on the autograd page. The gradient's own graph (built by
torch.autograd.grad(..., create_graph=True)) is drawn in an orange cluster joined to the
first graph, the page says in one line what that is, and the walk-through of the second
backward names the graph each step runs through."""

from pathlib import Path

from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from tests import markdown_tables
from tests.higher_order_programs import HESSIAN

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PROGRAM = """x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, create_graph=True)
g.backward()
"""


def test_a_second_derivative_shows_the_gradient_s_graph_marked_and_says_so():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_area(key="program").input(PROGRAM)
    at.button[0].click().run()  # the form's Run program
    assert not at.exception, at.exception
    captions = [c.value.replace("\\", "") for c in at.caption]  # as Markdown shows them
    line = "dy/dx has its own graph because create_graph=True"
    assert any(line in c and "gives d2y/dx2" in c for c in captions), captions
    dot = at.session_state["shown_dot"]
    cluster = dot[dot.index('subgraph "cluster_built_1"') :]
    cluster = cluster[: cluster.index("\n  }")]
    for title in ("MulBackward0", "MulBackward1", "PowBackward0", "{g = "):
        assert title in cluster, title
    assert "{y = " not in cluster and "{y = " in dot  # the first graph, outside it
    assert 'label="dy/dx"' in dot  # the arrow from y to its gradient g
    legend = next(m.value for m in at.markdown if m.value.startswith("Legend: "))
    assert "built by backward (2nd order)" in legend
    assert "grad 12.0000" in dot  # d2y/dx2 = 6x at x = 2, in x.grad
    open_tab(at, "Backward walk-through")
    rows = markdown_tables.find((m.value for m in at.markdown), "gradients out")
    assert [r["graph"] for r in rows] == ["gradient's graph (made by backward call 1)"] * 3 + [
        "program's graph"
    ]


def test_a_hessian_s_graph_is_marked_as_built_by_its_passes_and_says_so():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_area(key="program").input(HESSIAN)
    at.button[0].click().run()
    assert not at.exception, at.exception
    captions = [c.value.replace("\\", "") for c in at.caption]
    line = (
        "H has its own graph because create_graph=True (the orange nodes, made by hessian's "
        "backward passes at line 5); this backward runs through it and gives the derivative "
        "of H."
    )
    assert line in captions, captions
    dot = at.session_state["shown_dot"]
    assert "made by hessian's backward passes at line 5 (create_graph=True)" in dot
    assert 'subgraph "cluster_built_f0"' in dot
    legend = next(m.value for m in at.markdown if m.value.startswith("Legend: "))
    assert "built by backward (2nd order)" in legend
