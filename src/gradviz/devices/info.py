"""What a host offers, as plain data the server can hold without torch: DeviceInfo,
HostFacts (gathered in a worker by gradviz.devices.facts), a CUDA allocator's figures
(CudaMemory, from gradviz.devices.simulated.memory_summary), device labels and the memory of
a program's tensors per device."""

from __future__ import annotations

from dataclasses import dataclass, field

SIMULATED_CUDA_COUNT = 2  # cuda:0 and cuda:1, so the cuda:0-vs-cuda:1 lesson works too
SIMULATED_SUFFIX = " (simulated)"


@dataclass(frozen=True)
class DeviceInfo:
    key: str  # "cpu", "cuda:0", "mps"
    kind: str  # cpu | cuda | mps
    name: str
    simulated: bool = False
    total_memory: int | None = None  # bytes

    @property
    def label(self) -> str:
        return self.key + (SIMULATED_SUFFIX if self.simulated else "")


@dataclass(frozen=True)
class HostFacts:
    """What torch reports on this host, as plain data."""

    torch_version: str
    cuda_available: bool
    cuda_count: int
    mps_available: bool
    devices: tuple[DeviceInfo, ...] = field(default_factory=tuple)
    cuda_build: str | None = None  # torch.version.cuda: the CUDA this torch was built for

    @property
    def simulated(self) -> bool:
        """True where PyTorch has no CUDA device: lessons then run on simulated CUDA."""
        return not self.cuda_available

    @property
    def gpu_name(self) -> str | None:
        return next((d.name for d in self.devices if d.kind == "cuda" and not d.simulated), None)

    def device_choices(self, simulate: bool | None = None) -> list[str]:
        """Devices a program's tensors can be moved to: cpu and the CUDA devices (real or
        simulated), and mps where present on a real-device host."""
        simulate = self.simulated if simulate is None else simulate
        if simulate:
            return ["cpu"] + [f"cuda:{i}" for i in range(SIMULATED_CUDA_COUNT)]
        out = ["cpu"] + [f"cuda:{i}" for i in range(self.cuda_count)]
        if self.mps_available:
            out.append("mps")
        return out


@dataclass(frozen=True)
class CudaMemory:
    """One real CUDA device as PyTorch's caching allocator and the driver see it, in bytes."""

    device: str  # "cuda:0"
    allocated: int  # torch.cuda.memory_allocated: tensors alive
    reserved: int  # torch.cuda.memory_reserved: held by the caching allocator
    used_by_all_processes: int  # what nvidia-smi shows as used
    total: int


def device_label(device: str, simulated: bool) -> str:
    return device + (SIMULATED_SUFFIX if simulated and device != "cpu" else "")


DTYPE_BYTES = {
    "float64": 8, "int64": 8, "complex64": 8, "float32": 4, "int32": 4,
    "float16": 2, "bfloat16": 2, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
}  # fmt: skip


def trace_memory(tensors, simulated: bool) -> list[dict]:
    """Bytes of the tensors a program named, per device (values and gradients)."""
    per: dict[str, dict] = {}
    for t in tensors:
        n = 1
        for s in t.shape:
            n *= s
        nbytes = n * DTYPE_BYTES.get(t.dtype, 4)
        row = per.setdefault(
            t.device,
            {
                "device": device_label(t.device, simulated),
                "tensors": 0,
                "bytes": 0,
                "grad_bytes": 0,
            },
        )
        row["tensors"] += 1
        row["bytes"] += nbytes
        if t.grad_preview is not None:
            row["grad_bytes"] += nbytes
    return list(per.values())
