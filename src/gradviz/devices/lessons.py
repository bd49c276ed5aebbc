"""The device lessons: each way of mixing devices, as a program with what PyTorch does.

One table serves the Devices page, the unit tests on simulated CUDA and the `gpu`-marked
tests that run the same programs on a real GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gradviz.util.reference import ReferenceFileError, ReferenceFormat, require_field


@dataclass(frozen=True)
class DeviceLesson:
    key: str
    title: str
    source: str
    error: bool  # does PyTorch refuse it?
    line: int | None = None  # the line that raises
    devices: tuple[str, ...] = ()  # the devices the explanation names
    move: str | None = None  # the tensor the fix moves
    kind: str | None = None  # gradviz.devices.errors.DeviceExplanation.kind
    fix: str | None = None  # the fix as code
    gpus: int = 1  # real GPUs needed to run it for real


LESSONS: list[DeviceLesson] = [
    DeviceLesson(
        "binary",
        "Binary op: GPU tensor + CPU tensor",
        "a = torch.randn(3, device='cuda')\nb = torch.randn(3)\nc = a + b\n",
        True,
        3,
        ("cuda:0", "cpu"),
        "b",
        "device_mismatch",
        "b = b.to(a.device)",
    ),
    DeviceLesson(
        "zero_dim",
        "0-dim CPU tensor with a GPU tensor (allowed)",
        "a = torch.randn(3, device='cuda', requires_grad=True)\ns = torch.tensor(2.0)\n"
        "c = (a * s).sum()\nc.backward()\n",
        False,
    ),
    DeviceLesson(
        "matmul",
        "Matrix product across devices",
        "w = torch.randn(2, 3).cuda()\nx = torch.randn(3, 2)\ny = w @ x\n",
        True,
        3,
        ("cuda:0", "cpu"),
        "x",
        "device_mismatch",
        "x = x.to(w.device)",
    ),
    DeviceLesson(
        "linear",
        "F.linear: weight on the GPU, input on the CPU",
        "w = torch.randn(4, 3, device='cuda', requires_grad=True)\nx = torch.randn(2, 3)\n"
        "y = F.linear(x, w)\n",
        True,
        3,
        ("cpu", "cuda:0"),
        "x",
        "device_mismatch",
        "x = x.to(w.device)",
    ),
    DeviceLesson(
        "loss_target",
        "A loss whose targets stay on the CPU",
        "logits = torch.randn(2, 3, device='cuda', requires_grad=True)\n"
        "target = torch.tensor([0, 2])\nloss = F.cross_entropy(logits, target)\n",
        True,
        3,
        ("cuda:0", "cpu"),
        "target",
        "device_mismatch",
        "target = target.to(logits.device)",
    ),
    DeviceLesson(
        "index_cpu_index",
        "GPU tensor indexed with a CPU index (allowed)",
        "x = torch.randn(4, device='cuda')\nidx = torch.tensor([0, 2])\ny = x[idx]\n",
        False,
    ),
    DeviceLesson(
        "index_gpu_index",
        "CPU tensor indexed with a GPU index (refused)",
        "x = torch.randn(4)\nidx = torch.tensor([0, 2], device='cuda')\ny = x[idx]\n",
        True,
        3,
        ("cpu", "cuda:0"),
        "idx",
        "index_device",
        "idx = idx.to(x.device)",
    ),
    DeviceLesson(
        "cat",
        "torch.cat of tensors on different devices",
        "a = torch.randn(2, device='cuda')\nb = torch.randn(2)\nc = torch.cat([a, b])\n",
        True,
        3,
        ("cuda:0", "cpu"),
        "b",
        "device_mismatch",
        "b = b.to(a.device)",
    ),
    DeviceLesson(
        "numpy",
        ".numpy() on a GPU tensor",
        "a = torch.randn(2, device='cuda')\nn = a.numpy()\n",
        True,
        2,
        ("cuda:0",),
        "a",
        "numpy_cuda",
        "a.detach().cpu().numpy()",
    ),
    DeviceLesson(
        "two_gpus",
        "cuda:0 and cuda:1",
        "a = torch.randn(2, device='cuda:0')\nb = torch.randn(2, device='cuda:1')\nc = a + b\n",
        True,
        3,
        ("cuda:0", "cuda:1"),
        "b",
        "cuda_index_mismatch",
        "b = b.to(a.device)",
        gpus=2,
    ),
    DeviceLesson(
        "copy",
        "Moving a leaf to the GPU: a copy autograd records",
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\nxg = x.to('cuda')\n"
        "y = (xg * xg).sum()\ny.backward()\nback = y.cpu()\n",
        False,
    ),
]

LESSONS_BY_KEY = {lesson.key: lesson for lesson in LESSONS}


# Each case run on simulated CUDA and on a real GPU by bench/gpu_check.py (`make gpu-check`),
# read with gradviz.util.reference.load_reference(GPU_CHECK_PATH, GPU_CHECK_FORMAT).
GPU_CHECK_PATH = Path(__file__).resolve().parents[3] / "docs" / "gpu" / "simulated_vs_real.json"
VERDICTS_SAME = ("match", "message differs")  # the same outcome, line and explanation


def gpu_check_from(data: dict, name: str) -> dict:
    """The file's contents, checked: the machine that ran it (gpu, torch, date) and one row
    per case (case, verdict, and what each side gave). Raises ReferenceFileError."""
    machine = data.get("machine")
    if not isinstance(machine, dict):
        raise ReferenceFileError(f"{name}: missing object 'machine'")
    for key in ("torch", "date"):
        require_field(machine, key, str, f"{name} machine")
    if data.get("dry_run") is not False:
        raise ReferenceFileError(f"{name}: a dry run, not a real GPU's")
    require_field(machine, "gpu", str, f"{name} machine")
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ReferenceFileError(f"{name}: 'rows' should be a non-empty list")
    for i, row in enumerate(rows):
        where = f"{name} rows[{i}]"
        if not isinstance(row, dict):
            raise ReferenceFileError(f"{where}: should be an object")
        for key in ("case", "title", "verdict"):
            require_field(row, key, str, where)
        if not isinstance(row.get("simulated"), dict):
            raise ReferenceFileError(f"{where}: missing object 'simulated'")
    return data


GPU_CHECK_FORMAT = ReferenceFormat(gpu_check_from)
