"""How fast would a GPU run the Speed page's workloads? A roofline estimate from spec sheets.

Most hosts of gradviz have no GPU, so the page cannot time one; it can say what the maker's
figures (gradviz.speed.gpus) allow. For one call of a workload (gradviz.speed.workloads' cost
model: FLOPs, bytes moved, eager kernels, input bytes):

    run   = max(FLOPs / peak, bytes / bandwidth, kernels x launch overhead)
    copy  = input bytes / host link (PCIe at LINK_EFFICIENCY of its theoretical rate;
            unified memory: read and write at the memory bandwidth) + one launch per input
    total = run + copy          (the data starts on the CPU, as in the lesson)

`run` is the roofline (the slower of arithmetic and memory traffic, at 100% of peak: real
kernels reach less, so this is the fastest the spec sheet allows) with a floor: eager PyTorch
issues one kernel per op, and a stream of ops cannot go faster than the CPU issues them.

Every figure that leaves this module is labelled an estimate; ASSUMPTIONS lists what the model
takes for granted, with where each comes from. No torch, no streamlit (the server imports it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gradviz.speed.gpus import GPU, PCIE_SOURCE, matmul_tflops
from gradviz.speed.timing import Point, crossover, estimate_seconds
from gradviz.speed.workloads import TimingJob, validate_job
from gradviz.util.format import fmt_in

LABEL = "estimate from spec sheet"
DEVICE = "estimate"  # the device of an estimated Point (never a real device name)

LAUNCH_S = 5e-6  # per eager op: Python, PyTorch's dispatcher and the CUDA launch
LINK_EFFICIENCY = 0.8  # of a PCIe link's theoretical one-way rate, for large pinned copies


@dataclass(frozen=True)
class Assumption:
    name: str
    value: str
    why: str
    source: str = ""  # a URL, where there is one


ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption(
        "Peak figures",
        "the maker's dense figures at boost clock (docs/gpus.md), reached 100%",
        "Real kernels reach less (large matrix products often 60-90% of peak, small ones far "
        "less): the estimate is the fastest the spec sheet allows, a lower bound on time.",
    ),
    Assumption(
        "Launch overhead",
        f"{fmt_in(LAUNCH_S, 'µs', decimals=0)} per eager op",
        "Each PyTorch op costs CPU time (Python, the dispatcher, the CUDA launch) before the "
        "GPU sees it; when the GPU's share is shorter, the CPU sets the pace. A few to about "
        "10 µs per op is the usual range; 5 µs is assumed, not measured here (no GPU).",
        "https://developer.nvidia.com/blog/cuda-graphs/",
    ),
    Assumption(
        "Host link",
        f"PCIe at {LINK_EFFICIENCY:.0%} of its theoretical one-way rate "
        "(GT/s x lanes x 128/130 / 8)",
        "Packet and protocol overheads keep large pinned copies near 80% of the line rate; "
        "PyTorch's default pageable copies are often slower, so the copy estimate is optimistic.",
        PCIE_SOURCE,
    ),
    Assumption(
        "Unified memory (Apple)",
        "a copy to 'mps' reads and writes the bytes at the memory bandwidth",
        "CPU and GPU share one memory, but .to('mps') still makes a new buffer and copies.",
    ),
    Assumption(
        "Elementwise arithmetic",
        "at the FP32 rate whatever the dtype",
        "PyTorch computes float16 and bfloat16 elementwise ops in float32; the loop is bound "
        "by memory long before arithmetic (about 1 FLOP per 12 bytes in float32), so where a "
        "maker gives no FP32 figure (Apple) the loop is taken as memory-bound.",
    ),
    Assumption(
        "Bytes moved",
        "eager PyTorch: every op reads its inputs and writes its output from memory",
        "No caching or fusion (torch.compile would fuse the loop into far fewer bytes).",
    ),
)


class NoEstimate(ValueError):
    """A GPU whose maker gives no figure that the estimate needs: the message says which."""


@dataclass(frozen=True)
class Estimate:
    """One call of a workload on a GPU, estimated from spec-sheet figures (seconds)."""

    gpu: str  # gradviz.speed.gpus key
    what: str  # the call, in words
    flops: float
    bytes_moved: float
    kernels: int
    copy_bytes: float
    compute_s: float
    memory_s: float
    launch_s: float
    copy_s: float

    @property
    def run_s(self) -> float:
        """The data already on the GPU."""
        return max(self.compute_s, self.memory_s, self.launch_s)

    @property
    def total_s(self) -> float:
        """The inputs copied from the CPU first, then the run."""
        return self.run_s + self.copy_s

    @property
    def bound(self) -> str:
        """What sets the run's time: "memory", "compute" or "launch overhead"."""
        if self.launch_s >= max(self.compute_s, self.memory_s):
            return "launch overhead"
        return "memory" if self.memory_s >= self.compute_s else "compute"


def link_gbps(gpu: GPU) -> float | None:
    """GB/s a large host-to-device copy reaches on `gpu`'s link (None: not published)."""
    if gpu.link.kind == "unified":
        return None if gpu.memory_gbps is None else gpu.memory_gbps / 2  # read, then write
    theoretical = gpu.link.theoretical_gbps()
    return None if theoretical is None else theoretical * LINK_EFFICIENCY


def _need(value: float | None, gpu: GPU, what: str) -> float:
    if value is None:
        raise NoEstimate(f"No estimate for {gpu.label}: its maker publishes no {what}. {gpu.note}")
    return value


def _compute_s(gpu: GPU, job: TimingJob) -> float:
    """FLOPs at the peak that bounds them; 0 for the loop on a GPU without an FP32 figure (it
    is bound by memory long before arithmetic)."""
    if job.spec.metric == "GB/s":  # elementwise: vector FP32 units, any dtype
        tflops = gpu.fp32_tflops
        return 0.0 if tflops is None else job.flops() / (tflops * 1e12)
    tflops = _need(matmul_tflops(gpu, job.dtype), gpu, f"{job.dtype} matrix-product peak")
    return job.flops() / (tflops * 1e12)


def _roofline(
    gpu: GPU, what: str, cost: tuple[float, float, int, float], copies: int, compute_s: float
) -> Estimate:
    """The estimate of a call that does `cost` = (FLOPs, bytes moved, kernels, input bytes)
    and copies its inputs in `copies` transfers."""
    flops, bytes_moved, kernels, copy_bytes = cost
    bandwidth = _need(gpu.memory_gbps, gpu, "memory bandwidth")
    link = _need(link_gbps(gpu), gpu, "host link")
    return Estimate(
        gpu=gpu.key,
        what=what,
        flops=flops,
        bytes_moved=bytes_moved,
        kernels=kernels,
        copy_bytes=copy_bytes,
        compute_s=compute_s,
        memory_s=bytes_moved / (bandwidth * 1e9),
        launch_s=kernels * LAUNCH_S,
        copy_s=copy_bytes / (link * 1e9) + copies * LAUNCH_S,
    )


def estimate(gpu: GPU, job: TimingJob) -> Estimate:
    """Estimate one call of `job` (its device is ignored) on `gpu`. Raises NoEstimate where a
    figure is missing, ValueError for an invalid job."""
    validate_job(replace(job, device="cpu"))
    _need(gpu.memory_gbps, gpu, "memory bandwidth")  # the first figure a reader looks for
    what = f"{job.spec.describe_size(job.size)} {job.dtype}, {job.iterations} iteration(s)"
    cost = (job.flops(), job.bytes_moved(), job.kernels(), job.input_bytes())
    return _roofline(gpu, what, cost, 2, _compute_s(gpu, job))  # both workloads copy 2 tensors


# ---------------------------------------------------------------------------------------------
# The CIFAR-10 tutorial network's training step (the Training page's "tutorial" preset).
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepCost:
    """One training step of TutorialNet (forward, cross-entropy, backward, SGD with momentum
    as PyTorch runs it on a GPU, foreach), float32, counted with torch on the CPU by
    tests/unit/speed/test_estimate_cifar.py: FLOPs of its convolutions and matrix products
    (torch.utils.flop_counter), the ops that launch a kernel, and the bytes of every op's
    tensor arguments and results. All are exactly linear in the batch size."""

    flops_per_image: int = 3_204_720
    bytes_fixed: int = 1_983_272  # the parameters, gradients and momentum, read and written
    bytes_per_image: int = 343_760
    kernels: int = 36
    copy_bytes_per_image: int = 3 * 32 * 32 * 4 + 8  # a float32 image and an int64 label


CIFAR_STEP = StepCost()
CIFAR_BATCHES = (4, 512)  # the tutorial's batch, and the fast preset's batch size


def estimate_step(gpu: GPU, batch: int, step: StepCost = CIFAR_STEP) -> Estimate:
    """One training step of the tutorial network at `batch` on `gpu`, its batch copied from
    the CPU first (images and labels: two copies)."""
    if batch < 1:
        raise ValueError(f"Batch size must be at least 1, got {batch}.")
    tflops = _need(gpu.fp32_tflops, gpu, "FP32 peak")
    cost = (
        float(step.flops_per_image * batch),
        float(step.bytes_fixed + step.bytes_per_image * batch),
        step.kernels,
        float(step.copy_bytes_per_image * batch),
    )
    what = f"one CIFAR-10 tutorial training step, batch {batch}, float32"
    return _roofline(gpu, what, cost, 2, cost[0] / (tflops * 1e12))


def estimate_point(gpu: GPU, job: TimingJob, with_copy: bool = False) -> Point:
    """An estimate as a Point on device DEVICE (for crossover and tables)."""
    e = estimate(gpu, job)
    seconds = e.total_s if with_copy else e.run_s
    return Point(job.workload, DEVICE, job.dtype, job.size, job.iterations, seconds, 0.0, 0)


def crossover_with(gpu: GPU, cpu_points: Iterable[Point], with_copy: bool) -> int | None:
    """Smallest size from which the GPU's estimate beats the CPU at every larger size among
    `cpu_points` (one workload, dtype and iterations)."""
    cpu = [p for p in cpu_points if p.device == "cpu"]
    estimates = [estimate_point(gpu, replace(p.job, device="cpu"), with_copy) for p in cpu]
    return crossover(cpu + estimates, slow="cpu", fast=DEVICE)


def grid(workload: str) -> list[int]:
    """Sizes to look for a crossover on when the CPU side is a scaled model, not points:
    1-2-5 steps for the loop's elements, powers of two and halfway for matmul's n."""
    if workload == "elementwise":
        return [m * 10**e for e in range(2, 10) for m in (1, 2, 5)]
    return sorted({int(2**k * f) for k in range(4, 15) for f in (1, 1.5)})


def scaled_cpu_points(calibration: Point, sizes: Iterable[int], iterations: int) -> list[Point]:
    """The CPU at `sizes`, scaled from one measured point by the workload's cost (linear in
    bytes or FLOPs): the page's quick estimate. A real CPU departs from this line at small
    sizes (caches make it faster, the fixed cost of each op slower): measured points, where
    there are some, are the better comparison."""
    points = []
    for size in sizes:
        job = TimingJob(calibration.workload, size, "cpu", calibration.dtype, iterations)
        seconds = estimate_seconds(job, calibration)
        points.append(Point(job.workload, "cpu", job.dtype, size, iterations, seconds, 0.0, 0))
    return points


def speedup(cpu_s: float, gpu_s: float) -> str:
    """ "12x faster", "3.4x slower" (the GPU's estimate against the CPU)."""
    if not (math.isfinite(cpu_s) and math.isfinite(gpu_s)) or gpu_s <= 0 or cpu_s <= 0:
        return ""
    ratio = cpu_s / gpu_s
    factor = ratio if ratio >= 1 else 1 / ratio
    text = f"{factor:,.0f}x" if factor >= 10 else f"{factor:.1f}x"
    return f"{text} faster" if ratio >= 1 else f"{text} slower"
