"""AppTest: the autograd page as a user drives it, without a browser."""

import re
from pathlib import Path

import pytest
from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.share import encode_program
from tests import markdown_tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def _graph_shown(at: AppTest) -> bool:
    """The drawing is on the page: a server-rendered SVG image, or the browser-drawn chart."""
    images = [m for m in at.markdown if 'alt="autograd graph"' in m.value]
    return bool(images or at.get("graphviz_chart"))


def _graph_dot(at: AppTest) -> str:
    assert _graph_shown(at), "no graph on the page"
    return at.session_state["shown_dot"]


def _tensor_table(at: AppTest) -> dict[str, dict]:
    """The Tensors tab's table: name -> row (strings); the tab is opened."""
    open_tab(at, "Tensors")
    rows = markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    return {r["name"]: r for r in rows}


def _run_backward(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label == "Run backward").click().run()
    assert not at.exception, at.exception
    return at


def test_landing_shows_lesson_graph_then_gradients():
    at = _app().run()
    assert not at.exception, at.exception
    dot = _graph_dot(at)
    for name in ("x", "a", "b", "c", "y"):
        assert f"{{{name} = " in dot
    assert "PowBackward0" in dot and "MeanBackward0" in dot
    assert _tensor_table(at)["x"]["grad"] == ""  # the forward graph first
    _run_backward(at)
    dot = _graph_dot(at)
    table = _tensor_table(at)
    x = table["x"]
    assert x["grad"] == "[2.0000, 2.6667, 3.3333]"
    assert "grad [2.0000, 2.6667, 3.3333]" in dot


def test_preset_then_backward_shows_gradients():
    at = _app().run()
    at.selectbox(key="preset").select("broadcasting").run()
    assert not at.exception
    assert at.text_area(key="program").value == PRESETS_BY_KEY["broadcasting"].source
    table = _tensor_table(at)
    assert table["col"]["grad"] == ""
    _run_backward(at)
    table = _tensor_table(at)
    col = table["col"]
    assert col["grad"] == "[[100.0000], [100.0000], [100.0000]]"

    # A program of our own: no backward yet, then the Run backward button.
    at.text_area(key="program").input(
        "w = torch.tensor([1.0, -2.0], requires_grad=True)\nq = (w * w * w).sum()\n"
    )
    at.button[0].click().run()  # the form's Run program
    table = _tensor_table(at)
    assert table["w"]["grad"] == ""
    run_backward = next(b for b in at.button if b.label == "Run backward")
    run_backward.click().run()
    table = _tensor_table(at)
    assert table["w"]["grad"] == "[3.0000, 12.0000]"
    assert "MulBackward0" in _graph_dot(at)


def test_non_scalar_output_explained_and_ones_gradient():
    at = _app().run()
    at.text_area(key="program").input(
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 3\n"
    )
    at.button[0].click().run()
    next(b for b in at.button if b.label == "Run backward").click().run()
    assert any("implicitly created only for scalar outputs" in e.value for e in at.error)
    assert any(
        "grad can be implicitly created only for scalar outputs" in c.value for c in at.caption
    )
    at.checkbox(key="ones").check().run()
    table = _tensor_table(at)
    assert table["x"]["grad"] == "[3.0000, 3.0000]"


def test_mistake_preset_shows_line_and_fix():
    at = _app().run()
    at.selectbox(key="preset").select("mistake_backward_twice").run()
    err = at.error[0].value
    assert "Line 4, column 1" in err
    assert "backward through the graph a second time" in err
    assert any("retain_graph=True" in s.value for s in at.success)


def test_forbidden_program_refused_with_position():
    at = _app().run()
    at.text_area(key="program").input("x = torch.ones(2)\ny = x.__class__\n")
    at.button[0].click().run()
    assert not at.exception
    assert any("Line 2, column 5" in e.value and "underscore" in e.value for e in at.error)
    # headed by the kind's plain title, never by the code's word for it
    assert any(e.value.startswith("**Not part of this language.**") for e in at.error)
    assert not any("forbidden error" in e.value for e in at.error)


def test_classic_view_and_walkthrough_highlight():
    at = _app().run()
    at.radio(key="view").set_value("classic").run()
    dot = _graph_dot(at)
    assert "lightblue" in dot and "darkolivegreen1" in dot  # torchviz's own colours
    at.radio(key="view").set_value("values").run()
    _run_backward(at)
    open_tab(at, "Backward walk-through")
    at.slider(key="step").set_value(3).run()
    dot = _graph_dot(at)
    assert "penwidth=3" in dot
    assert any("PowBackward0" in m.value for m in at.markdown)


def test_gradient_check_passes_for_the_lesson():
    at = open_tab(_run_backward(_app().run()), "Gradient check")
    next(b for b in at.button if b.label.startswith("Check gradients")).click().run()
    assert any(s.value.startswith("Pass") for s in at.success)


def test_share_link_reproduces_program_and_options():
    program = "p = torch.tensor([2.0], requires_grad=True)\nq = p ** 3\n"
    at = _app()
    at.query_params["p"] = encode_program(program)
    at.query_params["dir"] = "LR"
    at.query_params["theme"] = "dark"
    at.query_params["backward"] = "q"
    at.run()
    assert not at.exception
    assert at.text_area(key="program").value == program
    dot = _graph_dot(at)
    assert "rankdir=LR" in dot and "#1e1e1e" in dot
    table = _tensor_table(at)
    assert table["p"]["grad"] == "[12.0000]"


@pytest.mark.parametrize("bad", ["!!!", "eJzLSM3JyQ", "A" * 20000])
def test_broken_share_link_is_a_message_not_a_crash(bad):
    at = _app()
    at.query_params["p"] = bad
    at.run()
    assert not at.exception
    assert any("Could not open the shared program" in w.value for w in at.warning)
    assert _graph_shown(at)  # the lesson is shown instead


def test_export_offers_download(monkeypatch):
    at = open_tab(_app().run(), "Export")
    at.radio(key="export_fmt").set_value("dot").run()
    assert not at.exception
    assert any("Download DOT" in str(b.proto) for b in at.get("download_button"))


def test_big_graph_drawn_on_request():
    lines = ["h = torch.ones(2, requires_grad=True)"] + ["h = h * 1.01"] * 160 + ["y = h.sum()"]
    at = _app().run()
    at.text_area(key="program").input("\n".join(lines) + "\n")
    at.button[0].click().run()
    assert not _graph_shown(at)
    assert any("nodes" in w.value for w in at.warning)
    next(b for b in at.button if b.label == "Draw it anyway").click().run()
    assert _graph_shown(at)


@pytest.mark.parametrize("dot", [True, False], ids=["dot", "no-dot"])
def test_big_graph_warning_says_where_it_is_laid_out(monkeypatch, dot):
    import gradviz.ui.autograd.graph_tab as page

    monkeypatch.setattr(page, "dot_available", lambda: dot)
    lines = ["h = torch.ones(2, requires_grad=True)"] + ["h = h * 1.01"] * 160 + ["y = h.sum()"]
    at = _app().run()
    at.text_area(key="program").input("\n".join(lines) + "\n")
    at.button[0].click().run()
    warned = next(w.value for w in at.warning if "nodes" in w.value)
    where = "on the server" if dot else "in your browser"
    assert f"Laying it out {where}" in warned, warned


def test_graph_is_server_svg_with_dot_and_browser_chart_without(monkeypatch):
    import base64
    import re

    from gradviz.ui.autograd import graph_tab

    at = _run_backward(_app().run())
    image = next(m.value for m in at.markdown if 'alt="autograd graph"' in m.value)
    svg = base64.b64decode(re.search(r"base64,([A-Za-z0-9+/=]+)", image).group(1))
    assert b"<svg" in svg and b"PowBackward0" in svg and b"2.0000, 2.6667, 3.3333" in svg
    monkeypatch.setattr(graph_tab, "dot_available", lambda: False)
    at = _app().run()
    assert at.get("graphviz_chart")
    assert "PowBackward0" in at.get("graphviz_chart")[0].proto.spec


def test_a_visitor_over_their_share_is_told_so_plainly(monkeypatch):
    """The page passes who asks (its address and signed identity) to the
    pool, and a turn that did not come reads as a plain warning, not an error report."""
    from gradviz.services import cache
    from gradviz.util.busy import Busy

    asked = []

    def busy(source, options=None, pool=None, raise_busy=False, visitor=""):
        asked.append(visitor)
        raise Busy("you have a program running in another tab or window; wait for it")

    cache.results().clear()
    monkeypatch.setattr(cache, "run_isolated", busy)
    monkeypatch.setenv("GRADVIZ_LANDING", "off")  # the lesson's stored result needs no pool
    at = _app().run()
    cache.results().clear()
    assert not at.exception, at.exception
    assert asked and re.fullmatch(r"[^|]+\|visitor [0-9a-f]{32}", asked[0]), asked
    assert any("program running in another tab" in w.value for w in at.warning)
    assert not any("Something went wrong" in e.value for e in at.error)


def test_bare_expressions_show_out_lines_and_their_tensor_is_on_the_graph():
    at = _app().run()
    at.text_area(key="program").input(
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\nx.shape\nx * 3\nx.sum().backward()\n"
        "'![t](http://evil.test/p.png) <img src=http://evil.test>' + ''\n"
    )
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    (out,) = [c.value for c in at.code if c.value.startswith("Out[")]
    assert out.splitlines() == [
        "Out[2]: torch.Size([2])",
        "Out[3]: tensor([3., 6.], grad_fn=<MulBackward0>)",
        "Out[5]: '![t](http://evil.test/p.png) <img src=http://evil.test>'",
    ]
    assert any("bare expressions" in c.value for c in at.caption)
    # a program's string is shown as code only, never as Markdown
    texts = [str(e.value) for k in ("markdown", "caption", "info", "error") for e in getattr(at, k)]
    assert not any("evil.test" in t for t in texts)
    assert "{_3 = " in _graph_dot(at)


def test_a_network_shows_layer_clusters_steps_and_accumulation():
    at = _app().run()
    at.text_area(key="program").input(
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))\n"
        "opt = optim.SGD(net.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 2)\n"
        "loss = net(x).pow(2).mean()\n"
        "loss.backward()\n"
        "opt.step()\n"
        "loss2 = net(x).pow(2).mean()\n"
        "loss2.backward()\n"
    )
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    dot = _graph_dot(at)
    assert 'label="net: Sequential (line 5)"' in dot and 'label="net.0: Linear"' in dot
    assert "{net.0.weight = " in dot
    open_tab(at, "Tensors")  # its optimizer steps table
    steps = markdown_tables.find((m.value for m in at.markdown), "before")
    assert [r["parameter"] for r in steps] == [
        "net.0.weight",
        "net.0.bias",
        "net.2.weight",
        "net.2.bias",
    ]
    assert all(r["before"] != r["after"] for r in steps)
    assert any("Line 9" in i.value and "net.0.weight" in i.value for i in at.info)


def test_a_training_loop_picks_which_backward_call_to_show():
    """sgd_no_zero_grad runs backward three times: the last call is shown first; picking
    call 1 redraws its graph with the gradient .grad held right after it (smaller: without
    zero_grad() the gradients add up), and its optimizer step's parameters before and after."""
    at = _app().run()
    at.selectbox(key="preset").select("sgd_no_zero_grad").run()
    assert not at.exception, at.exception
    picker = at.selectbox(key="backward_call")
    assert picker.value == 3
    assert picker.format_func(3) == "backward call 3 of 3 (line 9, iteration 2)"
    last = _graph_dot(at)
    assert "-11.3949" in last and "-4.7832" not in last
    assert _tensor_table(at)["w"]["grad"] == "[-11.3949]"
    texts = " ".join(m.value for m in at.markdown)
    assert "Parameters before and after step 3" in texts

    at.selectbox(key="backward_call").select(1).run()
    assert not at.exception, at.exception
    first = _graph_dot(at)
    assert first != last
    assert "-4.7832" in first and "-11.3949" not in first
    table = _tensor_table(at)
    assert table["w"]["grad"] == "[-4.7832]" and table["w"]["value"] == "[0.0000]"
    steps = markdown_tables.find((m.value for m in at.markdown), "norm before")
    assert [(r["parameter"], r["before"], r["after"]) for r in steps] == [
        ("w", "[0.0000]", "[0.4783]"),
        ("b", "[0.0000]", "[0.1284]"),
    ]
    texts = " ".join(m.value for m in at.markdown)
    assert "Parameters before and after step 1" in texts
    captions = " ".join(c.value for c in at.caption)
    assert "Gradient check tab checks the gradients the program ends with" in captions

    at.selectbox(key="backward_call").select(0).run()  # the whole run, every loss
    whole = _graph_dot(at)
    assert "loss[0]" in whole and "loss[2]" in whole

    at.selectbox(key="preset").select("sgd_loop").run()  # another program: its last call
    assert at.selectbox(key="backward_call").value == 3


def test_the_first_view_draws_the_stored_lesson_without_a_worker(monkeypatch):
    """gradviz.services.landing: the lesson as a first visit opens it is drawn from the
    stored result (no worker run); any other program, or Run backward, runs in a worker."""
    from gradviz.services import cache, landing

    ran = []

    def no_worker(source, options=None, pool=None, raise_busy=False, visitor=""):
        ran.append(options.backward)
        raise RuntimeError("no worker in this test")

    cache.results().clear()
    monkeypatch.setattr(landing, "gpu_device_present", lambda: False)
    monkeypatch.setattr(cache, "run_isolated", no_worker)
    at = _app().run()
    assert not at.exception, at.exception
    assert ran == [] and _graph_shown(at)
    assert "MeanBackward0" in _graph_dot(at)
    next(b for b in at.button if b.label == "Run backward").click().run()
    cache.results().clear()
    assert ran == ["y"]  # backward is a real run, never the stored forward result


def test_a_first_view_makes_only_the_graph_tab_and_a_step_survives_closing_its_tab():
    """The tabs beside the graph are made while open (the first view sends the graph alone);
    the walk-through's step keeps highlighting the graph once its tab is closed."""
    at = _app().run()
    assert _graph_shown(at)
    assert not at.get("download_button") and not at.get("slider")
    assert markdown_tables.find((m.value for m in at.markdown), "requires_grad") is None
    _run_backward(at)
    open_tab(at, "Backward walk-through").slider(key="step").set_value(2).run()
    highlighted = _graph_dot(at)
    assert "penwidth=3" in highlighted
    open_tab(at, "Graph")
    assert not at.get("slider")  # the walk-through tab is closed
    assert _graph_dot(at) == highlighted


def test_a_long_loop_s_backward_calls_are_one_message_each_not_one_per_call():
    at = _app().run()
    at.text_area(key="program").input(
        "w = torch.ones(2, requires_grad=True)\n"
        "for step in range(30):\n"
        "    loss = (w * 3).sum()\n"
        "    loss.backward()\n"
    )
    at.button[0].click().run()
    assert not at.exception, at.exception
    infos = [i.value for i in at.info]
    ran = [i for i in infos if "ran backward" in i]
    assert ran == ["The program itself ran backward: `loss.backward()` (line 4, 30 times)"]
    added = [i for i in infos if "accumulates until zero_grad()" in i]
    assert len(added) == 1 and "29 of its 30 backward calls" in added[0] and "`w`" in added[0]


def test_a_drawing_the_server_refuses_is_laid_out_by_the_browser_with_why(monkeypatch):
    """A refusal (too slow to lay out, the visitor's other drawing still running, the
    server busy) shows the graph drawn by the browser and a warning saying why: the
    server is asked once a run, for this visitor, not again for the plain picture."""
    from gradviz.graph.render import RenderUnavailable
    from gradviz.services import cache

    asked = []

    def refuse(dot, fmt, scale=1.0, timeout=None, limits=None, visitor=""):
        asked.append((fmt, visitor))
        raise RenderUnavailable("This graph would take Graphviz too long to lay out here, why.")

    cache.drawings().clear()  # the lesson's drawing, from an earlier test
    monkeypatch.setattr(cache, "render_bytes", refuse)
    at = _app().run()
    assert not at.exception, at.exception
    chart = at.get("graphviz_chart")
    assert chart and "PowBackward0" in chart[0].proto.spec
    warned = [w.value for w in at.warning if "too long to lay out here, why." in w.value]
    assert warned and "in the browser instead" in warned[0]
    assert not any("too long" in e.value for e in at.error)
    assert len(asked) == 1, asked
    assert re.fullmatch(r"[^|]+\|visitor [0-9a-f]{32}", asked[0][1]), asked


def test_stepping_under_the_graph_highlights_its_node_and_the_walk_through_marks_its_row():
    at = _run_backward(_app().run())
    at.button(key="step_ahead").click().run()
    assert not at.exception, at.exception
    assert at.session_state["step"] == 1 and "penwidth=3" in _graph_dot(at)
    assert any(
        "Walk-through step 1 of 5" in c.value and "MeanBackward0 (y = c.mean())" in c.value
        for c in at.caption
    )
    at.button(key="step_ahead").click().run()
    open_tab(at, "Backward walk-through")
    assert at.slider(key="step").value == 2
    rows = markdown_tables.find((m.value for m in at.markdown), "gradients out")
    assert [r["function"] for r in rows if "▶" in r.values()] == ["AddBackward0 (c = b + 3)"]
    assert rows[-1]["function"] == "AccumulateGrad (x.grad)"
    at.button(key="step_back").click().run()
    assert at.slider(key="step").value == 1
