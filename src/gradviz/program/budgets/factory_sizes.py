"""The size and dtype of a tensor factory's output, worked out from its numbers alone.

Budget.precheck runs most operations on shape-only tensors on the meta device. For factories
like torch.arange, torch.randn or torch.eye, torch's meta path is its Python reference
implementation, whose first use imports sympy and torch._dynamo: about 1.7 s and 150 MB, more
than the rest of a small program's run (the CLI's `render` of the lesson). For the plain
calls (numbers as arguments, a size as numbers) the output's shape follows from the
arguments by torch's own rules, so `output` gives it without the meta call; anything else
(tensors as sizes, `out=`, odd types) returns None and the caller uses the meta device.
tests/unit/program/test_factory_sizes.py checks every shape and dtype here against the meta call.
"""

from __future__ import annotations

import math

import torch

Output = tuple[torch.Size, torch.dtype]

# Keyword arguments that do not change the output's shape or dtype.
NEUTRAL = frozenset({"requires_grad", "device", "layout", "pin_memory", "generator", "dtype"})


def _number(v) -> bool:
    return type(v) in (int, float)


def _size(args: tuple, kwargs: dict) -> tuple[int, ...] | None:
    """A size given as numbers (torch.randn(2, 3)) or one tuple/list (torch.randn((2, 3)))."""
    if "size" in kwargs:
        if args:
            return None
        args = (kwargs["size"],)
    if len(args) == 1 and isinstance(args[0], tuple | list | torch.Size):
        args = tuple(args[0])
    if all(type(v) is int and v >= 0 for v in args):
        return tuple(args)
    return None


def _dtype(kwargs: dict, default: torch.dtype) -> torch.dtype | None:
    dtype = kwargs.get("dtype")
    if dtype is None:
        return default
    return dtype if isinstance(dtype, torch.dtype) else None


def _arange(args: tuple, kwargs: dict) -> Output | None:
    names = ("start", "end", "step")
    if len(args) == 1:
        if not kwargs.keys() <= NEUTRAL:
            return None  # torch.arange(3, step=1) is no signature of torch's
        values = {"start": 0, "end": args[0], "step": 1}
    elif len(args) <= 3:
        values = {"start": 0, "step": 1, **dict(zip(names, args, strict=False))}
        for name in names:
            if name in kwargs:
                if name in values and len(args) > names.index(name):
                    return None
                values[name] = kwargs[name]
    else:
        return None
    if set(values) != set(names) or not all(_number(v) for v in values.values()):
        return None
    start, end, step = values["start"], values["end"], values["step"]
    if step == 0 or not all(math.isfinite(float(v)) for v in (start, end, step)):
        return None
    length = math.ceil((end - start) / step)
    if length < 0:
        return None  # torch refuses a step of the wrong sign: the real call says so
    ints = all(type(v) is int for v in (start, end, step))
    dtype = _dtype(kwargs, torch.int64 if ints else torch.get_default_dtype())
    return None if dtype is None else (torch.Size([length]), dtype)


def _spaced(args: tuple, kwargs: dict) -> Output | None:
    """linspace / logspace(start, end, steps)."""
    values = dict(zip(("start", "end", "steps"), args, strict=False))
    for name in ("start", "end", "steps"):
        if name in kwargs:
            if name in values:
                return None
            values[name] = kwargs[name]
    if len(args) > 3 or len(values) != 3 or not all(_number(v) for v in values.values()):
        return None
    steps = values["steps"]
    if type(steps) is not int or steps < 0:
        return None
    dtype = _dtype(kwargs, torch.get_default_dtype())
    return None if dtype is None else (torch.Size([steps]), dtype)


def _eye(args: tuple, kwargs: dict) -> Output | None:
    n = args[0] if args else kwargs.get("n")
    m = args[1] if len(args) > 1 else kwargs.get("m", n)
    if len(args) > 2 or type(n) is not int or type(m) is not int or n < 0 or m < 0:
        return None
    dtype = _dtype(kwargs, torch.get_default_dtype())
    return None if dtype is None else (torch.Size([n, m]), dtype)


def _random(args: tuple, kwargs: dict) -> Output | None:
    """rand / randn(*size)."""
    size = _size(args, kwargs)
    dtype = _dtype(kwargs, torch.get_default_dtype())
    return None if size is None or dtype is None else (torch.Size(size), dtype)


def _randint(args: tuple, kwargs: dict) -> Output | None:
    """randint(high, size) or randint(low, high, size)."""
    if "size" in kwargs:
        bounds, size = args, kwargs["size"]
    elif args:
        bounds, size = args[:-1], args[-1]
    else:
        return None
    if len(bounds) not in (1, 2) or not all(type(v) is int for v in bounds):
        return None
    if {"low", "high"} & kwargs.keys() or not isinstance(size, tuple | list | torch.Size):
        return None
    shape = _size((size,), {})
    dtype = _dtype(kwargs, torch.int64)
    return None if shape is None or dtype is None else (torch.Size(shape), dtype)


RULES = {
    torch.arange: _arange,
    torch.linspace: _spaced,
    torch.logspace: _spaced,
    torch.eye: _eye,
    torch.rand: _random,
    torch.randn: _random,
    torch.randint: _randint,
}


def output(fn, args: tuple, kwargs: dict) -> Output | None:
    """(shape, dtype) of fn(*args, **kwargs) for a factory this module knows and plain
    arguments; None otherwise (ask the meta device)."""
    rule = RULES.get(fn)
    if rule is None or not kwargs.keys() <= NEUTRAL | {
        "start",
        "end",
        "step",
        "steps",
        "n",
        "m",
        "size",
        "base",
    }:
        return None
    if "base" in kwargs and (fn is not torch.logspace or not _number(kwargs["base"])):
        return None
    return rule(tuple(args), kwargs)


def broadcast_shape(*shapes) -> torch.Size | None:
    """torch.broadcast_shapes without its first-use import of sympy (it goes through torch's
    reference path too); None when the shapes do not broadcast."""
    out: list[int] = []
    for shape in shapes:
        shape = tuple(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i, n in enumerate(shape, start=len(out) - len(shape)):
            if n != out[i] and out[i] != 1 and n != 1:
                return None
            if out[i] == 1:
                out[i] = n
    return torch.Size(out)
