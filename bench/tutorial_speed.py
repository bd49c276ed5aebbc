"""Tutorial programs timed side by side, in one run: plain Python with PyTorch executing
the file, against gradviz's interpreter (run_program in this process), each on one thread
with the same seed. The d2l linear regression (3 epochs of 100 minibatches), the makemore
MLP (100 steps) and the same MLP trained for 1,000 steps as in the zero-to-hero lecture.

Both sides print what the program prints; the outputs are checked equal, and the ratio
gradviz / Python is printed for each (the best of `--repeat` runs of each side).

    PYTHONPATH=src:. python bench/tutorial_speed.py [--repeat 1]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import random
import time
from pathlib import Path

import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions

TUTORIALS = Path(__file__).resolve().parents[1] / "tests" / "tutorials"
SEED = 0
# the caps of every run; only the clock is widened, so that a slow machine still finishes
LIMITS = dataclasses.replace(DEFAULT_LIMITS, max_seconds=600.0)


def programs() -> list[tuple[str, str]]:
    linreg = (TUTORIALS / "d2l_linear_regression.py").read_text(encoding="utf-8")
    mlp = (TUTORIALS / "makemore_mlp.py").read_text(encoding="utf-8")
    assert mlp.count("for i in range(100):") == 1
    longer = mlp.replace("for i in range(100):", "for i in range(1000):")
    return [
        ("d2l linear regression, 3 epochs", linreg),
        ("makemore MLP, 100 steps", mlp),
        ("embedding MLP, 1,000 steps", longer),
    ]


def python_side(source: str) -> tuple[float, list[str]]:
    out = io.StringIO()
    outside = random.getstate()
    with torch.random.fork_rng(), contextlib.redirect_stdout(out):
        torch.manual_seed(SEED)
        random.seed(SEED)
        started = time.perf_counter()
        exec(compile(source, "<tutorial>", "exec"), {"__name__": "__main__"})
        took = time.perf_counter() - started
    random.setstate(outside)
    return took, out.getvalue().splitlines()


def gradviz_side(source: str) -> tuple[float, list[str]]:
    options = RunOptions(seed=SEED, simulate_cuda=False, classic=False, limits=LIMITS)
    started = time.perf_counter()
    trace = run_program(source, options)
    took = time.perf_counter() - started
    if trace.error is not None:
        raise SystemExit(f"gradviz refused the program: {trace.error}")
    return took, "\n".join(trace.stdout).splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, best of {args.repeat}")
    print(f"{'program':34} {'python s':>9} {'gradviz s':>10} {'ratio':>7}  same output")
    for label, source in programs():
        py_runs = [python_side(source) for _ in range(args.repeat)]
        gv_runs = [gradviz_side(source) for _ in range(args.repeat)]
        py, gv = min(t for t, _ in py_runs), min(t for t, _ in gv_runs)
        same = py_runs[0][1] == gv_runs[0][1]
        print(f"{label:34} {py:9.2f} {gv:10.2f} {gv / py:7.1f}x  {same}", flush=True)


if __name__ == "__main__":
    main()
