"""Program text -> SVG bytes: gradviz's enriched drawing against plain torchviz.

For the lesson and for a long chain (~2,000 graph nodes), times
  gradviz: run_program (parse, check, interpret with size pre-checks, graph model)
           + enriched DOT + `dot -Tsvg`
  torchviz: the same computation in plain PyTorch + torchviz.make_dot + `dot -Tsvg`
alternating the two, and prints medians and the ratio. Target: ratio <= 1.5.

    python bench/render_bench.py [--repeats 7] [--steps 500]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch  # noqa: E402
from torchviz import make_dot  # noqa: E402

from gradviz.graph.dot import to_dot  # noqa: E402
from gradviz.graph.render import CLI_LIMITS, render_bytes  # noqa: E402
from gradviz.program.interpreter.run import run_program  # noqa: E402
from gradviz.program.presets import PRESETS_BY_KEY  # noqa: E402
from gradviz.program.results.limits import Limits  # noqa: E402
from gradviz.program.results.trace import RunOptions

sys.setrecursionlimit(20_000)  # torchviz walks the graph recursively


def chain_program(steps: int) -> str:
    """A deep network of `steps` layers, each with its own weight: 4 graph nodes a layer
    (weight, product, tanh, h) in gradviz's drawing, 4 in torchviz's (weight,
    AccumulateGrad, MulBackward0, TanhBackward0)."""
    lines = ["h = torch.ones(4)"]
    for i in range(steps):
        lines.append(f"w{i} = torch.full((4,), {0.9 + (i % 7) / 100}, requires_grad=True)")
        lines.append(f"h = torch.tanh(h * w{i})")
    lines.append("y = h.sum()")
    return "\n".join(lines) + "\n"


def plain_chain(steps: int) -> bytes:
    h = torch.ones(4)
    params = {}
    for i in range(steps):
        w = torch.full((4,), 0.9 + (i % 7) / 100, requires_grad=True)
        params[f"w{i}"] = w
        h = torch.tanh(h * w)
    y = h.sum()
    return make_dot(y, params=params).pipe(format="svg")


def plain_lesson() -> bytes:
    x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
    a = x + 2
    b = a**2
    c = b + 3
    y = c.mean()
    return make_dot(y, params={"x": x}).pipe(format="svg")


def gradviz_svg(source: str, backward: str | None, limits: Limits) -> tuple[bytes, int]:
    trace = run_program(source, RunOptions(backward=backward, classic=False, limits=limits))
    assert trace.error is None, trace.error
    # the CLI's limits (a lecturer's own machine): the app's refuse the 2,000-node chain
    return render_bytes(to_dot(trace.graph), "svg", limits=CLI_LIMITS), len(trace.graph.nodes)


def timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def compare(name: str, ours, theirs, repeats: int) -> dict:
    ours(), theirs()  # warm-up: imports, caches, first `dot` start
    a, b = [], []
    for _ in range(repeats):  # alternate, so drift on a shared machine hits both
        a += timed(ours, 1)
        b += timed(theirs, 1)
    ma, mb = statistics.median(a), statistics.median(b)
    row = {
        "case": name,
        "gradviz_s": ma,
        "torchviz_s": mb,
        "ratio": ma / mb,
        "gradviz_min": min(a),
        "torchviz_min": min(b),
    }
    print(
        f"{name:28s} gradviz {ma * 1000:8.1f} ms (min {min(a) * 1000:.1f})   "
        f"torchviz {mb * 1000:8.1f} ms (min {min(b) * 1000:.1f})   ratio {ma / mb:.2f}"
    )
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument(
        "--steps", type=int, default=500, help="layers in the deep chain (4 nodes each)"
    )
    args = ap.parse_args()
    limits = Limits(max_lines=5_000, max_statements=10_000)
    lesson = PRESETS_BY_KEY["lesson"]
    chain = chain_program(args.steps)
    _, nodes = gradviz_svg(chain, "y", limits)
    print(
        f"# {date.today()} · {platform.node()} · {platform.processor() or platform.machine()} · "
        f"torch {torch.__version__} · threads {torch.get_num_threads()}"
    )
    print(f"# chain of {args.steps} layers: gradviz graph has {nodes} nodes")
    compare("lesson", lambda: gradviz_svg(lesson.source, "y", limits), plain_lesson, args.repeats)
    compare(
        f"chain ({nodes} nodes)",
        lambda: gradviz_svg(chain, "y", limits),
        lambda: plain_chain(args.steps),
        max(3, args.repeats // 2),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
