"""Indexing: `x[i]`, `t[a:b, c]`, `d[key]`, `net[0]`: an item of a list, tuple, dict, string,
range, tensor, numpy array or the program's own object, read under the run's caps (a
tensor's through gradviz.program.runtime.torch_calls.Library.call, sized first)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

import numpy as np
import torch

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.runtime.containers import Containers
from gradviz.program.runtime.errors import runtime_error
from gradviz.program.runtime.functions import Unpacking
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, type_name

INDEX_TYPES = (
    int,
    np.integer,
    torch.Tensor,
    ProgramArray,
    type(None),
    type(Ellipsis),
    slice,
    range,
)


LIST_OR_INDEX = (list, *INDEX_TYPES)
BOUND_TYPES = (int, np.integer, torch.Tensor)  # a slice's bounds
# The exact types of the dict keys read the short way (no tuple to bound, nothing to raise)
PLAIN_KEYS = frozenset({int, str, bool, float, type(None)})


def slice_of(state: RunState, bounds: list | tuple, node: ast.AST) -> slice:
    """`a:b:c` of an index: integer (or tensor) bounds only, else a type error at `node`."""
    for p in bounds:
        if p is not None and type(p) is not int and not isinstance(p, BOUND_TYPES):
            raise state.error("type", "slice bounds must be integers", node)
    return slice(*bounds)


def index_value(state: RunState, value, node: ast.AST):
    """One index as torch, numpy and lists take it (a list is advanced indexing: x[[0, 2]]),
    else a type error at `node`."""
    if type(value) is int or isinstance(value, LIST_OR_INDEX):
        return value
    raise state.error(
        "type",
        f"an index must be an integer, slice, tensor or array, not a {type_name(value)}",
        node,
    )


def ranges_listed(quotas: Quotas, index, node):
    """A tensor's index with each range in it as the list of its numbers (as torch reads
    `y_hat[range(len(y_hat)), y]`), sized first as a list of that length."""
    if isinstance(index, range):
        quotas.items(len(index), node, "list")
        return list(index)
    if isinstance(index, tuple):
        return tuple(ranges_listed(quotas, part, node) for part in index)
    return index


class Indexing:
    """Reads the items a program's subscripts name."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        library: Library,
        containers: Containers,
        unpacking: Unpacking,
        evaluate: Callable[[ast.AST], object],
    ):
        self.state = state
        self.quotas = quotas
        self.library = library
        self.containers = containers
        self.unpacking = unpacking
        self.evaluate = evaluate

    def subscript(self, node: ast.Subscript):
        obj = self.evaluate(node.value)
        kind = type(obj)
        if kind is dict:  # the commonest first, as the checks below take them
            key = self.evaluate(node.slice)
            if type(key) in PLAIN_KEYS and key in obj:  # what get_item comes to for them
                return obj[key]
            return self.containers.get_item(obj, key, node)
        if kind is list or kind is tuple:
            return self.sequence_item(obj, self.eval_index(node.slice), node)
        if isinstance(obj, ProgramArray):  # numpy's indexing, as a tensor's
            return self.library.arrays.get_item(obj, self.eval_index(node.slice), node)
        if isinstance(obj, ProgramObject):  # its own rules: sd["0.weight"], net[0], net[1:]
            return obj.index(self.evaluate(node.slice), node)
        if isinstance(obj, dict):
            return self.containers.get_item(obj, self.evaluate(node.slice), node)
        index = self.eval_index(node.slice)
        if isinstance(obj, torch.Tensor):
            index = ranges_listed(self.quotas, index, node)
            self.containers.bounded(index, node, "an index")
            return self.library.call("indexing", operator.getitem, (obj, index), {}, node, "meta")
        if isinstance(obj, tuple | list | torch.Size):
            return self.sequence_item(obj, index, node)
        if isinstance(obj, str | range):
            return self.containers.get_item(obj, index, node)
        raise self.state.error("type", f"a {type_name(obj)} cannot be indexed", node)

    def sequence_item(self, obj: list | tuple | torch.Size, index, node: ast.Subscript):
        try:
            item = obj[index]
        except (IndexError, TypeError) as exc:
            raise runtime_error(self.state, exc, node, "indexing") from None
        if type(index) is slice and isinstance(item, list | tuple):
            self.quotas.items(len(item), node, type(item).__name__)
        return item

    def eval_index(self, node: ast.AST):
        kind = type(node)
        if kind is ast.Slice:
            lower, upper, step = node.lower, node.upper, node.step
            evaluate = self.evaluate
            bounds = (
                None if lower is None else evaluate(lower),
                None if upper is None else evaluate(upper),
                None if step is None else evaluate(step),
            )
            return slice_of(self.state, bounds, node)
        if isinstance(node, ast.Tuple):
            parts: list = []
            for e in node.elts:
                if isinstance(e, ast.Starred):  # t[*index]
                    parts.extend(
                        self.unpacking.spread(self.evaluate(e.value), e, len(parts), "tuple")
                    )
                else:
                    parts.append(self.eval_index(e))
            return tuple(parts)
        return index_value(self.state, self.evaluate(node), node)
