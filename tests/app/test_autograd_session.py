"""AppTest: what the autograd page keeps in a session (page switches), what it shows before
and after backward, the backward selector after an error, the share link's device moves and
the graph theme that follows the page."""

from pathlib import Path

from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.share import encode_program
from tests import markdown_tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def _open_page(at: AppTest, title: str) -> AppTest:
    """Open a page as its sidebar link does. AppTest.switch_page only knows file pages; ours
    are callables registered by st.navigation, so the page is picked by its hash."""
    by_title = {info.get("page_name"): h for h, info in at._registered_pages.items()}
    at._page_hash = by_title[title]
    at.run()
    assert not at.exception, at.exception
    assert at._finished_page_script_hash == by_title[title]
    return at


def _tensor_table(at: AppTest) -> dict[str, dict]:
    open_tab(at, "Tensors")
    rows = markdown_tables.find((m.value for m in at.markdown), "requires_grad")
    return {r["name"]: r for r in rows}


def _chooser(at: AppTest):
    return next(s for s in at.selectbox if s.label == "Output to run backward on")


def _run_backward(at: AppTest) -> None:
    next(b for b in at.button if b.label == "Run backward").click().run()


def test_program_options_and_results_survive_a_page_switch():
    program = "w = torch.tensor([1.0, -2.0], requires_grad=True)\nq = (w * w * w).sum()\n"
    at = _app().run()
    at.text_area(key="program").input(program)
    at.button[0].click().run()
    _run_backward(at)
    at.radio(key="view").set_value("classic").run()
    at.radio(key="rankdir").set_value("LR").run()
    at.checkbox(key="retain").check().run()
    at.multiselect(key="move_leaves").select("w").run()
    assert _tensor_table(at)["w"]["grad"] == "[3.0000, 12.0000]"

    _open_page(at, "Devices")
    assert not any(t.key == "program" for t in at.text_area)
    _open_page(at, "Autograd")

    assert at.text_area(key="program").value == program
    assert at.radio(key="view").value == "classic"
    assert at.radio(key="rankdir").value == "LR"
    assert at.checkbox(key="retain").value is True
    assert at.multiselect(key="move_leaves").value == ["w"]
    assert at.session_state["preset"] is None
    table = _tensor_table(at)
    assert table["w"]["grad"] == "[3.0000, 12.0000]"
    assert table["w"]["device"] != "cpu"  # the move is still applied


def test_a_preset_opens_on_the_forward_graph_and_backward_fills_the_gradients():
    at = _app().run()
    assert _tensor_table(at)["x"]["grad"] == ""  # the landing lesson: forward graph only
    assert "grad [" not in at.session_state["shown_dot"]
    at.selectbox(key="preset").select("linear_relu").run()
    assert not at.exception, at.exception
    assert at.text_area(key="program").value == PRESETS_BY_KEY["linear_relu"].source
    assert _tensor_table(at)["W"]["grad"] == ""
    assert "grad [" not in at.session_state["shown_dot"]
    # the preset's output is the one offered for backward
    assert _chooser(at).value == "loss"
    _run_backward(at)
    assert _tensor_table(at)["W"]["grad"] != ""
    assert "grad [" in at.session_state["shown_dot"]
    # and after backward the link says so
    assert at.query_params["backward"] == "loss"


def test_after_an_error_the_backward_choice_is_kept_without_noise():
    at = _app().run()
    _run_backward(at)  # backward on y, the lesson's output
    broken = PRESETS_BY_KEY["lesson"].source.replace("c = b + 3", "c = b + nothing")
    at.text_area(key="program").input(broken)
    at.button[0].click().run()
    assert any("nothing" in e.value for e in at.error)
    assert _chooser(at).value == "y"
    assert not any("implicitly created only for scalar outputs" in c.value for c in at.caption)
    # fixing the program brings the choice back into play
    at.text_area(key="program").input(PRESETS_BY_KEY["lesson"].source)
    at.button[0].click().run()
    assert _chooser(at).value == "y"


def test_share_link_carries_device_moves_and_the_walkthrough_step():
    at = _app().run()
    _run_backward(at)
    at.multiselect(key="move_leaves").select("x").run()
    open_tab(at, "Backward walk-through")
    at.slider(key="step").set_value(2).run()
    assert at.query_params["move"] == "x"
    assert at.query_params["to"] == at.session_state["move_to"]
    assert at.query_params["step"] == "2"

    opened = _app()
    for key, value in at.query_params.items():
        opened.query_params[key] = value
    opened.run()
    assert not opened.exception, opened.exception
    assert opened.multiselect(key="move_leaves").value == ["x"]
    assert opened.session_state["move_to"] == at.session_state["move_to"]
    assert opened.session_state["step"] == 2
    assert opened.session_state["shown_dot"] == at.session_state["shown_dot"]


def test_share_link_moving_all_leaves():
    program = "p = torch.tensor([2.0], requires_grad=True)\nq = p ** 3\n"
    at = _app()
    at.query_params["p"] = encode_program(program)
    at.query_params["move"] = "*"
    at.query_params["to"] = "cuda:0"
    at.run()
    assert not at.exception, at.exception
    assert at.checkbox(key="move_all").value is True
    assert _tensor_table(at)["p"]["device"] == "cuda:0"


def test_graph_theme_follows_the_page_unless_overridden():
    at = _app()
    at.context = {"theme": "dark"}
    at.run()
    assert at.radio(key="theme").value == "auto"
    assert "#1e1e1e" in at.session_state["shown_dot"]  # the dark theme's background
    light = _app()
    light.context = {"theme": "light"}
    light.run()
    assert "#1e1e1e" not in light.session_state["shown_dot"]
    at.radio(key="theme").set_value("light").run()  # the override is kept
    assert "#1e1e1e" not in at.session_state["shown_dot"]
    assert at.query_params["theme"] == "light"
