"""`with gradviz.record() as rec:`: names every tensor the block makes after its variable, and
records each layer's call, with PyTorch's own mechanisms only.

- A TorchFunctionMode (torch.overrides) sees each torch function and tensor method the
  block runs: it notes the tensors each one returns and the user's source line that made
  them, then reads the user's frames (the block's, and those of the functions it calls) for
  variables now holding a tensor made in the block. A name bound again (a loop, a function
  called twice) gets a new entry each time: `h[1]`, `h[2]`. Each named intermediate tensor
  calls retain_grad() (unless record(retain_grad=False)), so a drawing after backward()
  shows its gradient too.
- Global forward hooks on nn.Module (register_module_forward_pre_hook / _forward_hook)
  record each layer's call as a ModuleCall and give it the autograd nodes it made
  (gradviz.graph.record.claim_nodes): the graph's clusters.

Nothing of torch is replaced; the mode and the hooks are removed when the block ends.
"""

from __future__ import annotations

import sys
import weakref
from types import FrameType

import torch
from torch import nn
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from gradviz.graph.model import ModuleCall
from gradviz.graph.record import Binding, claim_nodes
from gradviz.library.figure import Figure, draw_tensor
from gradviz.library.naming import (
    binding,
    frame_modules,
    frame_tensors,
    is_user_file,
    source_exprs,
    user_frames,
)


class _Watch(TorchFunctionMode):
    """Calls the function as torch would, then tells the recorder what it returned."""

    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.recorder.made(out)
        return out


def _nearest_user_frame(frame: FrameType | None) -> FrameType | None:
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


class Recorder:
    """What a `with gradviz.record()` block made: named tensors and layer calls; `draw`."""

    def __init__(self, retain_grad: bool = True) -> None:
        self.retain_grad = retain_grad  # named intermediate tensors keep their .grad
        self.bindings: list[Binding] = []
        self.module_calls: list[ModuleCall] = []
        self.fn_modules: dict[int, tuple[object, str]] = {}
        self.names_at_exit: list[tuple[str, torch.Tensor]] = []  # the block's variables
        self.modules_at_exit: list[tuple[str, nn.Module]] = []
        self._made: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()
        self._where: dict[int, tuple[str, int, bool]] = {}  # id -> (file, line, under no_grad)
        self._bound: dict[tuple[int, str], int] = {}  # (id(frame), name) -> id(tensor)
        self._frame: FrameType | None = None
        self._open: list[str] = []  # the layer calls running, innermost last
        self._paths: dict[int, str] = {}  # id(module) -> its path ("net.conv1")
        self._handles: list = []
        self._mode: _Watch | None = None

    # -- the block

    def __enter__(self) -> Recorder:
        if self._frame is not None:
            raise RuntimeError("this gradviz.record() is already recording")
        self._frame = sys._getframe(1)
        self._mode = _Watch(self)
        self._mode.__enter__()
        self._handles = [
            register_module_forward_pre_hook(self._call_starts),
            register_module_forward_hook(self._call_ends),
        ]
        return self

    def __exit__(self, *exc) -> bool:
        self._mode.__exit__(*exc)
        for handle in self._handles:
            handle.remove()
        self._handles = []
        frame = self._frame
        self._scan(user_frames(frame, frame))  # what the block's last statements bound
        self._frame = None
        self.names_at_exit = frame_tensors(frame)
        self.modules_at_exit = frame_modules(frame)
        self._number_repeats()
        self._open.clear()
        return False

    def draw(self, tensor: torch.Tensor, **options) -> Figure:
        """The graph that ends at `tensor`, its tensors named as the block named them
        (options: gradviz.library.figure.draw_tensor's)."""
        if self._frame is not None:
            raise RuntimeError("draw after the `with gradviz.record()` block has ended")
        return draw_tensor(tensor, sys._getframe(1), recorder=self, **options)

    # -- tensors

    def made(self, out) -> None:
        """A torch call returned `out`: note its new tensors, then read the user's frames."""
        new = False
        where = None
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and self._made.get(id(t)) is not t:
                if where is None:
                    frame = _nearest_user_frame(sys._getframe(2))
                    where = (
                        (frame.f_code.co_filename, frame.f_lineno, not torch.is_grad_enabled())
                        if frame is not None
                        else ("", 0, not torch.is_grad_enabled())
                    )
                self._made[id(t)] = t
                self._where[id(t)] = where
                new = True
        if new and self._frame is not None:
            self._scan(user_frames(_nearest_user_frame(sys._getframe(2)), self._frame))

    def _scan(self, frames: list[FrameType]) -> None:
        """Bindings for the variables of `frames` that now hold a tensor the block made."""
        for frame in frames:
            inside = frame is not self._frame and frame.f_code.co_name != "<module>"
            code = frame.f_code
            # a function's parameters hold its caller's tensors, named there already
            params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount] if inside else ()
            for name, t in frame_tensors(frame):
                if self._made.get(id(t)) is not t or self._bound.get((id(frame), name)) == id(t):
                    continue
                if name.split("[")[0] in params:
                    continue
                self._bound[(id(frame), name)] = id(t)
                filename, line, no_grad = self._where.get(id(t), ("", 0, False))
                expr = source_exprs(filename, line).get(name, "") if filename else ""
                if inside:
                    expr = (
                        f"{expr}  (in {frame.f_code.co_name})"
                        if expr
                        else f"in {frame.f_code.co_name}"
                    )
                self.bindings.append(binding(name, t, line, expr, no_grad))
                if self.retain_grad and t.requires_grad and not t.is_leaf:
                    t.retain_grad()  # so its gradient can be shown after backward()

    def _number_repeats(self) -> None:
        """A name bound on the same line more than once (a loop, a function called again)
        is numbered by pass: h[1], h[2], ..."""
        counts: dict[tuple[str, int], int] = {}
        for b in self.bindings:
            counts[(b.name, b.line)] = counts.get((b.name, b.line), 0) + 1
        passes: dict[tuple[str, int], int] = {}
        for b in self.bindings:
            key = (b.name, b.line)
            if counts[key] > 1:
                passes[key] = passes.get(key, 0) + 1
                b.step = (passes[key],)

    # -- layer calls

    def _path(self, module: nn.Module) -> str:
        if id(module) not in self._paths:
            for frame in user_frames(sys._getframe(2), self._frame):
                for var, held in frame_modules(frame):
                    for path, sub in held.named_modules(prefix=var):
                        self._paths.setdefault(id(sub), path)
            self._paths.setdefault(id(module), type(module).__name__)
        return self._paths[id(module)]

    def _call_starts(self, module: nn.Module, _args) -> None:
        frame = _nearest_user_frame(sys._getframe(1))
        call = ModuleCall(
            f"m{len(self.module_calls)}",
            self._path(module),
            type(module).__name__,
            frame.f_lineno if frame is not None else None,
            self._open[-1] if self._open else None,
        )
        self.module_calls.append(call)
        self._open.append(call.id)

    def _call_ends(self, module: nn.Module, args, output) -> None:
        if not self._open:
            return
        call = self._open.pop()
        own = {id(p) for p in module.parameters()}
        claim_nodes(
            self.fn_modules, call, tree_flatten(args)[0], tree_flatten(output)[0], lambda: own
        )
