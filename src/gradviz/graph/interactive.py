"""The interactive graph viewer: one self-contained HTML document (no network, no external
script) holding the SVG Graphviz drew, svg-pan-zoom (vendored in graph/assets, BSD-2-Clause,
see its LICENSE there) and gradviz's own viewer script, with every node's summary as a JSON
island: pan and zoom, hover a node for its value and gradient, click it for the full tensor
and the path to the output, search by name, collapse layer clusters, colour by role, device
or gradient, and a quiz mode that hides the gradients until the student answers.

No torch and no Streamlit: the page shows it in a frame, the CLI writes it to a file.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from importlib import resources

from gradviz.graph.dot import ROLE_TEXT, THEMES
from gradviz.graph.higher_order import drawing as built
from gradviz.graph.model import GraphModel, GraphNode, TensorInfo
from gradviz.util.mdtext import html_text

# Above this many nodes the viewer opens with the layer clusters closed.
COLLAPSE_OVER = 300
# The quiz accepts an answer within QUIZ_ATOL + QUIZ_RTOL * |gradient| of each number.
QUIZ_ATOL = 0.01
QUIZ_RTOL = 0.01
# Below this zoom (Graphviz's 11 pt text drawn under about 3.5 px) a graph of more than
# COLLAPSE_OVER nodes is drawn without node text, record separators and arrowheads: painting
# them is most of a big graph's frame time (docs/BENCHMARKS.md). Small graphs keep them.
LOD_ZOOM = 0.32
# A new graph opens fitted to its frame, but its node text no smaller than this (CSS px): a
# wider graph is panned across instead of shrunk past reading. Fit does the same.
MIN_TEXT_PX = 10
# A rerun keeps the view (zoom, pan) of the graph before when it is the same graph (same
# nodes and edges), or an edit of it sharing at least this share of its nodes (anchored on a
# tensor); any other graph opens fitted to its own size.
KEEP_SHARE = 0.6
ASSETS = ("svg-pan-zoom.min.js", "viewer.js", "viewer.css", "bridge.js")


def asset(name: str) -> str:
    """One of the viewer's vendored or own files, as text (they ship in the wheel)."""
    if name not in ASSETS:
        raise ValueError(f"unknown viewer asset {name!r}")
    return resources.files("gradviz.graph").joinpath("assets", name).read_text("utf-8")


def _flat(value, out: list[float]) -> list[float]:
    if isinstance(value, list):
        for v in value:
            _flat(v, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append(float(value))
    return out


def summary(value) -> dict | None:
    """min, max, mean and L2 norm of a value or gradient (nested lists), finite numbers only;
    None when there are none."""
    numbers = [x for x in _flat(value, []) if math.isfinite(x)]
    if not numbers:
        return None
    return {
        "min": min(numbers),
        "max": max(numbers),
        "mean": math.fsum(numbers) / len(numbers),
        "norm": math.sqrt(math.fsum(x * x for x in numbers)),
        "count": len(numbers),
    }


def _finite(value):
    """JSON has no NaN or infinities: those become strings (the viewer skips them)."""
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _tensor(info: TensorInfo) -> dict:
    return {
        "id": info.id,
        "name": info.name,
        "label": info.label,
        "line": info.line,
        "expr": info.expr,
        "shape": info.shape,
        "dtype": info.dtype,
        "device": info.device,
        "grad_fn": info.grad_fn,
        "note": info.note,
        "preview": info.preview,
        "grad_preview": info.grad_preview,
        "value": _finite(info.value),
        "grad": _finite(info.grad),
        "vstats": summary(info.value),
        "gstats": summary(info.grad),
    }


def _node(node: GraphNode, model: GraphModel) -> dict:
    info = model.tensor_info(node.tensor)
    made = {"made_by": node.made_by} if node.made_by is not None else {}
    return made | {
        "id": node.id,
        "kind": node.kind,
        "role": node.role,
        "title": node.title.split("::")[-1],
        "rule": node.rule,
        "device": node.device,
        "module": node.module,
        "saved": [list(s) for s in node.saved],
        "t": _tensor(info) if info is not None else None,
    }


def shape_digest(model: GraphModel) -> str:
    """The graph's structure (its nodes' ids, kinds and titles, its edges), not its values: a
    rerun of the same program, or another walk-through step, has the same digest."""
    parts = [f"{n.id}\x1f{n.kind}\x1f{n.title}" for n in model.nodes]
    parts += [f"{e.src}->{e.dst}" for e in model.edges]
    return hashlib.sha256("\x1e".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def viewer_data(
    model: GraphModel,
    source: str = "",
    theme: str = "light",
    quiz: bool = False,
    remember: bool = False,
    folds: dict | None = None,
    focus: str | None = None,
    flow: list[dict] | None = None,
) -> dict:
    """What the viewer script reads: nodes (with their tensors' values, gradients and
    summaries), edges, layer calls, the program's text, the colours of the roles; `remember`
    keeps the view (zoom, pan, colour by) in the tab's session storage across reruns.

    `folds` (the page only): the layer calls the server drew folded, {"calls": [ids],
    "depth": the Layers choice or None, "max_depth": the deepest call}; with it, closing or
    opening a layer asks the page to draw the graph again instead of hiding in place.
    `focus`: a node brought into view if the kept view leaves it out (a walk-through step);
    `flow`: the edges that step passes gradients along (gradviz.graph.walkthrough.flow), drawn
    travelling along them as the viewer opens, the gradients then written beside them."""
    th = THEMES.get(theme, THEMES["light"])
    extra = {}
    if folds is not None:
        extra = {
            "folds": [str(c) for c in folds.get("calls", [])],
            "fold_depth": "" if folds.get("depth") is None else str(folds["depth"]),
            "max_depth": int(folds.get("max_depth", 0)),
        }
    return extra | {
        "nodes": {n.id: _node(n, model) for n in model.nodes},
        "edges": [[e.src, e.dst] for e in model.edges],
        "modules": {
            m.id: {"label": f"{m.path}: {m.kind}", "parent": m.parent, "line": m.line}
            for m in model.modules
        },
        "source": source,
        # the classic view (torchviz's nodes) has no roles of gradviz's to explain
        "roles": [[ROLE_TEXT[r], getattr(th, r)] for r in ROLE_TEXT]
        + built.legend_entry(model, theme)
        if model.nodes
        else [],
        "collapse_over": COLLAPSE_OVER,
        "lod_zoom": LOD_ZOOM if len(model.nodes) > COLLAPSE_OVER else 0,
        "quiz": quiz,
        "remember": remember,
        "shape": shape_digest(model),
        "min_text_px": MIN_TEXT_PX,
        "keep_share": KEEP_SHARE,
        "focus": focus,
        "flow": [
            {k: f.get(k) for k in ("src", "dst", "to")} | {"grad": None if quiz else f.get("grad")}
            for f in flow or []
        ],
        "quiz_atol": QUIZ_ATOL,
        "quiz_rtol": QUIZ_RTOL,
    }


_SVG_START = re.compile(r"<svg\b", re.I)


def inline_svg(svg: str | bytes) -> str:
    """Graphviz's SVG without its XML prolog and DOCTYPE, to sit inside an HTML page."""
    text = svg.decode("utf-8") if isinstance(svg, bytes) else svg
    m = _SVG_START.search(text)
    if m is None:
        raise ValueError("not an SVG document")
    return text[m.start() :]


def _json_island(data: dict) -> str:
    """JSON that cannot end its <script> element early (`<` is written \\u003c)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _script(name: str) -> str:
    return "<script>" + asset(name).replace("</script", "<\\/script") + "</script>"


def _quiz_toggle(quiz: bool) -> str:
    """The toolbar's Quiz checkbox: the visitor's choice, or ticked for good in a quiz (a
    gradient is shown by a right answer, or by the page's Reveal gradients button)."""
    if quiz:
        return (
            '<label class="gv-more-item" title="a quiz: click a tensor and type the gradient '
            'you expect">'
            '<input id="gv-quiz-toggle" type="checkbox" checked disabled> Quiz</label>'
        )
    return (
        '<label class="gv-more-item" title="hide the gradients; click a tensor and type the '
        'gradient you expect">'
        '<input id="gv-quiz-toggle" type="checkbox"> Quiz</label>'
    )


def viewer_html(
    model: GraphModel,
    svg: str | bytes,
    source: str = "",
    title: str = "gradviz graph",
    theme: str = "light",
    quiz: bool = False,
    height: str = "100vh",
    remember: bool = False,
    folds: dict | None = None,
    focus: str | None = None,
    flow: list[dict] | None = None,
) -> str:
    """The whole viewer as one HTML document. `svg` is the drawing of `model` by
    gradviz.graph.dot.to_dot + gradviz.graph.render.render_bytes(..., "svg")."""
    th = THEMES.get(theme, THEMES["light"])
    data = viewer_data(model, source, theme, quiz, remember, folds, focus, flow)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html_text(title)}</title>
<style>{asset("viewer.css")}
#gv-graph {{ background: {th.bg}; }}
body {{ height: {html_text(height)}; }}</style>
</head><body>
<div id="gv-bar" role="toolbar" aria-label="graph controls">
<button id="gv-zoom-in" title="zoom in (or the mouse wheel)" aria-label="zoom in">+</button>
<button id="gv-zoom-out" title="zoom out" aria-label="zoom out">−</button>
<button id="gv-fit" title="fit the graph to the frame">Fit</button>
<button id="gv-reset" title="back to the first view" aria-label="reset the view">⟲</button>
<input id="gv-search" type="search" placeholder="Search" title="search a tensor by name" aria-label="search a tensor by name">
<span id="gv-search-count"></span>
<label class="gv-more-item">Colour <select id="gv-colour" aria-label="colour by">
<option value="role">role</option><option value="device">device</option>
<option value="gradient">gradient</option></select></label>
<label class="gv-more-item">Layers <select id="gv-depth" aria-label="layers open"><option value="all">all open</option></select></label>
{_quiz_toggle(quiz)}
<span id="gv-shown" class="gv-more-item"></span>
<button id="gv-more" title="more controls" aria-label="more controls" aria-haspopup="true" aria-expanded="false" hidden>⋯</button>
</div>
<div id="gv-menu" role="menu" aria-label="more controls" hidden></div>
<div id="gv-legend"></div>
<div id="gv-main"><div id="gv-graph">{inline_svg(svg)}</div>
<aside id="gv-inspector" aria-live="polite"></aside></div>
<div id="gv-tip" role="tooltip"></div>
<script type="application/json" id="gv-data">{_json_island(data)}</script>
{_script("svg-pan-zoom.min.js")}
{_script("viewer.js")}
</body></html>
"""
