"""The autograd page's interactive graph: gradviz.graph.interactive's viewer in a frame (pan,
zoom, hover, click to inspect a tensor beside the graph, search, collapse layers, colour by,
quiz), laid out once by the server's Graphviz. The plain picture stays below as the fallback
for a browser where the viewer's frame cannot run."""

from __future__ import annotations

import streamlit as st

from gradviz.graph.interactive import viewer_html
from gradviz.graph.model import GraphModel
from gradviz.graph.render import RenderUnavailable, dot_available
from gradviz.program.results import Trace
from gradviz.util.mdtext import message

VIEWER_HEIGHT = 580  # pixels of the frame: whole in a 1000 px window beside the editor
QUIZ_PARAMS = {"quiz": "1"}  # a share link's addition that opens the viewer in quiz mode
LABEL = "Interactive viewer (pan, zoom, hover, click a tensor, quiz)"


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


def _page(trace: Trace, svg: bytes, view: str, theme: str, remember: bool) -> str:
    # the classic view's nodes are torchviz's: it gets pan and zoom, not gradviz's summaries
    model = trace.graph if view == "values" and trace.graph is not None else GraphModel()
    return viewer_html(model, svg, trace.source, theme=theme, quiz=quiz_mode(), remember=remember)


def download(trace: Trace, dot: str | None, view: str, svg_of) -> None:
    """The Export tab's interactive HTML: the viewer as one file that needs no network."""
    if dot is None or not dot_available():
        return
    try:
        page = _page(trace, svg_of(dot), view, st.session_state.theme, remember=False)
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


def show(trace: Trace, dot: str, view: str, theme: str, svg_of) -> bool:
    """Draw the viewer for `dot` (its SVG from `svg_of(dot)`, the page's drawing cache);
    False when it cannot be drawn here (no Graphviz, or a graph over the limits)."""
    if not dot_available():
        return False
    try:
        svg = svg_of(dot)
    except RenderUnavailable as exc:
        st.caption(f"The interactive viewer is off for this graph: {message(exc)}")
        return False
    page = _page(trace, svg, view, theme, remember=True)
    # Everything a program named reaches the page escaped: the JSON island writes < > & as
    # \u escapes, Graphviz escapes the SVG's text, and the viewer's script escapes what it
    # puts into HTML (tests/e2e/test_viewer_browser.py runs a hostile name through it).
    st.iframe(page, height=VIEWER_HEIGHT)
    return True


def quiz_mode() -> bool:
    """Whether the page was opened from a quiz link (kept for the session: the page rewrites
    its address on every run)."""
    if "quiz_link" not in st.session_state:
        st.session_state.quiz_link = st.query_params.get("quiz") == QUIZ_PARAMS["quiz"]
    return bool(st.session_state.quiz_link)


def share_params() -> dict[str, str]:
    """What the page's address keeps for the viewer: the quiz flag of a quiz link."""
    return dict(QUIZ_PARAMS) if quiz_mode() else {}
