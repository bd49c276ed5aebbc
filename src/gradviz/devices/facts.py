"""Asked of torch in a worker process: the host's devices (gather), and the small jobs
behind the server's questions (facts, model placement, CUDA allocator figures)."""

from __future__ import annotations

import platform

import torch

from gradviz.devices.info import SIMULATED_CUDA_COUNT, DeviceInfo, HostFacts
from gradviz.devices.simulated import cuda_available, memory_summary, model_placement, mps_available


def gather() -> HostFacts:
    """Ask torch, in this process, what the host offers."""
    cuda, mps = cuda_available(), mps_available()
    out = [DeviceInfo("cpu", "cpu", platform.processor() or platform.machine() or "CPU")]
    count = torch.cuda.device_count() if cuda else 0
    if cuda:
        for i in range(count):
            props = torch.cuda.get_device_properties(i)
            out.append(DeviceInfo(f"cuda:{i}", "cuda", props.name, False, props.total_memory))
    else:
        for i in range(SIMULATED_CUDA_COUNT):
            out.append(
                DeviceInfo(
                    f"cuda:{i}",
                    "cuda",
                    "simulated CUDA (values on the CPU, device rules from PyTorch)",
                    True,
                )
            )
    if mps:
        out.append(DeviceInfo("mps", "mps", "Apple Metal (MPS)"))
    return HostFacts(
        torch_version=str(torch.__version__),
        cuda_available=cuda,
        cuda_count=count,
        mps_available=mps,
        devices=tuple(out),
        cuda_build=torch.version.cuda,
    )


def facts_job(*, should_stop):
    """The job behind facts(): gather() in a worker."""
    yield "asking torch"
    return gather()


def placement_job(device: str, *, should_stop):
    """devices.model_placement(device) in a worker (simulated CUDA imports FakeTensorMode)."""
    yield "building the model"
    return model_placement(device)


def memory_job(*, should_stop):
    """devices.memory_summary() in a worker: what the CUDA driver and a fresh allocator see."""
    yield "asking the CUDA allocator"
    return memory_summary()


def list_devices() -> list[DeviceInfo]:
    return list(gather().devices)


def device_choices(simulate: bool | None = None) -> list[str]:
    """Devices a program's tensors can be moved to: cpu and the CUDA devices (real or simulated)."""
    return gather().device_choices(simulate)
