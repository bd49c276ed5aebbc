"""Lazy layers (`nn.LazyLinear(10)`, `nn.LazyConv2d(16, 3)`): sized at their first call.

A lazy layer is made with no parameters (gradviz.program.budgets.layer_sizes counts none);
PyTorch gives it their shapes from the first input it sees. Before a layer's call that
would do that (the layer's own, or a container's holding lazy layers), `size_lazy_layers`
runs a twin of the layer on the meta device (shapes only: each lazy layer inside sized
from its own input there, gradviz's own pre-hook recording that input), holds the
parameters that would be made to the budgets of parameters and bytes
(gradviz.program.budgets.precheck.Budget.count_parameters, .account), and only then makes
them for real, each from the input its twin saw, with the run's generator, as PyTorch's
first call does (then the layer is a Linear or a Conv2d, as in PyTorch). The layer's call
then runs as any layer's. One difference with PyTorch: the lazy layers of a container draw
their initial values before the call's other random numbers (dropout), not between them.
"""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.nn.modules.lazy import LazyModuleMixin
from torch.nn.parameter import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin
from torch.utils._pytree import tree_map

from gradviz.program.recording.state import RunState
from gradviz.program.runtime.errors import runtime_error


def unsized(t) -> bool:
    """A lazy layer's parameter that has no shape yet."""
    return isinstance(t, UninitializedTensorMixin)


def waiting(module: nn.Module) -> bool:
    """Whether a call of `module` would give lazy layers inside it their shapes."""
    return any(
        isinstance(m, LazyModuleMixin) and m.has_uninitialized_params() for m in module.modules()
    )


def sized_count(module: nn.Module) -> int:
    """The parameters `module` holds now (a lazy layer's count none until its first call)."""
    return sum(p.numel() for p in module.parameters() if not unsized(p))


def size_lazy_layers(state: RunState, budget, module: nn.Module, args, kwargs, node, label: str):
    """Give the lazy layers in `module` their parameters, from the call `module(*args,
    **kwargs)` about to run, after the budget has seen their sizes."""
    inputs: dict[str, tuple] = {}  # path -> the input its twin saw, in the order reached
    twin = meta_twin(module, "", inputs)
    meta_args, meta_kwargs = tree_map(to_meta, (args, kwargs))
    try:
        with torch.no_grad():
            twin(*meta_args, **meta_kwargs)
    except Exception as exc:  # what PyTorch says of this input (a wrong shape, ...)
        tensors = [a for a in args if torch.is_tensor(a)]
        raise runtime_error(state, exc, node, label, tensors) from None
    outputs, new = [], 0
    for path in inputs:
        original, sized = module.get_submodule(path), twin.get_submodule(path)
        for name, t in original.named_parameters(recurse=False):
            if unsized(t):
                made = sized.get_parameter(name)
                outputs.append((made.shape, made.numel(), made.element_size(), made.dtype))
                new += made.numel()
    what = state.segment(node, 50) or label
    budget.count_parameters(what, sized_count(module) + new, new, node)
    budget.account(label, outputs, 0.0, node)
    with state.torch_rng(), torch.no_grad():
        for path, (a, k) in inputs.items():
            sub = module.get_submodule(path)
            if isinstance(sub, LazyModuleMixin) and sub.has_uninitialized_params():
                sub._infer_parameters(sub, a, k)  # PyTorch's own first-call step, for real


def to_meta(v):
    if isinstance(v, torch.Tensor):
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    return v


def meta_twin(module: nn.Module, path: str, inputs: dict) -> nn.Module:
    """A copy of `module` on the meta device: its own dicts of parameters, buffers, layers
    and hooks (none of the original's hooks), each lazy layer with a pre-hook that sizes it
    from its input and records that input under its path."""
    twin = copy.copy(module)  # shallow: the dicts below are replaced, not shared
    for key, value in module.__dict__.items():
        if "hook" in key and isinstance(value, dict):
            twin.__dict__[key] = type(value)()
    twin._parameters = {k: meta_tensor(v, True) for k, v in module._parameters.items()}
    twin._buffers = {k: meta_tensor(v, False) for k, v in module._buffers.items()}
    twin._modules = {
        k: None if m is None else meta_twin(m, f"{path}.{k}" if path else k, inputs)
        for k, m in module._modules.items()
    }
    if isinstance(module, LazyModuleMixin) and module.has_uninitialized_params():

        def size_from(m, args, kwargs):
            inputs[path] = (args, kwargs)
            m.initialize_parameters(*args, **kwargs)

        twin.register_forward_pre_hook(size_from, with_kwargs=True)
    return twin


def meta_tensor(t, parameter: bool):
    if t is None:
        return None
    if unsized(t):
        if parameter:
            return UninitializedParameter(t.requires_grad, device="meta", dtype=t.dtype)
        return UninitializedBuffer(t.requires_grad, device="meta", dtype=t.dtype)
    made = torch.empty_like(t, device="meta")
    return nn.Parameter(made, t.requires_grad) if parameter else made
