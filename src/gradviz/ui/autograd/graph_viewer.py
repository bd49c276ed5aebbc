"""The autograd page's interactive graph: gradviz.graph.interactive's viewer in a frame (pan,
zoom, hover, click to inspect a tensor beside the graph, search, collapse layers, colour by,
quiz), laid out once by the server's Graphviz. The plain picture stays below as the fallback
for a browser where the viewer's frame cannot run.

The frame is drawn by a small Streamlit component (st.components.v2, graph/assets/bridge.js)
that passes a click on a node back to the page: `marked_program` then shows the program with
that node's line marked, beside the graph. Where the component cannot be made, the frame is a
plain st.iframe (the click is then shown only in the viewer's own inspector)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import streamlit as st

from gradviz.graph.collapse import call_depths, fold_calls
from gradviz.graph.interactive import asset, viewer_html
from gradviz.graph.model import DrawOptions, GraphModel
from gradviz.graph.render import RenderUnavailable, dot_available
from gradviz.graph.walkthrough import flow
from gradviz.program.results.trace import Trace
from gradviz.util.mdtext import code

# The frame's height: the window's below the frame's top (at the page's top), within these
# pixels (graph/assets/bridge.js): 546 px at 1400x900, 720 px on a 1920x1080 projector.
VIEWER_HEIGHT = 720
VIEWER_MIN_HEIGHT = 360
QUIZ_PARAMS = {"quiz": "1"}  # a share link's addition that opens the viewer in quiz mode
REVEALED = "quiz_revealed"  # the quiz's gradients were revealed on the page
LABEL = "Interactive viewer (pan, zoom, hover, click a tensor, quiz)"
FRAME_KEY = "viewer_frame"  # the component's key: its state holds the node clicked last
SELECTED = "viewer_selected"  # {id, title, line, text} of the node clicked last
FOLDS = "viewer_folds"  # {source, calls, depth}: the layers the visitor closed in the viewer
SHOWN = "viewer_source"  # the digest of the program whose graph the viewer shows
FOLD_VIEW = "viewer_fold_view"  # this run's folds as the viewer is told them


def _component():
    """The viewer's component (st.components.v2), or None where this Streamlit has none."""
    v2 = getattr(st.components, "v2", None)
    if v2 is None:
        return None
    try:
        return v2.component("gradviz_viewer", js=asset("bridge.js"), isolate_styles=False)
    except Exception:  # noqa: BLE001 - the plain frame still works
        return None


_MOUNT = _component()


def _picked() -> None:
    """The component's callback: keep the clicked node for this run's program view."""
    state = st.session_state.get(FRAME_KEY) or {}
    chosen = state.get("selected") if hasattr(state, "get") else None
    if isinstance(chosen, dict):
        st.session_state[SELECTED] = chosen


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _folds_changed() -> None:
    """The component's callback: the layers the visitor closed or opened, or a Layers choice,
    for the program the viewer showed (another program's graph starts all open)."""
    state = st.session_state.get(FRAME_KEY) or {}
    asked = state.get("folds") if hasattr(state, "get") else None
    if not isinstance(asked, dict):
        return
    calls = asked.get("calls")
    depth = asked.get("depth")
    st.session_state[FOLDS] = {
        "source": st.session_state.get(SHOWN),
        "calls": [str(c) for c in calls] if isinstance(calls, list) else [],
        "depth": depth if isinstance(depth, str) and (depth == "all" or depth.isdigit()) else None,
    }


def folded(trace: Trace, view: str) -> Trace:
    """`trace` with the layers closed in the viewer folded into one node each (the server
    lays the smaller graph out again); `trace` itself when none are, or without the viewer."""
    asked = st.session_state.get(FOLDS)
    graph = trace.graph
    if (
        _MOUNT is None
        or not wanted()
        or view != "values"
        or graph is None
        or not graph.modules
        or not asked
        or asked.get("source") != _digest(trace.source)
    ):
        return trace
    depths = call_depths(graph)
    depth = asked.get("depth")
    if depth is not None:
        calls = [] if depth == "all" else [c for c, d in depths.items() if d == int(depth) + 1]
    else:
        calls = [c for c in asked.get("calls", []) if c in depths]
    st.session_state[FOLDS] = {**asked, "calls": calls}
    st.session_state[FOLD_VIEW] = {
        "calls": calls,
        "depth": depth,
        "max_depth": max(depths.values(), default=0),
        "source": _digest(trace.source),
    }
    return replace(trace, graph=fold_calls(graph, calls)) if calls else trace


def marked_program(source: str) -> None:
    """The program with the line of the node clicked in the viewer marked (▶), when that
    line is still the program's (a node clicked before an edit is forgotten)."""
    chosen = st.session_state.get(SELECTED)
    if not chosen or not isinstance(chosen.get("line"), int):
        return
    lines = source.splitlines()
    n = chosen["line"]
    if not 1 <= n <= len(lines) or lines[n - 1] != chosen.get("text"):
        return
    width = len(str(len(lines)))
    text = "\n".join(
        f"{'▶' if k == n else ' '} {k:>{width}}  {line}" for k, line in enumerate(lines, 1)
    )
    st.caption(f"Clicked in the graph: {code(chosen.get('title', ''))}, made on line {n}:")
    st.code(text, language=None)


def wanted() -> bool:
    """The visitor's choice: the viewer (default) or only the plain picture."""
    return bool(st.session_state.get("interactive", True))


def toggle() -> None:
    st.session_state.setdefault("interactive", True)
    st.toggle(
        LABEL,
        key="interactive",
        help="Off: the plain picture only (for a browser that cannot run the viewer's frame). "
        "The viewer is the same drawing; its toolbar has zoom, fit, search, colour by and a "
        "quiz that hides the gradients until you type the one you expect.",
    )


def _page(
    trace: Trace, svg: bytes, options: DrawOptions, *, remember: bool, focus: str | None = None
) -> str:
    # the classic view's nodes are torchviz's: it gets pan and zoom, not gradviz's summaries
    values = options.view == "values"
    model = trace.graph if values and trace.graph is not None else GraphModel()
    folds = None
    if remember and _MOUNT is not None and values and model.nodes:
        folds = st.session_state.get(FOLD_VIEW) or {"calls": [], "max_depth": 0}
        if folds.get("source") != _digest(trace.source):
            depths = call_depths(model)
            folds = {"calls": [], "depth": None, "max_depth": max(depths.values(), default=0)}
    record = trace.backward[-1] if trace.backward else None
    return viewer_html(
        model,
        svg,
        trace.source,
        theme=options.theme,
        quiz=gradients_hidden(),
        remember=remember,
        folds=folds,
        focus=focus,
        flow=flow(model, record, focus),
    )


def download(trace: Trace, dot: str | None, options: DrawOptions, svg_of) -> None:
    """The Export tab's interactive HTML: the viewer as one file that needs no network,
    in the options `dot` was drawn with."""
    if dot is None or not dot_available():
        return
    try:
        page = _page(trace, svg_of(dot), options, remember=False)
    except RenderUnavailable:
        return  # the Export tab above already says why nothing can be drawn
    st.download_button(
        "Download interactive HTML",
        page.encode("utf-8"),
        file_name="gradviz-graph.html",
        mime="text/html",
        icon=":material/download:",
        on_click="ignore",
        key="download_viewer",
    )
    st.caption(
        "One file with pan, zoom, hover, inspector, collapse and quiz: opens in any browser "
        "offline (`python -m gradviz render PROGRAM.py -o graph.html` makes the same)."
    )


def show(
    trace: Trace,
    dot: str,
    options: DrawOptions,
    svg_of,
    focus: str | None = None,
    below: int = 0,
) -> bool:
    """Draw the viewer for `dot` (drawn with `options`; its SVG from `svg_of(dot)`, the
    page's drawing cache), the node `focus` (the walk-through's step) in view, leaving
    `below` pixels of the window under the frame (for the controls drawn there); False when
    it cannot be drawn here (no Graphviz, or a graph over the limits)."""
    if not dot_available():
        return False
    try:
        svg = svg_of(dot)
    except RenderUnavailable:  # the page's plain picture below says why
        st.caption("The interactive viewer is off for this graph: the server did not draw it.")
        return False
    page = _page(trace, svg, options, remember=True, focus=focus)
    # Everything a program named reaches the page escaped: the JSON island writes < > & as
    # \u escapes, Graphviz escapes the SVG's text, and the viewer's script escapes what it
    # puts into HTML (tests/e2e/test_viewer_browser.py runs a hostile name through it).
    if _MOUNT is None:
        st.iframe(page, height=VIEWER_HEIGHT)
        return True
    st.session_state[SHOWN] = _digest(trace.source)
    digest = _digest(page)
    _MOUNT(
        key=FRAME_KEY,
        data={
            "page": page,
            "height": VIEWER_HEIGHT,
            "min_height": VIEWER_MIN_HEIGHT,
            "below": below,
            "digest": digest,
        },
        height="content",  # the frame's own: it fits the window (graph/assets/bridge.js)
        on_selected_change=_picked,
        on_folds_change=_folds_changed,
    )
    return True


def quiz_mode() -> bool:
    """Whether the page was opened from a quiz link (kept for the session: the page rewrites
    its address on every run)."""
    if "quiz_link" not in st.session_state:
        st.session_state.quiz_link = st.query_params.get("quiz") == QUIZ_PARAMS["quiz"]
    return bool(st.session_state.quiz_link)


def gradients_hidden() -> bool:
    """A quiz link whose gradients the page has not revealed yet."""
    return quiz_mode() and not st.session_state.get(REVEALED, False)


def share_params() -> dict[str, str]:
    """What the page's address keeps for the viewer: the quiz flag of a quiz link."""
    return dict(QUIZ_PARAMS) if quiz_mode() else {}
