"""Names for the tensors of someone's own PyTorch code, read from their Python frames.

A tensor gets the name of a variable that holds it (`loss`), a parameter the name its module
gives it (`fc1.weight`, or `net.fc1.weight` for a module held in the variable `net`), and an
expression where the source line shows one (`a = x + 2`). Only the caller's own frames are
read: frames of Python's and PyTorch's files (the standard library, site-packages, gradviz
itself) are passed over, and names starting with an underscore (IPython's `_`, `_5`) and
IPython's `In`/`Out` are left out.
"""

from __future__ import annotations

import ast
import functools
import linecache
import os
import sysconfig
from dataclasses import dataclass
from types import FrameType

import torch
from torch import nn

from gradviz.graph.record import Binding, walk_graph

_LIBRARY_DIRS = tuple(
    os.path.realpath(p)
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
) + (os.path.dirname(os.path.dirname(os.path.realpath(__file__))),)
IGNORED_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
MAX_LISTED = 16  # tensors of a list or tuple named one by one (outs[0], outs[1], ...)


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """Whether a frame's code is the caller's own (a script, a notebook cell), not a library's."""
    if filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):  # <stdin>, <string>, an IPython cell
        return True
    return not os.path.realpath(filename).startswith(_LIBRARY_DIRS)


def user_frames(frame: FrameType | None, stop: FrameType | None = None) -> list[FrameType]:
    """The user's frames from `frame` outwards, up to and including `stop` (all when None)."""
    out = []
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            out.append(frame)
        if frame is stop:
            break
        frame = frame.f_back
    return out


def visible(name: str) -> bool:
    return not name.startswith("_") and name not in IGNORED_NAMES


def frame_tensors(frame: FrameType) -> list[tuple[str, torch.Tensor]]:
    """(name, tensor) for each tensor the frame's variables hold, lists and tuples of
    tensors as name[i]."""
    out = []
    for name, value in list(frame.f_locals.items()):
        if not visible(name):
            continue
        if isinstance(value, torch.Tensor):
            out.append((name, value))
        elif isinstance(value, list | tuple) and 0 < len(value) <= MAX_LISTED:
            out.extend(
                (f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, torch.Tensor)
            )
    return out


def frame_modules(frame: FrameType) -> list[tuple[str, nn.Module]]:
    """(variable name, module) for each nn.Module the frame's variables hold."""
    return [
        (name, value)
        for name, value in list(frame.f_locals.items())
        if visible(name) and isinstance(value, nn.Module)
    ]


_EXPRS: dict[tuple[str, int], dict[str, str]] = {}


def source_exprs(filename: str, line: int) -> dict[str, str]:
    """name -> the expression assigned to it on one source line (`b = a ** 2` gives
    {"b": "a ** 2"}); empty when the line cannot be read or parsed alone."""
    key = (filename, line)
    if key not in _EXPRS:
        text = linecache.getline(filename, line).strip()
        found: dict[str, str] = {}
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        found[t.id] = ast.get_source_segment(text, node.value) or ""
        _EXPRS[key] = found
    return _EXPRS[key]


@dataclass
class GraphMembers:
    """Which tensors belong to the graph that ends at some tensors."""

    fns: set[int]  # id() of every autograd node reached
    leaves: set[int]  # id() of the leaf tensors whose .grad the graph fills
    nodes: list  # the autograd nodes themselves (gradviz.graph.record.walk_graph)

    @classmethod
    def of(cls, *roots: torch.Tensor) -> GraphMembers:
        fns = walk_graph(*(t.grad_fn for t in roots))
        leaves = {id(fn.variable) for fn in fns if hasattr(fn, "variable")}
        leaves.update(id(t) for t in roots if t.grad_fn is None and t.requires_grad)
        return cls({id(fn) for fn in fns}, leaves, fns)

    def holds(self, t: torch.Tensor) -> bool:
        return id(t) in self.leaves or (t.grad_fn is not None and id(t.grad_fn) in self.fns)


def binding(
    name: str, tensor: torch.Tensor, line: int = 0, expr: str = "", no_grad: bool = False
) -> Binding:
    """A Binding for gradviz.graph.build: a leaf that requires no grad is a constant."""
    constant = tensor.is_leaf and not tensor.requires_grad and not no_grad
    return Binding(name, tensor, line, expr, no_grad=no_grad, op="", constant=constant)


def parameter_bindings(
    params: dict[str, torch.Tensor] | None,
    model: nn.Module | None,
    modules: list[tuple[str, nn.Module]],
    members: GraphMembers,
) -> list[Binding]:
    """Parameters by name: `params`' keys, else `model`'s named_parameters(), then those of
    `modules` (the caller's variables holding one: variable.path); each tensor named once."""
    named: dict[int, Binding] = {}
    sources: list[dict[str, torch.Tensor]] = []
    if params is not None:
        sources.append(dict(params))
    if model is not None:
        sources.append(dict(model.named_parameters()))
    for var, module in modules:
        sources.append(dict(module.named_parameters(prefix=var)))
    for source in sources:
        for name, t in source.items():
            if isinstance(t, torch.Tensor) and id(t) not in named and members.holds(t):
                named[id(t)] = binding(name, t)
    return list(named.values())
