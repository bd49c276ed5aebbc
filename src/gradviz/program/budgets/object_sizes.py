"""The Python objects a tensor call makes, counted before it runs.

A tensor with no values (`torch.zeros(10**7, 0)`) weighs 0 bytes, so no byte cap sees it,
yet `x.unbind()` makes 10**7 tensors and `x.tolist()` 10**7 lists. `objects_made` says what
a call will make: the longest list or tuple, the items of all of them, and what those
objects take in memory, each tensor object at its Python and ATen overhead, each list and
number at CPython's (measured on CPython 3.11 and torch 2.x, rounded up: 1,000,000 pieces of
an unbind take 634 MB, the lists of a 1000x1000x0 tensor's tolist() 74 MB, a list of
1,000,000 floats 42 MB). gradviz.program.runtime.torch_calls.Library holds them to the item
quotas (gradviz.program.budgets.language_caps) and the bytes to the memory budget
(gradviz.program.budgets.precheck) before the call runs.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from gradviz.graph.values import list_cells
from gradviz.program.recording.state import RunState
from gradviz.util.format import fmt_bytes

TENSOR_OBJECT_BYTES = 640  # one tensor: its Python object, TensorImpl and storage handle
LIST_OBJECT_BYTES = 80  # one list: its object and its place in the list around it
NUMBER_BYTES = 32  # one float or int in a list: the number and its place
MAX_NESTING = 64  # lists, tuples and dicts inside one another, where that depth matters

PIECES = {
    torch.unbind: "unbind",
    torch.Tensor.unbind: "unbind",
    torch.split: "split",
    torch.Tensor.split: "split",
    torch.chunk: "chunk",
    torch.Tensor.chunk: "chunk",
}

# Every function objects_made may find objects for: the others make none.
OBJECT_MAKERS = (*PIECES, torch.Tensor.tolist)


def size_number(v):
    """A size as the precheck reads it: a one-element tensor is the number it holds
    (torch.arange(torch.tensor(n)) is torch.arange(n)); anything else is itself."""
    if isinstance(v, torch.Tensor) and v.device.type != "meta" and v.numel() == 1:
        if not (v.dtype.is_floating_point or v.dtype.is_complex or v.dtype == torch.bool):
            return int(v.item())
        if v.dtype.is_floating_point:
            return float(v.item())
    return v


def leaves(value) -> list:
    """What tree_flatten gives for a call's result (the values inside its tuples, named
    tuples, lists and dicts), without its objects for each node or its closures: a
    tolist() of 100,000 empty lists is walked in milliseconds, not a third of a second."""
    if isinstance(value, torch.Tensor):
        return [value]
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list | tuple):
            stack.extend(reversed(v))
        elif isinstance(v, dict):
            stack.extend(reversed(v.values()))
        else:
            out.append(v)
    return out


class Made(NamedTuple):
    """What a call makes: its longest list or tuple, the items of all its lists and tuples,
    what they are (for the refusal) and the bytes its new objects take."""

    longest: int
    items: int
    kind: str
    nbytes: int
    depth: int = 1  # lists inside one another


def objects_made(label: str, fn, args: tuple, kwargs: dict) -> Made | None:
    """What a call makes in Python objects, or None for a call that makes no container (or
    whose arguments torch will refuse with its own message)."""
    t = args[0] if args else None
    if not isinstance(t, torch.Tensor):
        return None
    if fn is torch.Tensor.tolist:  # (.numpy() makes one array: runtime.arrays sizes it)
        return listed(t.shape)
    kind = PIECES.get(fn)
    if kind is None or t.dim() == 0:
        return None
    count = pieces(kind, t, args, kwargs)
    return Made(count, count, "tuple", count * TENSOR_OBJECT_BYTES)


def listed(shape) -> Made | None:
    """What tolist() of a tensor of `shape` makes: a list for each row of every dimension
    but the last, and a number for each value. A 0-d tensor gives one number: None."""
    if not shape:
        return None
    lists = list_cells(shape)
    numbers = math.prod(shape)
    nbytes = (lists + 1) * LIST_OBJECT_BYTES + numbers * NUMBER_BYTES
    kind = "list" if len(shape) == 1 else "list of lists"
    return Made(longest_list(shape), lists + numbers, kind, nbytes, len(shape))


def longest_list(shape) -> int:
    """The longest list tolist() makes: a dimension's lists exist only where every
    dimension before it has rows (a 0x10**7 tensor gives [])."""
    longest = 0
    for size in shape:
        longest = max(longest, size)
        if size == 0:
            break
    return longest


def pieces(kind: str, t: torch.Tensor, args: tuple, kwargs: dict) -> int:
    """The tensors an unbind, split or chunk of `t` makes. Where the arguments cannot be
    read here, the most pieces any could give: torch refuses the call, or makes no more."""
    positional = args[1:] if kind == "unbind" else args[2:]  # where `dim` may be given
    dim = size_number(kwargs.get("dim", positional[0] if positional else 0))
    valid = isinstance(dim, int) and -t.dim() <= dim < t.dim()
    length = t.shape[dim] if valid else max(t.shape)
    if kind == "unbind":
        return length
    names = ("chunks",) if kind == "chunk" else ("split_size", "split_size_or_sections")
    size = args[1] if len(args) > 1 else next((kwargs[n] for n in names if n in kwargs), None)
    size = size_number(size)  # x.chunk(torch.tensor(10**7)) is x.chunk(10**7)
    if isinstance(size, list | tuple):
        return len(size)
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return min(size, max(length, 1)) if kind == "chunk" else math.ceil(length / size)
    return length


def hold(state: RunState, quotas, budget, label: str, made: Made, node) -> None:
    """Hold what a call will make in Python objects to the caps (the run's
    budgets.language_caps.Quotas and budgets.precheck.Budget) before it is made: nesting
    deeper than MAX_NESTING, the longest list and the items in all (the quotas), the bytes
    of one tensor for one call and the bytes in all (the budget)."""
    if made.depth > MAX_NESTING:  # torch.zeros([1] * 5000).tolist()
        raise state.error(
            "limit",
            f"{label} would nest lists {made.depth:,} deep (one for each dimension); the "
            f"limit is {MAX_NESTING}",
            node,
        )
    quotas.items(made.longest, node, f"{made.kind} ({label})", made=made.items)
    what = state.segment(node, 50) or label
    if made.nbytes > state.limits.max_tensor_bytes:
        raise state.error(
            "limit",
            f"`{what}` would make Python objects taking about {fmt_bytes(made.nbytes)}; the "
            f"limit is {fmt_bytes(state.limits.max_tensor_bytes)} for what one call makes",
            node,
            "Use smaller sizes: the ideas are the same at 3x3 as at 3000x3000.",
        )
    budget.reserve(what, made.nbytes, node, "in Python objects")
