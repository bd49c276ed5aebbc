"""A layer's forward, run as one checked call of gradviz.program.runtime.torch_calls.Library.call.

`LayerForward` calls the layer with its tensors (parameters and buffers) as arguments
(torch.func.functional_call), so each part of a call sees them as it sees any tensor: the
size pre-check on the meta device, with the FLOP counter measuring the whole forward
(gradviz.program.budgets.precheck.Metered), simulated CUDA on their fake twins (PyTorch's own device
rules inside the layer), and the real call on the real tensors.

Around the real call only, `LayerCalls.recording` lends the layer the run's generator
(dropout) and records the calls of the layer and every layer inside it with forward hooks of
gradviz's own (never a program's; put on each layer once, silent outside `recording`): each
names the autograd nodes its call made with a `ModuleCall`, which the graph draws as a
cluster (gradviz.graph.build, .render).
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn
from torch.func import functional_call
from torch.utils._pytree import tree_flatten

from gradviz.graph.model import ModuleCall
from gradviz.graph.record import claim_nodes
from gradviz.program.budgets.layer_verdicts import verdict
from gradviz.program.budgets.precheck import Metered
from gradviz.program.recording.state import RunState


class LayerForward(Metered):
    """layer(*args, **kwargs) with the layer's tensors given: (tensors, *args, **kwargs).
    `own`: the layer's own tensors (layer_tensors with nothing in their place); given
    exactly those, the layer is called as it is, which is what functional_call would run."""

    def __init__(self, module: nn.Module, own: dict | None = None):
        self.module = module
        self.own = own

    def __call__(self, tensors: dict, *args, **kwargs):
        if tensors is self.own:
            return self.module(*args, **kwargs)
        return functional_call(self.module, tensors, args, kwargs, strict=False)

    def known(self, args: tuple, kwargs: dict):
        """A plain layer's verdict from shapes (gradviz.program.budgets.layer_verdicts), or
        None: measured on the meta device. args[0]: the tensors it is given."""
        return verdict(self.module, args[0], args[1:], kwargs)

    def cache_key(self):
        """The layers the forward runs, each with its mode: a container grown by `.append`
        or a layer switched to eval() is a different call. The layers themselves, not
        their id(): a kept verdict keeps them alive, so no other layer (another stride, the
        same weights' shape) can take one's id and its verdict. The parameters' shapes,
        dtypes and devices come in the arguments (the tensors the forward is given)."""
        return tuple((sub, sub.training) for sub in self.module.modules())


def layer_tensors(module: nn.Module, overrides: dict[int, torch.Tensor]) -> dict:
    """A layer's parameters and buffers by name, as its forward is given them (a gradient
    check's float64 copies in place of the parameters it replaces)."""
    named = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    return {k: overrides.get(id(t), t) for k, t in named.items()}


class LayerCalls:
    """One run's record of its layers' calls: gradviz's own forward hooks (never a
    program's), put on each layer once, the first time a call reaches it, and recording
    only while `recording` is open around a layer's real call (not its pre-check on the
    meta device, nor its simulated-CUDA run on fake twins)."""

    def __init__(self, state: RunState):
        self.state = state
        self.hooked: set[int] = set()  # id(layer) with the two hooks on it
        self.paths: dict[int, str] | None = None  # id(layer) -> path, while recording
        self.line: int | None = None
        self.calls: list[str] = []  # the calls running, innermost last

    @contextlib.contextmanager
    def recording(self, module: nn.Module, path: str, line: int | None):
        """While open: the run's generator is torch's, and each layer's call is recorded
        (not in a quiet pass: gradviz.program.recording.quiet_passes)."""
        if self.state.quiet:
            with self.state.torch_rng():
                yield
            return
        paths = {}
        for sub_path, sub in module.named_modules(prefix=path):
            paths[id(sub)] = sub_path
            if id(sub) not in self.hooked:
                sub.register_forward_pre_hook(self.before, with_kwargs=True)
                sub.register_forward_hook(self.after, with_kwargs=True)
                self.hooked.add(id(sub))
        self.paths, self.line, self.calls = paths, line, []
        try:
            with self.state.torch_rng():
                yield
        finally:
            self.paths = None

    def before(self, sub: nn.Module, _args, _kwargs) -> None:
        path = None if self.paths is None else self.paths.get(id(sub))
        if path is None:
            return
        state, calls = self.state, self.calls
        call = ModuleCall(
            f"m{len(state.module_calls)}",
            path,
            type(sub).__name__,
            self.line,
            calls[-1] if calls else (state.open_calls or [None])[-1],
        )
        state.module_calls.append(call)
        calls.append(call.id)

    def after(self, sub: nn.Module, args, kwargs, output) -> None:
        if self.paths is None or id(sub) not in self.paths:
            return
        call = self.calls.pop()
        name_nodes(self.state, call, (args, kwargs), output, sub)


def name_nodes(state: RunState, call: str, inputs, output, sub: nn.Module) -> None:
    """Give `call` the autograd nodes it made (gradviz.graph.record.claim_nodes)."""
    claim_nodes(
        state.fn_modules,
        call,
        tensors_of(inputs),
        tensors_of(output),
        lambda: _parameter_ids(sub),
    )


def _parameter_ids(sub: nn.Module) -> set[int]:
    """{id(p) for p in sub.parameters()}; a layer with no layers inside has only its own
    (read directly: the generator behind parameters() costs more than the set)."""
    if sub._modules:
        return {id(p) for p in sub.parameters()}
    return {id(p) for p in sub._parameters.values() if p is not None}


def tensors_of(value) -> list[torch.Tensor]:
    """The tensors in a call's arguments or result (tree_flatten's, without its cost for
    the plain tuples, lists and dicts a layer takes and gives)."""
    if isinstance(value, torch.Tensor):
        return [value]
    kind = type(value)
    if kind is tuple or kind is list or kind is dict:
        out: list[torch.Tensor] = []
        for v in value.values() if kind is dict else value:
            out.extend(tensors_of(v))
        return out
    if value is None or kind in (int, float, bool, str):
        return []
    leaves, _ = tree_flatten(value)
    return [t for t in leaves if isinstance(t, torch.Tensor)]
