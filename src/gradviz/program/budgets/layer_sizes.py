"""The parameters a Linear or Conv2d layer will have, worked out from its arguments alone.

Before a layer is made, gradviz.program.objects.layers counts its parameters against the budgets
(one model's, all of them) and their bytes against the bytes in all, so that
`nn.Linear(10**6, 10**6)` is refused before it allocates. For most layers that count comes
from the layer made once on the meta device, which runs its whole constructor, parameter
initialisation included, on shape-only tensors (0.2 ms for a Linear or a Conv2d, more than
the real layer's making). For the two most common layers with plain arguments, `made` gives
the same shapes and dtype from the arguments by torch's own rules; anything else (another
layer, an argument of an odd type or value, `padding="same"`, a padding mode other than
zeros) gives None, and the caller makes the layer on the meta device as before. Lazy
layers (nn.LazyLinear, nn.LazyConv2d) make no parameters until their first call.
tests/unit/program/test_layer_sizes.py checks every answer here against the meta device's.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules.lazy import LazyModuleMixin

Made = list[tuple[tuple[int, ...], torch.dtype]]  # each parameter's shape and dtype, in order


def made(target: type, given: dict) -> Made | None:
    """The parameters `target(**given)` will make (weight, then bias), or None: not known
    here, ask the meta device. A lazy layer (nn.LazyLinear) makes none until its first call,
    which gradviz.program.objects.lazy sizes against the budgets before it runs."""
    if issubclass(target, LazyModuleMixin):
        return []
    if target is nn.Linear:
        return _linear(given)
    if target is nn.Conv2d:
        return _conv2d(given)
    return None


def _count(v) -> bool:
    return type(v) is int and v > 0


def _pair(v, least: int) -> tuple[int, int] | None:
    """An int or a pair of ints, each at least `least`, as a pair (None: anything else)."""
    if type(v) is int:
        v = (v, v)
    if type(v) not in (tuple, list) or len(v) != 2:
        return None
    if all(type(n) is int and n >= least for n in v):
        return (v[0], v[1])
    return None


def _dtype(given: dict) -> torch.dtype | None:
    dtype = given.get("dtype")
    if dtype is None:
        return torch.get_default_dtype()
    return dtype if isinstance(dtype, torch.dtype) and dtype.is_floating_point else None


def _linear(given: dict) -> Made | None:
    if set(given) - {"in_features", "out_features", "bias", "dtype"}:
        return None
    n_in, n_out = given.get("in_features"), given.get("out_features")
    bias = given.get("bias", True)
    dtype = _dtype(given)
    if not (_count(n_in) and _count(n_out) and type(bias) is bool and dtype is not None):
        return None
    return [((n_out, n_in), dtype)] + ([((n_out,), dtype)] if bias else [])


_CONV = {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation"}
_CONV |= {"groups", "bias", "padding_mode", "dtype"}


def _conv2d(given: dict) -> Made | None:
    if set(given) - _CONV:
        return None
    n_in, n_out = given.get("in_channels"), given.get("out_channels")
    kernel = _pair(given.get("kernel_size"), 1)
    groups = given.get("groups", 1)
    bias = given.get("bias", True)
    dtype = _dtype(given)
    plain = (
        _count(n_in)
        and _count(n_out)
        and kernel is not None
        and _pair(given.get("stride", 1), 1) is not None
        and _pair(given.get("padding", 0), 0) is not None
        and _pair(given.get("dilation", 1), 1) is not None
        and _count(groups)
        and given.get("padding_mode", "zeros") in ("zeros",)
        and type(bias) is bool
        and dtype is not None
    )
    if not plain or n_in % groups or n_out % groups:
        return None
    weight = ((n_out, n_in // groups, *kernel), dtype)
    return [weight] + ([((n_out,), dtype)] if bias else [])
