"""What one loop pass of a single statement costs in gradviz's interpreter against plain Python:
the cost a tutorial pays per line, split by the kind of line.

Each case is a loop of `--passes` passes over one statement (a plain-number update, a tensor
operator, a tensor attribute read, a torch function call, a tensor method call, a call of the
program's own function). Both sides run the same text, one thread, timed by CPU time, best
of `--repeat`; the table gives microseconds per pass on each side and gradviz's extra cost per
pass (what the interpreter's checks, caps and recording add to the same PyTorch work).

    PYTHONPATH=src python bench/op_overhead.py [--passes 20000] [--repeat 3]

Compare two trees side by side in one run with PYTHONPATH pointing at each in turn.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions

SETUP = "import torch\nx = torch.ones(3, requires_grad=True)\nw = torch.ones(3)\n"
CASES = {
    "plain numbers: s = s + i": "s = 0\nfor i in range(N):\n    s = s + i\n",
    "tensor operator: y = w + w": SETUP + "for i in range(N):\n    y = w + w\n",
    "tensor operator, grad: y = x * 2": SETUP + "for i in range(N):\n    y = x * 2\n",
    "attribute: d = w.data": SETUP + "for i in range(N):\n    d = w.data\n",
    "torch function: y = torch.tanh(w)": SETUP + "for i in range(N):\n    y = torch.tanh(w)\n",
    "tensor method: y = w.sum()": SETUP + "for i in range(N):\n    y = w.sum()\n",
    "own function: y = f(w)": SETUP + "def f(t):\n    return t\nfor i in range(N):\n    y = f(w)\n",
}


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    limits = dataclasses.replace(
        DEFAULT_LIMITS,
        max_seconds=600.0,
        max_loop_iterations=10 * args.passes,
        max_steps=100 * args.passes,
        max_statements=10 * args.passes,
    )
    options = RunOptions(seed=0, simulate_cuda=False, classic=False, limits=limits)
    print(f"torch {torch.__version__}, 1 thread, {args.passes:,} passes, best of {args.repeat}")
    print("| statement | Python µs/pass | gradviz µs/pass | gradviz's extra µs/pass |")
    print("|---|---:|---:|---:|")
    for label, text in CASES.items():
        source = text.replace("N", str(args.passes))
        trace = run_program(source, options)  # warm, and checked to run
        if trace.error is not None:
            raise SystemExit(f"{label}: {trace.error.message}")
        gv = best(lambda s=source: run_program(s, options), args.repeat)
        # the bench's own program text, never a user's
        code = compile(source, "<case>", "exec")
        py = best(lambda c=code: exec(c, {}), args.repeat)
        n = args.passes
        print(
            f"| `{label}` | {py / n * 1e6:.2f} | {gv / n * 1e6:.2f} | {(gv - py) / n * 1e6:.2f} |"
        )


if __name__ == "__main__":
    main()
