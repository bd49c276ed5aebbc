"""Correct CPU/GPU timing: the lessons' workloads, the naive timer they used and the right one.

A lesson times the GPU with `time.time()` around code that only *queues* CUDA kernels, so it
measures launches (plus tensor creation and the first call's start-up), not the work. This
module keeps both timers side by side so the page can show the difference:

- `naive_time`: the lesson's way, one call, `time.time()`, no warm-up, no synchronize; it also
  records what the naive clock missed (the wait at a synchronize afterwards).
- `measure`: warm-up calls, synchronize before each clock read, several repeats, median and
  interquartile range (statistics from torch.utils.benchmark.Measurement).

Sizes are checked against available memory before anything is allocated (`check_memory`),
and `sweep` yields progress events so a caller can draw a progress bar and stop between steps.
No streamlit here; values that leave this module are plain dataclasses of numbers and strings.

This module never imports torch (nor numpy): the Streamlit server uses it (workloads and
their cost model, dtypes by name, jobs, points, estimates, memory checks, fraction of a GPU's
peak (its figures: gradviz.speed.gpus), crossover,
the reference file's REFERENCE_FORMAT). What runs torch (the workloads' kernels, `measure`,
`run_job`, `comparison_events`, `sweep`, the worker jobs, `reference_dict`, ...) is
gradviz.speed.measure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gradviz.devices.info import DTYPE_BYTES
from gradviz.speed.gpus import GPU, matmul_tflops
from gradviz.util.env import positive_number
from gradviz.util.format import fmt_bytes
from gradviz.util.hosting import public_mode
from gradviz.util.reference import ReferenceFileError, ReferenceFormat, require_field
from gradviz.util.resources import available_cpus, cpu_memory_available
from gradviz.workers.jobs import JobLimits

# ---------------------------------------------------------------------------------------------
# Workloads: the lesson's elementwise loop and a matmul, with their cost model.
# ---------------------------------------------------------------------------------------------

LESSON_ELEMENTS = 100 * 1000 * 1000  # torch.randn(100, 1000, 1000)
LESSON_ITERATIONS = 1000


@dataclass(frozen=True)
class Workload:
    """One thing to time, with its cost model (a row of WORKLOADS).

    flops(size, iterations); bytes_moved(size, iterations, itemsize): what eager PyTorch
    reads and writes, each op reading its inputs and writing its output;
    memory_needed(size, itemsize): peak bytes held at once (inputs, result, temporaries);
    kernels(iterations): the eager ops one call runs (one kernel launch each on a GPU);
    input_bytes(size, itemsize): the inputs, made on the CPU and copied to the device.
    """

    key: str
    title: str
    size_label: str  # what `size` counts
    metric: str  # "GB/s" (memory-bound) or "GFLOP/s" (compute-bound)
    sweep_sizes: tuple[int, ...]
    flops: Callable[[int, int], float] = field(repr=False)
    bytes_moved: Callable[[int, int, int], float] = field(repr=False)
    memory_needed: Callable[[int, int], int] = field(repr=False)
    describe_size: Callable[[int], str] = field(repr=False)
    kernels: Callable[[int], int] = field(repr=False)
    input_bytes: Callable[[int, int], float] = field(repr=False)


def elementwise_shape(size: int) -> tuple[int, ...]:
    """The lesson's (100, 1000, 1000) layout when the size allows it, else a flat vector."""
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return (size // 1_000_000, 1000, 1000)
    return (size,)


WORKLOADS: dict[str, Workload] = {
    "elementwise": Workload(
        key="elementwise",
        title="The lesson's loop: result = result + tensor1 * tensor2",
        size_label="elements per tensor",
        metric="GB/s",
        sweep_sizes=(1_000, 10_000, 100_000, 1_000_000, 4_000_000, 10_000_000, 100_000_000),
        # one mul, then a mul and an add per iteration
        flops=lambda size, its: float(size) * (1 + 2 * its),
        # each op reads two tensors and writes one
        bytes_moved=lambda size, its, item: float(item) * size * (3 + 6 * its),
        # tensor1, tensor2, result, tensor1 * tensor2, the new result
        memory_needed=lambda size, item: 5 * size * item,
        describe_size=lambda size: "x".join(str(d) for d in elementwise_shape(size)),
        kernels=lambda its: 1 + 2 * its,
        input_bytes=lambda size, item: 2.0 * size * item,  # tensor1, tensor2
    ),
    "matmul": Workload(
        key="matmul",
        title="Matrix product: a @ b",
        size_label="n (n x n matrices)",
        metric="GFLOP/s",
        sweep_sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192),
        flops=lambda n, its: 2.0 * n**3 * its,
        bytes_moved=lambda n, its, item: float(item) * 3 * n * n * its,  # read a, b; write c
        memory_needed=lambda n, item: 3 * n * n * item,
        describe_size=lambda n: f"{n}x{n} @ {n}x{n}",
        kernels=lambda its: its,
        input_bytes=lambda n, item: 2.0 * n * n * item,  # a, b
    ),
}


@dataclass(frozen=True)
class DtypeChoice:
    key: str
    label: str
    dtype_name: str  # attribute of torch
    tf32: bool = False

    @property
    def itemsize(self) -> int:
        """Bytes per element (a table, so the server sizes jobs without torch)."""
        return DTYPE_BYTES[self.dtype_name]


DTYPES: dict[str, DtypeChoice] = {
    "float32": DtypeChoice("float32", "float32 (strict IEEE)", "float32"),
    "tf32": DtypeChoice("tf32", "float32 with TF32 matmuls (GPU)", "float32", tf32=True),
    "bfloat16": DtypeChoice("bfloat16", "bfloat16", "bfloat16"),
    "float16": DtypeChoice("float16", "float16", "float16"),
}


def dtype_note(dtype_key: str, device: str) -> str | None:
    """What a dtype choice means on a device, where it is not the obvious thing."""
    if dtype_key == "tf32" and not device.startswith("cuda"):
        return "TF32 exists only on NVIDIA GPUs (Ampere and later); the CPU runs strict float32."
    if dtype_key == "tf32":
        return "TF32 changes matmuls only; the elementwise loop is identical to float32."
    if dtype_key in ("bfloat16", "float16") and not device.startswith("cuda"):
        return (
            f"{dtype_key} on a CPU is often slower than float32: few CPUs have fast units for it."
        )
    return None


@dataclass(frozen=True)
class TimingJob:
    """One workload at one size, dtype and device."""

    workload: str
    size: int
    device: str = "cpu"
    dtype: str = "float32"
    iterations: int = 1

    @property
    def spec(self) -> Workload:
        return WORKLOADS[self.workload]

    @property
    def choice(self) -> DtypeChoice:
        return DTYPES[self.dtype]

    def flops(self) -> float:
        return self.spec.flops(self.size, self.iterations)

    def bytes_moved(self) -> float:
        return self.spec.bytes_moved(self.size, self.iterations, self.choice.itemsize)

    def memory_needed(self) -> int:
        return self.spec.memory_needed(self.size, self.choice.itemsize)

    def kernels(self) -> int:
        return self.spec.kernels(self.iterations)

    def input_bytes(self) -> float:
        return self.spec.input_bytes(self.size, self.choice.itemsize)

    def describe(self) -> str:
        return f"{self.spec.describe_size(self.size)} {self.dtype} on {self.device}"


def validate_job(job: TimingJob) -> None:
    """Raise ValueError with a plain message for a job that cannot be run as asked."""
    if job.workload not in WORKLOADS:
        raise ValueError(f"Unknown workload {job.workload!r}; choose one of {sorted(WORKLOADS)}.")
    if job.dtype not in DTYPES:
        raise ValueError(f"Unknown dtype {job.dtype!r}; choose one of {sorted(DTYPES)}.")
    if job.size < 1:
        raise ValueError(f"Size must be at least 1, got {job.size}.")
    if job.iterations < 1:
        raise ValueError(f"Iterations must be at least 1, got {job.iterations}.")


# ---------------------------------------------------------------------------------------------
# Memory: a size is refused before anything is allocated.
# ---------------------------------------------------------------------------------------------


def available_memory(device: str) -> int | None:
    """Bytes free for new tensors on `device`, as far as the server knows without torch: the
    host's RAM for the CPU, None for a GPU (gradviz.speed.measure asks torch there)."""
    if device.startswith("cuda"):
        return None
    return cpu_memory_available()


MEMORY_FRACTION = 0.5  # use at most this share of what is free: the server and others need room


class SizeTooLarge(ValueError):
    """A size whose tensors would not fit in the memory this host has free."""


def check_memory(job: TimingJob, available: int | None = None) -> None:
    """Refuse a job whose peak memory is over MEMORY_FRACTION of what `job.device` has free,
    or, on a public host, whose worker would outgrow the cap of one heavy job (check_public_cap).
    """
    check_public_cap(job)
    if available is None:
        available = available_memory(job.device)
    if available is None:
        return
    need = job.memory_needed()
    limit = int(available * MEMORY_FRACTION)
    if need > limit:
        where = "GPU memory" if job.device.startswith("cuda") else "RAM"
        raise SizeTooLarge(
            f"{job.spec.describe_size(job.size)} {job.dtype} needs about {fmt_bytes(need)} of "
            f"{where} at once, over the limit of {fmt_bytes(limit)} "
            f"({MEMORY_FRACTION:.0%} of the {fmt_bytes(available)} free on {job.device}). "
            "Choose a smaller size."
        )


# ---------------------------------------------------------------------------------------------
# Timers.
# ---------------------------------------------------------------------------------------------


def no_sync() -> None:
    return None


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
# Running jobs: one measurement, the lesson's comparison, and a size sweep.
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


SWEEP_ITERATIONS = {"elementwise": 10, "matmul": 1}  # the page and bench/speed_gpu.py agree


# ---------------------------------------------------------------------------------------------
# Limits of the worker that times (gradviz.workers.jobs): the page never times in the server.
# The jobs themselves (point_job, compare_job, sweep_job) are in gradviz.speed.measure.
# ---------------------------------------------------------------------------------------------

JOB_SECONDS = 600.0  # wall clock of one timing job in a worker (GRADVIZ_SPEED_SECONDS)
JOB_HEADROOM = 256 * 1024 * 1024  # memory beyond the tensors: allocator, temporaries, benchmark


def job_seconds() -> float:
    return positive_number("GRADVIZ_SPEED_SECONDS", JOB_SECONDS)


# Host memory the first CUDA call adds to a worker (its CUDA context; see services.host.FACTS_MEMORY).
CUDA_CONTEXT_MEMORY = 1024 * 1024 * 1024
ABANDON_AFTER_S = 10.0  # the page reads a running timing every 0.5 s while its tab is open


def worker_memory(job: TimingJob) -> int:
    """What a worker timing `job` may grow by: its tensors plus a quarter, plus headroom."""
    return int(job.memory_needed() * 1.25) + JOB_HEADROOM


# A public host's timing worker (GRADVIZ_PUBLIC=1). Measured with bench/timing_memory.py
# (docs/BENCHMARKS.md): glibc keeps the heap of freed tensors for reuse rather than unmapping it
# (as in the lesson's own script), so a CPU timing's worker grows by up to 3.04x its tensors'
# peak (elementwise at 5,262,581 elements; 1.6-2.5x at most sizes), plus the timer's imports.
TIMING_GROWTH_FACTOR = 3.2
TIMER_OWN_MEMORY = 24 * 1024 * 1024
# With the server, the forkserver and a warm worker (about 350 MB) and the timing worker's own
# share of torch (about 110 MB), 200 MB of growth keeps a 690 MB host under its limit.
PUBLIC_TIMING_MEMORY = 200_000_000


def expected_growth(job: TimingJob) -> int:
    """How much a CPU worker timing `job` grows at its peak (tensors, heap kept, timer)."""
    return int(job.memory_needed() * TIMING_GROWTH_FACTOR) + TIMER_OWN_MEMORY


def public_memory_cap() -> int | None:
    """On a public host, what one timing worker may grow by: PUBLIC_TIMING_MEMORY, or
    GRADVIZ_PUBLIC_TIMING_MEMORY (bytes). None elsewhere (MEMORY_FRACTION of free RAM rules)."""
    if not public_mode():
        return None
    return int(positive_number("GRADVIZ_PUBLIC_TIMING_MEMORY", PUBLIC_TIMING_MEMORY))


def check_public_cap(job: TimingJob) -> None:
    """Refuse, before anything runs, a CPU job whose worker would outgrow the public cap."""
    cap = public_memory_cap()
    if cap is None or job.device != "cpu":
        return
    need = expected_growth(job)
    if need > cap:
        raise SizeTooLarge(
            f"{job.spec.describe_size(job.size)} {job.dtype} needs about {fmt_bytes(need)} of "
            f"RAM with the timer's own, over the {fmt_bytes(cap)} one timing may use on this "
            "public server (it shares a small host with every visitor). Choose a smaller size."
        )


def job_limits(jobs: Iterable[TimingJob], seconds: float | None = None):
    """Limits for a worker timing `jobs`: every CPU, memory for the biggest job plus headroom
    (on a public host at most public_memory_cap(), plus a CUDA context when a job uses a GPU);
    stopped, then killed, when nobody has read its progress for ABANDON_AFTER_S (the page was
    left)."""
    jobs = list(jobs)
    memory = max((worker_memory(j) for j in jobs), default=JOB_HEADROOM)
    cap = public_memory_cap()
    if cap is not None:
        gpu = any(j.device != "cpu" for j in jobs)
        memory = min(memory, cap) + (CUDA_CONTEXT_MEMORY if gpu else 0)
    return JobLimits(
        seconds=job_seconds() if seconds is None else seconds,
        memory_bytes=memory,
        threads=available_cpus(),
        abandon_after=ABANDON_AFTER_S,
    )


def calibration_job(
    workload: str, device: str = "cpu", dtype: str = "float32", size: int | None = None
) -> TimingJob:
    """A quick job (well under a second on a small CPU) whose rate predicts bigger sizes.

    At `size` itself when that is no bigger than the largest quick size (a rate measured at
    another size can be far off: caches, page faults); otherwise at the largest quick size:
    big enough that tensors leave the allocator's cache (page faults count, as in the
    lesson), small enough to run on a public host (check_public_cap).
    """
    largest = 2_000_000 if workload == "elementwise" else 512
    size = largest if size is None else max(1, min(size, largest))
    return TimingJob(workload, size, device, dtype, 2 if workload == "elementwise" else 1)


def sweep_jobs(
    workload: str,
    sizes: Iterable[int],
    devices: Iterable[str],
    dtype: str = "float32",
    iterations: int | None = None,
) -> list[TimingJob]:
    """Jobs for a sweep: each size (small first) on each device."""
    its = SWEEP_ITERATIONS[workload] if iterations is None else iterations
    return [TimingJob(workload, s, d, dtype, its) for s in sorted(sizes) for d in devices]


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
        f"  median {p.median_s * 1e3:10.4f} ms  IQR {p.iqr_s * 1e3:9.4f} ms"
        f"  {p.rate:10.1f} {p.job.spec.metric}"
    )


def format_comparison(c: Comparison) -> str:
    """The lesson's naive figure, its parts, and the correct one, for a terminal."""
    n, t = c.naive, c.timing
    return (
        f"  {c.job.describe()}, {c.job.iterations} iterations:\n"
        f"    naive (lesson): {n.total_s:.4f} s = setup {n.setup_s:.4f} s + launch {n.launch_s:.4f} s;"
        f" pending at synchronize {n.pending_s:.4f} s\n"
        f"    correct: median {t.median_s:.4f} s, IQR {t.iqr_s:.4f} s over {t.repeats} repeats"
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


# ---------------------------------------------------------------------------------------------
# The GPU reference file: figures measured on a real GPU, shown where the host has none.
# ---------------------------------------------------------------------------------------------

REFERENCE_SCHEMA = "gradviz.gpu_speed_reference/1"
REFERENCE_COMMAND = "python bench/speed_gpu.py"
REFERENCE_PATH = Path(__file__).resolve().parents[3] / "docs" / "gpu_speed_reference.json"


@dataclass(frozen=True)
class Reference:
    device: str
    torch: str
    cuda: str
    date: str
    command: str
    points: tuple[Point, ...]
    comparisons: tuple[Comparison, ...] = ()
    note: str = ""


_POINT_FIELDS = {
    "workload": str,
    "device": str,
    "dtype": str,
    "size": int,
    "iterations": int,
    "median_s": float,
    "iqr_s": float,
    "repeats": int,
}
_NAIVE_FIELDS = {"total_s": float, "setup_s": float, "launch_s": float, "pending_s": float}


def _point_from(obj: Any, where: str) -> Point:
    if not isinstance(obj, dict):
        raise ReferenceFileError(f"{where}: should be an object")
    values = {name: require_field(obj, name, kind, where) for name, kind in _POINT_FIELDS.items()}
    point = Point(**values)
    try:
        validate_job(replace(point.job, device="cpu"))  # the device may be absent here
    except ValueError as exc:
        raise ReferenceFileError(f"{where}: {exc}") from None
    if point.median_s <= 0:
        raise ReferenceFileError(f"{where}: median_s must be positive")
    return point


def reference_from(data: dict, name: str) -> Reference:
    """The GPU reference file's contents, checked (REFERENCE_FORMAT's parse): raises
    ReferenceFileError naming the first problem (missing or mistyped field, unknown workload,
    no GPU points). `name`: the file's."""
    head = {k: require_field(data, k, str, name) for k in ("device", "torch", "cuda", "date")}
    command = require_field(data, "command", str, name)
    if not isinstance(data.get("points"), list) or not data["points"]:
        raise ReferenceFileError(f"{name}: 'points' should be a non-empty list")
    points = tuple(_point_from(p, f"{name} points[{i}]") for i, p in enumerate(data["points"]))
    if not any(p.device.startswith("cuda") for p in points):
        raise ReferenceFileError(f"{name}: no point was measured on a cuda device")
    if not isinstance(data.get("comparisons", []), list):
        raise ReferenceFileError(f"{name}: 'comparisons' should be a list")
    comparisons = []
    for i, c in enumerate(data.get("comparisons", [])):
        where = f"{name} comparisons[{i}]"
        point = _point_from(c, where)
        naive_obj = c.get("naive")
        if not isinstance(naive_obj, dict):
            raise ReferenceFileError(f"{where}: missing object 'naive'")
        naive = NaiveTiming(
            **{k: require_field(naive_obj, k, t, where) for k, t in _NAIVE_FIELDS.items()}
        )
        timing = Timing(point.median_s, point.iqr_s, (), 0, 0, False)
        comparisons.append(Comparison(point.job, naive, timing))
    note = data.get("note", "")
    return Reference(
        command=command,
        points=points,
        comparisons=tuple(comparisons),
        note=note if isinstance(note, str) else "",
        **head,
    )


# Read with gradviz.util.reference.load_reference(REFERENCE_PATH, REFERENCE_FORMAT).
REFERENCE_FORMAT = ReferenceFormat(reference_from, REFERENCE_SCHEMA)
