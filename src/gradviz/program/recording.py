"""Backward passes, watched: what each autograd node received and produced.

A program's `t.backward()` (and the backward a run is asked for, RunOptions.backward) runs
through gradviz.program.library.Library.backward, which uses a `BackwardWatch`: `begin`
checks the arguments and starts a `BackwardRecord`; while `hooks` is open, a hook on every
node of the tensor's graph appends a `BackwardStep` (the node, the gradients it received
and the ones it passed on, as short previews) in the order autograd ran them, and the leaves
whose `.grad` already held a gradient (this pass adds to it) are named in the record. The records
are what the page's backward replay and gradviz.graph.build read.
"""

from __future__ import annotations

import ast
import contextlib

import torch

from gradviz.graph.model import BackwardRecord, BackwardStep
from gradviz.graph.record import walk_graph
from gradviz.graph.values import tensor_values
from gradviz.program.state import RunState


class BackwardWatch:
    """Starts a record for each backward pass and hooks the graph while it runs."""

    def __init__(self, state: RunState):
        self.state = state

    def begin(
        self, tensor: torch.Tensor, args, kwargs, node, origin: str, target: str | None = None
    ) -> BackwardRecord:
        """Check backward()'s arguments and name what it runs from."""
        gradient = args[0] if args else kwargs.get("gradient")
        allowed = {"gradient", "retain_graph", "create_graph"}
        extra = set(kwargs) - allowed
        if extra or len(args) > 3:
            raise self.state.error(
                "type",
                f"backward() takes gradient, retain_graph, create_graph; not {sorted(extra)}",
                node,
            )
        name = (
            target
            or self.state.name_of(tensor)
            or self.state.segment(
                getattr(node, "func", node).value
                if isinstance(getattr(node, "func", None), ast.Attribute)
                else node,
                40,
            )
        )
        return BackwardRecord(
            target=name,
            line=getattr(node, "lineno", None),
            gradient="given" if gradient is not None else "implicit",
            origin=origin,
        )

    @contextlib.contextmanager
    def hooks(self, tensor: torch.Tensor, record: BackwardRecord):
        """While open, each node of `tensor`'s graph adds a step to `record` as it runs."""
        handles = []
        if tensor.grad_fn is not None:
            for fn in walk_graph(tensor.grad_fn):
                key = self.state.registry.key(fn)
                leaf = getattr(fn, "variable", None)  # AccumulateGrad: .grad adds up
                if leaf is not None and leaf.grad is not None:
                    record.accumulated.append(self.state.name_of(leaf) or "an unnamed leaf")

                def hook(grad_inputs, grad_outputs, key=key, fn=fn):
                    record.steps.append(
                        BackwardStep(
                            index=len(record.steps),
                            node=key,
                            fn=fn.name(),
                            upstream=[_grad_preview(g) for g in grad_outputs],
                            produced=[_grad_preview(g) for g in grad_inputs],
                        )
                    )

                handles.append(fn.register_hook(hook))
        try:
            yield
        finally:
            for h in handles:
                h.remove()


def _grad_preview(g) -> str:
    if g is None:
        return "None"
    _, preview = tensor_values(g)
    return preview
