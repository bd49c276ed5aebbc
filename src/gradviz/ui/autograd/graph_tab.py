"""The Autograd page's Graph tab: the interactive viewer, or the drawing laid out on the server
(or in the browser when the server cannot), its legend and notes."""

from __future__ import annotations

import base64

import streamlit as st

from gradviz.graph.dot import ROLE_TEXT, THEMES
from gradviz.graph.higher_order import drawing as built
from gradviz.graph.render import RenderUnavailable, dot_available, graph_size
from gradviz.program.results.trace import Trace
from gradviz.services.cache import cached_bytes
from gradviz.ui import device_panel
from gradviz.ui.autograd import graph_notes, graph_viewer
from gradviz.ui.autograd.state import drawing
from gradviz.ui.common import KEEP
from gradviz.ui.visitor import visitor_key
from gradviz.util.mdtext import message

GRAPH_ALT = "autograd graph"


# The drawing fits the window's height less the title and the tabs above it.
GRAPH_STYLE = "display:block;max-width:100%;max-height:max(24rem, calc(100vh - 21rem))"
BIG_GRAPH = 300  # nodes; larger graphs are drawn on request


def tab(
    trace: Trace,
    source: str,
    dot: str | None,
    highlight: str | None,
    picture: str | None,
    controls=None,
    controls_px: int = 0,
) -> None:
    """The tab: the viewer draws `dot`; the plain picture is `picture` (the same drawing, or
    one without gradients while a quiz hides them); `controls()` draws what sits right under
    the drawing (the walk-through's step buttons), `controls_px` high: the viewer's frame
    leaves that much of the window below it, so the buttons are in view with the graph."""
    n_nodes = len(trace.graph.nodes) if trace.graph else 0
    if dot is None:
        st.info("torchviz draws only tensors that autograd tracks; nothing here requires grad yet.")
    elif n_nodes > BIG_GRAPH and st.session_state.get("draw_big") != source:
        where = "on the server" if dot_available() else "in your browser"
        st.warning(
            f"This graph has {n_nodes:,} nodes. Laying it out {where} "
            "can take a while; the tables, the walk-through and export work without it."
        )
        if st.button("Draw it anyway", icon=":material/draw:"):
            st.session_state.draw_big = source
            st.rerun()
    else:
        graph_viewer.toggle()
        options = drawing()
        refused: list[RenderUnavailable] = []  # the server asked once a run, not again

        def svg_of(d: str) -> bytes:
            try:
                return cached_bytes(d, "svg", 1.0, visitor_key())
            except RenderUnavailable as exc:
                refused.append(exc)
                raise

        if graph_viewer.wanted() and graph_viewer.show(
            trace, dot, options, svg_of, highlight, below=controls_px
        ):
            if controls is not None:
                controls()
            with st.expander("Plain picture (if the viewer does not load)"):
                show_graph(picture)
        else:
            show_graph(picture, refused[0] if refused else None)
            if controls is not None:
                controls()
        if options.view == "values":
            _role_legend(options.theme, trace.graph is not None and built.marked(trace.graph))
        graph_notes.notes(trace)
        device_panel.legend(trace)
        if highlight:
            st.caption(
                f"Highlighted: step {st.session_state.step} of the backward walk-through (red); grey borders: steps already run."
            )


# Beyond this many nodes the browser is not asked to lay a graph out unless the visitor
# says so: a 2,958-node graph froze a Chromium tab for about 180 s.
BROWSER_NODES = 300


def show_graph(dot: str, refused: RenderUnavailable | None = None) -> None:
    """The drawing on the page. With Graphviz installed it is laid out on the server,
    the same SVG that export gives, and shown as an image: that appears about twice as
    fast as laying it out in the browser (docs/BENCHMARKS.md), and an <img> runs no
    script. Without Graphviz, or when the server cannot draw it (`refused`: it said so
    already this run; busy, over a limit, too slow to lay out), Streamlit lays the DOT out
    in the browser, with a warning that says why; a big graph only when the visitor asks."""
    st.session_state.shown_dot = dot
    if dot_available():
        why = refused
        if why is None:
            try:
                svg = cached_bytes(dot, "svg", 1.0, visitor_key())
            except RenderUnavailable as exc:
                why = exc
        if why is None:
            data = base64.b64encode(svg).decode("ascii")
            # Scaled to fit the window (no scroll box of its own): the whole graph, output
            # included, is in view under the page's title.
            st.markdown(
                f'<img alt="{GRAPH_ALT}" style="{GRAPH_STYLE}" '
                f'src="data:image/svg+xml;base64,{data}">',
                unsafe_allow_html=True,
            )
            return
        nodes, _ = graph_size(dot)
        if nodes <= BROWSER_NODES:
            st.warning(f"{message(why)} Drawing it in the browser instead.")
        else:
            st.warning(message(why))
            if not st.checkbox(
                f"Lay out all {nodes:,} nodes in this browser (it can take minutes, "
                "and the tab does not answer meanwhile)",
                key="browser_layout",
                persist_state=KEEP,
            ):
                return
    st.graphviz_chart(dot, width="stretch")


def _role_legend(theme: str, second_order: bool = False) -> None:
    th = THEMES.get(theme, THEMES["light"])
    keys = [(getattr(th, role), role, text) for role, text in ROLE_TEXT.items()]
    if second_order:  # nodes a create_graph=True backward built (gradviz.graph.higher_order)
        keys.append((built.COLORS.get(theme, built.COLORS["light"])[1], "built", built.BUILT_TEXT))
    parts = []
    for fill, role, text in keys:
        border = "dashed" if role == "untracked" else "solid"
        parts.append(
            f'<span style="background:{fill};color:{th.font};border:1px {border} '
            f'{th.border};padding:1px 6px;border-radius:6px;font-size:0.85em">{text}</span>'
        )
    st.markdown("Legend: " + " ".join(parts), unsafe_allow_html=True)
