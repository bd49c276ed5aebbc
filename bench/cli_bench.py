"""The CLI on the lesson against a plain torch (+ torchviz) script doing the same, side by side.

Each pair runs a plain script first, then the gradviz command, alternating, in fresh
processes; the figures are medians over the pairs and ratios gradviz / plain:
  render:            python -m gradviz render examples/lesson.py -o g.svg --backward y
                     vs torch + torchviz: the lesson, y.backward(), make_dot(...).render(svg)
  render --no-sandbox (the in-process path, for trusted files)
  run:               python -m gradviz run examples/lesson.py --backward y
                     vs torch: the lesson, y.backward(), print the tensors and x.grad
  run --no-sandbox
Wall time is launch to exit. Memory is the peak, over the run, of the summed proportional set
size (PSS) of the command's whole process tree (the sandboxed path has a forkserver and a
worker besides the CLI's own process), sampled every 10 ms; the peak resident size of the
largest single process is printed too, and each side's fastest wall time (on a shared host,
the run least slowed by others' work).

    python bench/cli_bench.py [--pairs 5] [--src DIR]   (DIR: the gradviz src/ to time)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _app import descendants, machine, pss  # noqa: E402

LESSON = ROOT / "examples" / "lesson.py"

PLAIN_RENDER = """
import sys
import torch
from torchviz import make_dot
x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
y.backward()
make_dot(y, params={"x": x}).render(sys.argv[1], format="svg", cleanup=True)
"""

PLAIN_RUN = """
import torch
x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
y.backward()
for name, t in (("x", x), ("a", a), ("b", b), ("c", c), ("y", y)):
    print(name, tuple(t.shape), t.dtype, t.detach(), t.grad)
"""


def rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(cmd: list[str], env: dict) -> tuple[float, int, int]:
    """(wall seconds, peak summed PSS of the tree, peak RSS of its largest process)."""
    peak = {"pss": 0, "rss": 0}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids = descendants(proc.pid)
            peak["pss"] = max(peak["pss"], sum(pss(p) for p in pids))
            peak["rss"] = max(peak["rss"], max((rss(p) for p in pids), default=0))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()}")
    return wall, peak["pss"], peak["rss"]


def cases(python: str, out: Path) -> list[tuple[str, list[str], list[str]]]:
    gv = [python, "-m", "gradviz"]
    plain_render = [python, "-c", PLAIN_RENDER, str(out / "plain")]
    plain_run = [python, "-c", PLAIN_RUN]
    svg = str(out / "g.svg")
    render = [*gv, "render", str(LESSON), "-o", svg, "--backward", "y"]
    run = [*gv, "run", str(LESSON), "--backward", "y"]
    return [
        ("render", render, plain_render),
        ("render --no-sandbox", [*render, "--no-sandbox"], plain_render),
        ("run", run, plain_run),
        ("run --no-sandbox", [*run, "--no-sandbox"], plain_run),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--src", default=str(ROOT / "src"), help="the gradviz src/ folder to time")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(Path(args.src).resolve())}
    env.pop("GRADVIZ_SANDBOX", None)
    print(f"# {date.today()} · {machine()} · Python {platform.python_version()}")
    print(f"# gradviz from {args.src}; {args.pairs} pairs, alternated; medians")
    with tempfile.TemporaryDirectory() as tmp:
        for name, ours, theirs in cases(args.python, Path(tmp)):
            measure(ours, env), measure(theirs, env)  # warm the page cache for both
            a, b = [], []
            for _ in range(args.pairs):
                b.append(measure(theirs, env))
                a.append(measure(ours, env))
            wa, wb = (statistics.median(x[0] for x in s) for s in (a, b))
            pa, pb = (statistics.median(x[1] for x in s) for s in (a, b))
            ra, rb = (statistics.median(x[2] for x in s) for s in (a, b))
            fa, fb = (min(x[0] for x in s) for s in (a, b))
            print(
                f"{name:20s} wall {wa:5.2f} s vs plain {wb:5.2f} s: {wa / wb:4.2f}x   "
                f"peak PSS {pa / 2**20:5.0f} MB vs {pb / 2**20:5.0f} MB: {pa / pb:4.2f}x   "
                f"(largest process RSS {ra / 2**20:.0f} vs {rb / 2**20:.0f} MB; "
                f"fastest wall {fa:.2f} vs {fb:.2f} s: {fa / fb:4.2f}x)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
