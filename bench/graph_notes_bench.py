"""What noting cut edges and in-place changes costs a run: run_program with both on
(gradviz.program.recording.sources.read_tensors for every tensor bound, gradviz.program.recording.inplace's
watch on every in-place operation) against both off, side by side and alternating.

Cases: the language bench's 1,000-step SGD loop (its manual `p -= lr * p.grad` updates are
in-place operations, and every pass binds tensors), and a loop of 500 passes that changes a
tensor in place each pass.

    python bench/graph_notes_bench.py [--repeats 5] [--threads 1] [--profile]

On a busy host the medians swing more than the cost being measured; --profile instead
runs each case once under cProfile and prints the share of the run spent in the noting
functions themselves (cumulative time), which load moves much less.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402
from language_bench import SGD_PROGRAM, machine_line  # noqa: E402

from gradviz.program.interpreter import run as interpreter  # noqa: E402
from gradviz.program.recording.inplace import InplaceLog  # noqa: E402
from gradviz.program.results.limits import DEFAULT_LIMITS  # noqa: E402
from gradviz.program.results.trace import RunOptions  # noqa: E402

INPLACE_LOOP = """x = torch.randn(64, requires_grad=True)
for i in range(500):
    y = torch.exp(x * 0.01)
    y += 1
    z = y.detach()
    loss = (y * z).sum()
"""

# a busy shared host can take longer than a page's 15 s; the bench measures, it does not cap
OPTIONS = RunOptions(classic=False, limits=replace(DEFAULT_LIMITS, max_seconds=300.0))
CASES = {"sgd 1,000 steps": SGD_PROGRAM, "in-place loop, 500 passes": INPLACE_LOOP}


def run(source: str, noting: bool) -> float:
    read, watches = interpreter.read_tensors, InplaceLog.__dict__["watches"]
    if not noting:
        interpreter.read_tensors = lambda *a: ()
        InplaceLog.watches = staticmethod(lambda label, args: False)
    try:
        start = time.perf_counter()
        trace = interpreter.run_program(source, OPTIONS)
        took = time.perf_counter() - start
    finally:
        interpreter.read_tensors, InplaceLog.watches = read, watches
    assert trace.error is None, trace.error
    return took


NOTING = (
    "read_tensors",
    "bound_now",
    "watches",
    "before",
    "after",
    "cut_edges",
)  # user_of runs inside read_tensors
NOTING_FILES = ("sources.py", "inplace.py", "state.py", "cuts.py")


def profile_share(source: str) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    run(source, True)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = max(t for (_, _, _), (_, _, _, t, _) in stats.stats.items())
    ours = sum(
        ct
        for (path, _, name), (_, _, _, ct, _) in stats.stats.items()
        if name in NOTING and path.endswith(NOTING_FILES)
    )
    return f"{ours:.3f} s of {total:.3f} s ({100 * ours / total:.1f}%)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(machine_line())
    if args.profile:
        for case, source in CASES.items():
            print(f"- {case}: noting took {profile_share(source)} (cProfile, cumulative)")
        return 0
    print("| case | noting on (median) | off (median) | ratio |")
    print("|---|---:|---:|---:|")
    for case, source in CASES.items():
        run(source, True)  # warm up
        on, off = [], []
        for _ in range(args.repeats):
            on.append(run(source, True))
            off.append(run(source, False))
        a, b = statistics.median(on), statistics.median(off)
        print(f"| {case} | {a * 1000:,.1f} ms | {b * 1000:,.1f} ms | {a / b:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
