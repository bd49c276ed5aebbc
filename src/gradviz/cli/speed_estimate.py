"""`python -m gradviz speed --estimate-gpu NAME`: a GPU's time for the Speed page's workloads,
estimated from its maker's spec sheet (gradviz.speed.estimate), beside this host's CPU.

    python -m gradviz speed --estimate-gpu H100 --json
    python -m gradviz speed --estimate-gpu t4 --workload matmul --size 4096 --dtype float16
    python -m gradviz speed --estimate-gpu a100 --sweep 1000 100000 10000000   # CPU measured

The CPU side is measured here: one quick run scaled by the workload's cost, or, with --sweep,
each size (the crossover is then among the sizes measured). --no-cpu skips it (no crossover).
Every GPU figure printed is labelled an estimate from spec sheet. Exit codes: 0 success,
1 no estimate (a figure the maker does not publish) or a refused CPU run, 2 an unknown GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace

from gradviz.speed import estimate, gpus, measure, timing, workloads
from gradviz.util.format import fmt_seconds


def _gpu_dict(gpu: gpus.GPU) -> dict:
    figures = {name: getattr(gpu, name) for name in gpus.FIGURES}
    return {
        "key": gpu.key,
        "label": gpu.label,
        "backend": gpu.backend,
        **figures,
        "host_link": gpu.link.describe(),
        "host_link_gbps_one_way": gpu.link.theoretical_gbps(),
        "halved_from_sparse": list(gpu.halved),
        "derived": list(gpu.derived),
        "source": gpu.source,
        "source_title": gpu.source_title,
        "as_of": gpu.as_of,
        "checked": gpu.checked,
        "note": gpu.note,
    }


def _estimate_dict(e: estimate.Estimate) -> dict:
    return {
        "run_s": e.run_s,
        "copy_s": e.copy_s,
        "total_s": e.total_s,
        "bound": e.bound,
        "compute_s": e.compute_s,
        "memory_s": e.memory_s,
        "launch_s": e.launch_s,
        "flops": e.flops,
        "bytes_moved": e.bytes_moved,
        "kernels": e.kernels,
        "copy_bytes": e.copy_bytes,
    }


def _cpu_points(
    args: argparse.Namespace, job: workloads.TimingJob
) -> tuple[list, str, dict | None]:
    """This CPU: (points for the crossover, how they are known, the quick run or None)."""
    if args.no_cpu:
        return [], "", None
    if args.sweep:
        jobs = workloads.sweep_jobs(job.workload, args.sweep, ["cpu"], job.dtype)
        points = [
            e
            for e in measure.sweep(jobs, repeats=args.repeats, warmup=1)
            if isinstance(e, timing.Point)
        ]
        return points, "measured", None
    cal = measure.run_job(
        workloads.calibration_job(job.workload, "cpu", job.dtype), repeats=args.repeats
    )
    its = workloads.SWEEP_ITERATIONS[job.workload]
    points = estimate.scaled_cpu_points(cal, estimate.grid(job.workload), its)
    return points, f"scaled from a quick run at {cal.job.describe()}", asdict(cal)


def _cifar_steps(gpu: gpus.GPU) -> list[dict] | dict:
    """The CIFAR-10 tutorial network's training step at the tutorial's and the fast preset's
    batch sizes, or {"error": why} where the maker gives no figure for it."""
    try:
        steps = [(b, estimate.estimate_step(gpu, b)) for b in estimate.CIFAR_BATCHES]
    except estimate.NoEstimate as exc:
        return {"error": str(exc)}
    return [{"batch": b, **_estimate_dict(e), "images_per_s": b / e.total_s} for b, e in steps]


def result(args: argparse.Namespace, gpu: gpus.GPU, job: workloads.TimingJob) -> dict:
    """Everything the command reports, as plain data. Raises NoEstimate or ValueError."""
    e = estimate.estimate(gpu, job)
    cpu, how, cal = _cpu_points(args, job)
    sizes = []
    for p in cpu if how == "measured" else []:
        one = estimate.estimate(gpu, replace(p.job, device="cpu"))
        sizes.append(
            {
                "size": p.size,
                "cpu_s": p.median_s,
                "gpu_s": one.run_s,
                "gpu_with_copy_s": one.total_s,
            }
        )
    cpu_s = None
    if cal is not None:
        cpu_s = timing.estimate_seconds(job, timing.Point(**cal))
    return {
        "label": estimate.LABEL,
        "gpu": _gpu_dict(gpu),
        "assumptions": [asdict(a) for a in estimate.ASSUMPTIONS],
        "job": asdict(job),
        "estimate": _estimate_dict(e),
        "cpu": {"job_s": cpu_s, "how": how, "quick_run": cal, "points": sizes},
        "crossover": {
            "without_copy": estimate.crossover_with(gpu, cpu, with_copy=False) if cpu else None,
            "with_copy": estimate.crossover_with(gpu, cpu, with_copy=True) if cpu else None,
            "against": f"this CPU, {how}" if cpu else "no CPU measured (--no-cpu)",
        },
        "cifar_step": _cifar_steps(gpu),
    }


def _print(out: dict, gpu: gpus.GPU, job: workloads.TimingJob) -> None:
    e, label = out["estimate"], estimate.LABEL
    print(f"{gpu.label}: {label} (figures: {gpu.source_title}, {gpu.as_of}, {gpu.source})")
    print(f"  {job.spec.describe_size(job.size)} {job.dtype}, {job.iterations} iteration(s):")
    print(
        f"    GPU, data already on it:  {fmt_seconds(e['run_s']):>12}  bound by {e['bound']}  ({label})"
    )
    print(f"    GPU, copy from CPU first: {fmt_seconds(e['total_s']):>12}  ({label})")
    cpu = out["cpu"]
    if cpu["job_s"] is not None:
        print(f"    CPU, this host:           {fmt_seconds(cpu['job_s']):>12}  ({cpu['how']})")
    for p in cpu["points"]:
        print(
            f"    size {p['size']:>12,}: CPU {fmt_seconds(p['cpu_s'])} (measured), GPU "
            f"{fmt_seconds(p['gpu_s'])}, with copy {fmt_seconds(p['gpu_with_copy_s'])} ({label})"
        )
    x = out["crossover"]
    if cpu["how"]:

        def size(n):
            return "none among the sizes" if n is None else f"{n:,}"

        print(
            f"  crossover against {x['against']}: from {size(x['without_copy'])} "
            f"(data on the GPU), from {size(x['with_copy'])} (with the copy)"
        )
    steps = out["cifar_step"]
    for step in steps if isinstance(steps, list) else []:
        print(
            f"  CIFAR-10 tutorial step, batch {step['batch']}: {fmt_seconds(step['total_s'])} "
            f"with the copy, {step['images_per_s']:,.0f} images/s, bound by {step['bound']} ({label})"
        )
    print("  assumptions: " + "; ".join(f"{a.name}: {a.value}" for a in estimate.ASSUMPTIONS))


def run(args: argparse.Namespace) -> int:
    try:
        gpu = gpus.find(args.estimate_gpu)
    except gpus.UnknownGPU as exc:
        print(
            json.dumps({"error": str(exc)}) if args.json else f"error: {exc}",
            file=sys.stdout if args.json else sys.stderr,
        )
        return 2
    size = (
        args.size
        if args.size is not None
        else (1_000_000 if args.workload == "elementwise" else 1024)
    )
    iterations = args.iterations if args.workload == "elementwise" else 1
    job = workloads.TimingJob(args.workload, size, "cpu", args.dtype, iterations)
    threads = None if args.no_cpu else measure.use_available_cpus()
    try:
        out = result(args, gpu, job)
    except ValueError as exc:  # NoEstimate, an invalid job, a refused CPU size
        print(
            json.dumps({"error": str(exc)}) if args.json else f"error: {exc}",
            file=sys.stdout if args.json else sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps({"cpu_threads": threads, **out}))
    else:
        _print(out, gpu, job)
    return 0
