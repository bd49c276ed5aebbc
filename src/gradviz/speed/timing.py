"""Correct CPU/GPU timing: the naive timer the lessons used and the right one, and what a
timing gives back.

A lesson times the GPU with `time.time()` around code that only *queues* CUDA kernels, so it
measures launches (plus tensor creation and the first call's start-up), not the work. Both
timers are kept side by side so the page can show the difference:

- `naive_time`: the lesson's way, one call, `time.time()`, no warm-up, no synchronize; it also
  records what the naive clock missed (the wait at a synchronize afterwards).
- `measure` (gradviz.speed.measure, on gradviz.util.timer): warm-up calls, synchronize
  before each clock read, several repeats, median and interquartile range (statistics from
  torch.utils.benchmark.Measurement).

Here too: the results (`Point`, `Comparison`, a sweep's `Progress` and `Skipped` events),
scaling a point to another size (`estimate_seconds`), the crossover, lines for a terminal,
and the fraction of a GPU's peak (its figures: gradviz.speed.gpus). No streamlit here;
values that leave this module are plain dataclasses of numbers and strings.

This module never imports torch (nor numpy): the Streamlit server uses it. The workloads and
their jobs are gradviz.speed.workloads, memory checks and the worker's limits
gradviz.speed.memory, the reference file gradviz.speed.timing_reference. What runs torch
(the workloads' kernels, `measure`, `run_job`, `comparison_events`, `sweep`, the worker jobs,
`reference_dict`, ...) is gradviz.speed.measure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gradviz.speed.gpus import GPU, matmul_tflops
from gradviz.speed.workloads import WORKLOADS, TimingJob
from gradviz.util.format import fmt_in
from gradviz.util.timer import no_sync

# ---------------------------------------------------------------------------------------------
# Timers.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NaiveTiming:
    """The lesson's figure, and what it hid.

    total_s is what the lesson printed: tensor creation (+ copy to the device) and one call of
    the work, `time.time()` read right after the last kernel was *queued*. pending_s is how
    long a synchronize afterwards still had to wait for the device to finish.
    """

    total_s: float
    setup_s: float
    launch_s: float
    pending_s: float

    @property
    def work_s(self) -> float:
        """The work of that first call, measured to its real end (launch + pending)."""
        return self.launch_s + self.pending_s


def naive_time(
    setup: Callable[[], Any],
    work: Callable[[Any], Any],
    *,
    clock: Callable[[], float] = time.time,
    synchronize: Callable[[], None] = no_sync,
) -> NaiveTiming:
    """Time as the lesson did: clock, make inputs, run once, clock. No warm-up, no synchronize.

    `synchronize` is called only *after* the naive clock stopped, to measure what it missed.
    """
    t0 = clock()
    inputs = setup()
    t1 = clock()
    work(inputs)
    t2 = clock()  # the lesson stops here
    synchronize()
    t3 = clock()
    return NaiveTiming(total_s=t2 - t0, setup_s=t1 - t0, launch_s=t2 - t1, pending_s=t3 - t2)


@dataclass(frozen=True)
class Timing:
    """Repeated, synchronised measurement of one call: median and spread in seconds."""

    median_s: float
    iqr_s: float
    times_s: tuple[float, ...]
    warmup: int
    threads: int
    noisy: bool  # torch.utils.benchmark flags an interquartile range over 10% of the median

    @property
    def repeats(self) -> int:
        return len(self.times_s)


# ---------------------------------------------------------------------------------------------
# Results: one measurement, the lesson's comparison, and a size sweep's events.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """Sent before each step: `done` of `total` steps finished, `label` is the one starting."""

    done: int
    total: int
    label: str


@dataclass(frozen=True)
class Point:
    """One measured job (plain data: crosses into the page and into the reference file)."""

    workload: str
    device: str
    dtype: str
    size: int
    iterations: int
    median_s: float
    iqr_s: float
    repeats: int

    @property
    def job(self) -> TimingJob:
        return TimingJob(self.workload, self.size, self.device, self.dtype, self.iterations)

    @property
    def gflops(self) -> float:
        return self.job.flops() / self.median_s / 1e9

    @property
    def gbps(self) -> float:
        return self.job.bytes_moved() / self.median_s / 1e9

    @property
    def rate(self) -> float:
        """The workload's headline figure: GB/s for the loop, GFLOP/s for matmul."""
        return self.gbps if self.job.spec.metric == "GB/s" else self.gflops


@dataclass(frozen=True)
class Comparison:
    """The lesson's naive figure next to the correct one for the same job."""

    job: TimingJob
    naive: NaiveTiming
    timing: Timing


def estimate_seconds(job: TimingJob, calibration: Point) -> float:
    """Scale a measured point of the same workload/device/dtype to `job` by its cost."""
    if (calibration.workload, calibration.device) != (job.workload, job.device):
        raise ValueError("calibration point must be the same workload on the same device")
    ours, theirs = job, calibration.job
    if job.spec.metric == "GB/s":
        return calibration.median_s * ours.bytes_moved() / theirs.bytes_moved()
    return calibration.median_s * ours.flops() / theirs.flops()


@dataclass(frozen=True)
class Skipped:
    job: TimingJob
    reason: str


SweepEvent = Progress | Point | Skipped


def crossover(points: Iterable[Point], slow: str = "cpu", fast: str = "cuda") -> int | None:
    """Smallest size from which `fast` beats `slow` at every larger size measured on both."""
    by_device: dict[str, dict[int, float]] = {slow: {}, fast: {}}
    for p in points:
        if p.device.split(":")[0] in by_device:
            by_device[p.device.split(":")[0]][p.size] = p.median_s
    common = sorted(set(by_device[slow]) & set(by_device[fast]))
    answer = None
    for size in reversed(common):
        if by_device[fast][size] < by_device[slow][size]:
            answer = size
        else:
            break
    return answer


def format_point(p: Point) -> str:
    """One line for a terminal: workload, dtype, device, size, median, IQR, rate."""
    return (
        f"  {p.workload:11s} {p.dtype:8s} {p.device:6s} {p.job.spec.describe_size(p.size):>22s}"
        f"  median {fmt_in(p.median_s, 'ms', 4, 10)}  IQR {fmt_in(p.iqr_s, 'ms', 4, 9)}"
        f"  {p.rate:10.1f} {p.job.spec.metric}"
    )


def format_comparison(c: Comparison) -> str:
    """The lesson's naive figure, its parts, and the correct one, for a terminal."""
    n, t = c.naive, c.timing

    def secs(seconds: float) -> str:
        return fmt_in(seconds, "s", decimals=4)

    return (
        f"  {c.job.describe()}, {c.job.iterations} iterations:\n"
        f"    naive (lesson): {secs(n.total_s)} = setup {secs(n.setup_s)} + launch "
        f"{secs(n.launch_s)}; pending at synchronize {secs(n.pending_s)}\n"
        f"    correct: median {secs(t.median_s)}, IQR {secs(t.iqr_s)} over {t.repeats} repeats"
        f" (warm-up {t.warmup}); naive/correct = {n.total_s / t.median_s:.2f}x"
    )


# ---------------------------------------------------------------------------------------------
# Peak figures (gradviz.speed.gpus: makers' spec sheets, dense) to say how close a device came.
# ---------------------------------------------------------------------------------------------


def peak_rate(gpu: GPU, workload: str, dtype: str) -> float | None:
    """The peak that bounds a workload on `gpu`: memory GB/s for the loop, GFLOP/s for matmul
    (None where its maker gives no figure)."""
    if WORKLOADS[workload].metric == "GB/s":
        return gpu.memory_gbps
    tflops = matmul_tflops(gpu, dtype)
    return None if tflops is None else tflops * 1000


def fraction_of_peak(point: Point, gpu: GPU | None) -> float | None:
    rate = None if gpu is None else peak_rate(gpu, point.workload, point.dtype)
    return None if rate is None else point.rate / rate
