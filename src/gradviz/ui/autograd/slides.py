"""The Export tab's walk-through for slides: the backward pass, a frame per step plus the
final graph, as a multi-page PDF and an animated GIF (the same frames as `python -m gradviz
render PROGRAM.py --backward NAME --walkthrough -o walk.pdf`).

Both are made only when the visitor clicks (Streamlit's deferred download data), under the
server's render limits. The PDF is Graphviz's pages merged by pypdf in this process; the GIF
needs Pillow, which the server never imports, so a job worker composes Graphviz's PNGs
(gradviz.services.slides)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from gradviz.graph import walkthrough
from gradviz.graph.render import dot_available, render_bytes, server_limits
from gradviz.program.results.trace import Trace
from gradviz.services import slides
from gradviz.util.hosting import public_mode
from gradviz.util.mdtext import code

GIF_MAX_SIDE = 1600  # pixels a side of a GIF frame: a slide's width; bigger drawings shrink
MAX_STEPS = 60  # backward steps the page makes frames for (each is one Graphviz layout)
PUBLIC_MAX_STEPS = 25


def max_steps() -> int:
    return PUBLIC_MAX_STEPS if public_mode() else MAX_STEPS


def frames(trace: Trace, rankdir: str, theme: str) -> list[str] | None:
    """The walk-through's frames (DOT) for the last backward of `trace`; None without one."""
    record = trace.backward[-1] if trace.backward else None
    if record is None or not record.steps or trace.graph is None:
        return None
    return walkthrough.frames(trace.graph, record, rankdir, theme)


def pdf(dots: list[str]) -> bytes:
    return walkthrough.pdf_bytes(dots, limits=server_limits())


def gif(dots: list[str]) -> bytes:
    limits = replace(server_limits(), max_side=GIF_MAX_SIDE)
    return slides.gif([render_bytes(d, "png", scale=1.0, limits=limits) for d in dots])


def downloads(trace: Trace, rankdir: str, theme: str) -> None:
    """Download buttons for the walk-through as PDF and GIF, or why there are none."""
    st.markdown("**Backward walk-through for slides**")
    record = trace.backward[-1] if trace.backward else None
    if record is None or not record.steps:
        st.caption("Run backward to export its walk-through, a page or frame per step.")
        return
    if not dot_available():
        st.caption("The walk-through's PDF and GIF need Graphviz's `dot` on this server.")
        return
    if len(record.steps) > max_steps():
        st.caption(
            f"This backward ran {len(record.steps):,} functions; the page makes walk-throughs "
            f"of up to {max_steps()} steps. The command line has no such limit: "
            f"`python -m gradviz render PROGRAM.py --backward {record.target} --walkthrough "
            "-o walk.pdf`."
        )
        return
    c1, c2 = st.columns(2)
    c1.download_button(
        "Download walk-through PDF",
        lambda: pdf(frames(trace, rankdir, theme)),
        file_name="gradviz-walkthrough.pdf",
        mime="application/pdf",
        icon=":material/slideshow:",
        on_click="ignore",
        key="download_walk_pdf",
    )
    c2.download_button(
        "Download walk-through GIF",
        lambda: gif(frames(trace, rankdir, theme)),
        file_name="gradviz-walkthrough.gif",
        mime="image/gif",
        icon=":material/animation:",
        on_click="ignore",
        key="download_walk_gif",
    )
    st.caption(
        f"{len(record.steps) + 1} pages or frames: one per backward step from {code(record.target)} (the "
        "running function in red, those already run grey, only the gradients that have "
        "arrived), then the whole graph. Made when you click, so a large graph takes a moment."
    )
