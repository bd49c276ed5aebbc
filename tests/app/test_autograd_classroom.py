"""AppTest: what a class meets on the autograd page: the output backward starts on, a
training loop's tables under the graph, a quiz link that hides every gradient until revealed,
the "What can I write?" panel and the Tensors table's compact rows."""

import re
from pathlib import Path

from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from tests import markdown_tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def _program(at: AppTest, source: str) -> AppTest:
    at.text_area(key="program").input(source)
    at.button[0].click().run()  # the form's Run program
    assert not at.exception, at.exception
    return at


def _chooser(at: AppTest):
    return next(s for s in at.selectbox if s.label == "Output to run backward on")


def test_backward_starts_on_the_last_scalar_autograd_made_not_a_later_leaf():
    """The selector offers the tensors last made first; a scalar leaf made after the loss
    (a learning rate that requires grad) or a non-scalar is not where backward starts."""
    at = _program(
        _app().run(),
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "loss = (x * x).sum()\n"
        "y = x * 2\n"
        "lr = torch.tensor(0.1, requires_grad=True)\n",
    )
    assert _chooser(at).value == "loss"


def test_backward_falls_back_to_the_last_tensor_autograd_made():
    at = _program(
        _app().run(),
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\nw = torch.ones(3, requires_grad=True)\n",
    )
    assert _chooser(at).value == "y"


def _markdown_index(at: AppTest, text: str) -> int:
    return next(i for i, m in enumerate(at.markdown) if text in m.value)


def test_a_training_loop_shows_the_graph_before_its_parameter_tables():
    """sgd_loop: the graph is the first thing right of the editor; the parameters before
    and after the optimizer step come after it, folded in a closed expander."""
    at = _app().run()
    at.selectbox(key="preset").select("sgd_loop").run()
    assert not at.exception, at.exception
    graph = _markdown_index(at, 'alt="autograd graph"')
    table = _markdown_index(at, "norm before")
    assert graph < table
    folded = [e for e in at.expander if any("norm before" in m.value for m in e.markdown)]
    assert folded and not folded[0].proto.expanded


GRADS = ("2.6667", "3.3333")  # the lesson's x.grad, less its 2.0000 (a value too)


def _texts(at: AppTest) -> str:
    return " ".join(
        [m.value for m in at.markdown]
        + [c.value for c in at.caption]
        + [i.value for i in at.info]
        + [str(t.value) for t in at.table]
        + [str(d.value) for d in at.dataframe]
    )


def test_a_quiz_link_hides_every_gradient_until_revealed():
    """?quiz=1: after backward, the Tensors table, one tensor's values, the walk-through, the
    plain picture and the gradient check show no gradient; Reveal gradients shows them all."""
    at = _app()
    at.query_params["quiz"] = "1"
    at.run()
    next(b for b in at.button if b.label == "Run backward").click().run()
    assert not at.exception, at.exception
    assert not any(g in at.session_state["shown_dot"] for g in GRADS)  # the plain picture
    open_tab(at, "Tensors")
    rows = {
        r["name"]: r for r in markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    }
    assert rows["x"]["grad"] == "?"
    at.selectbox(key="tensor_values").select("x").run()
    assert not any(g in _texts(at) for g in GRADS)
    open_tab(at, "Backward walk-through")
    at.slider(key="step").set_value(3).run()
    assert not any(g in _texts(at) for g in GRADS)
    open_tab(at, "Gradient check")
    assert not any(b.label.startswith("Check gradients") for b in at.button)

    next(b for b in at.button if b.label == "Reveal gradients").click().run()
    assert not at.exception, at.exception
    assert all(g in at.session_state["shown_dot"] for g in GRADS)
    open_tab(at, "Tensors")
    rows = {
        r["name"]: r for r in markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    }
    assert rows["x"]["grad"] == "[2.0000, 2.6667, 3.3333]"
    assert not any(b.label == "Reveal gradients" for b in at.button)


def test_a_quiz_hides_bare_expressions_that_would_give_a_gradient_away():
    at = _app()
    at.query_params["quiz"] = "1"
    at.run()
    _program(
        at,
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\nx * 3\n"
        "(x * x).sum().backward()\nx.grad\n",
    )
    assert not at.exception, at.exception
    codes = [c.value for c in at.code]
    assert "Out[2]: tensor([3., 6.], grad_fn=<MulBackward0>)\nOut[4]: ?" in codes, codes
    next(b for b in at.button if b.label == "Reveal gradients").click().run()
    assert "Out[2]: tensor([3., 6.], grad_fn=<MulBackward0>)\nOut[4]: tensor([2., 4.])" in [
        c.value for c in at.code
    ]


def test_what_can_i_write_lists_the_language_from_its_tables():
    """Every importable module, statement and a sample of each allow-list (the tables
    themselves, read here where torch may be imported) is in the page's panel."""
    import ast

    from gradviz.program.allowlists import nntables, tables
    from gradviz.program.runtime import builtins
    from gradviz.program.syntax.grammar import ALLOWED_NODES, IMPORTABLE

    at = _app().run()
    panel = next(e for e in at.expander if e.label == "What can I write?")
    assert not panel.proto.expanded
    text = " ".join(m.value for m in panel.markdown)
    listed = set(re.findall(r"`([^`]+)`", text))
    assert set(IMPORTABLE) <= listed
    assert {n.__name__ for n in ALLOWED_NODES if issubclass(n, ast.stmt)} <= listed
    for table in (tables.TORCH_FUNCTIONS, tables.TENSOR_METHODS, nntables.LAYERS):
        assert set(list(table)[::7]) <= listed
    assert set(nntables.OPTIMIZERS) | set(builtins.NAMES) <= listed


def test_the_tensors_table_is_one_short_row_a_tensor():
    """The table's columns fit a 1024 px screen's graph column (tests/e2e measures it): a
    matrix's value is its first numbers and "…", the whole of it under "Show all values of"."""
    at = _program(
        _app().run(),
        "W = torch.arange(24.0).reshape(4, 6).requires_grad_()\nloss = (W * W).sum()\n",
    )
    open_tab(at, "Tensors")
    rows = {
        r["name"]: r for r in markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    }
    assert list(rows["W"]) == [
        "name",
        "shape",
        "device",
        "requires_grad",
        "grad_fn",
        "value",
        "grad",
    ]
    assert rows["W"]["value"] == "[[0.0000, 1.0000, …"
    assert rows["W"]["shape"] == "4×6" and rows["loss"]["shape"] == "scalar"
    assert rows["W"]["grad_fn"] == "leaf" and rows["loss"]["grad_fn"] == "SumBackward0"


def test_a_quiz_on_a_training_loop_hides_the_gradient_norms_and_the_steps_results():
    """The parameters after a step (before minus lr times the gradient) and the gradient
    norms give the answers away: hidden too until revealed."""
    at = _app()
    at.query_params["quiz"] = "1"
    at.run()
    at.selectbox(key="preset").select("sgd_loop").run()
    assert not at.exception, at.exception
    steps = markdown_tables.find((m.value for m in at.markdown), "norm before")
    assert steps and {r["after"] for r in steps} == {"?"}
    assert not any("Gradient norms" in c.value for c in at.caption)
    open_tab(at, "Tensors")
    updates = markdown_tables.find((m.value for m in at.markdown), "optimizer") or []
    assert {r["after"] for r in updates} <= {"?"}

    next(b for b in at.button if b.label == "Reveal gradients").click().run()
    steps = markdown_tables.find((m.value for m in at.markdown), "norm before")
    assert "?" not in {r["after"] for r in steps}
    assert any("Gradient norms" in c.value for c in at.caption)
