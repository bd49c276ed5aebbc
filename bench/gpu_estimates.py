"""GPU estimates from spec sheets beside this host's CPU, measured: the tables of
docs/BENCHMARKS.md ("Speed page: GPU estimates from spec sheets").

    python bench/gpu_estimates.py [--gpus T4 L4 H100] [--repeats 3]

Measures the CPU (gradviz.speed.measure) at the Speed page's sweep sizes of the lesson's loop
(10 iterations per call) and of float32 matrix products, then prints, per size, the CPU's
median beside each GPU's estimate (gradviz.speed.estimate: data already on the GPU, and with
the copy from the CPU first), the crossovers, and the CIFAR-10 tutorial step. The lesson's full
size (100x1000x1000, 1000 iterations) is too long to time here: its CPU figure is scaled from
the largest loop size measured, and says so. Every GPU figure is an estimate from spec sheet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from gradviz.speed import estimate, gpus, measure, timing, workloads  # noqa: E402
from gradviz.util.format import fmt_seconds  # noqa: E402

SIZES = {"elementwise": (1_000, 10_000, 100_000, 1_000_000, 4_000_000), "matmul": (128, 512, 2048)}


def _row(label: str, cpu: str, jobs_gpu: list[tuple[gpus.GPU, workloads.TimingJob]]) -> str:
    cells = [label, cpu]
    for gpu, job in jobs_gpu:
        e = estimate.estimate(gpu, job)
        cells.append(f"{fmt_seconds(e.run_s)} / {fmt_seconds(e.total_s)}")
    return "| " + " | ".join(cells) + " |"


def _workload_table(workload: str, chosen: list[gpus.GPU], repeats: int) -> list[timing.Point]:
    jobs = workloads.sweep_jobs(workload, SIZES[workload], ["cpu"])
    points = [
        e for e in measure.sweep(jobs, repeats=repeats, warmup=1) if isinstance(e, timing.Point)
    ]
    spec = workloads.WORKLOADS[workload]
    head = ["size", "CPU, this host (measured median)"]
    head += [f"{g.key}: on GPU / with copy (estimate)" for g in chosen]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for p in points:
        label = f"{spec.describe_size(p.size)}, {p.iterations} it."
        print(_row(label, fmt_seconds(p.median_s), [(g, p.job) for g in chosen]))
    if workload == "elementwise" and points:
        full = workloads.TimingJob(
            workload, workloads.LESSON_ELEMENTS, "cpu", "float32", workloads.LESSON_ITERATIONS
        )
        cpu = timing.estimate_seconds(full, points[-1])
        label = f"{spec.describe_size(full.size)}, {full.iterations} it. (the lesson's full size)"
        print(
            _row(
                label,
                f"{fmt_seconds(cpu)} (scaled from the largest size measured)",
                [(g, full) for g in chosen],
            )
        )
    return points


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", nargs="+", default=["T4", "L4", "H100"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    chosen = [gpus.find(name) for name in args.gpus]
    threads = measure.use_available_cpus()
    print(
        f"CPU threads: {threads}. GPU columns: {estimate.LABEL}, 'data on the GPU / with the copy'.\n"
    )
    for workload in SIZES:
        print(f"{workloads.WORKLOADS[workload].title} (float32):\n")
        points = _workload_table(workload, chosen, args.repeats)
        for gpu in chosen:
            found = [estimate.crossover_with(gpu, points, c) for c in (False, True)]
            print(
                f"\n- {gpu.label}: crossover from {found[0]} (on the GPU), {found[1]} (with the copy)"
            )
        print()
    print("CIFAR-10 tutorial network, one training step (estimate from spec sheet):\n")
    for gpu in chosen:
        for batch in estimate.CIFAR_BATCHES:
            e = estimate.estimate_step(gpu, batch)
            print(
                f"- {gpu.label}, batch {batch}: {fmt_seconds(e.total_s)} with the copy, "
                f"{batch / e.total_s:,.0f} images/s, bound by {e.bound}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
