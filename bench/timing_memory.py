"""How much a CPU timing worker grows, against the memory its tensors need.

Each size is timed as the Speed page times it (gradviz.speed.measure.run_job: warm-up and
five repeats) in a process forked from one that has imported what the forkserver imports
(gradviz.program.preload, so torch), as the page's worker is. A thread samples the worker's
proportional set size every 3 ms; the table gives its peak growth over the worker's start,
the tensors' own peak (Job.memory_needed), their ratio, and what gradviz.speed.memory
expects (expected_growth, the public host's admission rule).

    python bench/timing_memory.py                 # the default sizes, both workloads
    python bench/timing_memory.py --sizes elementwise=4000000,5262581 matmul=2048

Run it with the Python whose torch you host (e.g. a CPU-only venv): the heap that glibc keeps
for reuse after freeing big tensors is most of the difference between the columns.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _app import machine, pss  # noqa: E402

DEFAULT_SIZES = {
    "elementwise": [1_000_000, 2_000_000, 4_000_000, 4_000_037, 5_000_000, 5_262_581, 8_000_000],
    "matmul": [512, 1024, 2048, 2600],
}


def measure_growth(workload: str, size: int) -> int:
    """In this (forked) process: time one job as the page does; the peak PSS growth."""
    import torch

    from gradviz.speed import measure, workloads

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    base = pss(os.getpid())
    peak = [base]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], pss(os.getpid()))
            time.sleep(0.003)

    sampler = threading.Thread(target=sample)
    sampler.start()
    job = workloads.TimingJob(
        workload, size, "cpu", "float32", workloads.SWEEP_ITERATIONS[workload]
    )
    try:
        measure.run_job(job, repeats=5, warmup=1)
    finally:
        done.set()
        sampler.join()
    return peak[0] - base


def in_child(workload: str, size: int) -> int:
    """measure_growth in a forked child; its answer through a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 0
        try:
            os.write(write, str(measure_growth(workload, size)).encode())
        except BaseException:  # noqa: BLE001 - report any failure as -1 and leave
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read) as f:
        answer = f.read()
    os.waitpid(pid, 0)
    return int(answer) if answer else -1


def parse_sizes(items: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for item in items:
        workload, _, sizes = item.partition("=")
        out[workload] = [int(s) for s in sizes.split(",") if s]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=[], help="workload=size,size,...")
    args = parser.parse_args(argv)
    sizes = parse_sizes(args.sizes) or DEFAULT_SIZES

    import torch

    import gradviz.program.preload  # noqa: F401 - what the forkserver preloads
    from gradviz.speed import memory, workloads
    from gradviz.util.settings import PUBLIC

    print(
        f"{machine()}; torch {torch.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print("| workload | size | tensors' peak | worker's peak growth | ratio | expected_growth |")
    print("|---|---:|---:|---:|---:|---:|")
    for workload, values in sizes.items():
        for size in values:
            job = workloads.TimingJob(workload, size)
            need = job.memory_needed()
            growth = in_child(workload, size)
            print(
                f"| {workload} | {size:,} | {need / 2**20:.0f} MB | {growth / 2**20:.0f} MB "
                f"| {growth / need:.2f}x | {memory.expected_growth(job) / 2**20:.0f} MB |",
                flush=True,
            )
    cap = PUBLIC.timing_memory
    print(
        f"\nPublic cap on a timing worker's growth: {cap / 1e6:.0f} MB (util.settings.PUBLIC.timing_memory)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
