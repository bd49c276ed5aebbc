"""What Graphviz's `dot` takes on graphs inside the public limits, against what
gradviz.graph.layoutcost predicts from their shape: rows skipped by arrows (long steps) and
layer boxes (clusters), and whether the public limits refuse each graph before `dot` runs.

Graphs: every preset (none may be refused), ordinary big programs (a long chain, a deep
stack with a weight per layer, a small RNN sharing its weight, a Sequential called in a
loop, loops with layer calls), and a loop that adds the same leaf at every step
(`h = h * 1.01 + x`): few nodes, each step's arrow from `x` skipping every row above it.

    python bench/layout_cost.py [--timeout 20] [--steps 20,40,50,60,80]
    python bench/layout_cost.py --contention 60   # a student beside an attacker
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gradviz.graph.layoutcost import layout_cost, refusal  # noqa: E402
from gradviz.graph.render import (  # noqa: E402
    PUBLIC_LIMITS,
    RenderUnavailable,
    draw,
    forget_failures,
    graph_size,
    render_bytes,
)
from gradviz.program.interpreter.run import run_program  # noqa: E402
from gradviz.program.presets import PRESETS  # noqa: E402
from gradviz.program.results.trace import RunOptions  # noqa: E402


def shared_leaf(steps: int) -> str:
    return (
        "x = torch.ones(2, requires_grad=True)\nh = x\n"
        f"for i in range({steps}):\n    h = h * 1.01 + x\ny = h.sum()\n"
    )


# W used at every step, and an input without grad at every step: its arrow's label makes
# `dot` double every arrow's rows.
_RNN = (
    "torch.manual_seed(0)\nW = torch.randn(8, 8, requires_grad=True)\n"
    "h = torch.zeros(1, 8)\nfor t in range(%d):\n    h = torch.tanh(h @ W + torch.randn(1, 8))\n"
    "y = h.sum()\n"
)
# The same loop with each step inside a layer's call: `dot` ranks clusters on their own.
_IN_LAYER = (
    "class M(nn.Module):\n    def forward(self, h, x):\n        return h * 1.01 + x\n"
    "m = M()\nx = torch.ones(2, requires_grad=True)\nh = x\n"
    "for i in range(%d):\n    h = m(h, x)\ny = h.sum()\n"
)
# The whole loop inside one layer call: its steps' rows are fixed, and the leaf's arrows
# into them are as long as outside layers.
_AROUND = (
    "class M(nn.Module):\n    def forward(self, x):\n        h = x\n"
    "        for i in range(%d):\n            h = h * 1.01 + x\n        return h\n"
    "x = torch.ones(2, requires_grad=True)\ny = M()(x).sum()\n"
)
# A layer's parameter (in the layer's cluster) added at every step outside it.
_BIAS = (
    "lin = nn.Linear(2, 2)\nx = torch.ones(2, requires_grad=True)\nh = lin(x)\n"
    "for i in range(%d):\n    h = h * 1.01 + lin.bias\ny = h.sum()\n"
)
ORDINARY = {
    "chain, 700 steps": "h = torch.ones(2, requires_grad=True)\n"
    "for i in range(700):\n    h = h * 1.01\ny = h.sum()\n",
    "relu stack, 100 layers (a weight each)": "torch.manual_seed(0)\nh = torch.randn(4, 8)\n"
    "for i in range(100):\n    W = torch.randn(8, 8, requires_grad=True)\n"
    "    h = torch.relu(h @ W)\ny = h.sum()\n",
    "RNN, 20 steps sharing W": _RNN % 20,
    "RNN, 27 steps sharing W": _RNN % 27,
    "Sequential called 30 times (121 clusters)": "torch.manual_seed(0)\n"
    "net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))\n"
    "h = torch.randn(2, 4)\nfor i in range(30):\n    h = net(h)\ny = h.sum()\n",
    "Sequential called 90 times": "torch.manual_seed(0)\n"
    "net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))\n"
    "h = torch.randn(2, 4)\nfor i in range(90):\n    h = net(h)\ny = h.sum()\n",
    "the same leaf added in a layer's call, 700 calls": _IN_LAYER % 700,
    "a layer call around the whole leaf loop, 64 steps": _AROUND % 64,
    "a layer's bias added at 46 steps": _BIAS % 46,
}
# Slow outside layers, whatever else the program has: one layer call does not hide it.
SLOW = {
    "a layer call around the whole leaf loop, 80 steps": _AROUND % 80,
    "a layer's bias added at 60 steps": _BIAS % 60,
    "RNN, 30 steps sharing W": _RNN % 30,
    "RNN, 40 steps sharing W": _RNN % 40,
    "one layer call, then the same leaf added 50 times": "lin = nn.Linear(2, 2)\n"
    "x = torch.ones(2, requires_grad=True)\nh = lin(x)\n"
    "for i in range(50):\n    h = h * 1.01 + x\ny = h.sum()\n",
}


def dot_seconds(dot: str, timeout: float) -> tuple[float | None, bool]:
    """(CPU seconds `dot -Tsvg` took, None past `timeout` (wall); whether it failed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(
            ["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return None, False
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return took, proc.returncode != 0


def row(name: str, source: str, backward: str | None, timeout: float) -> None:
    trace = run_program(source, RunOptions(backward=backward))
    dot = draw(trace)
    nodes, edges = graph_size(dot)
    started = time.perf_counter()
    cost = layout_cost(dot)
    predict_ms = (time.perf_counter() - started) * 1000
    refused = refusal(dot, PUBLIC_LIMITS.max_long_steps, PUBLIC_LIMITS.max_clusters)
    took, failed = dot_seconds(dot, timeout)
    shown = f"{took:.2f} s" if took is not None else f"> {timeout:.0f} s (stopped)"
    shown += " (dot failed)" if failed else ""
    print(
        f"| {name} | {nodes:,} / {edges:,} | {cost.long_steps:,} | {cost.clusters} | "
        f"{predict_ms:.1f} ms | {shown} | {'refused' if refused else 'drawn'} |",
        flush=True,
    )


def contention(seconds: float, guarded: bool) -> None:
    """A visitor drawing the lesson every 0.5 s while another, in 3 tabs, keeps asking for
    slow drawings (the leaf loop at 70-99 steps, each new, so none is a remembered refusal),
    through render_bytes under the public limits, with (`guarded`) or without the layout-cost
    limit and the visitor keys. Prints the lesson's waits and refusals."""
    lesson = draw(run_program(PRESETS[0].source, RunOptions(backward=PRESETS[0].backward)))
    slow = [draw(run_program(shared_leaf(n), RunOptions())) for n in range(70, 100)]
    limits = PUBLIC_LIMITS if guarded else replace(PUBLIC_LIMITS, max_long_steps=None)
    stop = threading.Event()
    attacks: list[str] = []

    def attacker(tab: int) -> None:
        for k in range(tab, len(slow), 3):
            if stop.is_set():
                return
            try:
                render_bytes(slow[k], "svg", limits=limits, visitor="attacker" if guarded else "")
                attacks.append("drawn")
            except RenderUnavailable as exc:
                attacks.append(str(exc)[:40])
                time.sleep(0.2)

    tabs = [threading.Thread(target=attacker, args=(t,)) for t in range(3)]
    for t in tabs:
        t.start()
    time.sleep(0.5)
    waits, refused = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        forget_failures()  # the lesson laid out each time, as a new program's graph would be
        started = time.monotonic()
        try:
            render_bytes(lesson, "svg", limits=limits, visitor="student")
            waits.append(time.monotonic() - started)
        except RenderUnavailable:
            refused += 1
        time.sleep(0.5)
    stop.set()
    for t in tabs:
        t.join()
    waits.sort()
    p50 = waits[len(waits) // 2] if waits else float("nan")
    print(
        f"{'guarded' if guarded else 'unguarded'}: lesson drawn {len(waits)} times, p50 "
        f"{p50 * 1000:.0f} ms, max {max(waits, default=0) * 1000:.0f} ms, refused {refused}; "
        f"attacker: {len(attacks)} asked, {attacks.count('drawn')} drawn",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--steps", default="20,40,50,60,80")
    ap.add_argument("--skip-presets", action="store_true")
    ap.add_argument(
        "--contention",
        type=float,
        default=0.0,
        help="seconds of a student drawing beside an attacker, without then with the guards",
    )
    args = ap.parse_args()
    if args.contention:
        contention(args.contention, guarded=False)
        contention(args.contention, guarded=True)
        return
    print(
        f"public limits: {PUBLIC_LIMITS.max_long_steps:,} long steps, "
        f"{PUBLIC_LIMITS.max_clusters} clusters; dot CPU {PUBLIC_LIMITS.cpu_seconds} s\n"
    )
    print("| graph | nodes / edges | long steps | clusters | predict | dot -Tsvg CPU | public |")
    print("|---|---|---|---|---|---|---|")
    if not args.skip_presets:
        for preset in PRESETS:
            row(f"preset {preset.key}", preset.source, preset.backward, args.timeout)
    for name, source in ORDINARY.items():
        row(name, source, None, args.timeout)
    for name, source in SLOW.items():
        row(name, source, None, args.timeout)
    for steps in (int(s) for s in args.steps.split(",")):
        row(f"same leaf added {steps} times", shared_leaf(steps), None, args.timeout)


if __name__ == "__main__":
    main()
