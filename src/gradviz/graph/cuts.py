"""The edges autograd's own graph leaves out (runs in workers: torch).

A detach() or torch.no_grad() result is not in the autograd graph: it would float alone,
and where the graph was cut would never be drawn. An input that does not require grad
(`x` in `F.linear(x, W, b)`) is not in it either. From what the interpreter noted of each
binding (Binding.sources, gradviz.program.recording.sources) this adds a "cut" edge from the tensor a
result was made of to the result, labelled "detached" or "no_grad", and an "input" edge from
an input without grad to the backward function that saved it (or, when none did, the one
that made the result), found when the result was bound (gradviz.program.recording.sources)."""

from __future__ import annotations

from collections import deque

import torch

from gradviz.graph.model import GraphEdge
from gradviz.graph.record import RunRecord, accumulates

SEARCH_NODES = 64  # backward functions searched for the one that saved an input
_SAVED: dict[type, list[str]] = {}


def _storage(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr() or None
    except (RuntimeError, NotImplementedError):  # meta, or no storage
        return None


def _saved_tensors(fn) -> list[torch.Tensor]:
    attrs = _SAVED.get(type(fn))
    if attrs is None:
        attrs = _SAVED[type(fn)] = [a for a in dir(fn) if a.startswith("_saved_")]
    out = []
    dropped = False
    for attr in attrs:
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed by backward
            continue
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif value is not None:  # a number or a size: never a tensor for this kind of node
            dropped = True
    if dropped:
        _SAVED[type(fn)] = [a for a in attrs if not _never_tensor(fn, a)]
    return out


def _never_tensor(fn, attr: str) -> bool:
    try:
        value = getattr(fn, attr)
    except RuntimeError:
        return False
    return not isinstance(value, torch.Tensor) and value is not None


def users_of(sources: list[torch.Tensor], result: torch.Tensor) -> list:
    """For each of `sources`, the backward function of `result`'s graph that saved it
    (searched nearest first, among SEARCH_NODES functions), else result.grad_fn; one search
    for all of them. Asked when `result` is bound, before a backward pass frees what the
    functions saved."""
    wanted: dict[int, list[int]] = {}  # storage -> the sources' positions
    for i, source in enumerate(sources):
        ptr = _storage(source)
        if ptr is not None:
            wanted.setdefault(ptr, []).append(i)
    found = [result.grad_fn] * len(sources)
    queue, seen = deque([result.grad_fn]), set()
    while queue and wanted and len(seen) < SEARCH_NODES:
        fn = queue.popleft()
        if fn is None or id(fn) in seen or accumulates(fn):
            continue
        seen.add(id(fn))
        for saved in _saved_tensors(fn):
            hits = wanted.pop(_storage(saved), None)
            for i in hits or ():
                found[i] = fn
        queue.extend(u for u, _ in fn.next_functions)
    return found


def cut_edges(
    record: RunRecord, tensor_node: dict[int, str], node_of_fn: dict[str, str]
) -> list[GraphEdge]:
    """Cut and input edges, from each binding's sources: (tensor, None) for a cut result,
    (tensor, the function that used it) for an input without grad. `tensor_node`:
    id(tensor) -> its node; `node_of_fn`: function key -> node (the functions drawn)."""
    edges: dict[tuple[str, str], GraphEdge] = {}
    for b in record.bindings:
        dst = tensor_node.get(id(b.tensor))
        for source, fn in b.sources:
            src = tensor_node.get(id(source))
            if src is None or dst is None or src == dst:
                continue
            if fn is None:
                label = "detached" if b.op in ("detach", "detach_") else "no_grad"
                edges.setdefault((src, dst), GraphEdge(src, dst, kind="cut", label=label))
                continue
            target = node_of_fn.get(record.registry.ids.get(id(fn), ""))
            if target is not None:
                edges.setdefault((src, target), GraphEdge(src, target, kind="input"))
    return list(edges.values())
