"""Record GPU timings for the Speed page: writes docs/gpu_speed_reference.json.

Run on a machine with an NVIDIA GPU, from the repository root:

    python bench/speed_gpu.py

It times, with gradviz.speed.timing (warm-up, synchronize, repeats, median and IQR):
  1. the lesson's loop the lesson's naive way and correctly, at the page's default size and
     at the lesson's full size (100x1000x1000, 1000 iterations), on the GPU. This runs first
     so the naive figure pays the first CUDA call's start-up, as it did in the lesson;
  2. a size sweep of both workloads for each dtype, on the GPU and on this machine's CPU.
The file records device name, torch and CUDA versions, date and this command; the page
shows it on hosts without a GPU. Only a real GPU run may write the reference file.

`--device cpu --out OTHER.json` runs the same plan on the CPU (to try the script on a host
without a GPU); its output is not a reference and the page's loader rejects it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

from gradviz.speed import measure, memory, timing, timing_reference, workloads  # noqa: E402

QUICK_SIZES = {"elementwise": (1_000, 100_000, 1_000_000), "matmul": (64, 256, 1024)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--out", type=Path, default=None, help="default: the reference file")
    parser.add_argument(
        "--dtypes", nargs="+", default=list(workloads.DTYPES), choices=workloads.DTYPES
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-step-s", type=float, default=30.0)
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU side of the sweep")
    parser.add_argument("--no-lesson-size", action="store_true", help="skip the lesson's full size")
    # The flag's first name, in commands recorded before the rename (docs/BENCHMARKS.md).
    parser.add_argument(
        "--no-seed-size", dest="no_lesson_size", action="store_true", help=argparse.SUPPRESS
    )
    parser.add_argument("--quick", action="store_true", help="three small sizes per workload")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = "python bench/speed_gpu.py" + "".join(
        " " + shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)
    )
    out = args.out or timing_reference.REFERENCE_PATH
    if args.device == "cuda" and not torch.cuda.is_available():
        print(
            "No CUDA GPU on this host: this command records GPU figures and must run on a "
            "machine with an NVIDIA GPU. (--device cpu --out OTHER.json tries it on the CPU.)",
            file=sys.stderr,
        )
        return 2
    if args.device == "cpu" and out.resolve() == timing_reference.REFERENCE_PATH.resolve():
        print("--device cpu must not write the GPU reference file; pass --out.", file=sys.stderr)
        return 2

    threads = measure.use_available_cpus()
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU only"
    print(f"device: {device_name}; torch {torch.__version__}; CPU threads {threads}", flush=True)

    comparisons = []
    print("The lesson's loop, naive vs correct:", flush=True)
    lesson_jobs = [workloads.TimingJob("elementwise", 1_000_000, args.device, "float32", 10)]
    if not args.no_lesson_size:
        lesson_jobs.append(
            workloads.TimingJob(
                "elementwise",
                workloads.LESSON_ELEMENTS,
                args.device,
                "float32",
                workloads.LESSON_ITERATIONS,
            )
        )
    for job in lesson_jobs:
        try:
            comparison = measure.compare_naive_and_correct(job, repeats=3, warmup=1)
        except memory.SizeTooLarge as exc:
            print(f"  skipped: {exc}", flush=True)
            continue
        print(timing.format_comparison(comparison), flush=True)
        comparisons.append(comparison)

    devices = [args.device] + ([] if args.no_cpu or args.device == "cpu" else ["cpu"])
    points = []
    for workload in workloads.WORKLOADS.values():
        sizes = QUICK_SIZES[workload.key] if args.quick else workload.sweep_sizes
        for dtype in args.dtypes:
            print(f"Sweep {workload.key} {dtype}:", flush=True)
            jobs = workloads.sweep_jobs(workload.key, sizes, devices, dtype)
            for event in measure.sweep(
                jobs, repeats=args.repeats, warmup=1, max_step_s=args.max_step_s
            ):
                if isinstance(event, timing.Point):
                    print(timing.format_point(event), flush=True)
                    points.append(event)
                elif isinstance(event, timing.Skipped):
                    print(f"  skipped {event.job.describe()}: {event.reason}", flush=True)

    data = measure.reference_dict(
        device=device_name,
        command=command,
        points=points,
        comparisons=comparisons,
        note=f"CPU side: {threads} threads on the same machine.",
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(points)} points, {len(comparisons)} comparisons)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
