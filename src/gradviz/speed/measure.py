"""The part of speed timing that runs torch: imported in job workers and by the CLI and bench
scripts, never by the Streamlit server (which uses gradviz.speed.workloads: the workloads'
cost model, jobs; gradviz.speed.timing: points, peaks; gradviz.speed.timing_reference: the
reference file). The job table names this module ("gradviz.speed.measure:point_job"): a
worker imports it before its limits apply.

Values that leave this module are the plain dataclasses of gradviz.speed.timing, made of Python
numbers and strings only: a worker's results are unpickled in the server, and a torch object
among them would import torch there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import torch

# torch.utils.benchmark imports cpp_extension, which warns "No CUDA runtime is found"
# on every CPU-only host. It is not about anything gradviz does: keep it quiet.
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

from torch.utils.benchmark import Measurement  # noqa: E402
from torch.utils.benchmark.utils.common import TaskSpec  # noqa: E402

from gradviz.speed.memory import SizeTooLarge, available_memory, check_memory  # noqa: E402
from gradviz.speed.timing import (  # noqa: E402
    Comparison,
    Point,
    Progress,
    Skipped,
    SweepEvent,
    Timing,
    estimate_seconds,
    naive_time,
)
from gradviz.speed.timing_reference import REFERENCE_SCHEMA  # noqa: E402
from gradviz.speed.workloads import DTYPES, TimingJob, elementwise_shape, validate_job  # noqa: E402
from gradviz.util.resources import available_cpus  # noqa: E402
from gradviz.util.timer import WallClock, no_sync, time_calls  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The workloads' kernels (their cost model is gradviz.speed.workloads.WORKLOADS).
# ---------------------------------------------------------------------------------------------


def _elementwise_inputs(size: int, device: str, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    shape = elementwise_shape(size)
    # Like the lesson: random numbers made on the CPU, then copied to the device.
    return tuple(torch.randn(shape, dtype=dtype).to(device) for _ in range(2))


def _elementwise_run(inputs: tuple[torch.Tensor, ...], iterations: int) -> torch.Tensor:
    tensor1, tensor2 = inputs
    result = tensor1 * tensor2
    for _ in range(iterations):
        result = result + tensor1 * tensor2
    return result


def _matmul_inputs(size: int, device: str, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    return tuple(torch.randn(size, size, dtype=dtype).to(device) for _ in range(2))


def _matmul_run(inputs: tuple[torch.Tensor, ...], iterations: int) -> torch.Tensor:
    a, b = inputs
    result = a @ b
    for _ in range(iterations - 1):
        result = a @ b
    return result


KERNELS: dict[str, tuple[Callable, Callable]] = {  # workload -> (make inputs, run)
    "elementwise": (_elementwise_inputs, _elementwise_run),
    "matmul": (_matmul_inputs, _matmul_run),
}


def torch_dtype(dtype_key: str) -> torch.dtype:
    """The torch.dtype of one of gradviz.speed.workloads.DTYPES."""
    return getattr(torch, DTYPES[dtype_key].dtype_name)


def make_inputs(job: TimingJob) -> tuple[torch.Tensor, ...]:
    """The job's input tensors, on its device."""
    return KERNELS[job.workload][0](job.size, job.device, torch_dtype(job.dtype))


def run_kernel(job: TimingJob, inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return KERNELS[job.workload][1](inputs, job.iterations)


def free_memory(device: str) -> int | None:
    """Bytes free for new tensors on `device`: torch knows a GPU's."""
    if device.startswith("cuda"):
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    return available_memory(device)


def validate_on_host(job: TimingJob) -> None:
    """validate_job, and a GPU job needs a GPU here."""
    validate_job(job)
    if job.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("This host has no CUDA GPU, so GPU timings cannot run live here.")


def use_available_cpus() -> int:
    """Set torch's intra-op threads to the CPUs this host gives us; return that number."""
    threads = available_cpus()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


@contextmanager
def matmul_precision(tf32: bool, device: str) -> Iterator[None]:
    """Allow TF32 in CUDA float32 matmuls (or forbid it) for the duration, then restore."""
    if not device.startswith("cuda"):
        yield
        return
    settings = torch.backends.cuda.matmul
    previous = settings.fp32_precision
    settings.fp32_precision = "tf32" if tf32 else "ieee"
    try:
        yield
    finally:
        settings.fp32_precision = previous


# ---------------------------------------------------------------------------------------------
# Timers.
# ---------------------------------------------------------------------------------------------


def synchronizer(device: str) -> Callable[[], None]:
    """What waits for queued work on `device`: torch.cuda.synchronize on a GPU, nothing on CPU."""
    if device.startswith("cuda"):
        index = torch.device(device).index
        return lambda: torch.cuda.synchronize(index)
    return no_sync


def measure(
    work: Callable[[], Any],
    *,
    repeats: int = 5,
    warmup: int = 1,
    clock: Callable[[], float] = time.perf_counter,
    synchronize: Callable[[], None] = no_sync,
    label: str = "work",
) -> Timing:
    """Time `work()` correctly: warm-up calls, then `repeats` calls each between synchronizes
    (gradviz.util.timer, the one timer).

    The device is synchronised before the clock starts (so earlier queued work is not counted)
    and before it stops (so this call's queued work is). torch.utils.benchmark's Measurement
    gives the median, interquartile range and its noise warning.
    """
    watch = WallClock(clock, synchronize)
    times = time_calls(work, repeats=repeats, warmup=warmup, stopwatch=watch)
    return timing_from_times(times, warmup=warmup, label=label)


def timing_from_times(times: Iterable[float], *, warmup: int, label: str = "work") -> Timing:
    """Median, interquartile range and noise flag of per-call times (torch.utils.benchmark)."""
    times = [float(t) for t in times]
    threads = torch.get_num_threads()
    m = Measurement(
        number_per_run=1,
        raw_times=times,
        task_spec=TaskSpec(stmt=label, setup="", num_threads=threads),
    )
    return Timing(  # Python numbers only: a Timing is unpickled in the server
        median_s=float(m.median),
        iqr_s=float(m.iqr),
        times_s=tuple(times),
        warmup=int(warmup),
        threads=int(threads),
        noisy=bool(m.has_warnings),
    )


# ---------------------------------------------------------------------------------------------
# Running jobs: one measurement, the lesson's comparison, and a size sweep.
# ---------------------------------------------------------------------------------------------


def _check(job: TimingJob) -> None:
    """Refuse a job that is invalid or would not fit in memory, before allocating anything."""
    validate_on_host(job)
    check_memory(job, free_memory(job.device))


@contextmanager
def _modes(job: TimingJob) -> Iterator[None]:
    """Run without autograd and with the dtype's matmul precision (TF32 or not)."""
    with torch.inference_mode(), matmul_precision(job.choice.tf32, job.device):
        yield


def run_job(job: TimingJob, *, repeats: int = 5, warmup: int = 1) -> Point:
    """Check memory, build inputs, measure, free. Raises SizeTooLarge or ValueError."""
    _check(job)
    with _modes(job):
        inputs = make_inputs(job)
        timing = measure(
            lambda: run_kernel(job, inputs),
            repeats=repeats,
            warmup=warmup,
            synchronize=synchronizer(job.device),
            label=job.describe(),
        )
    return Point(
        job.workload,
        job.device,
        job.dtype,
        job.size,
        job.iterations,
        timing.median_s,
        timing.iqr_s,
        timing.repeats,
    )


def comparison_events(
    job: TimingJob, *, repeats: int = 3, warmup: int = 1
) -> Iterator[Progress | Comparison]:
    """The lesson's naive run first (so it pays any first-call cost), then warm-up and repeats,
    one call per step: Progress before each call, the Comparison at the end.

    The caller stops by no longer iterating; a call already started runs to its end. The
    modes are entered per step, not held across a yield, so nothing leaks to the caller.
    """
    _check(job)
    sync = synchronizer(job.device)
    holder: dict[str, Any] = {}

    def setup() -> tuple[torch.Tensor, ...]:
        holder["inputs"] = make_inputs(job)
        return holder["inputs"]

    def work() -> torch.Tensor:
        return run_kernel(job, holder["inputs"])

    total = 1 + warmup + repeats
    yield Progress(0, total, "naive run, timed the lesson's way")
    with _modes(job):
        naive = naive_time(setup, lambda _inputs: work(), synchronize=sync)
    for i in range(warmup):
        yield Progress(1 + i, total, f"warm-up call {i + 1} of {warmup}")
        with _modes(job):
            work()
    times = []
    for i in range(repeats):
        yield Progress(1 + warmup + i, total, f"timed call {i + 1} of {repeats}")
        with _modes(job):
            times.extend(measure(work, repeats=1, warmup=0, synchronize=sync).times_s)
    holder.clear()
    yield Progress(total, total, "done")
    yield Comparison(job, naive, timing_from_times(times, warmup=warmup, label=job.describe()))


def compare_naive_and_correct(job: TimingJob, *, repeats: int = 3, warmup: int = 1) -> Comparison:
    """Run comparison_events to the end and return its Comparison."""
    *_, result = comparison_events(job, repeats=repeats, warmup=warmup)
    assert isinstance(result, Comparison)
    return result


def sweep(
    jobs: Iterable[TimingJob],
    *,
    repeats: int = 3,
    warmup: int = 1,
    max_step_s: float | None = None,
    run: Callable[..., Point] = run_job,
) -> Iterator[SweepEvent]:
    """Run jobs in order, yielding Progress before each and a Point or Skipped after.

    The caller stops the sweep by no longer iterating (it ends between steps). With
    `max_step_s`, a job whose time, extrapolated from the last point on the same device,
    would exceed it is skipped rather than run.
    """
    jobs = list(jobs)
    last: dict[tuple[str, str], Point] = {}
    for index, job in enumerate(jobs):
        yield Progress(index, len(jobs), job.describe())
        previous = last.get((job.workload, job.device))
        if max_step_s is not None and previous is not None:
            predicted = estimate_seconds(job, previous) * (repeats + warmup)
            if predicted > max_step_s:
                yield Skipped(
                    job,
                    f"would take about {predicted:.1f} s ({repeats + warmup} calls), over the "
                    f"{max_step_s:.0f} s allowed per step",
                )
                continue
        try:
            point = run(job, repeats=repeats, warmup=warmup)
        except (SizeTooLarge, ValueError) as exc:
            yield Skipped(job, str(exc))
            continue
        except torch.OutOfMemoryError:
            yield Skipped(job, f"{job.describe()} ran out of device memory")
            continue
        last[(job.workload, job.device)] = point
        yield point
    yield Progress(len(jobs), len(jobs), "done")


# ---------------------------------------------------------------------------------------------
# The same work as jobs for a worker process (gradviz.workers.jobs): the page never times in the server.
# ---------------------------------------------------------------------------------------------


def point_job(
    job: TimingJob, repeats: int = 3, warmup: int = 1, *, should_stop
) -> Iterator[Progress]:
    """run_job as a worker job: one Progress, then the Point as the job's result."""
    yield Progress(0, 1, job.describe())
    return run_job(job, repeats=repeats, warmup=warmup)


def compare_job(
    jobs: list[TimingJob], repeats: int = 3, warmup: int = 1, *, should_stop
) -> Iterator[Progress | Comparison]:
    """comparison_events for each job in turn; a stop request ends it before the next call."""
    for job in jobs:
        for event in comparison_events(job, repeats=repeats, warmup=warmup):
            if isinstance(event, Progress) and event.done < event.total and should_stop():
                return "stopped"
            yield event
    return "done"


def sweep_job(
    jobs: list[TimingJob],
    repeats: int = 3,
    warmup: int = 1,
    max_step_s: float | None = None,
    *,
    should_stop,
) -> Iterator[SweepEvent]:
    """sweep as a worker job; a stop request ends it before the next step."""
    for event in sweep(jobs, repeats=repeats, warmup=warmup, max_step_s=max_step_s):
        if isinstance(event, Progress) and event.done < event.total and should_stop():
            return "stopped"
        yield event
    return "done"


# ---------------------------------------------------------------------------------------------
# The GPU reference file, as bench/speed_gpu.py writes it.
# ---------------------------------------------------------------------------------------------


def reference_dict(
    *,
    device: str,
    command: str,
    points: Iterable[Point],
    comparisons: Iterable[Comparison] = (),
    date: str | None = None,
    note: str = "",
) -> dict[str, Any]:
    """The JSON object timing_reference.REFERENCE_FORMAT describes (written by bench/speed_gpu.py)."""
    date = date or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    comp = []
    for c in comparisons:
        comp.append(
            {
                **asdict(c.job),
                "median_s": c.timing.median_s,
                "iqr_s": c.timing.iqr_s,
                "repeats": c.timing.repeats,
                "naive": asdict(c.naive),
            }
        )
    return {
        "schema": REFERENCE_SCHEMA,
        "device": device,
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "date": date,
        "command": command,
        "note": note,
        "points": [asdict(p) for p in points],
        "comparisons": comp,
    }
