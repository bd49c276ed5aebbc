"""Autograd playground page: type a program, see its graph, run backward, export it.

The page's parts: the preset picker and options here, the program's editor in `code_editor`;
`backward_controls` (the output to run backward on), `tabs` (graph, tensors, walk-through,
gradient check, export, share) with `graph_tab`, and the state kept between runs in `state`.
Results and drawings come from gradviz.services.cache.
"""

from __future__ import annotations

import streamlit as st

from gradviz.program.presets import PRESETS, PRESETS_BY_KEY
from gradviz.program.results.reports import RunError, kind_title
from gradviz.program.results.trace import Trace
from gradviz.services import landing
from gradviz.services.cache import run_cached
from gradviz.ui import device_panel
from gradviz.ui.autograd import (
    backward_calls,
    backward_controls,
    code_editor,
    graph_viewer,
    language_panel,
    quiz,
    tabs,
)
from gradviz.ui.autograd.state import THEME_LABELS, init_state, load_preset, update_share_link
from gradviz.ui.common import KEEP, show_unexpected
from gradviz.ui.visitor import visitor_key, wait_shown
from gradviz.util.busy import Busy
from gradviz.util.mdtext import message

VIEW_LABELS = {"values": "gradviz (values + grads)", "classic": "torchviz classic"}
RANKDIR_LABELS = {"TB": "top-down", "LR": "left-right"}


def _submit() -> None:
    preset = PRESETS_BY_KEY.get(st.session_state.get("preset"))
    if preset is not None and st.session_state.program != preset.source:
        st.session_state.preset = None  # the editor no longer holds the preset
    if st.session_state.program != st.session_state.submitted:
        st.session_state.backward_target = None  # the new program opens on its forward graph
        st.session_state.step = 0
    st.session_state.submitted = st.session_state.program


def _show_error(err: RunError, source: str) -> None:
    where = f"Line {err.line}, column {err.col}: " if err.line else ""
    title = err.details.title
    st.error(
        f"**{title + ' — ' if title else ''}{kind_title(err.kind)}.** {where}"
        f"{message(err.message)}",
        icon=":material/error:",
    )
    lines = source.splitlines()
    if err.line and 1 <= err.line <= len(lines):
        caret = " " * max((err.col or 1) - 1, 0) + "^"
        st.code(f"{err.line:>3} | {lines[err.line - 1]}\n    | {caret}", language=None)
    for line, col in err.details.also:  # e.g. the in-place change backward tripped over
        if 1 <= line <= len(lines):
            st.caption(f"and line {line}, column {col}:")
            caret = " " * max(col - 1, 0) + "^"
            st.code(f"{line:>3} | {lines[line - 1]}\n    | {caret}", language=None)
    if err.hint:
        # Hints are gradviz's own (a device rule, "did you mean `name`?" among identifiers),
        # Markdown meant as written; the message, which quotes PyTorch and strings, is escaped.
        st.info(err.hint, icon=":material/lightbulb:")
    if err.details.fix:
        # gradviz's own text (explain.EXPLANATIONS), or a device error's fix line, whose names
        # are the program's text: errors.with_devices sets that one as mdtext.code.
        st.success(f"**Fix:** {err.details.fix}", icon=":material/build:")
    device_panel.error_details(err.details.device, rule=False)


def page() -> None:
    init_state()
    landing.warm_in_background()  # the first view's graph is stored; workers start meanwhile
    st.title("Autograd playground")
    st.caption(
        "Type a PyTorch program in a safe subset of Python (functions, loops, `nn.Module` "
        "classes, layers, optimizers, data loaders: the tutorials' own code), see the graph "
        "autograd builds, run backward and watch the gradients arrive."
    )
    for problem in st.session_state.get("share_problems", []):
        st.warning(message(problem))

    # Editor and controls on the left, the graph on the right: the first graph is in view
    # without scrolling, next to the program that made it.
    left, right = st.columns([2, 3], gap="medium")
    with left:
        editor_slot = _editor()
        language_panel.panel()
        source = st.session_state.submitted
        trace = _run(source)
        with editor_slot:  # above the text area, told the run's error and the clicked node
            code_editor.show(
                _submit,
                source,
                trace.error if trace is not None else None,
                st.session_state.get(graph_viewer.SELECTED),
            )
    # The right column is filled before the rest of the left one: the graph reaches the
    # browser first (the layout is the same; the controls' values are in session_state).
    if trace is not None:
        with right:  # a loop's calls: one at a time
            shown, call = backward_calls.pick(trace)
            tabs.graph_and_tabs(shown, source, trace)
            backward_calls.steps(call)
    with left:
        if trace is not None:
            backward_controls.controls(trace)
            quiz.reveal_button()
            _messages(trace, source)
            if not code_editor.available():  # the editor highlights the line itself
                graph_viewer.marked_program(source)
            device_panel.controls(trace)
        _options()
    if trace is not None:
        update_share_link(source)


def _run(source: str) -> Trace | None:
    """The program's result, or None with a plain message (never a traceback)."""
    try:
        with wait_shown():  # the place in line and the wait, while the turn has not come
            return run_cached(
                source,
                st.session_state.backward_target,
                st.session_state.ones,
                st.session_state.retain,
                device_panel.overrides(),
                visitor_key(),
            )
    except Busy as exc:  # the visitor's turn did not come: a plain message, input kept
        st.warning(f"Not run yet: {exc}.", icon=":material/hourglass_top:")
    except Exception as exc:  # never a traceback on the page
        show_unexpected(exc, "running the program")
    return None


def _messages(trace: Trace, source: str) -> None:
    """What the run said: moves, the error, PyTorch's warnings, summaries, printed lines and
    the values of bare expressions (Out[line])."""
    device_panel.moves(trace)
    if trace.error:
        _show_error(trace.error, source)
    for w in trace.warnings:
        st.warning(f"Line {w.line}: PyTorch warns: {message(w.message)}", icon=":material/warning:")
    for note in trace.summary:
        st.info(f"This result is summarised: {message(note)}.", icon=":material/info:")
    if trace.stdout:
        st.code("\n".join(trace.stdout), language=None)
    shown = quiz.shown(trace).shown  # a quiz hides those that would give gradients away
    if shown:  # the bare top-level expressions' values, as a notebook shows them
        st.caption("What the program's bare expressions give, as a notebook shows them:")
        st.code("\n".join(s.out() for s in shown), language=None)


def _editor():
    """The preset picker and the program's text, run on the form's button; returns the
    place of the code editor, filled once the run's error is known."""
    st.selectbox(
        "Preset",
        [p.key for p in PRESETS],
        format_func=lambda k: PRESETS_BY_KEY[k].title,
        key="preset",
        index=None,
        placeholder="Pick a preset…",
        on_change=load_preset,
        persist_state=KEEP,
    )
    # a preset's note can give the answer (the lesson's x.grad): not while a quiz hides it.
    # Its place is kept when there is none, so the editor below keeps its own (a component
    # that moves is made again in the browser, losing the text being typed).
    note = st.empty()
    if st.session_state.get("preset") in PRESETS_BY_KEY and not graph_viewer.gradients_hidden():
        note.caption(PRESETS_BY_KEY[st.session_state.preset].about)
    slot = st.container(key="code_editor_box")
    with code_editor.plain_box():
        code_editor.text_area(_submit)
    return slot


def _options() -> None:
    """How the graph is drawn, and what the run keeps."""
    st.radio(
        "View",
        list(VIEW_LABELS),
        format_func=VIEW_LABELS.get,
        key="view",
        horizontal=True,
        persist_state=KEEP,
    )
    st.radio(
        "Direction",
        list(RANKDIR_LABELS),
        format_func=RANKDIR_LABELS.get,
        key="rankdir",
        horizontal=True,
        persist_state=KEEP,
    )
    st.radio(
        "Theme",
        list(THEME_LABELS),
        format_func=THEME_LABELS.get,
        key="theme",
        horizontal=True,
        persist_state=KEEP,
        help="The drawing's colours; *follow page* draws dark on a dark page.",
    )
    st.checkbox(
        "Show saved tensors",
        key="saved",
        help="What each backward function saved in the forward pass.",
        persist_state=KEEP,
    )
    st.checkbox("Keep intermediate gradients (retain_grad)", key="retain", persist_state=KEEP)
    code_editor.setting()
