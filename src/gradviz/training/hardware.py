"""Where and how a training runs: the devices this host's torch can train on (`resolve_device`:
'auto' picks cuda, then mps, then cpu; `DeviceError` for an absent one) and the fast preset's
precision plan (`plan_precision`: channels_last, autocast, GradScaler, cudnn.benchmark; the
presets themselves are gradviz.training.settings). Runs in workers: torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradviz.devices.simulated import mps_available
from gradviz.training.settings import (
    Preset,
    TrainingDevices,
)
from gradviz.workers.protocol import ErrorKind


class DeviceError(Exception):
    """The requested device is not present on this host; the message says why."""

    error_kind = ErrorKind.DEVICE


# ----------------------------------------------------------------------------- devices


def host_devices() -> TrainingDevices:
    """Which devices this process's torch can train on (the server asks host.facts() instead)."""
    return TrainingDevices(bool(torch.cuda.is_available()), mps_available(), torch.version.cuda)


def available_devices() -> list[str]:
    """Device choices on this host: auto and cpu always, cuda and mps where present."""
    return host_devices().choices()


def device_unavailable_reason(name: str) -> str | None:
    """Why a device cannot be used here, or None when it can."""
    return host_devices().unavailable_reason(name)


def resolve_device(name: str) -> torch.device:
    """'auto' picks cuda, then mps, then cpu. Asking for an absent device raises DeviceError."""
    name = (name or "auto").strip().lower()
    reason = device_unavailable_reason(name)
    if reason:
        raise DeviceError(f"Cannot train on {name}: {reason}. Choose cpu or auto.")
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if mps_available() else torch.device("cpu")
    return torch.device(name)


def device_name(device: torch.device) -> str:
    """The device a training ran on, with the GPU's name: cuda (NVIDIA H100 80GB HBM3)."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


# ------------------------------------------------------------------ precision (presets: settings)


@dataclass(frozen=True)
class Precision:
    """Speed settings of the fast preset: channels_last on CPU and CUDA, the rest CUDA only."""

    channels_last: bool = False
    autocast_dtype: torch.dtype | None = None
    grad_scaler: bool = False
    cudnn_benchmark: bool = False


def plan_precision(
    preset: Preset, device_type: str, bf16_supported: bool | None = None
) -> Precision:
    """For the fast preset: channels_last + autocast (bf16, else fp16 with a GradScaler) +
    cudnn.benchmark on CUDA, and channels_last alone on the CPU (oneDNN's convolutions run the
    fast preset's net about 1.35x faster in NHWC on 2 cores; docs/BENCHMARKS.md). Nothing for the
    tutorial preset, which stays as the tutorial wrote it, nor on MPS."""
    if not preset.resident:
        return Precision()
    if device_type == "cpu":
        return Precision(channels_last=True)
    if device_type != "cuda":
        return Precision()
    if bf16_supported is None:
        bf16_supported = torch.cuda.is_bf16_supported()
    dtype = torch.bfloat16 if bf16_supported else torch.float16
    return Precision(
        channels_last=True,
        autocast_dtype=dtype,
        grad_scaler=dtype == torch.float16,
        cudnn_benchmark=True,
    )
