"""What a plain layer's call makes and the matrix work it does, worked out from shapes alone.

A layer's forward is pre-checked as one `Metered` call (gradviz.program.budgets.precheck):
run on shape-only tensors on the meta device, through torch.func.functional_call, under the
FLOP counter (gradviz.program.budgets.flops). For the layers of a tutorial's network that
costs 0.1 to 0.4 ms a call, most of it the counter's dispatch of each operation in Python,
and a `class Net(nn.Module)` pays it once per layer it calls. For the commonest layers,
called on one tensor of the dtype of their parameters, `verdict` gives the same verdict
(each output's shape, count, element size and dtype; the FLOPs and pooling windows the
counter would count) by torch's own shape rules and the counter's formulas: nn.Linear on a
matrix, nn.Conv2d on a batch of images (zero padding given as numbers), nn.MaxPool2d without
dilation, ceil mode or indices, nn.ReLU and nn.Flatten, and an nn.Sequential of them.
Anything else, or any shape or dtype torch would refuse, gives None, and the caller measures
the call on the meta device as before (the real call then raises torch's own message).
Only the measuring is skipped: the verdict is charged and checked against every cap as a
measured one is. tests/unit/program/test_layer_verdicts.py checks each answer against the
meta device's measurement.
"""

from __future__ import annotations

import math

import torch
from torch import nn

Shape = tuple[int, ...]


def verdict(module: nn.Module, tensors: dict, args: tuple, kwargs: dict):
    """([(shape, numel, element size, dtype)], FLOPs) of module(*args, **kwargs) given its
    `tensors` (parameters and buffers by name, as LayerForward is given them), or None:
    not known here, measure it on the meta device."""
    if kwargs or len(args) != 1:
        return None
    x = args[0]
    if type(x) is not torch.Tensor and type(x) is not nn.Parameter:
        return None
    dtype = x.dtype
    if not dtype.is_floating_point:
        return None
    work = [0, 0]  # FLOPs, tensors read
    shape = _through(module, "", tensors, x.shape, dtype, work)
    if shape is None or work[1] != len(tensors):  # a tensor given that no layer reads
        return None
    size = torch.Size(shape)
    return [(size, math.prod(size), dtype.itemsize, dtype)], float(work[0])


def _through(module, prefix: str, tensors: dict, shape, dtype, work: list[int]):
    """The output's shape of one layer, or None (`work`: the FLOPs and the tensors read)."""
    kind = type(module)
    if kind is nn.Sequential:
        for name, child in module._modules.items():
            if child is None:
                return None
            shape = _through(child, f"{prefix}{name}.", tensors, shape, dtype, work)
            if shape is None:
                return None
        return shape
    if not _reads_given(module, prefix, tensors, work):
        return None
    # the layers' only hooks are gradviz's own recording ones (a program cannot register
    # any: gradviz.program.allowlists.nntables), silent outside a recorded call
    if kind is nn.Linear:
        return _linear(tensors, prefix, shape, dtype, work)
    if kind is nn.Conv2d:
        return _conv2d(module, tensors, prefix, shape, dtype, work)
    if kind is nn.MaxPool2d:
        return _max_pool2d(module, shape, work)
    if kind is nn.ReLU:
        return tuple(shape)
    if kind is nn.Flatten:
        return _flatten(module, shape)
    return None


def _reads_given(module: nn.Module, prefix: str, tensors: dict, work: list[int]) -> bool:
    """Whether each parameter of a layer (no submodules, no buffers) is given by its name,
    as functional_call gives it, and no name is given for one it does not hold; counted
    in `work[1]`. A parameter shared with a layer before it is given under that one's name
    only (named_parameters' way): not here, so the call is measured."""
    if module._modules or any(b is not None for b in module._buffers.values()):
        return False
    for name, p in module._parameters.items():
        if (prefix + name in tensors) != (p is not None):
            return False
        work[1] += p is not None
    return True


def _same_dtype(dtype, *tensors) -> bool:
    return all(t is None or t.dtype == dtype for t in tensors)


def _linear(tensors: dict, prefix: str, shape, dtype, work: list[int]) -> Shape | None:
    """A matrix through a Linear: addmm (mm without a bias), 2*m*k*n FLOPs."""
    weight, bias = tensors.get(prefix + "weight"), tensors.get(prefix + "bias")
    if weight is None or weight.dim() != 2 or len(shape) != 2:
        return None
    if not _same_dtype(dtype, weight, bias):
        return None
    (m, k), (n, k_w) = shape, weight.shape
    if k != k_w or (bias is not None and tuple(bias.shape) != (n,)):
        return None
    work[0] += 2 * m * k * n
    return (m, n)


def _pair(v) -> tuple[int, int] | None:
    if type(v) is int:
        return (v, v)
    if type(v) is tuple and len(v) == 2 and all(type(n) is int for n in v):
        return v
    return None


def _conv2d(module: nn.Conv2d, tensors, prefix: str, shape, dtype, work) -> Shape | None:
    """A batch of images through a Conv2d: torch's output size rule and the FLOP counter's
    conv_flop_count (2 * output pixels * the weight's values * batch)."""
    weight, bias = tensors.get(prefix + "weight"), tensors.get(prefix + "bias")
    if weight is None or weight.dim() != 4 or len(shape) != 4 or 0 in shape:
        return None
    if module.padding_mode != "zeros" or not _same_dtype(dtype, weight, bias):
        return None
    stride, padding = _pair(module.stride), _pair(module.padding)
    dilation, groups = _pair(module.dilation), module.groups
    if stride is None or padding is None or dilation is None or type(groups) is not int:
        return None
    if min(stride) < 1 or min(padding) < 0 or min(dilation) < 1 or groups < 1:
        return None
    batch, channels, *size = shape
    c_out, c_in, *kernel = weight.shape
    if channels != c_in * groups or c_out % groups or c_out == 0:
        return None
    if bias is not None and tuple(bias.shape) != (c_out,):
        return None
    out = []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True):
        span = n + 2 * p - d * (k - 1) - 1
        if span < 0:
            return None
        out.append(span // s + 1)
    work[0] += math.prod(out) * math.prod(kernel) * batch * c_out * c_in * 2
    return (batch, c_out, *out)


def _max_pool2d(module: nn.MaxPool2d, shape, work: list[int]) -> Shape | None:
    """A batch of images through a MaxPool2d: each output reads its window (the pre-check's
    WINDOW_WORK); padding at most half the window, no dilation, ceil mode nor indices."""
    if module.return_indices or module.ceil_mode or len(shape) != 4 or 0 in shape:
        return None
    kernel = _pair(module.kernel_size)
    stride = _pair(module.stride if module.stride is not None else module.kernel_size)
    padding, dilation = _pair(module.padding), _pair(module.dilation)
    if kernel is None or stride is None or padding is None or dilation != (1, 1):
        return None
    if min(kernel) < 1 or min(stride) < 1 or min(padding) < 0:
        return None
    if any(p > k // 2 for p, k in zip(padding, kernel, strict=True)):
        return None
    out = []
    for n, k, s, p in zip(shape[2:], kernel, stride, padding, strict=True):
        span = n + 2 * p - k
        if span < 0:
            return None
        out.append(span // s + 1)
    made = (*shape[:2], *out)
    work[0] += math.prod(made) * kernel[0] * kernel[1]
    return made


def _flatten(module: nn.Flatten, shape) -> Shape | None:
    start, end, dims = module.start_dim, module.end_dim, len(shape)
    if type(start) is not int or type(end) is not int or dims == 0:
        return None
    start, end = start + dims if start < 0 else start, end + dims if end < 0 else end
    if not 0 <= start <= end < dims:
        return None
    return (*shape[:start], math.prod(shape[start : end + 1]), *shape[end + 1 :])
