"""Starting Graphviz's `dot` with its rlimits from a big process: a Python preexec_fn (Python
must fork() the whole process) against gradviz.graph.render's `/bin/sh` + `ulimit` wrapper
(Python can use vfork), side by side in one process holding `--mb` MB of touched memory,
like the Streamlit server after many sessions.

    python bench/dot_spawn.py [--mb 250] [--runs 20] [--repeats 2]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gradviz.graph.render import PUBLIC_LIMITS, limited_command  # noqa: E402

DOT = b"digraph { a -> b -> c; a -> c }"


def preexec() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (PUBLIC_LIMITS.memory_bytes, resource.RLIM_INFINITY))
    resource.setrlimit(
        resource.RLIMIT_CPU, (PUBLIC_LIMITS.cpu_seconds, PUBLIC_LIMITS.cpu_seconds + 1)
    )


def timed(cmd: list[str], runs: int, **kw) -> tuple[float, float]:
    """(wall ms, this process's CPU ms) per layout."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(runs):
        subprocess.run(cmd, input=DOT, capture_output=True, check=True, **kw)
    return (time.perf_counter() - wall) * 1000 / runs, (time.process_time() - cpu) * 1000 / runs


def report(how: str, times: tuple[float, float]) -> None:
    print(f"{how:<22} wall {times[0]:.1f} ms, parent CPU {times[1]:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=250)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    ballast = [bytearray(1 << 20) for _ in range(args.mb)]
    for block in ballast:
        block[::4096] = b"x" * len(block[::4096])  # touched: real pages to copy on fork
    dot = [shutil.which("dot") or "dot", "-Tsvg"]
    wrapped = limited_command(dot, PUBLIC_LIMITS.memory_bytes, PUBLIC_LIMITS.cpu_seconds)
    for _ in range(args.repeats):
        report("preexec_fn (fork)", timed(dot, args.runs, preexec_fn=preexec))
        report("sh + ulimit (vfork)", timed(wrapped, args.runs))
        report("no limits (vfork)", timed(dot, args.runs))


if __name__ == "__main__":
    main()
