"""The Export tab's slides: the graph on a 16:9 slide (`slide_export`: 1920x1080 px, text at
least 18 px, gradviz.graph.slides), with a preview beside its download; and the
walk-through for slides: the backward pass, a frame per step plus the
final graph, as a multi-page PDF and an animated GIF (the same frames as `python -m gradviz
render PROGRAM.py --backward NAME --walkthrough -o walk.pdf`).

Both are made only when the visitor clicks (Streamlit's deferred download data), under the
server's render limits. The PDF is Graphviz's pages merged by pypdf in this process; the GIF
needs Pillow, which the server never imports, so a job worker composes Graphviz's PNGs
(gradviz.services.slides)."""

from __future__ import annotations

import base64
from dataclasses import replace

import streamlit as st

from gradviz.graph import walkthrough
from gradviz.graph.model import DEFAULT_DRAWING, DrawOptions
from gradviz.graph.render import (
    RenderUnavailable,
    dot_available,
    draw,
    render_bytes,
    server_limits,
)
from gradviz.graph.slides import export, layout
from gradviz.program.results.trace import Trace
from gradviz.services import slides
from gradviz.ui.common import KEEP
from gradviz.util import settings
from gradviz.util.mdtext import code, message

GIF_MAX_SIDE = 1600  # pixels a side of a GIF frame: a slide's width; bigger drawings shrink


def max_steps() -> int:
    """Backward steps the page makes frames for (each is one Graphviz layout)."""
    return settings.profile().slide_steps


def frames(trace: Trace, options: DrawOptions) -> list[str] | None:
    """The walk-through's frames (DOT) for the last backward of `trace`, in `options`'
    direction and theme; None without one."""
    record = trace.backward[-1] if trace.backward else None
    if record is None or not record.steps or trace.graph is None:
        return None
    return walkthrough.frames(trace.graph, record, options)


def pdf(dots: list[str]) -> bytes:
    return walkthrough.pdf_bytes(dots, limits=server_limits())


def gif(dots: list[str]) -> bytes:
    limits = replace(server_limits(), max_side=GIF_MAX_SIDE)
    return slides.gif([render_bytes(d, "png", scale=1.0, limits=limits) for d in dots])


def downloads(trace: Trace, options: DrawOptions) -> None:
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
        lambda: pdf(frames(trace, options)),
        file_name="gradviz-walkthrough.pdf",
        mime="application/pdf",
        icon=":material/slideshow:",
        on_click="ignore",
        key="download_walk_pdf",
    )
    c2.download_button(
        "Download walk-through GIF",
        lambda: gif(frames(trace, options)),
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


SLIDE_MAX_NODES = 300  # a slide tries several layouts: bigger graphs from the command line
LEGEND_CHOICES = {"below": "below the graph", "off": "left out"}


def _deck(trace: Trace, fmt: str, options: DrawOptions) -> tuple[bytes, str, str, bytes, str]:
    """(data, file name, mime, preview bytes, what the deck is) for the slide in `options`'
    theme and legend, made once per drawing, format and legend (the page reruns on every
    click)."""
    plain = replace(DEFAULT_DRAWING, theme=options.theme)
    key = (draw(trace, plain), fmt, options.theme, options.legend)
    made = st.session_state.get("slide_made")
    if made is not None and made[0] == key:
        return made[1]
    limits = server_limits()
    model = trace.graph
    deck = layout.plan(model, fmt, replace(plain, legend=options.legend), limits)
    data, name, mime = export.deck_file(deck, fmt, plain, limits, export.file_stem(model))
    first = deck.slides[0]
    if fmt == "svg":
        preview = export.slide_bytes(first, "svg", plain, limits) if len(deck.slides) > 1 else data
    else:  # a PNG's and a PDF's slides are laid out alike: the PNG shows the PDF's first page
        preview = data if fmt == "png" and len(deck.slides) == 1 else b""
        preview = preview or export.slide_bytes(first, "png", plain, limits)
    folded = "" if deck.folded_depth is None else f", layers folded at depth {deck.folded_depth}"
    pages = "1 slide" if len(deck.slides) == 1 else f"{len(deck.slides)} slides"
    about = f"{pages}{folded}; smallest text {deck.text_px:.0f} px at 1920x1080."
    result = (data, name, mime, preview, about)
    st.session_state.slide_made = (key, result)
    return result


def slide_export(trace: Trace, fmt: str, options: DrawOptions) -> None:
    """The graph on a 16:9 slide in `options`' theme: the legend below or left out, a
    preview of the (first) slide beside its download."""
    if options.view != "values":
        st.info("Slides draw gradviz's view: choose it above.")
        return
    if trace.graph is None or not trace.graph.nodes:
        st.info("Nothing to put on a slide yet: run a program.")
        return
    if len(trace.graph.nodes) > SLIDE_MAX_NODES:
        st.info(
            f"This graph has {len(trace.graph.nodes):,} nodes; the page fits graphs of up to "
            f"{SLIDE_MAX_NODES} to slides (each try is a layout). The command line has no "
            "such limit: `python -m gradviz render --slide PROGRAM.py -o slide.pdf`."
        )
        return
    if fmt == "dot" or not dot_available():
        st.info("A slide is an SVG, PNG or PDF, drawn by Graphviz's `dot` on this server.")
        return
    legend = st.radio(
        "Legend",
        list(LEGEND_CHOICES),
        format_func=LEGEND_CHOICES.get,
        horizontal=True,
        key="slide_legend",
        persist_state=KEEP,
    )
    try:
        data, name, mime, preview, about = _deck(
            trace, fmt, replace(options, legend=legend == "below")
        )
    except RenderUnavailable as exc:
        st.error(message(exc))
        return
    c1, c2 = st.columns([3, 1])
    kind = "image/svg+xml" if fmt == "svg" else "image/png"
    c1.markdown(
        f'<img alt="slide preview" style="width:100%;border:1px solid #ccc" '
        f'src="data:{kind};base64,{base64.b64encode(preview).decode("ascii")}">',
        unsafe_allow_html=True,
    )
    c2.download_button(
        f"Download slide {'ZIP' if name.endswith('.zip') else fmt.upper()}",
        data,
        file_name=name,
        mime=mime,
        icon=":material/co_present:",
        on_click="ignore",
        key="download_slide",
    )
    c2.caption(about)
    c2.caption(
        "The same from the command line: `python -m gradviz render --slide PROGRAM.py "
        f"-o {name.rsplit('.', 1)[0]}.{fmt}`."
    )
