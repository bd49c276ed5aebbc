"""Where a program's tensors live: simulated CUDA, leaf moves, and the devices of graph nodes.

On a host without CUDA, a run simulates it (gradviz.devices.simulated.FakeShadow): every
tensor is real and on the CPU, and next to it FakeTensorMode keeps a fake twin on the device
PyTorch's rules give it. `Placement.before_call` runs a call on the twins first (so PyTorch
itself decides the output's device, or raises its own device error), then hands back the
same call for the real CPU tensors; `after_call` records where the outputs live. It also
keeps the run's device bookkeeping: the leaves moved by `RunOptions.device_overrides`
(`moves`), notes shown next to the result (`device_notes`), and the device of each autograd
node (`fn_devices`, read by gradviz.graph.build).
"""

from __future__ import annotations

import torch

from gradviz.devices import simulated as devices
from gradviz.devices.info import SIMULATED_CUDA_COUNT
from gradviz.program.budgets.object_sizes import leaves
from gradviz.program.recording.state import RunState
from gradviz.program.results.reports import DeviceMove
from gradviz.program.runtime.errors import runtime_error
from gradviz.program.runtime.values import tensors_in

_NO_FAKE = object()  # no fake run for this call
_NO_TENSOR = frozenset({bool, int, float, str, torch.Size, torch.dtype})  # results without one
_MOVES = (torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu)
# backward() cannot run on fake CUDA tensors (hasPrimaryContext): values and gradients come
# from the real CPU run; setting attributes and reading them need no device rules.
_NO_FAKE_FNS = (torch.Tensor.backward, setattr, getattr)


class NodeDevices(dict):
    """id(autograd node) -> (node, device): the device of each node the run made, as
    gradviz.graph.build reads it (a node with none noted is on the CPU).

    Without simulated CUDA, while every output has been on the CPU, no node is walked: the
    notes would change nothing. The outputs' nodes wait in `waiting` instead, in order
    (held, as the notes hold them, so no other node takes their ids), and are noted first
    when another device appears: a walk from that device's nodes then stops where it
    stopped before."""

    def __init__(self):
        super().__init__()
        self.waiting: list = []

    def clear(self) -> None:
        super().clear()
        self.waiting = []


class Placement:
    """The devices of one run's tensors and autograd nodes, real or simulated."""

    def __init__(self, state: RunState):
        self.state = state
        self.shadow = state.shadow
        self.device_overrides = dict(state.options.device_overrides or {})
        self.moves: list[DeviceMove] = []
        self.device_notes: list[str] = []
        self.fn_devices = NodeDevices()  # id(autograd node) -> (node, device)
        self.cpu_only = self.shadow is None  # NodeDevices.waiting

    def move_leaf(self, name: str, value: torch.Tensor, device: str, stmt) -> torch.Tensor:
        """device_overrides: the leaf is made on `device`, as if the program had said so."""
        before = self.state.device_of(value)
        if before == str(torch.device(device)) or (device == "cuda" and before == "cuda:0"):
            return value
        requires_grad = value.requires_grad
        if self.shadow is not None and torch.device(device).type == "cuda":
            moved = value.detach().clone().requires_grad_(requires_grad)
            self.shadow.place(moved, device)
        elif self.shadow is not None:  # back to the CPU from a simulated device
            moved = value.detach().clone().requires_grad_(requires_grad)
        else:
            try:
                moved = value.detach().to(device).requires_grad_(requires_grad)
            except Exception as exc:
                raise runtime_error(self.state, exc, stmt, f"moving {name} to {device}") from None
        self.moves.append(DeviceMove(name, stmt.lineno, before, self.state.device_of(moved)))
        return moved

    def simulated_cuda_answer(self, label: str) -> bool | int:
        """torch.cuda.is_available() / device_count() under simulated CUDA, with a note."""
        answer = True if label.endswith("is_available") else SIMULATED_CUDA_COUNT
        note = (
            f"`{label}()` answered {answer} (simulated): this host has no CUDA GPU, so gradviz "
            f"simulates {SIMULATED_CUDA_COUNT} (cuda:0, cuda:1) as simulated CUDA: values are "
            "computed on the CPU, device rules are PyTorch's own."
        )
        if note not in self.device_notes:
            self.device_notes.append(note)
        return answer

    # -- around each call: PyTorch decides devices on fake twins, values come from the CPU

    def before_call(self, label: str, fn, args, kwargs, node):
        """(fake output, function, args, kwargs) for the real call: under simulated CUDA
        the fake twins run first and the real call gets CPU devices. Without simulated
        CUDA it hands the call back as it is (Library.call then does not ask), and
        `after_call` reads no fake output."""
        fake_out = _NO_FAKE
        if self.shadow is not None and fn not in _NO_FAKE_FNS:
            if fn in _MOVES or self.shadow.needed(args, kwargs):
                fake_out = self.fake_call(label, fn, args, kwargs, node)
                fn, args, kwargs = self.real_call(fn, args, kwargs, fake_out)
        return fake_out, fn, args, kwargs

    def after_call(self, result, args, kwargs, fake_out) -> None:
        """Record where the outputs live, and the device of each autograd node made."""
        if self.cpu_only:
            self.note_cpu_outputs(result)
            return
        if self.shadow is not None and fake_out is not _NO_FAKE:
            if not self.shadow.record(result, fake_out):
                self.shadow_fallback(result, args, kwargs)
        elif self.shadow is not None and self.shadow.active:
            self.shadow_fallback(result, args, kwargs)
        if self.shadow is None or self.shadow.active:  # before that, everything is on the CPU
            self.note_fn_devices(result)

    def fake_call(self, label: str, fn, args, kwargs, node):
        try:
            return self.shadow.run(fn, args, kwargs)
        except Exception as exc:
            if devices.is_device_error(exc):
                raise runtime_error(
                    self.state,
                    exc,
                    node,
                    label,
                    tensors_in(args, kwargs),
                    rule_by_gradviz=isinstance(exc, devices.SimulatedDeviceError),
                ) from None
            return _NO_FAKE  # e.g. data-dependent outputs: the real run decides

    def real_call(self, fn, args, kwargs, fake_out):
        """The same call on the real CPU tensors: devices become "cpu"; a move is a copy."""

        def cpu(v):  # simulated CUDA only; a real device (e.g. Apple's mps) stays real
            return "cpu" if devices.is_device_like(v) and torch.device(v).type == "cuda" else v

        kwargs = {k: cpu(v) if k == "device" else v for k, v in kwargs.items()}
        if fn not in _MOVES:
            return fn, args, kwargs
        src = args[0]
        moved = isinstance(fake_out, torch.Tensor) and fake_out.device != self.shadow.device_of(src)
        if fn is torch.Tensor.to:
            args = tuple(cpu(a) for a in args)
            if moved:
                kwargs = {**kwargs, "copy": True}
            return fn, args, kwargs
        # .cuda(...) / .cpu(): a copy when the device changes, the tensor itself otherwise
        return (lambda t, *a, **k: t.to("cpu", copy=True) if moved else t), args, {}

    def shadow_fallback(self, result, args, kwargs) -> None:
        """Outputs FakeTensorMode could not compute (data-dependent shapes, Python numbers):
        they live where their first tensor input lives."""
        inputs = tensors_in(args, kwargs)
        if not inputs:
            return
        where = self.shadow.device_of(inputs[0])
        if where.type == "cpu":
            return
        for t in leaves(result):
            if isinstance(t, torch.Tensor) and self.shadow.device_of(t).type == "cpu":
                self.shadow.place(t, where)

    def note_cpu_outputs(self, result) -> None:
        """after_call while every output so far has been on the CPU (no simulated CUDA)."""
        if type(result) is torch.Tensor:
            fn = result.grad_fn
            if fn is not None and result.is_cpu:
                self.fn_devices.waiting.append(fn)
                return
            outputs = (result,) if fn is not None else ()
        elif result is None or type(result) in _NO_TENSOR:
            return
        else:
            outputs = leaves(result)
        for t in outputs:
            if not isinstance(t, torch.Tensor):
                continue
            fn = t.grad_fn
            if fn is None:
                continue
            if not t.is_cpu:  # another device: from now on every node is noted
                self.cpu_only = False
                self.note_fn_devices(result)
                return
            self.fn_devices.waiting.append(fn)

    def note_fn_devices(self, result) -> None:
        """The device of each autograd node this operation made (its output's device)."""
        notes = self.fn_devices
        if notes.waiting:
            waiting, notes.waiting = notes.waiting, []
            for fn in waiting:
                self.walk(fn, "cpu")
        for t in leaves(result):
            if not isinstance(t, torch.Tensor) or t.grad_fn is None:
                continue
            if id(t.grad_fn) in self.fn_devices:
                continue
            self.walk(t.grad_fn, self.state.device_of(t))

    def walk(self, start, where: str) -> None:
        """`where` for `start` and the nodes behind it that have no device yet."""
        notes = self.fn_devices
        if id(start) in notes:
            return
        stack = [start]
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in notes or holds_a_leaf(fn):
                continue
            notes[id(fn)] = (fn, where)
            stack.extend(n for n, _ in fn.next_functions)


_HOLDS_A_LEAF: dict[type, bool] = {}  # by an autograd node's type: AccumulateGrad's or not


def holds_a_leaf(fn) -> bool:
    """Whether an autograd node is a leaf's AccumulateGrad (it has `.variable`): asked once
    per type of node (hasattr on any other node raises and catches an AttributeError)."""
    kind = type(fn)
    known = _HOLDS_A_LEAF.get(kind)
    if known is None:
        known = hasattr(fn, "variable")
        if hasattr(fn, "__dict__"):  # a node of Python's own: its attributes are its own
            return known
        _HOLDS_A_LEAF[kind] = known
    return known
