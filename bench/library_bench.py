"""gradviz as a library against torchviz, on torchvision's resnets (docs/BENCHMARKS.md).

Times, alternating the two sides in one run on the same backward graph:
  1. resnet18: gradviz.draw(loss, model=model).svg()   (names, values, gradients, clusters)
     against torchviz.make_dot(loss, params=...) + `dot -Tsvg`.              Target: <= 1.5x
     (also with module_depth=6, every cluster level, and with params= instead of model=)
  2. resnet50 recorded: rec.draw(loss) folded by module (automatically: over 300 nodes)
     + svg().                                                                Target: < 2 s
     and, for reference, make_dot + `dot -Tsvg` on the same graph, unfolded.
  3. What recording costs: the resnet50 forward inside `with gradviz.record()` against
     the plain forward.

    python bench/library_bench.py [--repeats 7] [--threads 1] [--size 64]
"""

from __future__ import annotations

import argparse
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch  # noqa: E402
import torchvision  # noqa: E402
from torchviz import make_dot  # noqa: E402

import gradviz  # noqa: E402
from gradviz.graph.textmetrics import svg_environment  # noqa: E402

GV_ENV = svg_environment(shutil.which("dot") or "dot")


def dot_svg(source: str, env: dict | None = None) -> bytes:
    """`dot -Tsvg` as installed (torchviz's side), or under `env` (gradviz's: built-in text
    metrics, gradviz.graph.textmetrics)."""
    return subprocess.run(
        ["dot", "-Tsvg"], input=source.encode(), capture_output=True, check=True, env=env
    ).stdout


def backward_graph(name: str, size: int):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    loss = model(torch.randn(2, 3, size, size)).logsumexp(dim=1).mean()
    loss.backward()
    return model, loss


CPU: dict[int, list[float]] = {}  # id(list of wall times) -> the CPU times of the same runs


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (dot): what other processes'
    load on a shared machine changes least."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def alternate(repeats: int, a, b) -> tuple[list[float], list[float]]:
    """Run a and b in turn (drift on a shared machine hits both), seconds each; CPU[id(list)]
    holds the CPU seconds of the same runs."""
    ta, tb = [], []
    CPU[id(ta)], CPU[id(tb)] = [], []
    for _ in range(repeats):
        for f, out in ((a, ta), (b, tb)):
            start, cpu = time.perf_counter(), cpu_seconds()
            f()
            out.append(time.perf_counter() - start)
            CPU[id(out)].append(cpu_seconds() - cpu)
    return ta, tb


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:,.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--size", type=int, default=64, help="input images are size x size")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sys.setrecursionlimit(20_000)  # torchviz walks the graph recursively
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.node()} · "
        f"{platform.processor() or platform.machine()} · torch {torch.__version__} · "
        f"threads {args.threads} · repeats {args.repeats} · batch 2x3x{args.size}x{args.size}"
    )
    rows = [
        "| case | gradviz median | torchviz median | ratio | target | |",
        "|---|---:|---:|---:|---|---|",
    ]

    model, loss = backward_graph("resnet18", args.size)
    params = dict(model.named_parameters())
    fig = gradviz.draw(loss, model=model)
    nodes = len(fig.graph.nodes)
    ga, tv = alternate(
        args.repeats,
        lambda: gradviz.draw(loss, model=model).svg(),
        lambda: dot_svg(make_dot(loss, params=params).source),
    )
    ratio = statistics.median(ga) / statistics.median(tv)
    drawn = fig.dot.count('subgraph "cluster_m')
    rows.append(
        f"| resnet18 backward graph → SVG, `model=` ({nodes} nodes, {drawn} of the "
        f"{len(fig.graph.modules)} layers' clusters drawn: module_depth 2), wall "
        f"| {ms(ga)} | {ms(tv)} | {ratio:.2f} | ≤ 1.5 | {'met' if ratio <= 1.5 else '**not met**'} |"
    )
    cpu_ratio = statistics.median(CPU[id(ga)]) / statistics.median(CPU[id(tv)])
    rows.append(
        f"| the same, CPU time (this process + dot) | {ms(CPU[id(ga)])} | {ms(CPU[id(tv)])} "
        f"| {cpu_ratio:.2f} | ≤ 1.5 | {'met' if cpu_ratio <= 1.5 else '**not met**'} |"
    )

    every = gradviz.draw(loss, model=model, module_depth=6).dot.count('subgraph "cluster_m')
    ga, tv = alternate(
        args.repeats,
        lambda: gradviz.draw(loss, model=model, module_depth=6).svg(),
        lambda: dot_svg(make_dot(loss, params=params).source),
    )
    wall = statistics.median(ga) / statistics.median(tv)
    cpu = statistics.median(CPU[id(ga)]) / statistics.median(CPU[id(tv)])
    rows.append(
        f"| the same with `module_depth=6` (every level: {every} "
        f"clusters): wall / CPU | {ms(ga)} / {ms(CPU[id(ga)])} | {ms(tv)} / {ms(CPU[id(tv)])} "
        f"| {wall:.2f} / {cpu:.2f} | ≤ 1.5 | {'met' if max(wall, cpu) <= 1.5 else '**not met**'} |"
    )

    # names, values and gradients without clusters. (Not `gradviz.draw(loss)` inside a lambda:
    # the lambda's frame holds no `model`, so the parameters would go unnamed and valueless.)
    plain = gradviz.draw(loss, params=params)
    ga, tv = alternate(
        args.repeats,
        lambda: gradviz.draw(loss, params=params).svg(),
        lambda: dot_svg(make_dot(loss, params=params).source),
    )
    wall = statistics.median(ga) / statistics.median(tv)
    cpu = statistics.median(CPU[id(ga)]) / statistics.median(CPU[id(tv)])
    rows.append(
        f"| resnet18, `gradviz.draw(loss, params=params)` ({len(plain.graph.nodes)} nodes, no "
        f"clusters): wall / CPU | {ms(ga)} / {ms(CPU[id(ga)])} | {ms(tv)} / {ms(CPU[id(tv)])} "
        f"| {wall:.2f} / {cpu:.2f} | ≤ 1.5 | {'met' if max(wall, cpu) <= 1.5 else '**not met**'} |"
    )

    gv_dot, tv_dot = fig.dot, make_dot(loss, params=params).source
    draw_s, tv_s = alternate(
        args.repeats,
        lambda: gradviz.draw(loss, model=model),
        lambda: make_dot(loss, params=params),
    )
    gv_layout, tv_layout = alternate(
        args.repeats, lambda: dot_svg(gv_dot, GV_ENV), lambda: dot_svg(tv_dot)
    )
    rows.append(
        f"| where: Python (draw / make_dot) | {ms(draw_s)} | {ms(tv_s)} | — | — | — |\n"
        f"| where: `dot -Tsvg` of each DOT, as each side runs it ({len(gv_dot):,} / {len(tv_dot):,} characters) "
        f"| {ms(gv_layout)} | {ms(tv_layout)} "
        f"| {statistics.median(gv_layout) / statistics.median(tv_layout):.2f} | — | — |"
    )

    torch.manual_seed(0)
    big = torchvision.models.resnet50(weights=None)
    images = torch.randn(2, 3, args.size, args.size)
    with gradviz.record() as rec:
        out = big(images).logsumexp(dim=1).mean()
    out.backward()
    folded = rec.draw(out)
    whole = rec.draw(out, collapse_depth=False)
    big_params = dict(big.named_parameters())
    ga, tv = alternate(
        args.repeats,
        lambda: rec.draw(out).svg(),
        lambda: dot_svg(make_dot(out, params=big_params).source),
    )
    worst = max(ga)
    rows.append(
        f"| resnet50 recorded, folded by module → SVG ({len(whole.graph.nodes)} nodes folded to "
        f"{len(folded.graph.nodes)}) | {ms(ga)} (slowest {worst * 1000:,.0f} ms) | {ms(tv)} "
        f"(unfolded) | {statistics.median(ga) / statistics.median(tv):.2f} | < 2 s | "
        f"{'met' if statistics.median(ga) < 2 else '**not met**'} |"
    )

    def recorded():
        with gradviz.record():
            big(images).sum()

    ga, tv = alternate(args.repeats, recorded, lambda: big(images).sum())
    rows.append(
        f"| resnet50 forward inside `gradviz.record()` (plain forward in the torchviz column) "
        f"| {ms(ga)} | {ms(tv)} | {statistics.median(ga) / statistics.median(tv):.2f} | — | — |"
    )
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
