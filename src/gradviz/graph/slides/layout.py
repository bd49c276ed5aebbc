"""Fitting a graph to 16:9 slides (1920x1080 px, a PDF page 13.333x7.5 in).

No torch: it reads GraphModels and writes DOT, and asks gradviz.graph.render for layouts.
Every piece of text on a slide is set in one size (`FONT_PT`); a layout's box then says how
big that text comes out once the drawing is scaled to fit the slide:
`FONT_PT x min(1920 / width, 1080 / height)` pixels, width and height in points. The plan
(`plan`) takes the first drawing whose text is at least `MIN_TEXT_PX`:
1. the whole graph, top-down or left-right, whichever gives the larger text;
2. the layers' calls folded into one node each (gradviz.graph.collapse), deepest first;
3. the most folded graph split by rows into parts, a slide each; an arrow cut by the split
   ends in a note saying which slide it continues on (or comes from).
Long expressions are wrapped, never cut; the legend goes below the drawing or is left out
(DrawOptions.legend); the theme and colouring are the options', direction and layer depth
are chosen to fit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from gradviz.graph.collapse import call_depths, collapse
from gradviz.graph.dot import ROLE_TEXT, THEMES, coloring, to_dot, wrapped
from gradviz.graph.model import DEFAULT_DRAWING, RANKDIRS, DrawOptions, GraphModel
from gradviz.graph.render import RenderLimits, render_bytes
from gradviz.util.mdtext import dot_string, html_text

SLIDE_PX = (1920, 1080)
MIN_TEXT_PX = 18.0  # the smallest text on a slide, in pixels at 1920x1080
# Every piece of text in a slide's DOT: large beside the fixed gaps between nodes, so that
# less of the slide is gap (14 pt left the lesson's graph 17 px on a slide, 20 pt 24 px).
FONT_PT = 20
WRAPS = (30, 44)  # characters a line of a tensor's expression and values: both are tried
MAX_SLIDES = 24
PAD_PT = 7.2  # the drawing's own margin (DOT's pad=0.1)
LEGEND_WRAP = 24  # characters a line of a legend key
# A slide's drawing is laid out with the metrics of the format it becomes: an SVG's text
# with Graphviz's own (graph/textmetrics.py), a PNG's and a PDF's with cairo's.
LAYOUT_FORMAT = {"svg": "svg", "png": "pdf", "pdf": "pdf"}


@dataclass(frozen=True)
class Slide:
    """One slide's DOT and the size of its layout in points (pad included)."""

    dot: str
    width: float
    height: float

    @property
    def text_px(self) -> float:
        """The smallest text on this slide, in pixels at 1920x1080."""
        return FONT_PT * min(SLIDE_PX[0] / self.width, SLIDE_PX[1] / self.height)


@dataclass(frozen=True)
class Deck:
    """The slides for one graph, and how it was made to fit."""

    slides: list[Slide]
    rankdir: str
    folded_depth: int | None  # the layer depth folded into nodes; None: nothing folded

    @property
    def text_px(self) -> float:
        return min(s.text_px for s in self.slides)


# ---------------------------------------------------------------- DOT for a slide


@dataclass(frozen=True)
class Mark:
    """Where a split graph's arrow is cut: `node` on this slide, and the `slide` (numbered
    from 1) its arrow goes on to (`onward`) or comes from."""

    node: str
    slide: int
    onward: bool

    @property
    def text(self) -> str:
        if self.onward:
            return f"→ continues on slide {self.slide}"
        return f"continued from slide {self.slide} →"


def continuations(model: GraphModel, parts: list[GraphModel]) -> list[tuple[Mark, ...]]:
    """For each part of `model` (bands' order: slide 1 first), its arrows cut by the split:
    one mark per node and other slide, in the model's order of edges."""
    slide_of = {n.id: i for i, part in enumerate(parts, 1) for n in part.nodes}
    marks: list[dict[Mark, None]] = [{} for _ in parts]
    for e in model.edges:
        a, b = slide_of.get(e.src), slide_of.get(e.dst)
        if a is None or b is None or a == b:
            continue
        marks[a - 1][Mark(e.src, b, onward=True)] = None
        marks[b - 1][Mark(e.dst, a, onward=False)] = None
    return [tuple(m) for m in marks]


def with_marks(dot: str, marks: tuple[Mark, ...], theme: str) -> str:
    """`dot` with a note at each cut arrow: a dashed arrow from the node to "→ continues on
    slide 3", or from "continued from slide 1 →" to it."""
    if not marks:
        return dot
    th = THEMES.get(theme, THEMES["light"])
    look = (
        f"shape=plaintext style=solid fontsize={FONT_PT} fontcolor={dot_string(th.font)} "
        f"class={dot_string('gv-continues')}"
    )
    lines = []
    for i, m in enumerate(marks):
        key = dot_string(f"continues_{i}")
        lines.append(f"  {key} [label={dot_string(m.text)} {look}];")
        ends = (dot_string(m.node), key) if m.onward else (key, dot_string(m.node))
        lines.append(f"  {ends[0]} -> {ends[1]} [style=dashed color={dot_string(th.edge)}];")
    head, sep, _ = dot.rstrip().rpartition("}")
    return head + "\n".join(lines) + "\n}\n" if sep else dot


_FONT = re.compile(r'"(?:[^"\\]|\\.)*"|\bfontsize=[0-9.]+|POINT-SIZE="[0-9.]+"')


def one_font_size(dot: str, size: int = FONT_PT) -> str:
    """`dot` with every font size outside quoted strings set to `size`."""

    def sub(m: re.Match) -> str:
        text = m.group(0)
        if text.startswith('"'):
            return text
        return f'POINT-SIZE="{size}"' if text.startswith("POINT") else f"fontsize={size}"

    return _FONT.sub(sub, dot)


def with_graph_attrs(dot: str, attrs: str) -> str:
    """`dot` with `graph [attrs]` as its last statement: the last assignment wins."""
    head, sep, _ = dot.rstrip().rpartition("}")
    return head + f"  graph [{attrs}];\n}}\n" if sep else dot


def legend_label(theme: str, columns: int, *, cut: bool, caption: str | None) -> str:
    """The legend as the drawing's own label, below it: the keys in `columns` columns."""
    th = THEMES.get(theme, THEMES["light"])
    cells = []
    for role, text in ROLE_TEXT.items():
        lines = "<BR/>".join(html_text(line) for line in wrapped(text, LEGEND_WRAP))
        cells.append(
            f'<TD BGCOLOR="{html_text(getattr(th, role))}" COLOR="{html_text(th.border)}" '
            f'BORDER="1" STYLE="rounded" CELLPADDING="6">{lines}</TD>'
        )
    rows = [
        "<TR>" + "".join(cells[i : i + columns]) + "</TR>" for i in range(0, len(cells), columns)
    ]
    wide = (
        [
            "dashed arrow: no gradient flows along it (detach, no_grad, or an input that does not "
            "require grad)"
        ]
        if cut
        else []
    )
    if caption:
        wide.append(caption)
    for text in wide:
        lines = "<BR/>".join(html_text(x) for x in wrapped(text, LEGEND_WRAP * columns))
        rows.append(f'<TR><TD COLSPAN="{columns}">{lines}</TD></TR>')
    table = '<TABLE BORDER="0" CELLSPACING="8">' + "".join(rows) + "</TABLE>"
    return f"label=<{table}> labelloc=b labeljust=c fontsize={FONT_PT}"


def _legend_box(columns: int, *, cut: bool, caption: bool) -> tuple[float, float]:
    """About how wide and tall the legend is in points (to choose its columns)."""
    char, line = 0.56 * FONT_PT, 1.25 * FONT_PT
    cell_w = LEGEND_WRAP * char + 12 + 8
    keys = [len(wrapped(t, LEGEND_WRAP)) for t in ROLE_TEXT.values()]
    rows = [max(keys[i : i + columns]) for i in range(0, len(keys), columns)]
    height = sum(r * line + 12 + 8 for r in rows) + (2 * line + 8) * (int(cut) + int(caption))
    return columns * cell_w, height


def _fits_better(w: float, h: float) -> float:
    return min(SLIDE_PX[0] / w, SLIDE_PX[1] / h)


def slide_dot(
    model: GraphModel,
    options: DrawOptions,
    caption: str | None,
    columns: int,
    wrap: int = WRAPS[0],
    marks: tuple[Mark, ...] = (),
) -> str:
    """A slide's DOT: `model` drawn in `options`' direction, theme and colouring, its
    legend (options.legend) below it in `columns` columns; `marks`: where an arrow leaves
    for another slide or comes from one (a split graph)."""
    fills, by_device, note = coloring(model, options.color)
    title = " ".join(t for t in (note, caption) if t) or None
    look = replace(DEFAULT_DRAWING, rankdir=options.rankdir, theme=options.theme, legend=False)
    dot = to_dot(
        model,
        look,
        caption=title if not options.legend else None,
        fills=fills,
        by_device=by_device,
        wrap=wrap,
        input_labels=not options.legend,  # the legend says what a dashed arrow is
    )
    dot = with_marks(dot, marks, options.theme)
    # No theme's own aspect (the lecture theme's 16:9 ratio leaves out the legend below).
    dot = with_graph_attrs(one_font_size(dot), f"pad={PAD_PT / 72:.4f} ratio=auto")
    if options.legend:
        cut = any(e.kind != "data" for e in model.edges)
        dot = with_graph_attrs(dot, legend_label(options.theme, columns, cut=cut, caption=title))
    return dot


# ---------------------------------------------------------------- layouts


_VIEWBOX = re.compile(rb'viewBox="([-0-9.]+) ([-0-9.]+) ([0-9.]+) ([0-9.]+)"')
_MEDIABOX = re.compile(rb"/MediaBox \[\s*([-0-9.]+) ([-0-9.]+) ([0-9.]+) ([0-9.]+)\s*\]")


def layout_size(dot: str, fmt: str, limits: RenderLimits | None) -> tuple[float, float]:
    """(width, height) in points of `dot` laid out as `fmt` will be (pad included)."""
    if LAYOUT_FORMAT[fmt] == "svg":
        m = _VIEWBOX.search(render_bytes(dot, "svg", limits=limits))
    else:
        m = _MEDIABOX.search(render_bytes(with_graph_attrs(dot, "margin=0"), "pdf", limits=limits))
    if m is None:
        raise ValueError("Graphviz wrote no size for the drawing")
    return float(m.group(3)), float(m.group(4))


def _slide(model, options: DrawOptions, wrap, caption, fmt, limits, marks=()) -> Slide:
    """The slide of `model` drawn as `options` say, lines wrapped at `wrap`, the legend's
    columns chosen to fit."""
    columns = 5
    if options.legend:
        plain = slide_dot(model, replace(options, legend=False), None, 5, wrap, marks)
        w, h = layout_size(plain, fmt, limits)
        cut = any(e.kind != "data" for e in model.edges)

        def scale(c: int) -> float:
            lw, lh = _legend_box(c, cut=cut, caption=bool(caption))
            return _fits_better(max(w, lw), h + lh)

        columns = max((5, 3, 2, 1), key=scale)
    dot = slide_dot(model, options, caption, columns, wrap, marks)
    return Slide(dot, *layout_size(dot, fmt, limits))


def _best(model, options: DrawOptions, caption, fmt, limits, marks=()) -> tuple[Slide, str]:
    drawn = [
        (_slide(model, replace(options, rankdir=r), w, caption, fmt, limits, marks), r)
        for r in RANKDIRS
        for w in WRAPS
    ]
    return max(drawn, key=lambda sr: sr[0].text_px)


def bands(model: GraphModel, k: int) -> list[GraphModel]:
    """`model` cut across its rows into `k` parts of about as many nodes, in order; each
    part keeps the arrows inside it and the layer calls its nodes were made in."""
    ids = [n.id for n in model.nodes]
    out_of: dict[str, list[str]] = {i: [] for i in ids}
    for e in model.edges:
        if e.src in out_of and e.dst in out_of:
            out_of[e.src].append(e.dst)
    # Rows counted back from the outputs: an input sits just above what first uses it.
    below = dict.fromkeys(ids, 0)
    for _ in range(len(ids)):  # the longest path to an output (the graph has no cycle)
        changed = False
        for i in reversed(ids):  # outputs come last: one pass, most often
            top = max((below[d] + 1 for d in out_of[i]), default=0)
            if top != below[i]:
                below[i], changed = top, True
        if not changed:
            break
    row = {i: -below[i] for i in ids}
    order = sorted(ids, key=lambda i: row[i])
    per_row: dict[int, list[str]] = {}
    for i in order:
        per_row.setdefault(row[i], []).append(i)
    parts: list[list[str]] = [[]]
    target = len(ids) / k
    for r in sorted(per_row):
        if parts[-1] and len(parts) < k and len(parts[-1]) + len(per_row[r]) / 2 > target:
            parts.append([])
        parts[-1].extend(per_row[r])
    calls = {c.id: c for c in model.modules}
    out: list[GraphModel] = []
    for part in parts:
        keep = set(part)
        used: set[str] = set()
        for n in model.nodes:
            call = n.module if n.id in keep else None
            while call in calls and call not in used:
                used.add(call)
                call = calls[call].parent
        out.append(
            replace(
                model,
                nodes=[n for n in model.nodes if n.id in keep],
                edges=[e for e in model.edges if e.src in keep and e.dst in keep],
                modules=[c for c in model.modules if c.id in used],
            )
        )
    return out


def plan(
    model: GraphModel,
    fmt: str,
    options: DrawOptions = DEFAULT_DRAWING,
    limits: RenderLimits | None = None,
) -> Deck:
    """The slides for `model` as `fmt` (svg, png, pdf) in `options`' theme, colouring and
    legend (below the drawing, or none): the first way, in the order the module's docstring
    gives, whose smallest text is at least MIN_TEXT_PX; the last tried (the most parts) when
    none is."""
    if fmt not in LAYOUT_FORMAT:
        raise ValueError(f"slides are svg, png or pdf, not {fmt!r}")
    args = (options, None, fmt, limits)
    deepest = max(call_depths(model).values(), default=0)
    folded: GraphModel = model
    depth: int | None = None
    for depth in (None, *range(deepest, 0, -1)):
        folded = model if depth is None else collapse(model, depth)
        slide, rankdir = _best(folded, *args)
        if slide.text_px >= MIN_TEXT_PX:
            return Deck([slide], rankdir, depth)
    most = min(MAX_SLIDES, len(folded.nodes))
    k = min(max(2, math.ceil(MIN_TEXT_PX / slide.text_px)), most)
    deck = Deck([slide], rankdir, depth)
    while 2 <= k <= most:
        parts = bands(folded, k)
        cut = continuations(folded, parts)
        drawn = [
            _best(part, options, f"part {i} of {len(parts)}", fmt, limits, cut[i - 1])
            for i, part in enumerate(parts, 1)
        ]
        deck = Deck([s for s, _ in drawn], drawn[0][1], depth)
        if deck.text_px >= MIN_TEXT_PX:
            break
        if k == most:
            break
        k = min(most, k + max(1, math.ceil(k * (MIN_TEXT_PX / deck.text_px - 1))))
    return deck
