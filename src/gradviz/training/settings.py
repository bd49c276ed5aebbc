"""What the training page needs to know, without torch: presets, devices, limits.

The Streamlit server imports this module (never torch): the presets and their defaults,
which devices a host can train on (from gradviz.services.host.facts(), asked of a worker),
the caps on a page run (batch size, memory, wall clock), the job limits and the upload size
limit. These names live here only: the worker-side modules import them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gradviz.training.sources import torchvision_missing
from gradviz.util import settings

if TYPE_CHECKING:
    import torch

    from gradviz.devices.info import HostFacts
    from gradviz.workers.jobs import JobLimits

# Uploaded weights. Streamlit holds an upload's bytes in the server's memory, and its server
# refuses a body over server.maxUploadSize (in MEGABYTE units) before holding it: app.py sets
# that option to max_upload_bytes() for the mode (.streamlit/config.toml holds the public cap,
# which applies until a page has run). The widest network's weights (fast-gpu) are 17.8 MB.
MEGABYTE = 1024 * 1024  # Streamlit's megabyte (server.maxUploadSize, max_upload_size)
MAX_CHECKPOINT_BYTES = 32 * MEGABYTE  # what a worker reads at most (training.checkpoint)


def max_upload_bytes() -> int:
    """The largest weights file the training page accepts (the host profile's upload_bytes,
    at most MAX_CHECKPOINT_BYTES; a whole number of MEGABYTEs)."""
    return settings.profile().upload_bytes


def uploads_held_budget() -> int:
    """How many uploaded bytes all sessions together may hold in the server (ui/training/
    uploads.py: the store refuses a file past it, and past one file's cap in one session). A
    page drops an upload's bytes as soon as it has handed them to a worker."""
    return settings.profile().uploads_held_bytes


# ----------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class Preset:
    name: str
    arch: str | None  # None: chosen by device (fast-cpu / fast-gpu)
    epochs: int
    batch_size: int
    lr: float
    momentum: float = 0.9
    nesterov: bool = False
    weight_decay: float = 0.0
    label_smoothing: float = 0.0
    one_cycle: bool = False
    augment: bool = False
    resident: bool = False  # data held as tensors on the training device
    description: str = ""

    def arch_for(self, device: torch.device) -> str:
        if self.arch:
            return self.arch
        return "fast-gpu" if device.type == "cuda" else "fast-cpu"


PRESETS: dict[str, Preset] = {
    "tutorial": Preset(
        name="tutorial",
        arch="tutorial",
        epochs=2,
        batch_size=4,
        lr=0.001,
        momentum=0.9,
        description=(
            "The tutorial, faithfully: TutorialNet, batch 4, SGD lr 0.001 momentum 0.9, 2 epochs, "
            "ToTensor + Normalize per image, a copy to the device per batch, loss.item() per step."
        ),
    ),
    "fast": Preset(
        name="fast",
        arch=None,
        epochs=10,
        batch_size=512,
        lr=0.4,
        momentum=0.9,
        nesterov=True,
        weight_decay=5e-4,
        label_smoothing=0.2,
        one_cycle=True,
        augment=True,
        resident=True,
        description=(
            "FastNet (conv-BN-GELU), data as tensors on the device, batch 512, random crop + flip "
            "on batched tensors, SGD Nesterov + one-cycle LR + label smoothing, channels_last, "
            "tested on each image and its mirror image; on CUDA also mixed precision and "
            "cudnn.benchmark."
        ),
    ),
}


def preset_unavailable_reason(preset: str | Preset) -> str | None:
    """Why a preset cannot train here (the tutorial's per-image transforms need torchvision)."""
    p = PRESETS[preset] if isinstance(preset, str) else preset
    if not p.resident and (missing := torchvision_missing()):
        return f"The {p.name} preset converts images with torchvision: {missing}"
    return None


# ----------------------------------------------------------------------------- devices


@dataclass(frozen=True)
class TrainingDevices:
    """Which devices a host can train on: from host.facts() in the server (no torch there),
    from torch itself in a worker (gradviz.training.hardware)."""

    cuda: bool
    mps: bool
    cuda_build: str | None = None  # torch.version.cuda: the CUDA this torch was built for

    @classmethod
    def from_facts(cls, facts: HostFacts) -> TrainingDevices:
        return cls(bool(facts.cuda_available), bool(facts.mps_available), facts.cuda_build)

    def choices(self) -> list[str]:
        """Device choices: auto and cpu always, cuda and mps where present."""
        choices = ["auto", "cpu"]
        if self.cuda:
            choices.append("cuda")
        if self.mps:
            choices.append("mps")
        return choices

    def unavailable_reason(self, name: str) -> str | None:
        """Why a device cannot be used here, or None when it can."""
        if name in ("auto", "cpu"):
            return None
        if name == "cuda":
            if self.cuda:
                return None
            if self.cuda_build is None:
                return "this PyTorch build has no CUDA support"
            return f"no CUDA GPU was found (PyTorch is built for CUDA {self.cuda_build})"
        if name == "mps":
            return None if self.mps else "Apple's MPS backend is not present on this host"
        return f"unknown device {name!r} (choose auto, cpu, cuda or mps)"


# ----------------------------------------------------------------------------- limits

MARGIN_SECONDS = 120.0  # a worker's wall clock beyond that: reading data, evaluating, pictures
# A public host (GRADVIZ_PUBLIC=1) shares a small container among all visitors: smaller batches
# (activations grow with the batch) and a tighter memory cap (util.settings' PUBLIC profile),
# so a run that outgrows it is stopped with a message instead of the whole app being killed.
EVALUATE_SECONDS = 120.0
STOP_REASONS = {"stop requested": "stopped by you", "time limit": "time limit reached"}


def max_batch_size() -> int:
    """The largest batch a page run may ask for: GRADVIZ_PUBLIC_MAX_BATCH on a public host."""
    if not settings.public_host():
        return settings.LOCAL.max_batch
    return settings.integer("GRADVIZ_PUBLIC_MAX_BATCH")


def training_memory() -> int:
    return settings.integer("GRADVIZ_TRAINING_MEMORY")


def check_batch_size(batch_size: int) -> None:
    cap = max_batch_size()
    if batch_size > cap:
        raise ValueError(
            f"Batch size {batch_size:,} is above this server's limit of {cap:,} "
            "(a public server keeps batches small so that training fits its memory)."
        )


def max_training_seconds() -> float:
    return settings.number("GRADVIZ_TRAINING_SECONDS")


def effective_time_limit(requested: float | None) -> float:
    """The user's time limit (0 or None: none), never beyond the server's maximum."""
    cap = max_training_seconds()
    if requested is None or not math.isfinite(requested) or requested <= 0:
        return cap
    return min(float(requested), cap)


def training_limits(time_limit: float, threads: int) -> JobLimits:
    """Wall clock = the run's time limit plus a margin; memory from GRADVIZ_TRAINING_MEMORY,
    lowered to what the host has free."""
    from gradviz.workers.jobs import JobLimits, memory_for_job

    memory = training_memory()
    return JobLimits(
        seconds=time_limit + MARGIN_SECONDS,
        memory_bytes=memory_for_job(memory),
        threads=threads,
    )


def evaluate_limits(threads: int) -> JobLimits:
    from gradviz.workers.jobs import JobLimits, memory_for_job

    memory = training_memory()
    return JobLimits(seconds=EVALUATE_SECONDS, memory_bytes=memory_for_job(memory), threads=threads)


# ----------------------------------------------------------------- several processes (DDP)

DDP_MIN_CPUS = 4  # a CPU (gloo) run splits the cores: below 2 threads per rank it only loses


def ddp_backend(device_type: str) -> str:
    """torch.distributed's backend for a device: NCCL between GPUs, gloo on the CPU."""
    return "nccl" if device_type == "cuda" else "gloo"


def rank_placement(
    nproc: int, device_type: str, gpu_names: tuple[str, ...] = (), per_machine: int = 0
) -> list[str]:
    """Where each rank of a DistributedDataParallel run trains, one line per rank: rank r on its
    machine's GPU r % per_machine (NCCL), or every rank on the CPU sharing its cores (gloo).
    per_machine: ranks on each machine (0: all on this one); with several machines each line
    names the machine."""
    backend = ddp_backend(device_type)
    per = per_machine if 0 < per_machine < nproc else nproc
    lines = []
    for rank in range(nproc):
        local = rank % per
        if device_type == "cuda":
            name = f" ({gpu_names[local]})" if local < len(gpu_names) else ""
            where = f"cuda:{local}{name}"
        else:
            where = "cpu"
        if per < nproc:
            where = f"machine {rank // per} {where}"
        role = ", writes results and weights" if rank == 0 else ""
        lines.append(f"rank {rank} -> {where}, {backend}{role}")
    return lines


def ddp_cpu_reason(cpus: int, nproc: int = 2) -> str | None:
    """Why a CPU (gloo) run of nproc processes makes no sense on a host with `cpus` cores, or
    None when it may: each rank needs at least two threads of its own (DDP_MIN_CPUS for two)."""
    need = max(DDP_MIN_CPUS, 2 * nproc)
    if cpus >= need:
        return None
    return (
        f"this host has {cpus} CPU core{'s' if cpus != 1 else ''}; {nproc} CPU processes would "
        f"share them and add gradient exchanges on top (it pays from about {need} cores)"
    )
