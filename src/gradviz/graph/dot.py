"""The DOT writer: GraphModel -> DOT text, with its themes and colourings.

Two views of one graph:
- "values": gradviz's enriched drawing. Each named tensor is a node with name,
  shape, dtype, device and `data | grad` (micrograd style); each backward function
  is a node between them; a legend explains the colours.
- "classic": torchviz.make_dot's drawing, unchanged, so users can compare with what
  they see elsewhere. Only direction and background follow the chosen options
  (`restyle_classic`).

Here: the themes (`THEMES`), what tensors are coloured by (`COLORS`, `coloring`), and
`to_dot`. DOT text needs no binary; turning it into svg/png/pdf is gradviz.graph.render.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gradviz.devices.info import device_label
from gradviz.graph.higher_order import drawing as built
from gradviz.graph.model import (
    COLORS,
    DEFAULT_DRAWING,
    DrawOptions,
    GraphModel,
    GraphNode,
)
from gradviz.util.mdtext import dot_string, html_text

# Above this many nodes a drawing is compact: tensors show name, shape and values (no
# expression, dtype or device line) and edges are straight. Unreadable detail at that
# size costs most of Graphviz's layout time.
COMPACT_NODES = 300
# A big drawing without layer clusters is ranked by Graphviz's newer ranking, the same
# network simplex on the whole graph at once: `dot` places the 2,003-node chain in half the
# time (355 -> 180 ms here) and writes the same SVG, byte for byte (the 1,003-node residual
# chain too: 132 -> 83 ms). Not with clusters: a 90-call loop over one Sequential took more
# than a minute with it, 4.6 s without (docs/BENCHMARKS.md). Small drawings keep the
# classic ranking: some came out different with it, none faster.
BIG_RANKING = "newrank=true"
# Layers inside layers are drawn as clusters inside clusters down to this depth; deeper
# ones are folded into the cluster around them.
MAX_CLUSTER_DEPTH = 6


@dataclass(frozen=True)
class Theme:
    bg: str
    font: str
    edge: str
    leaf: str
    intermediate: str
    output: str
    untracked: str
    function: str
    border: str
    highlight: str
    done: str


THEMES: dict[str, Theme] = {
    "light": Theme(
        "white",
        "#1b1b1b",
        "#555555",
        "#cfe6ff",
        "#fff4c7",
        "#d6f5d0",
        "#eeeeee",
        "#f3f0ff",
        "#6b6b6b",
        "#d62728",
        "#9e9e9e",
    ),
    "dark": Theme(
        "#1e1e1e",
        "#f2f2f2",
        "#bdbdbd",
        "#1f4e79",
        "#5a4a00",
        "#1d5a32",
        "#333333",
        "#3b2f5c",
        "#9e9e9e",
        "#ff6b6b",
        "#777777",
    ),
    "print": Theme(
        "white",
        "black",
        "black",
        "white",
        "white",
        "white",
        "white",
        "white",
        "black",
        "black",
        "#777777",
    ),
    # Slides: Okabe-Ito's colour-blind-safe colours, black text and lines, big fonts, 16:9.
    "lecture": Theme(
        "white",
        "black",
        "black",
        "#56B4E9",
        "#F0E442",
        "#3CC49A",
        "#E6E6E6",
        "#FFFFFF",
        "black",
        "#D55E00",
        "#7F7F7F",
    ),
}
# Per theme: the graph's extra attributes and the nodes' font size.
THEME_GRAPH = {"lecture": "ratio=0.5625 pad=0.3 fontsize=22"}
THEME_FONT = {"lecture": 20}

ROLE_TEXT = {
    "leaf": "leaf (requires grad): .grad is filled here",
    "intermediate": "intermediate tensor",
    "output": "output",
    "untracked": "not tracked by autograd",
    "function": "backward function",
}


# Border colours by device (used when a graph has tensors off the CPU); the copy edge's colour.
DEVICE_COLORS = {"cpu": "#6b6b6b", "cuda:0": "#76b900", "cuda:1": "#e8710a", "mps": "#8e44ad"}
OTHER_DEVICE_COLOR = "#1f77b4"
COPY_COLOR = "#d62728"


# The colours of COLORS' "grad" (gradviz.graph.model): a tensor's mean |grad|.
GRAD_RAMP = ("#fff5f0", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c")  # small -> large


def grad_fills(model: GraphModel) -> tuple[dict[str, str], str]:
    """Each tensor node with a gradient filled by its mean |grad| (TensorInfo.grad_size; log
    scale, over this graph's range), and the caption's note."""
    sizes = {t.id: t.grad_size for t in model.tensors if t.grad_size is not None}
    positive = [math.log10(v) for v in sizes.values() if v > 0]
    if not positive:
        return {}, "fill: mean |grad| (no gradients yet)"
    low, high = min(positive), max(positive)
    fills = {}
    for node_id, v in sizes.items():
        share = 0.0 if v <= 0 or high == low else (math.log10(v) - low) / (high - low)
        fills[node_id] = GRAD_RAMP[min(int(share * len(GRAD_RAMP)), len(GRAD_RAMP) - 1)]
    note = f"fill: mean |grad|, light {10**low:.1e} to red {10**high:.1e} (log scale)"
    return fills, note


def coloring(model: GraphModel, color: str) -> tuple[dict[str, str], bool | None, str]:
    """to_dot's `fills` and `by_device` for a COLORS choice, and the note for the caption."""
    if color not in COLORS:
        raise ValueError(f"unknown color {color!r}; choose one of {', '.join(COLORS)}")
    if color == "grad":
        fills, note = grad_fills(model)
        return fills, None, note
    return {}, (True if color == "device" else None), ""


def device_color(device: str | None, theme: str = "light") -> str:
    if theme == "print":
        return "black"
    return DEVICE_COLORS.get(device or "cpu", OTHER_DEVICE_COLOR)


def uses_devices(model: GraphModel) -> bool:
    """True when some node is off the CPU: only then are nodes coloured by device."""
    return any(n.device not in (None, "cpu") for n in model.nodes)


def _q(text: str) -> str:
    """A DOT double-quoted string."""
    return dot_string(text)


def _h(text: str) -> str:
    """Text inside an HTML-like label."""
    return html_text(text)


def _fill(theme: Theme, role: str) -> str:
    return getattr(theme, role, theme.function)


_RECORD_SPECIAL = re.compile(r'[\\\n{}|<>"]')


def _r(text: str) -> str:
    """Text inside one field of a record label (micrograd's `{ data | grad }` nodes)."""
    out = str(text)
    if _RECORD_SPECIAL.search(out) is None:  # most: nothing to escape
        return out
    out = out.replace("\\", "\\\\").replace("\n", " ")
    for ch in '{}|<>"':
        out = out.replace(ch, "\\" + ch)
    return out


def _tensor_label(
    node: GraphNode,
    model: GraphModel,
    *,
    show_values: bool,
    rankdir: str,
    compact: bool = False,
    wrap: int | None = None,
) -> str:
    """A record: name = expression | shape dtype · device | { data | grad }.

    Records lay out much faster than HTML tables in Graphviz, which matters for big
    graphs. Their fields flip with the direction, so the outer braces depend on it.
    `compact` (big graphs) keeps the name with its shape, and the values. A long expression
    is cut after 40 characters, or with `wrap` kept whole on lines of about that many."""
    info = model.tensor_info(node.tensor)
    if info is None:  # an unnamed leaf
        shape = "x".join(map(str, node.shape or [])) or "scalar"
        return _q(f"{node.title}\n{shape}")
    shape = "(" + ", ".join(map(str, info.shape)) + ("," if len(info.shape) == 1 else "") + ")"
    head = info.label
    device = device_label(info.device, model.simulated)
    if compact:
        fields = [_r(f"{head} {shape}" + ("" if info.device == "cpu" else f" · {device}"))]
    else:
        if wrap is not None and info.expr and info.expr != info.label:
            lines = wrapped(f"{head} = {info.expr}", wrap)
            head_field = "\\n".join(_r(line) for line in lines)
        else:
            if info.expr and info.expr != info.label:
                head += " = " + (info.expr if len(info.expr) <= 40 else info.expr[:39] + "…")
            head_field = _r(head)
        fields = [head_field, _r(f"{shape} {info.dtype} · {device}")]
    if show_values:
        grad = info.grad_preview if info.grad_preview is not None else "—"
        if wrap is None:
            data, grad = _r(f"data {_fit(info.preview)}"), _r(f"grad {_fit(grad)}")
        else:
            data, grad = (
                "\\n".join(_r(line) for line in wrapped(f"{what} {_fit(text)}", wrap))
                for what, text in (("data", info.preview), ("grad", grad))
            )
        fields.append("{" + data + "|" + grad + "}")
    body = "|".join(fields)
    return '"' + ("{" + body + "}" if rankdir == "TB" else body) + '"'


def wrapped(text: str, width: int) -> list[str]:
    """`text` on lines of at most about `width` characters, broken after a comma or a space
    (a word longer than a line keeps its own line): nothing is left out."""
    pieces = re.findall(r"[^,\s]*(?:,\s*|\s+|$)", text)
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if line and len(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def _fit(preview: str, limit: int = 60) -> str:
    """A value preview in at most about `limit` characters, cut after a whole value and
    keeping its `… (512,000 values)]` (a cut in the middle made it `… (512,00`)."""
    if len(preview) <= limit:
        return preview
    head, mark, count = preview.partition("… (")
    tail = "… (" + count if mark else "…"
    room = max(limit - len(tail), 8)
    cut = head[:room].rfind(", ")
    return (head[:cut] if cut > 0 else head[:room]) + ", " + tail


def _function_label(node: GraphNode, *, show_saved: bool) -> str:
    name = node.title.split("::")[-1]
    if not (show_saved and node.saved):
        return _q(name)
    rows = [f"<TR><TD><B>{_h(name)}</B></TD></TR>"]
    rows += [
        f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9">saved {_h(k)}: {_h(v[:50])}</FONT></TD></TR>'
        for k, v in node.saved
    ]
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0">' + "".join(rows) + "</TABLE>>"


def to_dot(
    model: GraphModel,
    options: DrawOptions = DEFAULT_DRAWING,
    *,
    highlight: str | None = None,
    done: frozenset[str] | set[str] = frozenset(),
    caption: str | None = None,
    fills: Mapping[str, str] | None = None,
    by_device: bool | None = None,
    wrap: int | None = None,
    show_values: bool = True,
    input_labels: bool = True,
) -> str:
    """The enriched drawing in `options`' direction and theme, with saved tensors and the
    legend as they say (their view and colour are the caller's: `fills`, `by_device`).
    `highlight` marks the backward step being shown,
    `done` the nodes whose backward already ran; layers' calls are clusters down to
    `options.module_depth` (default: MAX_CLUSTER_DEPTH, 1 for a compact graph); `caption` is a line
    above the drawing; `fills` gives some nodes their own fill colour (node id -> colour,
    in place of their role's: colour by gradient); `by_device`: borders by device and the
    device legend (None: when some node is off the CPU); `wrap`: long expressions kept whole
    on lines of about that many characters (slides) instead of cut; `input_labels`: an
    input's dashed arrow says "input (no grad)" (a slide whose legend says what dashed arrows
    are leaves it out: that label's room between two ranks costs every text its size)."""
    theme, rankdir = options.theme, options.rankdir
    th = THEMES[theme]
    compact = len(model.nodes) > COMPACT_NODES
    spacing = "nodesep=0.2 ranksep=0.25 splines=line" if compact else "nodesep=0.3 ranksep=0.35"
    spacing += " " + THEME_GRAPH.get(theme, "")
    font = THEME_FONT.get(theme, 11)
    pen = " penwidth=2" if theme == "lecture" else ""
    by_device = uses_devices(model) if by_device is None else by_device
    look = _Look(
        th=th,
        theme=theme,
        show_values=show_values,
        show_saved=options.saved,
        rankdir=rankdir,
        compact=compact,
        by_device=by_device,
        highlight=highlight,
        done=done,
        fills=fills or {},
        wrap=wrap,
    )
    lines = {node.id: _node_line(node, model, look) for node in model.nodes}
    depth = options.module_depth
    depth = depth if depth is not None else (1 if compact else MAX_CLUSTER_DEPTH)
    body = _clusters(model, lines, th, theme, depth)
    body = built.clustered(model, body, lines, theme) if built.marked(model) else body
    if compact and not any(line.lstrip().startswith("subgraph ") for line in body):
        spacing += " " + BIG_RANKING
    out = [
        "digraph gradviz {",
        f"  graph [rankdir={rankdir} bgcolor={_q(th.bg)} fontname=Helvetica fontcolor={_q(th.font)} {spacing}];",
        f"  node [fontname=Helvetica fontsize={font} fontcolor={_q(th.font)} color={_q(th.border)} style=filled{pen}];",
        f"  edge [color={_q(th.edge)} arrowsize={0.7 if not pen else 1.0}{pen}];",
        *body,
    ]
    out.extend(_edge_lines(model, th, theme, input_labels))
    if options.legend and model.nodes:
        keys = _legend(th, theme)
        if built.marked(model):
            keys.insert(-1, built.legend_line(theme, THEME_FONT.get(theme, 10) - 1))
        if any(e.kind not in ("data", "gradient") for e in model.edges):
            keys.insert(
                -1,
                f'    "legend_cut" [label={_q(CUT_TEXT)} shape=plaintext fontsize=9 '
                f"fontcolor={_q(th.font)} style=solid fillcolor={_q(th.bg)}];",
            )
        out.extend(keys)
        if by_device:
            out.extend(_device_legend(model, th, theme))
    if caption:  # after the clusters, so none of them inherits it as its label
        out.append(f"  label={_q(caption)} labelloc=t fontsize=12;")
    out.append("}")
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class _Look:
    """to_dot's options for one drawing, as each node reads them."""

    th: Theme
    theme: str
    show_values: bool
    show_saved: bool
    rankdir: str
    compact: bool
    by_device: bool
    highlight: str | None
    done: frozenset[str] | set[str]
    fills: Mapping[str, str] = field(default_factory=dict)
    wrap: int | None = None


def _edge_lines(model: GraphModel, th: Theme, theme: str, input_labels: bool = True) -> list[str]:
    """The DOT statements of the drawing's edges."""
    out: list[str] = []
    # dot doubles every rank of a graph in which any edge has a `label` (room for the
    # label between ranks): a 2,000-node chain with one labelled input edge took 1.3 s to
    # place against 0.3 s without (docs/BENCHMARKS.md). Big graphs get `xlabel`s, placed
    # after the layout beside their edge; small ones keep labels with room of their own.
    edge_label = "xlabel" if len(model.nodes) > EDGE_XLABEL_NODES else "label"
    for e in model.edges:
        if e.copy:
            color = COPY_COLOR if theme != "print" else "black"
            out.append(
                f"  {_q(e.src)} -> {_q(e.dst)} [color={_q(color)} fontcolor={_q(color)} "
                f"style=bold penwidth=2.5 fontname=Helvetica fontsize=9 {edge_label}={_q('copy ' + e.copy)} "
                f'tooltip={_q("a copy between devices: " + e.copy)} class="copy"];'
            )
        elif e.kind == "gradient":
            out.append(f"  {_q(e.src)} -> {_q(e.dst)} [{built.edge_attrs(e, theme, edge_label)}];")
        elif e.kind != "data":
            attrs = _cut_attrs(e, th, edge_label, input_labels)
            out.append(f"  {_q(e.src)} -> {_q(e.dst)} [{attrs}];")
        else:
            out.append(f"  {_q(e.src)} -> {_q(e.dst)};")
    return out


def _node_line(node: GraphNode, model: GraphModel, look: _Look) -> str:
    """One node's DOT statement."""
    th, theme = look.th, look.theme
    attrs = {}
    if node.kind == "tensor":
        attrs["shape"] = "Mrecord" if node.tensor else "box"
        attrs["label"] = _tensor_label(
            node,
            model,
            show_values=look.show_values,
            rankdir=look.rankdir,
            compact=look.compact,
            wrap=look.wrap,
        )
        attrs["style"] = "filled" if theme != "print" else "solid"
        if theme == "print":
            attrs["penwidth"] = "2" if node.role in ("leaf", "output") else "1"
            if node.role == "untracked":
                attrs["style"] = "dashed"
        elif node.role == "untracked":
            attrs["style"] = '"filled,dashed"'
    else:
        attrs["shape"] = "box3d" if node.kind == "module" else "box"
        attrs["style"] = '"filled,rounded"' if theme != "print" else "rounded"
        attrs["label"] = _function_label(node, show_saved=look.show_saved)
        attrs["fontsize"] = str(THEME_FONT.get(theme, 11) - 1)
    attrs["fillcolor"] = _q(look.fills.get(node.id) or _fill(th, node.role))
    attrs["tooltip"] = _q(built.tooltip(node, node.rule or ROLE_TEXT.get(node.role, node.role)))
    attrs.update(built.node_attrs(node, theme))
    if look.by_device and node.device:
        attrs["color"] = _q(device_color(node.device, theme))
        attrs["penwidth"] = "3" if node.device != "cpu" else "1.5"
        attrs["tooltip"] = _q(
            f"on {device_label(node.device, model.simulated)}: "
            + (node.rule or ROLE_TEXT.get(node.role, node.role))
        )
    if node.id == look.highlight:
        attrs["color"] = _q(th.highlight)
        attrs["penwidth"] = "3"
    elif node.id in look.done:
        attrs["color"] = _q(th.done)
        attrs["penwidth"] = "2"
    return f"{_q(node.id)} [{' '.join(f'{k}={v}' for k, v in attrs.items())}];"


def _clusters(model: GraphModel, lines: dict[str, str], th: Theme, theme: str, depth: int):
    """The node statements, those a layer's call made inside its cluster (labelled with the
    layer's path and class), clusters inside the calls they ran in, at most `depth` deep
    (to_dot: MAX_CLUSTER_DEPTH; a big, compact graph keeps only the outermost calls'
    clusters: a model's layers are folded into it)."""
    calls = {c.id: c for c in model.modules}

    def shown(call: str | None) -> str | None:
        """The cluster a node of `call` is drawn in: the call, or the ancestor it folds into."""
        chain = []
        while call in calls and len(chain) <= len(calls):
            chain.append(call)
            call = calls[call].parent
        return chain[-min(len(chain), depth)] if chain and depth > 0 else None

    inside: dict[str | None, list[str]] = {}
    for node in model.nodes:
        inside.setdefault(shown(node.module), []).append(lines[node.id])
    children: dict[str | None, list[str]] = {}
    for c in model.modules:
        if shown(c.id) == c.id:
            children.setdefault(c.parent if c.parent in calls else None, []).append(c.id)
    color = "black" if theme == "print" else th.border

    def emit(call: str | None, indent: str) -> list[str]:
        out = [indent + line for line in inside.get(call, [])]
        for child in children.get(call, []):
            c = calls[child]
            label = f"{c.path}: {c.kind}"
            if c.parent is None and c.line:
                label += f" (line {c.line})"
            out.append(f"{indent}subgraph {_q('cluster_' + c.id)} {{")
            out.append(
                f'{indent}  label={_q(label)} fontsize=10 style="rounded,dashed" '
                f"color={_q(color)} fontcolor={_q(th.font)};"
            )
            out.extend(emit(child, indent + "  "))
            out.append(f"{indent}}}")
        return out

    return emit(None, "  ")


EDGE_XLABEL_NODES = 300  # drawings with more nodes label their edges with `xlabel`

CUT_TEXT = (
    "dashed arrow: not in autograd's graph (no gradient flows along it): a detach() or "
    "no_grad result from what it was made of, or an input that does not require grad"
)
EDGE_TOOLTIP = {
    "detached": "detach(): a new tensor sharing the values, cut out of the graph",
    "no_grad": "made under torch.no_grad(): autograd recorded nothing",
}


def _cut_attrs(e, th: Theme, edge_label: str = "label", input_label: bool = True) -> str:
    """A cut or input edge: dashed, labelled (`edge_label`: DOT's `label` or `xlabel`; an
    input's "input (no grad)" only if `input_label`), no gradient flows along it."""
    label = e.label or ("input (no grad)" if input_label else "")
    tip = EDGE_TOOLTIP.get(e.label or "", "an input that does not require grad")
    return (
        f"style=dashed arrowhead=empty fontname=Helvetica fontsize=9 "
        f"fontcolor={_q(th.font)} {edge_label}={_q(label)} tooltip={_q(tip)} class={_q(e.kind)}"
    )


def _legend(th: Theme, theme: str) -> list[str]:
    style = '"filled,rounded"' if theme != "print" else "rounded"
    size = THEME_FONT.get(theme, 10) - 1
    lines = [
        "  subgraph cluster_legend {",
        f'    label="legend" fontsize={size + 1} color={_q(th.border)} style=dashed;',
    ]
    for role in ("leaf", "intermediate", "output", "untracked", "function"):
        extra = " penwidth=2" if theme == "print" and role in ("leaf", "output") else ""
        if role == "untracked":
            extra += (
                ' style="filled,rounded,dashed"' if theme != "print" else ' style="rounded,dashed"'
            )
        else:
            extra += f" style={style}"
        lines.append(
            f"    {_q('legend_' + role)} [label={_q(ROLE_TEXT[role])} shape=box fontsize={size} fillcolor={_q(_fill(th, role))}{extra}];"
        )
    roles = " ".join(
        _q("legend_" + r) for r in ("leaf", "intermediate", "output", "untracked", "function")
    )
    lines.append(f"    {{rank=same; {roles}}}")
    lines.append("  }")
    return lines


def _device_legend(model: GraphModel, th: Theme, theme: str) -> list[str]:
    present = list(dict.fromkeys(n.device for n in model.nodes if n.device))
    lines = [
        "  subgraph cluster_devices {",
        f'    label="devices" fontsize=10 color={_q(th.border)} style=dashed;',
    ]
    ids = []
    for dev in present:
        nid = "legend_device_" + dev.replace(":", "_")
        ids.append(_q(nid))
        lines.append(
            f"    {_q(nid)} [label={_q(device_label(dev, model.simulated))} shape=box fontsize=9 "
            f"color={_q(device_color(dev, theme))} penwidth=3 fillcolor={_q(th.bg)} style=filled];"
        )
    if any(e.copy for e in model.edges):
        color = COPY_COLOR if theme != "print" else "black"
        ids.append(_q("legend_copy"))
        lines.append(
            f'    "legend_copy" [label="bold arrow: copy between devices" shape=plaintext '
            f"fontsize=9 fontcolor={_q(color)} style=solid fillcolor={_q(th.bg)}];"
        )
    lines.append(f"    {{rank=same; {' '.join(ids)}}}")
    lines.append("  }")
    return lines


# ---------------------------------------------------------------- torchviz classic view


def restyle_classic(source: str, options: DrawOptions = DEFAULT_DRAWING) -> str:
    """`options`' direction and background for torchviz's DOT, its node colours unchanged."""
    th = THEMES[options.theme]
    head, sep, rest = source.partition("{")
    if not sep:
        return source
    attrs = (
        f"\n\tgraph [rankdir={options.rankdir} bgcolor={_q(th.bg)}]\n\tedge [color={_q(th.edge)}]"
    )
    return head + sep + attrs + rest
