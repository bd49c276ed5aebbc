"""The Export tab's walk-through for slides and the page's folded layers, timed on this host.

For each program (the lesson, a 3-layer MLP, a 6-layer MLP): run it with backward in this
process (as the CLI does), then time what the page does when its buttons are
clicked, under the server's render limits:

  frames: gradviz.graph.walkthrough.frames (DOT per backward step + the final graph)
  pdf:    walkthrough.pdf_bytes (a Graphviz PDF per frame, merged by pypdf, in the server)
  gif:    gradviz.ui.autograd.slides.gif: a Graphviz PNG per frame in the server, at most
          GIF_MAX_SIDE pixels a side, + services.slides.gif (Pillow in a job worker; the
          first call includes starting the worker's forkserver, so each program is timed
          twice and the second is reported)

and the drawing's size with every layer open and with the outermost layer folded
(graph.collapse.fold_calls, laid out again by Graphviz): what closing a layer does on the page.

    python bench/slides_bench.py
"""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gradviz.graph import walkthrough  # noqa: E402
from gradviz.graph.collapse import fold_calls  # noqa: E402
from gradviz.graph.dot import to_dot  # noqa: E402
from gradviz.graph.render import render_bytes, server_limits  # noqa: E402
from gradviz.program.interpreter.run import run_program  # noqa: E402
from gradviz.program.presets import PRESETS_BY_KEY  # noqa: E402
from gradviz.program.results.trace import RunOptions  # noqa: E402
from gradviz.ui.autograd.slides import gif as page_gif  # noqa: E402


def mlp(layers: int) -> str:
    body = ", ".join("nn.Linear(8, 8), nn.ReLU()" for _ in range(layers - 1))
    return (
        "import torch.nn as nn\ntorch.manual_seed(0)\n"
        f"net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), {body}, nn.Linear(8, 3))\n"
        "x = torch.randn(5, 4, requires_grad=True)\nloss = net(x).pow(2).mean()\n"
    )


PROGRAMS = {
    "lesson": (PRESETS_BY_KEY["lesson"].source, "y"),
    "MLP, 3 layers": (mlp(2), "loss"),
    "MLP, 6 layers": (mlp(5), "loss"),
}


def size(dot: str) -> str:
    svg = render_bytes(dot, "svg").decode("utf-8")
    w, h = re.search(r'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"', svg).groups()
    return f"{float(w):.0f} x {float(h):.0f} pt"


def main() -> None:
    print(f"{platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")  # fmt: skip
    print("| program | steps | frames | pdf (server) | gif (PNGs + worker) | pdf / gif bytes "
          "| drawing open | outer layer folded |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---|---|")
    limits = server_limits()
    for name, (source, target) in PROGRAMS.items():
        trace = run_program(source, RunOptions(backward=target))
        record = trace.backward[-1]
        t0 = time.perf_counter()
        dots = walkthrough.frames(trace.graph, record)
        t1 = time.perf_counter()
        pdf = walkthrough.pdf_bytes(dots, limits=limits)
        t2 = time.perf_counter()
        gif = b""
        for _ in range(2):  # the second: a warm forkserver, as on a running server
            t3 = time.perf_counter()
            gif = page_gif(dots)
            t4 = time.perf_counter()
        model = trace.graph
        outer = [m.id for m in model.modules if m.parent is None]
        folded = size(to_dot(fold_calls(model, outer))) if outer else "(no layers)"
        print(f"| {name} | {len(record.steps)} | {(t1 - t0) * 1e3:.0f} ms | {(t2 - t1):.2f} s "
              f"| {(t4 - t3):.2f} s | {len(pdf):,} / {len(gif):,} | {size(to_dot(model))} "
              f"| {folded} |")  # fmt: skip


if __name__ == "__main__":
    main()
