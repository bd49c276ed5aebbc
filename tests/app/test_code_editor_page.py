"""AppTest: the autograd page's code editor (gradviz.ui.autograd.code_editor) is told the
program, the run's error and its place; the text area stays (AppTest runs no JavaScript; a
run from the editor is in the unit and browser tests) and the plain editor setting leaves
the text area alone."""

from pathlib import Path

from editor_told import editor_data
from streamlit.testing.v1 import AppTest

from gradviz.ui.autograd import code_editor

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BROKEN = "a = torch.ones(3, requires_grad=True)\nb = a * 2\nc = nope + b\n"


def test_the_editor_holds_the_program_and_is_told_the_error_of_a_run():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    data = editor_data(at)
    assert data["text"] == at.text_area(key="program").value == data["source"]
    assert data["error"] is None
    at.text_area(key="program").input(BROKEN)
    at.button[0].click().run()  # the form's Run program, as before
    data = editor_data(at)
    assert data["text"] == data["source"] == BROKEN
    assert data["error"]["line"] == 3 and data["error"]["col"] == 5
    assert "nope" in data["error"]["message"]


def test_the_plain_editor_setting_leaves_the_text_area_alone():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert editor_data(at) is not None
    at.checkbox(key="plain_editor").check().run()
    assert not at.exception, at.exception
    assert editor_data(at) is None
    assert at.text_area(key="program").value  # the program is still there, in the text area


def test_without_components_v2_the_text_area_alone_and_the_marked_copy(monkeypatch):
    # a Streamlit without st.components.v2
    monkeypatch.setattr(code_editor, "editor_component", lambda: None)
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    assert editor_data(at) is None
    assert not any(c.key == "plain_editor" for c in at.checkbox)  # nothing to choose
    at.text_area(key="program").input(BROKEN)
    at.button[0].click().run()
    assert at.session_state["submitted"] == BROKEN
    at.session_state["viewer_selected"] = {"id": "t1", "title": "b", "line": 2, "text": "b = a * 2"}
    at.run()
    marked = [c.value for c in at.code if "▶" in c.value]
    assert [ln for ln in marked[0].splitlines() if ln.startswith("▶")] == ["▶ 2  b = a * 2"]


def test_the_editor_element_names_its_script_and_does_not_carry_it():
    """The 379 KB script is served once by URL; each element (every rerun, every session)
    names it only."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    [proto] = [
        c.proto for c in at.get("bidi_component") if c.proto.component_name == code_editor.NAME
    ]
    assert proto.js_content == ""
    assert proto.js_source_path == code_editor.SCRIPT
    assert proto.ByteSize() < 5_000
    at.text_area(key="program").input(BROKEN)
    at.button[0].click().run()  # a rerun, in the same session and runtime
    assert editor_data(at)["error"]["line"] == 3
    editors = [c for c in at.get("bidi_component") if c.proto.component_name == code_editor.NAME]
    assert [c.proto.js_content for c in editors] == [""]
