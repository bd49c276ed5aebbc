"""Devices: what this host has, and simulated CUDA where it has none.

No Streamlit here. The pieces:

- `list_devices()`: cpu, each real CUDA GPU (name, memory), Apple MPS when present, and,
  on a host without CUDA, the simulated CUDA devices (labelled as such everywhere).
- Simulated CUDA: values are computed on the CPU while PyTorch's own FakeTensorMode
  decides device semantics (which device an output lives on, and PyTorch's own
  "Expected all tensors to be on the same device" error). `FakeShadow` keeps a fake twin
  for each real tensor; gradviz.program.runtime.placement uses it around `Library.call`.
- Device errors are explained in gradviz.devices.errors (no torch there), the one table of
  their words; `message_source` says where a message came from.
- `memory_summary()` (the real allocators) and `model_placement(device)` (lesson 003's
  `next(model.parameters()).device`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import torch

from gradviz.devices.info import SIMULATED_CUDA_COUNT, CudaMemory


def cuda_available() -> bool:
    return bool(torch.cuda.is_available())


def simulation_needed() -> bool:
    """True where PyTorch has no CUDA device: lessons then run on simulated CUDA."""
    return not cuda_available()


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


# ---------------------------------------------------------------- simulated CUDA


class SimulatedDeviceError(RuntimeError):
    """A device rule PyTorch enforces on a real GPU that FakeTensorMode does not check.

    The message is PyTorch's own text (its pieces are in the torch binary); gradviz only
    decides when it applies."""


def is_device_like(v) -> bool:
    """A torch.device, or a string torch accepts as one ("cuda", "cuda:1", "cpu", ...)."""
    if isinstance(v, torch.device):
        return True
    if not (isinstance(v, str) and v.startswith(("cuda", "cpu", "mps"))):
        return False
    try:
        torch.device(v)
    except (RuntimeError, ValueError):
        return False
    return True


def check_simulated_index(device: torch.device) -> None:
    if device.type == "cuda" and (device.index or 0) >= SIMULATED_CUDA_COUNT:
        raise SimulatedDeviceError(
            f"{device} does not exist: simulated CUDA has {SIMULATED_CUDA_COUNT} devices "
            f"(cuda:0 to cuda:{SIMULATED_CUDA_COUNT - 1})"
        )


def is_device_error(exc: BaseException) -> bool:
    """PyTorch's device-mismatch errors (FakeTensorMode's, or a rule gradviz applies)."""
    if isinstance(exc, SimulatedDeviceError):
        return True
    if type(exc).__name__ == "FakeTensorDeviceMismatchError":
        return True
    return "Expected all tensors to be on the same device" in str(exc)


def message_source(simulated: bool, rule_by_gradviz: bool = False) -> str:
    """Where a device error message came from, as the page says it."""
    if not simulated:
        return "captured on a real GPU" if cuda_available() else "captured on this machine (CPU)"
    if rule_by_gradviz:
        return (
            "simulated: PyTorch's message text, applied by gradviz (simulated CUDA does not "
            "check this rule on a CPU-only host)"
        )
    return "simulated: raised by PyTorch itself on simulated CUDA, on this CPU-only host"


class FakeShadow:
    """Fake twins of real CPU tensors, carrying the device PyTorch's rules give them.

    Each operation runs first on the twins under FakeTensorMode (PyTorch decides the
    output's device, or raises its own device-mismatch error), then on the real CPU
    tensors for values and gradients."""

    def __init__(self) -> None:
        self._mode = None
        self._twins: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # id(real) -> (real, fake)
        self.active = False  # becomes True once any tensor lives on a simulated device

    @property
    def mode(self):
        """FakeTensorMode, made on first use: importing it pulls in torch._dynamo (about a
        second), which a program that stays on the CPU never needs."""
        if self._mode is None:
            from torch._subclasses.fake_tensor import FakeTensorMode

            self._mode = FakeTensorMode(allow_non_fake_inputs=True)
        return self._mode

    def device_of(self, t: torch.Tensor) -> torch.device:
        entry = self._twins.get(id(t))
        if entry is not None and entry[0] is t:
            return entry[1].device
        return t.device

    def twin(self, t: torch.Tensor) -> torch.Tensor:
        entry = self._twins.get(id(t))
        if entry is not None and entry[0] is t:
            return entry[1]
        with torch.no_grad():
            fake = self.mode.from_tensor(t.detach())
        self._twins[id(t)] = (t, fake)
        return fake

    def place(self, t: torch.Tensor, device: str | torch.device) -> None:
        """Say that real CPU tensor `t` lives on `device`."""
        device = torch.device(device)
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", 0)
        check_simulated_index(device)
        with torch.no_grad(), self.mode:
            fake = self.mode.from_tensor(t.detach()).to(device)
        self._twins[id(t)] = (t, fake)
        if device.type != "cpu":
            self.active = True

    def record(self, real, fake) -> bool:
        """Pair the outputs of one operation (same structure) real -> fake."""
        from torch.utils._pytree import tree_flatten

        reals, _ = tree_flatten(real)
        fakes, _ = tree_flatten(fake)
        if len(reals) != len(fakes):
            return False
        for r, f in zip(reals, fakes, strict=True):
            if isinstance(r, torch.Tensor) and isinstance(f, torch.Tensor):
                self._twins[id(r)] = (r, f)
                if f.device.type != "cpu":
                    self.active = True
        return True

    def needed(self, args, kwargs) -> bool:
        """Does this operation need the fake run? (Only once simulated devices are in play.)"""
        if self.active:
            return True
        # devices are passed at the top level: device=..., or .to("cuda") positionally
        return any(
            is_device_like(v) and torch.device(v).type == "cuda" for v in (*args, *kwargs.values())
        )

    def fakes_for(self, args, kwargs):
        from torch.utils._pytree import tree_map

        def conv(v):
            return self.twin(v) if isinstance(v, torch.Tensor) else v

        return tree_map(conv, args), {k: conv(v) for k, v in kwargs.items()}

    def run(self, fn, args, kwargs):
        """fn on the twins under FakeTensorMode: the fake outputs, or PyTorch's own error."""
        fargs, fkwargs = self.fakes_for(args, kwargs)
        fkwargs.pop("generator", None)
        check_index_devices(fn, fargs)
        check_conv_devices(fn, fargs, self.device_of)
        try:
            with torch.no_grad(), self.mode:
                out = fn(*fargs, **fkwargs)
        except RuntimeError as exc:
            raise older_fake_mismatch(exc) or exc from None
        from torch.utils._pytree import tree_flatten

        for leaf in tree_flatten(out)[0]:
            if isinstance(leaf, torch.Tensor):
                check_simulated_index(leaf.device)
        return out


# How FakeTensorMode before torch 2.14 words a device mismatch (later: PyTorch's own message,
# FakeTensorDeviceMismatchError). Indexing is left out: its device rule is check_index_devices'.
OLDER_FAKE_MISMATCH_RE = re.compile(
    r"Unhandled FakeTensor Device Propagation for (aten\.[\w.]+), found two different "
    r"devices ([\w:]+), ([\w:]+)"
)


def older_fake_mismatch(exc: RuntimeError) -> SimulatedDeviceError | None:
    """An older FakeTensorMode's device mismatch as the error PyTorch raises on a real GPU
    (its message text); None for any other error. Seen on torch 2.11, where the simulation
    otherwise let every mix of devices run (bench/gpu_check.py, docs/gpu/)."""
    m = OLDER_FAKE_MISMATCH_RE.search(str(exc))
    if m is None or m.group(1).startswith("aten.index"):
        return None
    return SimulatedDeviceError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{m.group(2)} and {m.group(3)}!"
    )


CONV_LAYERS = (
    torch.nn.Conv1d,
    torch.nn.Conv2d,
    torch.nn.Conv3d,
    torch.nn.ConvTranspose1d,
    torch.nn.ConvTranspose2d,
    torch.nn.ConvTranspose3d,
)
LEGACY_TYPE = {
    torch.float32: "FloatTensor",
    torch.float64: "DoubleTensor",
    torch.float16: "HalfTensor",
    torch.bfloat16: "BFloat16Tensor",
}


def legacy_type(t: torch.Tensor, device: torch.device) -> str:
    """Tensor.type()'s name for `t` on `device` ("torch.cuda.FloatTensor")."""
    name = LEGACY_TYPE.get(t.dtype, "Tensor")
    return f"torch.cuda.{name}" if device.type == "cuda" else f"torch.{name}"


def check_conv_devices(fn, args, device_of: Callable[[torch.Tensor], torch.device]) -> None:
    """A convolution layer called with a GPU input while its weight is on the CPU: refused on a
    real GPU by the convolution's own check, in its own words (seen on an H100, torch 2.11 and
    docs/gpu/), which FakeTensorMode before torch 2.14 let through. Applied on every version,
    so the simulated message is the real one."""
    layer = getattr(fn, "module", fn)  # a layer, or the interpreter's call of one
    if not isinstance(layer, CONV_LAYERS):
        return
    inputs = [a for a in args if isinstance(a, torch.Tensor)]
    given = next((a for a in args if isinstance(a, dict)), {})  # the layer's tensors, if given
    weight = given.get("weight", layer.weight)
    if not inputs or not isinstance(weight, torch.Tensor):
        return
    x = inputs[0]
    x_device, w_device = device_of(x), device_of(weight)
    if x_device.type == "cuda" and w_device.type == "cpu":
        raise SimulatedDeviceError(
            f"Input type ({legacy_type(x, x_device)}) and weight type "
            f"({legacy_type(weight, w_device)}) should be the same"
        )


def check_index_devices(fn, args) -> None:
    """Indexing: PyTorch accepts index tensors on the CPU or on the indexed tensor's device.

    A CPU tensor indexed by a CUDA index tensor is refused on a real GPU, but FakeTensorMode
    (torch 2.14) lets it through; this applies PyTorch's rule with PyTorch's message."""
    import operator

    if fn not in (operator.getitem, operator.setitem) or not args:
        return
    self_t = args[0]
    if not isinstance(self_t, torch.Tensor):
        return
    index = args[1] if len(args) > 1 else None
    indices = index if isinstance(index, tuple | list) else (index,)
    for idx in indices:
        if isinstance(idx, torch.Tensor) and idx.device.type != "cpu":
            if idx.device != self_t.device:
                raise SimulatedDeviceError(
                    "indices should be either on cpu or on the same device as the indexed "
                    f"tensor ({self_t.device})"
                )


def numpy_message(device: torch.device) -> str:
    """PyTorch's own text for .numpy() on a tensor that is not on the CPU."""
    return (
        f"can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the "
        "tensor to host memory first."
    )


def tensor_repr(t: torch.Tensor, device: torch.device) -> str:
    """repr() of a real CPU tensor as PyTorch prints it on `device` (device= after the data)."""
    text = repr(t)
    if device.type == "cpu" or not text.startswith("tensor("):
        return text
    i = len("tensor(")
    if text[i] == "[":
        depth = 0
        for j in range(i, len(text)):
            if text[j] == "[":
                depth += 1
            elif text[j] == "]":
                depth -= 1
                if depth == 0:
                    i = j + 1
                    break
    else:
        while i < len(text) and text[i] not in ",)":
            i += 1
    return text[:i] + f", device='{device}'" + text[i:]


# ---------------------------------------------------------------- memory and placement


def memory_summary() -> list[CudaMemory]:
    """Per real CUDA device: what PyTorch's caching allocator holds, and what the driver sees."""
    out = []
    if not cuda_available():
        return out
    for i in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(i)
        out.append(
            CudaMemory(
                device=f"cuda:{i}",
                allocated=torch.cuda.memory_allocated(i),
                reserved=torch.cuda.memory_reserved(i),
                used_by_all_processes=total - free,
                total=total,
            )
        )
    return out


def model_placement(device: str, simulate: bool | None = None) -> dict:
    """Build torch.nn.Linear(4, 2) on `device` and ask PyTorch where its parameters live.

    On simulated CUDA the model is built under FakeTensorMode: PyTorch itself answers
    `next(model.parameters()).device`."""
    simulate = simulation_needed() if simulate is None else simulate
    dev = torch.device(device)
    if simulate and dev.type == "cuda":
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode():
            model = torch.nn.Linear(4, 2, device=dev)
            answer = next(model.parameters()).device
    else:
        model = torch.nn.Linear(4, 2).to(dev)
        answer = next(model.parameters()).device
    return {
        "code": f"model = torch.nn.Linear(4, 2).to({str(dev)!r})\nnext(model.parameters()).device",
        "device": str(answer),
        "simulated": bool(simulate and dev.type == "cuda"),
        "parameters": {n: str(p.device) for n, p in model.named_parameters()},
    }
