"""A layer's forward, run as one checked call of gradviz.program.library.Library.call.

`LayerForward` calls the layer with its tensors (parameters and buffers) as arguments
(torch.func.functional_call), so each part of a call sees them as it sees any tensor: the
size pre-check on the meta device, with the FLOP counter measuring the whole forward
(gradviz.program.budget.Metered), simulated CUDA on their fake twins (PyTorch's own device
rules inside the layer), and the real call on the real tensors.

Around the real call only, `layer_calls` lends the layer the run's generator (dropout) and
puts forward hooks of gradviz's own (never a program's, and removed after the call) on the
layer and every layer inside it: each names the autograd nodes its call made with a
`ModuleCall`, which the graph draws as a cluster (gradviz.graph.build, .render).
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn
from torch.func import functional_call
from torch.utils._pytree import tree_flatten

from gradviz.graph.model import ModuleCall
from gradviz.program.budget import Metered
from gradviz.program.state import RunState


class LayerForward(Metered):
    """layer(*args, **kwargs) with the layer's tensors given: (tensors, *args, **kwargs)."""

    def __init__(self, module: nn.Module):
        self.module = module

    def __call__(self, tensors: dict, *args, **kwargs):
        return functional_call(self.module, tensors, args, kwargs, strict=False)

    def cache_key(self):
        """The layers the forward runs, each with its mode: a container grown by `.append`
        or a layer switched to eval() is a different call. The parameters' shapes, dtypes
        and devices come in the arguments (the tensors the forward is given)."""
        return tuple((id(sub), type(sub), sub.training) for sub in self.module.modules())


def layer_tensors(module: nn.Module, overrides: dict[int, torch.Tensor]) -> dict:
    """A layer's parameters and buffers by name, as its forward is given them (a gradient
    check's float64 copies in place of the parameters it replaces)."""
    named = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    return {k: overrides.get(id(t), t) for k, t in named.items()}


@contextlib.contextmanager
def layer_calls(state: RunState, module: nn.Module, path: str, line: int | None):
    """While open: the run's generator is torch's, and each layer's call is recorded."""
    calls: list[str] = []  # the calls running, innermost last
    handles = []

    def before(sub, path):
        def hook(_module, _args, _kwargs):
            call = ModuleCall(
                f"m{len(state.module_calls)}",
                path,
                type(sub).__name__,
                line,
                calls[-1] if calls else (state.open_calls or [None])[-1],
            )
            state.module_calls.append(call)
            calls.append(call.id)

        return hook

    def after(sub):
        def hook(_module, args, kwargs, output):
            call = calls.pop()
            name_nodes(state, call, (args, kwargs), output, sub)

        return hook

    for sub_path, sub in module.named_modules(prefix=path):
        handles.append(sub.register_forward_pre_hook(before(sub, sub_path), with_kwargs=True))
        handles.append(sub.register_forward_hook(after(sub), with_kwargs=True))
    try:
        with state.torch_rng():
            yield
    finally:
        for h in handles:
            h.remove()


def name_nodes(state: RunState, call: str, inputs, output, sub: nn.Module) -> None:
    """Give `call` the autograd nodes it made: those between its output and its inputs not
    given to an inner call already, and the AccumulateGrad nodes of its own parameters."""
    given, _ = tree_flatten(inputs)
    tensors = [t for t in given if isinstance(t, torch.Tensor)]
    stop = {id(t.grad_fn) for t in tensors if t.grad_fn is not None}
    own = {id(p) for p in sub.parameters()}
    outputs, _ = tree_flatten(output)
    stack = [t.grad_fn for t in outputs if isinstance(t, torch.Tensor)]
    seen: set[int] = set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen or id(fn) in stop:
            continue
        seen.add(id(fn))
        if hasattr(fn, "variable"):  # a leaf's AccumulateGrad: only the layer's own
            if id(fn.variable) in own and id(fn) not in state.fn_modules:
                state.fn_modules[id(fn)] = (fn, call)
            continue
        if id(fn) not in state.fn_modules:
            state.fn_modules[id(fn)] = (fn, call)
        stack.extend(n for n, _ in fn.next_functions)
