"""Backward passes, watched: what each autograd node received and produced.

A program's `t.backward()` (and the backward a run is asked for, RunOptions.backward) runs
through gradviz.program.runtime.torch_calls.Library.backward, which uses a `BackwardWatch`: `begin`
checks the arguments and starts a `BackwardRecord`; while `hooks` is open, a hook on every
node of the tensor's graph notes the node and the gradients it received and the ones it passed
on, in the order autograd ran them, and the leaves whose `.grad` already held a gradient (this
pass adds to it) are named in the record. Its `BackwardStep`s (those gradients as short
previews) are what the page's backward replay and gradviz.graph.build read.

The page walks through the last backward only (a training loop runs a thousand), so only the
last record gets steps: while a pass runs, each node's notes keep its gradients (small ones as
they are, others by their first values: PassCopies); when a later pass has run, the earlier
pass's notes are dropped, and `finish` makes the last one's steps when the run ends.
"""

from __future__ import annotations

import ast
import contextlib
import functools

import torch

from gradviz.graph.build import held_saved_tensors
from gradviz.graph.model import BackwardRecord, BackwardStep
from gradviz.graph.record import walk_graph
from gradviz.graph.values import part_preview, preview_part, storable
from gradviz.program.recording.grad_fns import leaf_of
from gradviz.program.recording.state import RunState

# Gradient values one pass may copy whole for its previews (small gradients: one plain copy is
# cheaper than taking their first values); past it, only the first values are copied.
WHOLE_COPIES = 1_000_000
# The passes whose new nodes note the saved tensors they hold (RunRecord.saved_before): a
# drawn node of a later pass has its saved tensors read one by one (the same text; a freed
# one raises, at about 9 µs), where noting them in each pass of a loop costs about 5 µs a
# node that saves tensors, for nodes most of which are never drawn.
SAVED_BEFORE_PASSES = 3
BACKWARD_KEYWORDS = frozenset({"gradient", "retain_graph", "create_graph"})


class BackwardWatch:
    """Starts a record for each backward pass and hooks the graph while it runs."""

    def __init__(self, state: RunState):
        self.state = state
        # the latest finished pass: its record and, per step, its gradients' first values
        self.latest: tuple[BackwardRecord, list] | None = None
        # the pass running now, per node in the order autograd ran them: (its key, upstream
        # parts, produced parts)
        self.parts: list = []
        self.fns: list = []  # the autograd nodes of the pass running now, or that just ran
        self.hooked: set[int] = set()  # id(node) of the nodes with a hook (NodeRegistry's)
        self.passes = 0  # the passes hooked so far
        self.sink = _Sink()

    def begin(
        self, tensor: torch.Tensor, args, kwargs, node, origin: str, target: str | None = None
    ) -> BackwardRecord:
        """Check backward()'s arguments and name what it runs from."""
        gradient = args[0] if args else kwargs.get("gradient")
        extra = set(kwargs) - BACKWARD_KEYWORDS if kwargs else set()
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
        """While open, each node of `tensor`'s graph adds a step to `record` as it runs. A
        node gets its hook once, the first pass it is in, and keeps it for the run: a
        parameter's AccumulateGrad is in every pass of a loop. The hook writes to the pass
        running now (`sink`), and does nothing between passes."""
        self.fns = walk_graph(tensor.grad_fn) if tensor.grad_fn is not None else []
        if (
            self.state.quiet
        ):  # a pass no result shows (gradviz.program.recording.quiet_passes): no hooks
            self._accumulating(self.fns, record)
            yield
            return
        parts = self.parts = []
        copies = PassCopies(hold=record.gradient != "given")
        registry, hooked, sink = self.state.registry, self.hooked, self.sink
        saved_before = self.state.saved_before
        noting = self.passes < SAVED_BEFORE_PASSES
        self.passes += 1
        for fn in self.fns:
            if id(fn) in hooked:  # the registry keeps fn alive: its id stays its own
                continue
            fn.register_hook(functools.partial(_step_hook, sink, registry.key(fn)))
            hooked.add(id(fn))
            if noting:
                held = held_saved_tensors(fn)  # before this pass frees them
                if held:
                    saved_before[id(fn)] = (fn, held)
        self._accumulating(self.fns, record)
        sink.parts, sink.copies = parts, copies
        try:
            yield
        finally:
            sink.parts = sink.copies = None
            copies.seen.clear()

    def _accumulating(self, fns: list, record: BackwardRecord) -> None:
        """The leaves of `fns` (AccumulateGrad nodes) whose `.grad` already holds a gradient:
        this pass adds to it, and `record` names each, in `fns`' order."""
        name_of = self.state.name_of
        for fn in fns:
            leaf = leaf_of(fn)
            if leaf is not None and leaf.grad is not None:
                record.accumulated.append(name_of(leaf) or "an unnamed leaf")

    def done(self, record: BackwardRecord) -> None:
        """`record`'s pass ran to the end: it is the latest, and the one before keeps no steps
        (none are made until the run ends: only the latest pass's are). A quiet pass's is
        not kept (gradviz.program.recording.quiet_passes: a later pass is the run's last)."""
        if self.state.quiet:
            return
        self.latest = (record, self.parts)
        self.parts = []

    def finish(self) -> None:
        """The run is over: the latest pass gets its steps, with its gradients' previews."""
        if self.latest is None:
            return
        record, parts = self.latest
        nodes = self.state.registry.nodes
        texts: dict[int, str] = {}  # id(part) -> its preview: a gradient one step produced
        # is most often the next one's upstream, the same part (PassCopies), written once

        def preview(part) -> str:
            text = texts.get(id(part))
            if text is None:
                text = texts[id(part)] = _preview(part)
            return text

        record.steps = [
            BackwardStep(
                i,
                key,
                nodes[key].name(),
                [preview(p) for p in upstream],
                [preview(p) for p in produced],
            )
            for i, (key, upstream, produced) in enumerate(parts)
        ]
        self.latest = None


class _Sink:
    """Where the nodes' hooks write: the pass running now's steps and copies (None between
    passes). The hooks hold this, not the watch: nothing a node holds leads back to it."""

    def __init__(self) -> None:
        self.parts: list | None = None
        self.copies: PassCopies | None = None


def _step_hook(sink: _Sink, key: str, grad_inputs, grad_outputs) -> None:
    parts, copies = sink.parts, sink.copies
    if parts is not None:
        parts.append((key, copies.parts(grad_outputs), copies.parts(grad_inputs)))


class PassCopies:
    """One pass's copies of its gradients for their previews: each gradient copied once (a
    node's upstream is most often the very tensor the node before it produced), small ones
    whole while the pass has room (WHOLE_COPIES), the rest by their first values.

    `hold`: small ones are held as they are instead of copied. Autograd hands a hook
    gradients no program holds (a leaf's `.grad` and a retained `.grad` are copies of them;
    it adds into a gradient in place only when no one else holds it, and the hooks hold
    each), so nothing changes them after the pass; but a `gradient=` a program gave (and
    the views of it that flow on) is the program's own tensor, so that pass copies."""

    def __init__(self, hold: bool = False):
        self.hold = hold
        self.room = WHOLE_COPIES
        # id(gradient) -> (gradient, its part): held until the pass ends, so autograd
        # neither adds into it in place (it does only to a tensor no one else holds) nor
        # gives its id to another tensor meanwhile
        self.seen: dict[int, tuple[torch.Tensor, object]] = {}

    def parts(self, grads) -> list:
        out = []
        for g in grads:
            if g is None:
                out.append(None)
                continue
            hit = self.seen.get(id(g))
            if hit is not None and hit[0] is g:
                out.append(hit[1])
                continue
            n = g.numel()
            whole = n <= self.room
            if whole:
                self.room -= n
            part = g if whole and self.hold else preview_part(g, whole)  # g: _held at the end
            if not isinstance(part, str):  # a big gradient is not held
                self.seen[id(g)] = (g, part)
            out.append(part)
        return out


def _held(g: torch.Tensor):
    """preview_part(g, whole=True) without its copy: g itself, read when the run ends."""
    if not storable(g):
        return preview_part(g)
    data = g.detach()
    if data.dtype in (torch.bfloat16, torch.float16):
        return data.float(), tuple(g.shape)  # a copy, as preview_part makes
    return data, tuple(g.shape)


def _preview(part) -> str:
    if part is None:
        return "None"
    return part_preview(_held(part) if isinstance(part, torch.Tensor) else part)
