"""AppTest: what a class meets on the autograd page: the output backward starts on, a
training loop's tables under the graph, a quiz link that hides every gradient until revealed,
the "What can I write?" panel and the Tensors table's compact rows."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

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
