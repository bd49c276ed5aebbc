"""A Deck (gradviz.graph.slides.layout) as files: each slide exactly 1920x1080 px (SVG, PNG)
or a 13.333x7.5 in page (PDF), and a deck of several as one multi-page PDF or a zip of
numbered SVGs or PNGs; the file named after the program's output.

A PNG and a PDF are fitted by Graphviz itself (its `viewport`: a window of the slide's size
centred on the drawing, zoomed to fit); an SVG keeps its drawing and gets a 16:9 viewBox
around it, 1920x1080 px."""

from __future__ import annotations

import io
import re
import zipfile

from gradviz.graph.dot import THEMES
from gradviz.graph.model import DEFAULT_DRAWING, DrawOptions, GraphModel
from gradviz.graph.render import RenderLimits, render_bytes
from gradviz.graph.slides.layout import PAD_PT, SLIDE_PX, Deck, Slide, with_graph_attrs
from gradviz.util.mdtext import html_text

PDF_PAGE_PT = (960, 540)  # 13.333 x 7.5 inches
MIME = {
    "svg": "image/svg+xml",
    "png": "image/png",
    "pdf": "application/pdf",
    "zip": "application/zip",
}

_SVG_ROOT = re.compile(
    rb'<svg width="[0-9.]+pt" height="[0-9.]+pt"\s+viewBox="([-0-9.]+) ([-0-9.]+) ([0-9.]+) ([0-9.]+)"'
)


def svg_on_slide(svg: bytes, background: str) -> bytes:
    """Graphviz's SVG shown at 1920x1080 px: a 16:9 viewBox centred on the drawing, the
    room around it filled with `background`."""
    m = _SVG_ROOT.search(svg)
    if m is None:
        return svg
    x, y, w, h = (float(v) for v in m.groups())
    width = max(w, h * SLIDE_PX[0] / SLIDE_PX[1])
    height = width * SLIDE_PX[1] / SLIDE_PX[0]
    x0, y0 = x - (width - w) / 2, y - (height - h) / 2
    root = (
        f'<svg width="{SLIDE_PX[0]}px" height="{SLIDE_PX[1]}px" '
        f'viewBox="{x0:.2f} {y0:.2f} {width:.2f} {height:.2f}"'
    ).encode()
    end = svg.index(b">", m.end()) + 1
    rect = (
        f'\n<rect x="{x0:.2f}" y="{y0:.2f}" width="{width:.2f}" height="{height:.2f}" '
        f'fill="{html_text(background)}"/>'
    ).encode()
    return svg[: m.start()] + root + svg[m.end() : end] + rect + svg[end:]


def slide_bytes(
    slide: Slide,
    fmt: str,
    options: DrawOptions = DEFAULT_DRAWING,
    limits: RenderLimits | None = None,
) -> bytes:
    """One slide as `fmt`, exactly the slide's size (an SVG's room around the drawing in
    the background of `options.theme`)."""
    if fmt == "svg":
        bg = THEMES[options.theme].bg
        return svg_on_slide(render_bytes(slide.dot, "svg", limits=limits), bg)
    page_w, page_h, dpi = (*PDF_PAGE_PT, 72) if fmt == "pdf" else (1440, 810, 96)
    zoom = min(page_w / slide.width, page_h / slide.height)
    # The viewport's centre is in the drawing's coordinates, which start inside its pad.
    cx, cy = slide.width / 2 - PAD_PT, slide.height / 2 - PAD_PT
    attrs = f'dpi={dpi} margin=0 viewport="{page_w},{page_h},{zoom:.6f},{cx:.2f},{cy:.2f}"'
    return render_bytes(with_graph_attrs(slide.dot, attrs), fmt, limits=limits)


def deck_file(
    deck: Deck, fmt: str, options: DrawOptions, limits: RenderLimits | None, stem: str
) -> tuple[bytes, str, str]:
    """(data, file name, mime) for the whole deck: one file for one slide; several as a
    multi-page PDF, or a zip of `stem-1.fmt`, `stem-2.fmt`, ..."""
    pages = [slide_bytes(s, fmt, options, limits) for s in deck.slides]
    if len(pages) == 1:
        return pages[0], f"{stem}.{fmt}", MIME[fmt]
    if fmt == "pdf":
        from pypdf import PdfWriter  # about 0.1 s to import: only for a deck of pages

        writer = PdfWriter()
        for page in pages:
            writer.append(io.BytesIO(page))
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue(), f"{stem}.pdf", MIME["pdf"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for i, page in enumerate(pages, 1):
            z.writestr(f"{stem}-{i}.{fmt}", page)
    return out.getvalue(), f"{stem}.zip", MIME["zip"]


def numbered(path: str, i: int) -> str:
    """OUT.png -> OUT-1.png: a deck's slide `i` written beside OUT."""
    head, dot, suffix = path.rpartition(".")
    return f"{head}-{i}.{suffix}" if dot else f"{path}-{i}"


def file_stem(model: GraphModel | None, kind: str = "graph-slide") -> str:
    """`loss-graph-slide`: named after the program's output tensor (the first one), or
    `gradviz-graph-slide` when it has none."""
    names = [n.title for n in (model.nodes if model else []) if n.role == "output"]
    name = re.sub(r"[^A-Za-z0-9_]+", "_", names[0].split("·")[0]).strip("_") if names else ""
    return f"{name or 'gradviz'}-{kind}"
