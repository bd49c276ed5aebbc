"""`python -m gradviz speed`: the Speed page's timings from a terminal.

    python -m gradviz speed                       # the lesson's loop, naive vs correct, on the CPU
    python -m gradviz speed --workload matmul --sweep 256 512 1024 --device cuda --json
    python -m gradviz speed --estimate-gpu H100 --json   # a GPU from its spec sheet, any host

Exit codes: 0 success, 1 a refused or failed run (reported), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from gradviz.cli import speed_estimate
from gradviz.speed import gpus, measure, timing, workloads


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "speed",
        help="time the lesson's workloads the naive way and correctly (CPU, or GPU if present)",
        description="Time the lesson's workloads: naive vs correct, or a size sweep.",
    )
    p.add_argument("--workload", choices=sorted(workloads.WORKLOADS), default="elementwise")
    p.add_argument("--size", type=int, default=None, help="default 1000000 (loop), 1024 (matmul)")
    p.add_argument("--iterations", type=int, default=10, help="loop iterations (the lesson: 1000)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--dtype", choices=list(workloads.DTYPES), default="float32")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sweep", type=int, nargs="+", metavar="SIZE", help="sweep these sizes")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--estimate-gpu",
        metavar="GPU",
        help="estimate the workload on this GPU from its maker's spec sheet instead of timing "
        f"a device ({', '.join(g.key for g in gpus.GPUS)}; any case, aliases such as H100, "
        "A100, 4090; docs/gpus.md); the CPU is measured beside it",
    )
    p.add_argument(
        "--no-cpu", action="store_true", help="with --estimate-gpu: do not measure the CPU"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.repeats < 1:
        print("--repeats must be at least 1", file=sys.stderr)
        return 2
    if args.estimate_gpu is not None:
        return speed_estimate.run(args)
    threads = measure.use_available_cpus()
    try:
        result = _sweep(args) if args.sweep else _compare(args)
    except ValueError as exc:  # invalid job or SizeTooLarge: a plain message
        if args.json:
            print(json.dumps({"error": str(exc)}))
        else:
            print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"cpu_threads": threads, **result}))
    return 0


def _compare(args: argparse.Namespace) -> dict:
    size = args.size
    if size is None:
        size = 1_000_000 if args.workload == "elementwise" else 1024
    iterations = args.iterations if args.workload == "elementwise" else 1
    job = workloads.TimingJob(args.workload, size, args.device, args.dtype, iterations)
    c = measure.compare_naive_and_correct(job, repeats=args.repeats, warmup=1)
    if not args.json:
        print(timing.format_comparison(c))
    return {
        "job": asdict(c.job),
        "naive": asdict(c.naive),
        "correct": {
            "median_s": c.timing.median_s,
            "iqr_s": c.timing.iqr_s,
            "repeats": c.timing.repeats,
        },
    }


def _sweep(args: argparse.Namespace) -> dict:
    jobs = workloads.sweep_jobs(args.workload, args.sweep, [args.device], args.dtype)
    points, skipped = [], []
    for event in measure.sweep(jobs, repeats=args.repeats, warmup=1):
        if isinstance(event, timing.Point):
            points.append(asdict(event))
            if not args.json:
                print(timing.format_point(event), flush=True)
        elif isinstance(event, timing.Skipped):
            skipped.append({"job": asdict(event.job), "reason": event.reason})
            if not args.json:
                print(f"  skipped {event.job.describe()}: {event.reason}", flush=True)
    return {"points": points, "skipped": skipped}
