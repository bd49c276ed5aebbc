"""The autograd page's program editor: CodeMirror 6 (vendored in ui/autograd/assets, MIT, see
codemirror.LICENSE there; scripts/build_code_editor.sh rebuilds it) in a small Streamlit
component (st.components.v2), with Python highlighting and line numbers, the run's error
marked at its line and column, the line of the node clicked in the graph highlighted, and
Ctrl+Enter / Cmd+Enter to run.

The plain text area stays below it, in a form with its "Run program" button, under the same
session key ("program"): the component hides it once its script runs in the browser, so a
page where the script cannot run (and Streamlit's AppTest, which runs no JavaScript) keeps
the text area; the "Plain text editor" setting, or a Streamlit without components v2, shows
only the text area. A run from the editor puts its text where the text area keeps it, so
share links, presets, the page switch and the run work alike.

The script is served as a file (/_stcore/bidi-components/gradviz.editor/code_editor.min.js,
fetched once by the browser) and each element names it: its 379 KB inline would go out in
every element, on every rerun of every session. Streamlit serves a component's files from
the asset folder its package's manifest declares; gradviz also runs from a checkout (the
Community Cloud app is not installed), so the page declares that folder to the running
Streamlit itself, as the manifest would, before the component is made or mounted."""

from __future__ import annotations

import json
from collections.abc import Callable, MutableMapping
from functools import cache
from pathlib import Path

import streamlit as st

from gradviz.program.results.reports import RunError, kind_title
from gradviz.ui.common import KEEP

KEY = "code_editor"  # the component's key: its trigger "run" carries the editor's text
PLAIN = "plain_editor"  # the visitor's setting: the text area only
PLAIN_BOX = "plain_program"  # the text area's container (.st-key-plain_program, hidden by it)
EDITOR_HEIGHT = 260  # pixels of the editor's text, about 12 lines
PROGRAM = "program"  # the session key the text area and the editor share
MAX_TEXT = 200_000  # characters taken from the browser for one run
NAME = "gradviz.editor"  # the component: its files are served under this name
SCRIPT = "code_editor.min.js"  # in ASSETS, the folder of the editor's files
ASSETS = "assets"
PACKAGE_DIR = Path(__file__).resolve().parent  # ASSETS is in it (package data of the wheel)


def declare_assets(manager=None) -> None:
    """Declare the editor's asset folder to the running Streamlit's component manager (or
    `manager`), as an installed component's manifest does, so that it serves SCRIPT by URL;
    once per runtime (a test makes one per app)."""
    from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager
    from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest

    manager = manager or get_bidi_component_manager()
    if manager.get_component_asset_root(NAME) is not None:
        return
    project, component = NAME.split(".")
    manifest = ComponentManifest(
        name=project, version="1", components=[ComponentConfig(name=component, asset_dir=ASSETS)]
    )
    manager.register_from_manifest(manifest, PACKAGE_DIR)


@cache
def editor_component():
    """The editor's component, or None where this Streamlit has no components v2 (or cannot
    serve its script): made at the first page run that shows it, where Streamlit runs."""
    v2 = getattr(st.components, "v2", None)
    if v2 is None:
        return None
    try:
        declare_assets()
        return v2.component(NAME, js=SCRIPT, isolate_styles=False)
    except Exception:  # noqa: BLE001 - the text area still works
        return None


def available() -> bool:
    """Whether the page shows the code editor (else the plain text area alone)."""
    return editor_component() is not None and not st.session_state.get(PLAIN, False)


def payload(
    program: str,
    source: str,
    error: RunError | None,
    picked: dict | None,
    *,
    dark: bool = False,
) -> dict:
    """What the editor is told: the text it holds (`program`, the session's), the program that
    ran (`source`), its error's place and message, and the line of the node clicked in the
    graph (checked in the browser against the text the editor holds)."""
    lines = source.splitlines()
    place = None
    if error is not None and error.line and 1 <= error.line <= len(lines):
        title = error.details.title
        head = f"{title} — " if title else ""
        place = {
            "line": error.line,
            "col": max(error.col or 1, 1),
            "text": lines[error.line - 1],
            "message": f"{head}{kind_title(error.kind)}: {error.message}",
        }
    mark = None
    if picked and isinstance(picked.get("line"), int):
        n = picked["line"]
        if 1 <= n <= len(lines) and lines[n - 1] == picked.get("text"):
            mark = {"line": n, "text": picked["text"], "title": str(picked.get("title", ""))}
    return {
        "text": program,
        "source": source,
        "error": place,
        "picked": mark,
        "dark": dark,
        "height": EDITOR_HEIGHT,
    }


def wire(data: dict) -> dict:
    """`data` as the component is given it: its nested objects (the error's place, the clicked
    line) as JSON text, which the script reads back. Streamlit looks for a dataframe in each
    nested object of a component's data, and that look imports numpy, pandas and pyarrow into
    the server (about 85 MB of its memory, for the first error or click in any session)."""
    return {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in data.items()}


def take_run(state: MutableMapping, value: object) -> bool:
    """The editor's run, into `state` (the session): its text becomes the program, as the
    text area's would. False (nothing changed) for a value that is not one."""
    text = value.get("text") if isinstance(value, dict) else None
    if not isinstance(text, str):
        return False
    state[PROGRAM] = text[:MAX_TEXT]
    return True


def plain_box():
    """The container of the text area and its button (hidden while the editor runs)."""
    return st.container(key=PLAIN_BOX)


def text_area(submit: Callable[[], None]) -> None:
    """The plain editor: the program's text in a form, run on its button."""
    with st.form("editor", border=False):
        st.text_area("Program", key=PROGRAM, height=220, persist_state=KEEP)
        st.form_submit_button(
            "Run program", type="primary", on_click=submit, icon=":material/play_arrow:"
        )


def show(
    submit: Callable[[], None], source: str, error: RunError | None, picked: dict | None
) -> None:
    """The code editor, for the program that ran (`source`) and its error; runs call
    `submit` after the editor's text is the session's program."""
    if not available():
        return

    def ran() -> None:
        state = st.session_state.get(KEY) or {}
        value = state.get("run") if hasattr(state, "get") else None
        if take_run(st.session_state, value):
            submit()

    data = wire(
        payload(
            st.session_state.get(PROGRAM, ""),
            source,
            error,
            picked,
            dark=getattr(st.context.theme, "type", None) == "dark",
        )
    )
    declare_assets()  # a runtime made after the component (tests make one per app)
    editor_component()(key=KEY, data=data, on_run_change=ran)


def setting() -> None:
    """The visitor's choice of the plain text area (for a browser or reader the editor does
    not suit)."""
    if editor_component() is None:
        return
    st.checkbox(
        "Plain text editor",
        key=PLAIN,
        help="The program in a plain text box (no highlighting, no marks), run with its "
        "button; the code editor otherwise runs on Ctrl+Enter (⌘+Enter).",
        persist_state=KEEP,
    )
