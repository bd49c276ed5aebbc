"""How big a numpy call's output will be, from its arguments alone, before it runs.

Each function returns a list of (shape, values, bytes per value, dtype name) as
gradviz.program.budgets.precheck.Budget.account takes them, and the FLOPs of matrix work; or
None where numpy will refuse the arguments itself (it then raises its own error before it
allocates anything). A number that cannot be read as a size is refused here
(`SizeError`): a shape made of anything but integers never reaches numpy.
"""

from __future__ import annotations

import math

import numpy as np
import torch

FLOAT = (np.dtype("float64").itemsize, "float64")


class SizeError(Exception):
    """A size argument that is not a whole number (or a tuple of them)."""


def whole(value) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise SizeError(f"sizes must be integers, not {type(value).__name__}")
    return int(value)


def dims(shape) -> tuple[int, ...]:
    """A shape argument (an int, or a tuple or list of ints) as a tuple of ints."""
    if isinstance(shape, np.ndarray):
        if shape.size > 64:
            raise SizeError("a shape has at most 64 dimensions")
        shape = shape.tolist()
    if isinstance(shape, tuple | list):
        if len(shape) > 64:
            raise SizeError("a shape has at most 64 dimensions")
        return tuple(whole(s) for s in shape)
    return (whole(shape),)


def out(shape, dtype=None) -> tuple:
    """One output of `shape` (negative sizes count as 0: numpy refuses them itself)."""
    shape = tuple(shape)
    numel = math.prod(max(s, 0) for s in shape)
    if dtype is None:
        size, name = FLOAT
    else:
        size, name = max(dtype.itemsize, 1), dtype.name
    return (shape, numel, size, name)


def shape_of(value) -> tuple[int, ...]:
    if isinstance(value, np.ndarray):
        return value.shape
    if isinstance(value, list | tuple):
        return np.shape(value)  # a list of numbers the program made (already counted)
    return ()


def create(name: str, args: tuple, kwargs: dict, dtype) -> list | None:
    """zeros, ones, full, arange, linspace, eye, identity."""
    if name in ("zeros", "ones", "full"):
        shape = args[0] if args else kwargs.get("shape")
        return [out(dims(shape), dtype)]
    if name == "identity":
        n = whole(args[0] if args else kwargs.get("n"))
        return [out((n, n), dtype)]
    if name == "eye":
        n = whole(args[0] if args else kwargs.get("N"))
        m = args[1] if len(args) > 1 else kwargs.get("M")
        return [out((n, n if m is None else whole(m)), dtype)]
    if name == "linspace":
        num = args[2] if len(args) > 2 else kwargs.get("num", 50)
        return [out((whole(num),), dtype)]
    return [out((arange_length(args, kwargs),), dtype)]


def arange_length(args: tuple, kwargs: dict) -> int:
    names = ("start", "stop", "step")
    given = dict(zip(names, args, strict=False)) | {k: kwargs[k] for k in names if k in kwargs}
    if "stop" not in given:
        given = {"start": 0, "stop": given.get("start", 0), "step": given.get("step", 1)}
    start, stop, step = given.get("start", 0), given["stop"], given.get("step", 1)
    for v in (start, stop, step):
        if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.number):
            raise SizeError(f"np.arange takes numbers, not {type(v).__name__}")
    try:
        count = math.ceil((float(stop) - float(start)) / float(step))
    except (ZeroDivisionError, ValueError, OverflowError):
        return 0  # numpy says what is wrong (a step of 0, an infinite range)
    return max(count, 0)


def broadcast(args: tuple, kwargs: dict) -> list | None:
    shapes = [shape_of(v) for v in (*args, *kwargs.values()) if isinstance(v, np.ndarray | list)]
    try:
        shape = np.broadcast_shapes(*shapes) if shapes else ()
    except ValueError:
        return None
    return [out(shape)]


def matrix(a, b) -> tuple[list, float] | None:
    """a @ b (np.matmul, np.dot of vectors and matrices): its output and FLOPs."""
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        shape = np.broadcast_shapes(sa, sb)
        return [out(shape)], float(math.prod(shape))
    try:
        made = torch.matmul(torch.empty(sa, device="meta"), torch.empty(sb, device="meta"))
    except RuntimeError:
        return None
    shape = tuple(made.shape)
    return [out(shape)], 2.0 * math.prod(shape) * sa[-1]


def dot(a, b) -> tuple[list, float] | None:
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) > 2 or len(sb) > 2:  # np.dot of stacks: every pair of rows and columns
        numel = math.prod(sa) * math.prod(sb)
        return [((numel,), numel, 8, "float64")], 2.0 * numel
    return matrix(a, b)


def join(args: tuple, kwargs: dict) -> list:
    parts = args[0] if args else kwargs.get("arrays", ())
    if not isinstance(parts, list | tuple):
        parts = [parts]
    numel = sum(math.prod(shape_of(p)) for p in parts)
    return [((numel,), numel, 8, "float64")]


def tile(a, reps) -> list:
    numel = math.prod(shape_of(a)) * math.prod(dims(reps))
    return [((numel,), numel, 8, "float64")]


def repeat(a, repeats) -> list:
    if isinstance(repeats, np.ndarray | list | tuple):
        flat = np.asarray(repeats).ravel()
        most = int(flat.max()) if flat.size else 0
    else:
        most = whole(repeats)
    numel = math.prod(shape_of(a)) * max(most, 0)
    return [((numel,), numel, 8, "float64")]


def indexing(shape: tuple, index) -> list | None:
    """a[index] with integer arrays or lists in it (advanced indexing): at most the
    broadcast of the index arrays times what they leave of the array."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [
        shape_of(p)
        for p in parts
        if isinstance(p, list) or (isinstance(p, np.ndarray) and p.dtype.kind != "b")
    ]
    if not arrays:
        return None  # views, and boolean masks: no bigger than the array
    try:
        picked = math.prod(np.broadcast_shapes(*arrays))
    except ValueError:
        return None
    indexed = max(math.prod(shape[: len(arrays)]), 1)
    numel = picked * math.prod(shape) // indexed
    return [((numel,), numel, 8, "float64")]


def linalg(name: str, a, b) -> tuple[list, float] | None:
    """np.linalg.inv(a), solve(a, b), det(a) of (stacks of) n-by-n matrices: the output and
    the FLOPs of the LU factorisation each makes (n**3 a matrix, and n**2 a right-hand
    side); None where numpy refuses the shapes itself."""
    sa = shape_of(a) if isinstance(a, np.ndarray | list | tuple) else ()
    if len(sa) < 2 or sa[-1] != sa[-2]:
        return None
    n, stack = sa[-1], math.prod(sa[:-2])
    flops = float(stack) * n**3
    if name == "inv":
        return [out(sa)], flops
    if name == "det":
        return [out(sa[:-2])], flops
    sb = shape_of(b) if isinstance(b, np.ndarray | list | tuple) else ()
    if not sb:
        return None
    columns = 1 if len(sb) == 1 else sb[-1]
    try:
        batch = np.broadcast_shapes(sa[:-2], sb[:-2]) if len(sb) > 2 else sa[:-2]
    except ValueError:
        return None
    shape = (*batch, n) if len(sb) == 1 else (*batch, n, columns)
    return [out(shape)], flops + float(math.prod(batch)) * n * n * columns * 2


def random_size(size) -> list:
    return [out(() if size is None else dims(size))]


def by_kind(kind: str, name: str, args: tuple, kwargs: dict, dtype) -> tuple | None:
    """(outputs, FLOPs) of a call of `kind` (gradviz.program.runtime.arrays.tables), or None
    where its output is counted after it runs (bounded) or numpy refuses the arguments."""
    first = args[0] if args else None
    second = args[1] if len(args) > 1 else None
    outputs = None
    if kind == "create":
        outputs = create(name, args, kwargs, dtype)
    elif kind == "like":
        outputs = [out(shape_of(first), dtype)]
    elif kind == "broadcast":
        outputs = broadcast(args, kwargs)
    elif kind == "matrix":
        return (dot if name == "dot" else matrix)(first, second)
    elif kind == "outer":
        numel = math.prod(shape_of(first)) * math.prod(shape_of(second))
        return [((numel,), numel, 8, "float64")], 2.0 * numel
    elif kind == "linalg":
        return linalg(name, first, second if second is not None else kwargs.get("b"))
    elif kind == "join":
        outputs = join(args, kwargs)
    elif kind == "tile":
        outputs = tile(first, second if second is not None else kwargs.get("reps", 1))
    elif kind == "repeat":
        outputs = repeat(first, second if second is not None else kwargs.get("repeats", 1))
    return None if outputs is None else (outputs, 0.0)
