"""The Speed page's workloads: the lesson's elementwise loop and a matmul, with their cost
model (FLOPs, bytes moved, peak memory, kernels), the dtypes by name, and the jobs to time
(`TimingJob`: one workload at one size, dtype and device; a calibration job, a sweep's jobs).

Never imports torch (nor numpy): the Streamlit server sizes and checks jobs with it; the
workloads' kernels are gradviz.speed.measure's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gradviz.devices.info import DTYPE_BYTES

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


SWEEP_ITERATIONS = {"elementwise": 10, "matmul": 1}  # the page and bench/speed_gpu.py agree


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
