"""Real browser, 1400x900: what a class meets on the autograd page. A training loop keeps the
graph in the first window; a quiz link shows no gradient until revealed; lesson code's dead
ends (time, torchvision, DataLoader workers) say where to go; bare expressions show their
values; a None `.grad` is explained with its fix; the page's words (did you mean, simulated
CUDA, no internal names); the "What can I write?" panel and the output backward starts on."""

from __future__ import annotations

import pytest
from e2e_support import graph_svg, program_editor, type_program

from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

WINDOW = {"width": 1400, "height": 900}
MAIN = '[data-testid="stMain"]'


def _idle(page) -> None:
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)


def _open(browser, app_server, query: str = ""):
    page = browser.new_page(viewport=WINDOW)
    page.goto(app_server + "/" + query, wait_until="domcontentloaded")
    program_editor(page)
    graph_svg(page, "MeanBackward0")  # the lesson, drawn
    _idle(page)
    return page


def _run(page, source: str, shown: str) -> str:
    """Type `source`, run it, and return the page's text once it shows `shown`."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    type_program(page, source)
    page.get_by_role("button", name="Run program").click()
    try:
        page.wait_for_function(
            "([main, want]) => document.querySelector(main)?.innerText.includes(want)",
            arg=[MAIN, shown],
            timeout=90_000,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"{shown!r} is not on the page: {_text(page)}") from None
    _idle(page)
    return _text(page)


def _text(page) -> str:
    return page.locator(MAIN).inner_text()


def _tab(page, label: str) -> str:
    page.get_by_role("tab", name=label).click()
    page.get_by_role("tab", name=label, selected=True).wait_for(timeout=30_000)
    _idle(page)
    return _text(page)


def test_a_training_loop_keeps_the_graph_in_the_first_window(browser, app_server):
    page = _open(browser, app_server)
    try:
        loop = PRESETS_BY_KEY["sgd_loop"]
        select = page.locator('[data-testid="stSelectbox"]').filter(has_text="Preset")
        select.locator("input").click()
        page.get_by_role("option", name=loop.title).click()
        graph_svg(page, "loss")  # the loop's graph is drawn
        _idle(page)
        frame = page.frame_locator("iframe").first
        frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
        box = page.locator("iframe").first.bounding_box()
        top = box["y"] + page.evaluate("() => window.scrollY")  # from the page's top
        assert top < WINDOW["height"], box
        # the parameters before and after each step: in an expander after the graph, its
        # table folded (or, opened, under the graph)
        steps = page.locator('[data-testid="stExpander"]').filter(
            has_text="Parameters before and after optimizer step"
        )
        assert steps.count() == 1
        assert steps.bounding_box()["y"] > box["y"]
        table = steps.get_by_text("norm before")
        if table.count() and table.first.is_visible():
            assert table.first.bounding_box()["y"] > box["y"] + box["height"]
    finally:
        page.close()


# The lesson's x.grad is [2.0000, 2.6667, 3.3333]; x itself is [1.0000, 2.0000, 3.0000], so
# "2.0000" alone is a value, not a gradient: the whole gradient and its other two are checked.
GRAD_ROW = "2.0000, 2.6667, 3.3333"
GRADS = (GRAD_ROW, "2.6667", "3.3333")


def _gradients_in(text: str) -> list[str]:
    return [g for g in GRADS if g in text]


def _plain_picture(page) -> str:
    page.get_by_text("Plain picture (if the viewer does not load)").click()
    return graph_svg(page)


def test_a_quiz_link_shows_no_gradient_until_revealed(browser, app_server):
    page = _open(browser, app_server, "?quiz=1")
    try:
        page.get_by_role("button", name="Run backward").click()
        page.get_by_role("button", name="Reveal gradients").wait_for(timeout=90_000)
        _idle(page)
        graph_svg(page, "grad ?")  # backward ran; the drawing hides its gradients
        assert _gradients_in(_text(page)) == []
        assert _gradients_in(_plain_picture(page)) == []
        viewer = page.frame_locator("iframe").first.locator("body")
        assert _gradients_in(viewer.inner_text()) == []
        walk = _tab(page, "Backward walk-through")
        assert "ran these" in walk and _gradients_in(walk) == []
        tensors = _tab(page, "Tensors")
        assert "requires_grad" in tensors and _gradients_in(tensors) == []

        page.get_by_role("button", name="Reveal gradients").click()
        page.get_by_role("button", name="Reveal gradients").wait_for(
            state="detached", timeout=90_000
        )
        _idle(page)
        assert GRAD_ROW in _tab(page, "Tensors")
        assert "2.6667" in _tab(page, "Backward walk-through")
        graph_svg(page, "3.3333")  # the plain picture shows them too
    finally:
        page.close()


def test_lesson_codes_dead_ends_say_where_to_go(browser, app_server):
    page = _open(browser, app_server)
    try:
        timed = _run(
            page,
            "import time\nt0 = time.time()\nx = torch.ones(2, device='cuda')\ny = x * 2\n"
            "t1 = time.time()\n",
            "the Speed page times it both ways",
        )
        assert "the Speed page times it both ways" in timed
        assert "torch.cuda.synchronize()" in timed
        refused = _run(page, "import torchvision\n", "torchvision is not available here")
        assert "torchvision is not available here" in refused
        assert "gradviz_cifar10_sample(4)" in refused
        assert "open the CIFAR-10 training page" in refused
        loaded = _run(
            page,
            "xs = torch.randn(6, 2)\nys = torch.randn(6)\n"
            "ds = torch.utils.data.TensorDataset(xs, ys)\n"
            "loader = torch.utils.data.DataLoader(ds, batch_size=2, num_workers=2)\n"
            "w = torch.zeros(2, requires_grad=True)\n"
            "for xb, yb in loader:\n    loss = ((xb @ w - yb) ** 2).mean()\n",
            "num_workers=2 runs in one process here",
        )
        assert "num_workers=2 runs in one process here" in loaded
        assert "Error" not in loaded
        graph_svg(page, "loss[2]")  # it ran: each batch's loss is on the graph
    finally:
        page.close()


def test_bare_expressions_show_their_values(browser, app_server):
    page = _open(browser, app_server)
    try:
        text = _run(
            page,
            "import torch.nn as nn\ntorch.manual_seed(0)\nnet = nn.Linear(2, 1)\n"
            "X = torch.ones(3, 2)\nX.shape\nnet(X)\n",
            "Out[5]: torch.Size([3, 2])",
        )
        assert "as a notebook shows them" in text
        assert "Out[5]: torch.Size([3, 2])" in text
        # a value of several lines starts under its Out[line], as IPython writes it
        assert "Out[6]:\ntensor([[" in text and "grad_fn=<AddmmBackward0>" in text
        assert "_6 = " in graph_svg(page, "_6 = ")  # net(X), named by its line, on the graph
    finally:
        page.close()


def test_a_none_gradient_is_explained_with_its_fix(browser, app_server):
    page = _open(browser, app_server)
    try:
        text = _run(
            page,
            "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.sum().backward()\n"
            "g = y.grad * 2\n",
            ".grad is None because y is not a leaf",
        )
        assert ".grad is None because y is not a leaf" in text
        assert "y.retain_grad()" in text
        text = _run(
            page,
            "w = torch.ones(2, requires_grad=True)\nlr = 0.1\nfor _ in range(2):\n"
            "    loss = (w * w).sum()\n    loss.backward()\n    w = w - lr * w.grad\n",
            ".grad is None because w is no longer a leaf",
        )
        assert ".grad is None because w is no longer a leaf after w = w - lr * w.grad" in text
        assert "with torch.no_grad(): w -= lr * w.grad" in text
    finally:
        page.close()


def _plain_words(text: str) -> None:
    assert "FakeTensorMode" not in text
    assert "forbidden error." not in text.lower()


def test_the_pages_words_are_plain(browser, app_server):
    page = _open(browser, app_server)
    try:
        assert "Did you mean True?" in _run(page, "flag = Ture\n", "Did you mean")
        gpu = _run(
            page,
            "gpu = torch.cuda.is_available()\nprint('GPU available?', gpu)\n"
            "x = torch.ones(2, device='cuda', requires_grad=True)\ny = (x * 2).sum()\n",
            "GPU available? True",  # printed (the program's own text has no "? True")
        )
        assert "GPU available? True" in gpu
        assert "torch.cuda.is_available() answered True (simulated)" in gpu
        _plain_words(gpu)
        mixed = _run(
            page,
            "x = torch.ones(2, device='cuda')\ny = torch.ones(2)\nz = x + y\n",
            "Tensors on different devices",
        )
        assert "simulated CUDA" in mixed
        _plain_words(mixed)
        _plain_words(_run(page, "import os\n", "os is not available"))
    finally:
        page.close()


def test_what_can_i_write_and_backward_starts_on_a_scalar(browser, app_server):
    from playwright.sync_api import expect

    page = _open(browser, app_server)
    try:
        page.get_by_text("What can I write?").click()
        panel = page.locator('[data-testid="stExpander"]').filter(has_text="What can I write?")
        listed = panel.inner_text()
        assert panel.get_by_text("Imports").is_visible()  # opened
        assert "A safe subset of Python and PyTorch" in listed
        for name in ("torch.nn.functional", "For", "backward", "Linear", "SGD"):
            assert name in listed, name
        _run(
            page,
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\nloss = (x * x).sum()\n"
            "y = x * 2\nlr = torch.tensor(0.1, requires_grad=True)\n",
            "Output to run backward on",  # already there: the chooser's value is awaited
        )
        chooser = page.locator('[data-testid="stSelectbox"]').filter(
            has_text="Output to run backward on"
        )
        # the scalar autograd made last, not the later non-scalar y nor the scalar leaf lr
        # (the lesson's choice was its own y: a name the new program uses for a non-scalar)
        expect(chooser.locator("input")).to_have_value("loss")
        _idle(page)
        assert chooser.locator("input").input_value() == "loss"
    finally:
        page.close()
