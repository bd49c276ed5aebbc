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
from gradviz.graph.record import claim_nodes
from gradviz.program.budget import Metered
from gradviz.program.state import RunState


class LayerForward(Metered):
    """layer(*args, **kwargs) with the layer's tensors given: (tensors, *args, **kwargs)."""

    def __init__(self, module: nn.Module):
        self.module = module

    def __call__(self, tensors: dict, *args, **kwargs):
        return functional_call(self.module, tensors, args, kwargs, strict=False)


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
    """Give `call` the autograd nodes it made (gradviz.graph.record.claim_nodes)."""
    given, _ = tree_flatten(inputs)
    outputs, _ = tree_flatten(output)
    claim_nodes(state.fn_modules, call, given, outputs, {id(p) for p in sub.parameters()})
