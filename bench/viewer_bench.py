"""The interactive viewer with a 2,000-node graph in headless Chromium: pan and zoom frame times.

A synthetic graph (no torch): `--layers` layer clusters, each a chain of tensor -> function
nodes (a tensor of 16 values with its gradient, the function's rule), 2,000 nodes in all by
default. It is laid out once by Graphviz (`dot -Tsvg`, the CLI's limits), written as the
viewer's HTML (gradviz.graph.interactive.viewer_html), opened from disk in Chromium with the
network blocked, and driven from the page:

  pan:  each animation frame calls svgPanZoom's panBy (the path a mouse drag takes)
  zoom: each animation frame calls zoomAtPoint by 1.1 in, then out (the wheel's path)

The time of a frame is the gap between consecutive requestAnimationFrame callbacks
(performance.now()), so it covers the script, style, layout and paint of the change the
previous frame made. Medians and 95th percentiles of `--frames` frames per action, a warm-up
of 20 frames first; target: median under 50 ms. Prints a Markdown table.

    python bench/viewer_bench.py [--nodes 2000] [--layers 20] [--frames 200] [--keep OUT.html]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gradviz.graph.dot import to_dot  # noqa: E402
from gradviz.graph.interactive import viewer_html  # noqa: E402
from gradviz.graph.model import (  # noqa: E402
    DrawOptions,
    GraphEdge,
    GraphModel,
    GraphNode,
    ModuleCall,
    TensorInfo,
)
from gradviz.graph.render import CLI_LIMITS, render_bytes  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-background-networking"]

FRAMES_JS = """async ([kind, n]) => {
  const pz = window.gvPanZoom, times = [];
  const box = document.querySelector('#gv-graph').getBoundingClientRect();
  const at = {x: box.width / 2, y: box.height / 2};
  let last = await new Promise(r => requestAnimationFrame(r));
  for (let i = 0; i < n + 20; i++) {
    if (kind === 'pan') pz.panBy({x: (i % 40 < 20 ? 12 : -12), y: (i % 20 < 10 ? 6 : -6)});
    else pz.zoomAtPoint(i % 20 < 10 ? 1.1 : 1 / 1.1, at);
    const now = await new Promise(r => requestAnimationFrame(r));
    if (i >= 20) times.push(now - last);
    last = now;
  }
  return times;
}"""


def synthetic(nodes: int, layers: int) -> GraphModel:
    """`nodes` nodes: tensors and functions alternating in `layers` clustered chains, each
    chain fed by the previous one's last tensor."""
    model = GraphModel()
    per = max(2, nodes // layers)
    last = None
    for m in range(layers):
        model.modules.append(ModuleCall(f"m{m}", f"net.{m}", "Block", m + 1))
        for k in range(per):
            i = m * per + k
            if k % 2 == 0:
                tid = f"t{i}"
                value = [round((i * 7 + j) % 13 / 13 - 0.5, 4) for j in range(16)]
                model.tensors.append(
                    TensorInfo(
                        id=tid,
                        name=f"h{i}",
                        label=f"h{i}",
                        line=m + 1,
                        expr=f"f(h{i - 2})",
                        shape=[16],
                        dtype="float32",
                        device="cpu",
                        requires_grad=True,
                        is_leaf=last is None,
                        retains_grad=False,
                        grad_fn="AddBackward0",
                        value=value,
                        preview=str(value[:3]),
                        grad=[v / 2 for v in value],
                        grad_preview=str(value[:3]),
                    )  # fmt: skip
                )
                node = GraphNode(tid, "tensor", f"h{i}", "intermediate", tensor=tid, module=f"m{m}")
            else:
                node = GraphNode(f"f{i}", "function", "AddBackward0", "function",
                                 rule="d(a + b): passes upstream unchanged", module=f"m{m}")  # fmt: skip
            if last is not None:
                model.edges.append(GraphEdge(last, node.id))
            model.nodes.append(node)
            last = node.id
    return model


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--layers", type=int, default=20)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--keep", help="also write the viewer's HTML here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    model = synthetic(args.nodes, args.layers)
    start = time.perf_counter()
    svg = render_bytes(to_dot(model, DrawOptions(legend=False)), "svg", limits=CLI_LIMITS)
    layout_s = time.perf_counter() - start
    page_html = viewer_html(model, svg, title="viewer bench")
    out = Path(args.keep) if args.keep else Path(tempfile.mkdtemp()) / "viewer_bench.html"
    out.write_text(page_html, encoding="utf-8")
    url = out.resolve().as_uri()
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1600, "height": 900})
        context.route("**/*", lambda r: r.continue_() if r.request.url == url else r.abort())
        page = context.new_page()
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector("body[data-gv-ready='1']", timeout=120_000)
        open_s = time.perf_counter() - start
        drawn = page.locator("g.node").count()
        shown = page.inner_text("#gv-shown")
        page.click("#gv-fit")
        for kind in ("pan", "zoom"):
            times = page.evaluate(FRAMES_JS, [kind, args.frames])
            rows.append((kind, statistics.median(times), percentile(times, 0.95), max(times)))
        page.select_option("#gv-depth", "all")  # every layer open: all nodes drawn
        shown_all = page.inner_text("#gv-shown")
        for kind in ("pan", "zoom"):
            times = page.evaluate(FRAMES_JS, [kind, args.frames])
            rows.append((kind + ", all open", statistics.median(times), percentile(times, 0.95), max(times)))  # fmt: skip
        version = browser.version
        browser.close()
    print(f"{len(model.nodes):,} nodes ({drawn:,} drawn in the SVG), {len(model.edges):,} edges, "
          f"{args.layers} clusters; HTML {len(page_html.encode()) / 1e6:.1f} MB; Graphviz layout "
          f"{layout_s:.1f} s; page open to ready {open_s:.1f} s; at open: {shown}; then {shown_all}")  # fmt: skip
    print(f"Chromium {version} headless, {platform.machine()}, {args.frames} frames per row\n")
    print("| action | median frame | p95 | max | target (median) | |")
    print("|---|---:|---:|---:|---|---|")
    for kind, med, p95, worst in rows:
        ok = "met" if med < 50 else "**not met**"
        print(f"| {kind} | {med:.1f} ms | {p95:.1f} ms | {worst:.1f} ms | < 50 ms | {ok} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
