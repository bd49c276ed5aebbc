"""What recording each backward call costs (gradviz.program.recording.steps): the same programs run
with the watch on and off, alternating, in one process. Prints median times and the ratio.

    python bench/backward_calls.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.recording import steps as callwatch
from gradviz.program.results.limits import Limits
from gradviz.program.results.trace import RunOptions

SGD_300 = (
    PRESETS_BY_KEY["sgd_loop"]
    .source.replace("range(3)", "range(300)")
    .replace("    print(step, loss.item(), w.grad)\n", "")
)
NET = PRESETS_BY_KEY["tutorial_net"].source
NET_20 = NET.replace("outputs = net(images)\n", "").replace(
    "loss = F.cross_entropy(outputs / temperature, labels)\n",
    "opt = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)\n"
    "for i in range(5):\n"
    "    opt.zero_grad()\n"
    "    loss = F.cross_entropy(net(images) / temperature, labels)\n"
    "    loss.backward()\n"
    "    opt.step()\n",
)
CASES = {
    "sgd_loop, 300 passes": SGD_300,
    "tutorial Net, 5 SGD steps on the CIFAR-10 sample": NET_20,
}
ON = (callwatch.CallWatch.backward, callwatch.CallWatch.before_step, callwatch.CallWatch.after_step)


def watch(enabled: bool) -> None:
    if enabled:
        cw = callwatch.CallWatch
        cw.backward, cw.before_step, cw.after_step = ON
    else:
        callwatch.CallWatch.backward = lambda self, tensor, record: None
        callwatch.CallWatch.before_step = lambda self, params: None
        callwatch.CallWatch.after_step = lambda self, params, before, optimizer, line: None


def seconds(source: str) -> float:
    started = time.perf_counter()
    trace = run_program(source, RunOptions(classic=False, limits=Limits(max_seconds=600.0)))
    assert trace.error is None, trace.error
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("| case | watch on (median) | watch off (median) | on / off |")
    print("|---|---:|---:|---:|")
    for name, source in CASES.items():
        seconds(source)  # warm
        on, off = [], []
        for _ in range(args.repeats):
            watch(True)
            on.append(seconds(source))
            watch(False)
            off.append(seconds(source))
        watch(True)
        a, b = statistics.median(on), statistics.median(off)
        print(f"| {name} | {a * 1000:,.0f} ms | {b * 1000:,.0f} ms | {a / b:.2f} |")


if __name__ == "__main__":
    main()
