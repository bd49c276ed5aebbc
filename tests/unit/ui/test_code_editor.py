"""The program editor's Python side (gradviz.ui.autograd.code_editor): what the CodeMirror
component is told (text, the run's error with its place, the clicked node's line), a run
from the editor taken into the session, and the bundle shipped with its licence."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from gradviz.program.results.reports import ErrorDetails, RunError
from gradviz.ui.autograd import code_editor

ROOT = Path(__file__).resolve().parents[3]
ASSETS = ROOT / "src/gradviz/ui/autograd/assets"
SOURCE = "a = torch.ones(3)\nb = a * 2\nc = nope + b\n"


def test_the_editor_is_told_the_text_and_the_program_that_ran():
    data = code_editor.payload("x = 1\n", SOURCE, None, None)
    assert data["text"] == "x = 1\n"
    assert data["source"] == SOURCE
    assert data["error"] is None and data["picked"] is None
    assert data["height"] == code_editor.EDITOR_HEIGHT and data["dark"] is False


def test_the_error_is_told_with_its_line_column_and_message():
    err = RunError("name", "`nope` is not defined", line=3, col=5)
    data = code_editor.payload(SOURCE, SOURCE, err, None)
    assert data["error"] == {
        "line": 3,
        "col": 5,
        "text": "c = nope + b",
        "message": "Unknown name: `nope` is not defined",
    }


def test_an_error_title_heads_its_message_and_a_missing_column_is_the_first():
    err = RunError("runtime", "boom", line=2, details=ErrorDetails(title="Shape mismatch"))
    error = code_editor.payload(SOURCE, SOURCE, err, None)["error"]
    assert error["col"] == 1
    assert error["message"] == "Shape mismatch — Error while running: boom"


def test_an_error_without_a_place_in_the_program_marks_nothing():
    for line in (None, 0, 99):
        err = RunError("internal", "worker died", line=line, col=1)
        assert code_editor.payload(SOURCE, SOURCE, err, None)["error"] is None


def test_the_clicked_node_line_is_told_while_the_program_holds_it():
    picked = {"id": "t2", "title": "b", "line": 2, "text": "b = a * 2"}
    data = code_editor.payload(SOURCE, SOURCE, None, picked)
    assert data["picked"] == {"line": 2, "text": "b = a * 2", "title": "b"}
    stale = {**picked, "text": "b = a"}  # clicked before an edit of that line
    assert code_editor.payload(SOURCE, SOURCE, None, stale)["picked"] is None
    for bad in ({**picked, "line": 9}, {**picked, "line": "2"}, {}):
        assert code_editor.payload(SOURCE, SOURCE, None, bad)["picked"] is None


def test_the_marks_go_as_json_text_so_streamlit_looks_for_no_dataframe_in_them():
    # Streamlit's component looks for a dataframe in each value of the data that is not a
    # str, int, float, bool, bytes, tuple, set or None: a look that imports numpy, pandas and
    # pyarrow into the server (tests/app/test_server_without_torch.py runs the page).
    err = RunError("name", "`nope` is not defined", line=3, col=5)
    picked = {"id": "t2", "title": "b", "line": 2, "text": "b = a * 2"}
    data = code_editor.payload(SOURCE, SOURCE, err, picked)
    sent = code_editor.wire(data)
    assert all(v is None or isinstance(v, str | int | bool) for v in sent.values()), sent
    assert {k: json.loads(v) if k in ("error", "picked") else v for k, v in sent.items()} == data
    assert code_editor.wire(code_editor.payload(SOURCE, SOURCE, None, None))["error"] is None


def test_a_run_from_the_editor_puts_its_text_where_the_text_area_keeps_it():
    state = {"program": "old"}
    assert code_editor.take_run(state, {"text": "x = torch.ones(2)\n", "at": 1})
    assert state["program"] == "x = torch.ones(2)\n"
    for value in (None, "x", {"text": 3}, {}):
        assert not code_editor.take_run(state, value)
    assert state["program"] == "x = torch.ones(2)\n"
    code_editor.take_run(state, {"text": "#" * (code_editor.MAX_TEXT + 10)})
    assert len(state["program"]) == code_editor.MAX_TEXT


def test_the_bundle_ships_in_the_package_with_its_licence():
    bundle = (ASSETS / "code_editor.min.js").read_text("utf-8")
    assert "export" in bundle and len(bundle) < 500_000  # one ES module, modest
    assert "st-key-" + code_editor.PLAIN_BOX in bundle  # the text area it hides
    licence = (ASSETS / "codemirror.LICENSE").read_text("utf-8")
    assert "MIT License" in licence and "@codemirror/view" in licence
    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    shipped = data["tool"]["setuptools"]["package-data"]["gradviz.ui.autograd"]
    assert "assets/code_editor.min.js" in shipped and "assets/*.LICENSE" in shipped
    assert (ROOT / "scripts/build_code_editor.sh").exists()


def test_the_script_is_served_by_url_from_the_package_folder():
    """Streamlit serves /_stcore/bidi-components/<NAME>/<js_url> from the component's asset
    folder: the element names the script (js_url), it carries no script text."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    manager = BidiComponentManager()
    code_editor.declare_assets(manager)
    code_editor.declare_assets(manager)  # once per runtime: a second call changes nothing
    definition = manager.build_definition_with_validation(
        component_key=code_editor.NAME, html=None, css=None, js=code_editor.SCRIPT
    )
    assert definition.js_content is None and definition.js_url == code_editor.SCRIPT
    served = Path(manager.get_component_path(code_editor.NAME)) / definition.js_url
    assert served.resolve() == (ASSETS / "code_editor.min.js").resolve()
