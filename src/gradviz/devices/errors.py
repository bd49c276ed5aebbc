"""PyTorch's device errors explained: the one table of what gradviz says about them.

Each case (DEVICE_ERRORS) has its title, the rule broken and the fix, in one wording; the
patterns that recognise PyTorch's messages (RECOGNISED) say which case a message is and
which devices and tensors it involves. `explain_device_error(message, tensors_by_name)`
gives the rule, the devices and a fix naming the tensor to move: a program's runtime error
(gradviz.program.runtime.errors) with its operands, and the plain explanation of a message
alone (gradviz.program.results.explain) with none. No torch here (the server imports it),
no Streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class DeviceExplanation:
    kind: str  # device_mismatch | cuda_index_mismatch | index_device | numpy_cuda | no_cuda
    title: str
    rule: str
    devices: list[str] = field(default_factory=list)
    tensors: dict[str, str] = field(default_factory=dict)  # name -> device, the operands
    move: str | None = None  # the tensor to move
    target: str | None = None  # its destination, as code (e.g. "a.device")
    fix_code: str = ""
    explanation: str | None = None  # DeviceErrorText.explanation


MISMATCH_RE = re.compile(r"found at least two devices, ([\w:]+) and ([\w:]+)")
# Another form of the same error, naming the argument: "... but got mat2 is on cpu, different
# from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_mm)".
GOT_RE = re.compile(r"but got \w+ is on ([\w:]+), different from other tensors on ([\w:]+)")
RULE_SAME_DEVICE = (
    "An operation's tensor operands must all live on the same device: PyTorch never copies "
    "between devices behind your back, because copies are slow and should be visible. One "
    "exception: a 0-dim CPU tensor (a single number such as torch.tensor(2.0)) may be combined "
    "with tensors on any device."
)
MOVE_IT = "{move} = {move}.to({target})"


@dataclass(frozen=True)
class DeviceErrorText:
    """What gradviz says about one case of a device error. `rule` and `fix` are templates:
    {move} the tensor to move, {target} where to (as code), {to} and {away} the devices."""

    kind: str  # DeviceExplanation.kind
    title: str
    rule: str
    fix: str
    # the key of the plain explanation a runtime error carries (ErrorDetails.explanation,
    # gradviz.program.results.explain); None: it has none besides these device details
    explanation: str | None = None


DEVICE_ERRORS: dict[str, DeviceErrorText] = {
    "gpu_and_cpu": DeviceErrorText(
        "device_mismatch",
        "Tensors on different devices (GPU and CPU)",
        RULE_SAME_DEVICE,
        MOVE_IT,
        "device_mismatch",
    ),
    "other_devices": DeviceErrorText(
        "device_mismatch",
        "Tensors on different devices",
        RULE_SAME_DEVICE,
        MOVE_IT,
        "device_mismatch",
    ),
    "two_gpus": DeviceErrorText(
        "cuda_index_mismatch",
        "Tensors on two different GPUs",
        RULE_SAME_DEVICE + " Two GPUs are two devices: {to} and {away} have separate memory, "
        "so the same rule applies between them.",
        MOVE_IT,
        "device_mismatch",
    ),
    "index_device": DeviceErrorText(
        "index_device",
        "Index tensor on another device",
        "An index tensor may live on the CPU or on the same device as the tensor it indexes. "
        "So a GPU tensor indexed with a CPU index works (PyTorch copies the small index "
        "over), but a CPU tensor indexed with a GPU index is refused.",
        MOVE_IT,
    ),
    "numpy_cuda": DeviceErrorText(
        "numpy_cuda",
        ".numpy() on a GPU tensor",
        "A NumPy array lives in host (CPU) memory, so a GPU tensor must be copied back "
        "first; the copy waits for the GPU to finish (a hidden synchronisation).",
        "{move}.detach().cpu().numpy()",
        "numpy_cuda",
    ),
    "no_cuda": DeviceErrorText(
        "no_cuda",
        "No CUDA GPU on this machine",
        "The program asked for a CUDA device, but PyTorch found none on this machine.",
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        "no_cuda",
    ),
}


@dataclass
class _Involved:
    """Which case of DEVICE_ERRORS a message is, and the devices and tensors it involves."""

    case: str
    devices: list[str]
    move: str | None = None  # the operand to move, when the operation named one
    target: str | None = None  # its destination, as code
    name: str = ""  # the name the fix uses: `move`, or a stand-in
    to: str = ""  # the device to move to
    away: str = ""  # the device to move from
    fix: str | None = None  # instead of the case's template


def _pick(tensors: dict[str, str], device: str) -> str | None:
    return next((n for n, d in tensors.items() if d == device), None)


def _same_device(message: str, tensors: dict[str, str]) -> _Involved:
    m, got = MISMATCH_RE.search(message), GOT_RE.search(message)
    if m:
        found = list(m.groups())
    elif got:
        found = [got.group(2), got.group(1)]
    else:
        found = sorted(set(tensors.values()))
    return _between(found, tensors)


def _between(found: list[str], tensors: dict[str, str]) -> _Involved:
    """Operands on the devices `found` (in PyTorch's order): which to move, and where."""
    found = list(dict.fromkeys(found))
    if "cpu" in found and len(found) >= 2:
        to, away = next(d for d in found if d != "cpu"), "cpu"
        case = "gpu_and_cpu"
    else:
        to, away = (found + ["cuda:0", "cuda:1"])[:2]
        case = "two_gpus" if found and found[0].startswith("cuda") else "other_devices"
    move, ref = _pick(tensors, away), _pick(tensors, to)
    target = f"{ref}.device" if ref else repr(to)
    fix = None if move else f"x = x.to({target!s})  # the {away} operand"
    return _Involved(case, found, move, target, move or "", to, away, fix)


CONV_TYPES_RE = re.compile(
    r"Input type \(([\w.]+)\) and weight type \(([\w.]+)\) should be the same"
)


def _conv_types(message: str, tensors: dict[str, str]) -> _Involved | None:
    """A convolution's input and weight on different devices, as its CUDA kernel words it
    ("Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the
    same"); None when both are on one device (a dtype mismatch, not a device one)."""
    m = CONV_TYPES_RE.search(message)
    if m is None:
        return None
    gpu = next((d for d in tensors.values() if d.startswith("cuda")), "cuda:0")
    found = [gpu if "cuda" in t.lower() else "cpu" for t in m.groups()]
    if found[0] == found[1]:
        return None
    return _between(found, tensors)


def _index_device(message: str, tensors: dict[str, str]) -> _Involved:
    dev = re.search(r"indexed tensor \(([\w:]+)\)", message)
    self_dev = dev.group(1) if dev else "cpu"
    idx_name = next((n for n, d in tensors.items() if d != self_dev), None)
    indexed = _pick(tensors, self_dev)
    target = f"{indexed}.device" if indexed else repr(self_dev)
    devices = sorted(set(tensors.values()) | {self_dev})
    return _Involved("index_device", devices, idx_name, target, idx_name or "idx")


def _numpy_on_gpu(message: str, tensors: dict[str, str]) -> _Involved:
    name = next(iter(tensors), "t")
    return _Involved("numpy_cuda", sorted(set(tensors.values())), name, "'cpu'", name)


# How each device error reads in PyTorch's message, tried in this order, and who it involves.
RECOGNISED: tuple[
    tuple[re.Pattern[str], Callable[[str, dict[str, str]], _Involved | None]], ...
] = (
    (
        re.compile(r"Expected all tensors to be on the same device|" + MISMATCH_RE.pattern),
        _same_device,
    ),
    (CONV_TYPES_RE, _conv_types),
    (re.compile(r"indices should be either on"), _index_device),
    (
        re.compile(
            r"to numpy\. Use Tensor\.cpu\(\)|can't convert cuda|"
            r"Use Tensor\.cpu\(\) to copy the tensor to host memory"
        ),
        _numpy_on_gpu,
    ),
    (
        re.compile(r"Found no NVIDIA driver|Torch not compiled with CUDA|no CUDA GPUs"),
        lambda _message, _tensors: _Involved("no_cuda", []),
    ),
)


def explain_device_error(message: str, tensors_by_name: dict[str, str]) -> DeviceExplanation | None:
    """Explain one of PyTorch's device errors. `tensors_by_name`: the failing operation's
    tensor operands, name -> device (as str). None when the message is not about devices."""
    tensors = dict(tensors_by_name)
    found = next(
        (who(message, tensors) for pattern, who in RECOGNISED if pattern.search(message)), None
    )  # a case may still say None: not about devices after all
    if found is None:
        return None
    text = DEVICE_ERRORS[found.case]
    words = {"move": found.name, "target": found.target, "to": found.to, "away": found.away}
    fix = found.fix if found.fix is not None else text.fix.format(**words)
    return DeviceExplanation(
        text.kind,
        text.title,
        text.rule.format(**words),
        found.devices,
        tensors,
        found.move,
        found.target,
        fix,
        text.explanation,
    )
