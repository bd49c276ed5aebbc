"""torchviz's classic drawing of a run: make_dot over the tensors a program named (runs in
workers: torch and torchviz)."""

from __future__ import annotations

import warnings

from torchviz import make_dot

from gradviz.graph.higher_order.drawing import COLORS, maker
from gradviz.graph.record import RunRecord

# torchviz 0.0.3 (the latest) compares torch versions with distutils' LooseVersion on every
# make_dot call, which warns "distutils Version classes are deprecated" into the server's log
# wherever DeprecationWarnings are shown. Only that message, only from torchviz.
warnings.filterwarnings(
    "ignore",
    message="distutils Version classes are deprecated",
    category=DeprecationWarning,
    module="torchviz",
)


def classic_dot(record: RunRecord) -> str | None:
    """torchviz.make_dot over every named tensor that ends a branch of the graph."""
    tensors = [b.tensor for b in record.bindings]
    with_graph = [t for t in tensors if t.grad_fn is not None]
    if not with_graph:
        return None
    # Named outputs: tensors whose grad_fn no other named tensor's graph consumes.
    consumed: set[int] = set()
    for t in with_graph:
        for u, _ in t.grad_fn.next_functions:
            if u is not None:
                consumed.add(id(u))
    roots = tuple({id(t): t for t in with_graph if id(t.grad_fn) not in consumed}.values()) or (
        with_graph[-1],
    )
    params = {
        b.name: b.tensor for b in record.bindings if b.tensor.is_leaf and b.tensor.requires_grad
    }
    try:
        dot = make_dot(roots if len(roots) > 1 else roots[0], params=params)
    except (RuntimeError, RecursionError):
        return None
    return _mark_built(dot.source, record) if record.built_by else dot.source


def _mark_built(source: str, record: RunRecord) -> str:
    """torchviz's DOT with the nodes a create_graph=True backward built (a gradient's own
    graph) in orange, as gradviz's drawing marks them (make_dot names a node by its id)."""
    head, sep, _ = source.rstrip().rpartition("}")
    if not sep:
        return source
    border, fill, _ = COLORS["light"]
    marks = [
        f'\t"{key}" [fillcolor="{fill}" color="{border}" penwidth=2 '
        f'tooltip="made by {maker(number)} (create_graph=True)"]\n'
        for key, (_fn, number) in record.built_by.items()
        if f"\t{key} [" in head
    ]
    return head + "".join(marks) + "}\n"
