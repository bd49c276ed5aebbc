"""The named tensors a statement read, for the graph's cut and input edges (runs in
workers: torch).

Autograd's own graph leaves out what does not require grad: a detach() or torch.no_grad()
result hangs loose, and so does an input such as `x` in `F.linear(x, W, b)`. When a tensor
is bound to a name, `read_tensors` looks up the names its expression read, in the scope it
ran in, and keeps the tensors gradviz.graph.cuts can draw: those that require grad for a
result that does not (where the graph was cut), those that do not for a result that does
(its inputs without grad)."""

from __future__ import annotations

import ast

import torch

from gradviz.graph.cuts import users_of
from gradviz.program.recording.state import RunState
from gradviz.program.syntax.grammar import child_nodes

MAX_SOURCES = 8  # tensors kept per binding

MAX_CACHED = 20_000  # expressions whose names one run keeps


def read_names(state: RunState, node: ast.AST) -> tuple[str, ...]:
    """The names `node` reads (loads), each once, in ast.walk's order (breadth first):
    once per expression and run (a loop reads the same ones each pass)."""
    names = state.names_read.get(node)
    if names is None:
        found: dict[str, None] = {}
        todo = [node]
        for n in todo:  # the list grows as it is read: breadth first, as ast.walk
            if isinstance(n, ast.Name):  # its one child, its ctx, holds no name
                if isinstance(n.ctx, ast.Load):
                    found[n.id] = None
            elif not isinstance(n, ast.Constant):  # nor does a constant
                todo.extend(child_nodes(n))
        names = tuple(found)
        if len(state.names_read) < MAX_CACHED:
            state.names_read[node] = names
    return names


def _value(state: RunState, name: str):
    scope = state.scope
    while scope is not None:
        scope = scope.outer.get(name, scope)
        if name in scope.names:
            return scope.names[name]
        scope = scope.parent
    return None


def reads_sources(result: torch.Tensor, cut: bool) -> bool:
    """Whether `read_tensors` would look for any tensor for `result`: a leaf that is not a
    cut (a loop's `for p in parameters`) has none, so a quiet pass that skips the reading
    (gradviz.program.recording.quiet_passes) loses nothing there."""
    return cut or result.grad_fn is not None


def read_tensors(state: RunState, node: ast.AST, result: torch.Tensor, cut: bool) -> tuple:
    """The tensors the expression `node` read that the graph should link to `result`, as
    (tensor, function) pairs: if `cut` (a detach or no_grad result), those requiring grad,
    with None; else, when `result` has a grad_fn, those that do not require grad, with the
    function of its graph that used each (found now: backward frees what they saved)."""
    if not reads_sources(result, cut):
        return ()
    found: dict[int, tuple] = {}
    for name in read_names(state, node):
        value = _value(state, name)
        if (
            isinstance(value, torch.Tensor)
            and value is not result
            and value.requires_grad == cut
            and id(value) not in found
            and len(found) < MAX_SOURCES
        ):
            found[id(value)] = value
    tensors = list(found.values())
    users = [None] * len(tensors) if cut or not tensors else users_of(tensors, result)
    return tuple(zip(tensors, users, strict=True))
