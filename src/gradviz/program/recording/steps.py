"""Records each backward call and optimizer step of a run, for gradviz.program.results.calls.

Right after a backward call (gradviz.program.runtime.torch_calls.Library.backward) the watch notes the
named tensors in that call's graph, and the values and `.grad` of its leaves as they are
then (a later optimizer step or backward changes them in place). The first calls are kept,
then a window of the latest ones; `finish` builds each kept call's GraphModel at the end of
the run (gradviz.graph.build; before the whole run's graph, whose build rewrites the
records' steps), so calls the window drops cost only their notes. An optimizer
step (gradviz.program.objects.optimizers) adds its parameters before and after to the latest call.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import torch

from gradviz.graph.build import build_graph
from gradviz.graph.model import BackwardRecord, ValueBudget
from gradviz.graph.record import RunRecord, walk_graph
from gradviz.graph.values import storable, tensor_values
from gradviz.program.recording.grad_fns import leaf_of
from gradviz.program.recording.higher_order import BuiltNodes, joined, unnamed_gradient
from gradviz.program.results.calls import (
    MAX_STEP_PARAMETERS,
    BackwardCall,
    BackwardCalls,
    OptimizerStep,
    ValueSummary,
)

# The values one call's graph carries in full (the rest show previews): a kept call must
# not make a result several times the size of the whole run's graph.
CALL_TENSORS_WITH_VALUES = 60
CALL_VALUES = 20_000


@dataclass
class _Pending:
    """A call's notes until the run ends: its tensors, and copies of what changes later."""

    number: int
    passes: tuple[int, ...]
    record: BackwardRecord  # copied when kept (the run's graph build points its steps)
    bindings: list  # the named tensors in its graph, as gradviz.graph.record.Binding
    leaves: dict[int, tuple]  # id(leaf) -> (value, .grad) as held then
    grads: list[tuple[str, object]]  # (name, .grad as held then) of each named leaf
    steps: list[tuple] = field(default_factory=list)  # the steps after it, as held


@dataclass(frozen=True)
class _Described:
    """A tensor too big to copy at every call: its preview and norm, taken then."""

    shape: tuple[int, ...]
    preview: str
    norm: float | None


def _norm(t: torch.Tensor) -> float | None:
    if not t.is_floating_point() or t.device.type == "meta":
        return None
    norm = float(torch.linalg.vector_norm(t.detach()))
    return norm if math.isfinite(norm) else None


def hold(t: torch.Tensor | None, room: list[int] | None = None):
    """`t` as it is now, to be described at the end: a copy when it is small (what a result
    may carry in full) and fits in `room` (numbers still to copy, spent here), else its
    preview and norm now. Cheap at every call and step."""
    if t is None:
        return None
    if storable(t) and (room is None or t.numel() <= room[0]):
        if room is not None:
            room[0] -= t.numel()
        return t.detach().clone()
    return _Described(tuple(t.shape), tensor_values(t, keep=False)[1], _norm(t))


def summary(name: str, held) -> ValueSummary | None:
    """What `hold` kept, as a ValueSummary (None for no tensor)."""
    if held is None:
        return None
    if isinstance(held, _Described):
        return ValueSummary(name, held.shape, held.preview, held.norm)
    _, preview = tensor_values(held, keep=held.numel() <= 6)  # a few numbers: all of them
    return ValueSummary(name, tuple(held.shape), preview, _norm(held))


def _values(held, keep: bool) -> tuple:
    """(value, preview) as gradviz.graph.values.tensor_values gives them, from `hold`."""
    if held is None:
        return None, None
    if isinstance(held, _Described):
        return None, held.preview
    return tensor_values(held, keep)


class CallWatch:
    """The backward calls and optimizer steps of one run."""

    def __init__(self, state):  # gradviz.program.recording.state.RunState, which makes it
        self.state = state
        kept = max(1, state.limits.backward_calls_kept)
        self.first = (kept + 1) // 2
        self.last = kept - self.first
        self.count = 0
        self.recorded = 0  # the number of the latest call noted (not from a quiet pass)
        self.step_count = 0
        self.pending: list[_Pending] = []
        # id(leaf) -> (leaf, version, data_ptr, copy): the latest copies of the leaves of the
        # latest call and step, shared while the leaf is unchanged (a loop's parameters are
        # copied once a pass, not at its call, before and after its step)
        self.copies: dict[int, tuple] = {}
        self.sharing = True
        self.built = BuiltNodes()  # what create_graph=True passes built (higher_order)

    def aliased(self) -> None:
        """The program read a `.data`: a write through it leaves the version counter as it
        was, so no copy is shared from now on."""
        self.sharing = False
        self.copies = {}

    def _hold(self, t: torch.Tensor, copies: dict, room: list[int] | None = None):
        """hold(t, room), with the copy in `copies` when t is unchanged since it was made;
        a new copy goes in `copies` too."""
        if not self.sharing or not storable(t) or (room is not None and t.numel() > room[0]):
            return hold(t, room)
        if room is not None:
            room[0] -= t.numel()
        try:
            version, ptr = t._version, t.data_ptr()
        except RuntimeError:  # no plain storage
            return t.detach().clone()
        hit = self.copies.get(id(t))
        if hit is not None and hit[0] is t and hit[1] == version and hit[2] == ptr:
            copied = hit[3]
        else:
            copied = t.detach().clone()
        copies[id(t)] = (t, version, ptr, copied)
        return copied

    # -- while the run goes on

    def backward(self, tensor: torch.Tensor, record: BackwardRecord, fns=None) -> None:
        """Notes for the call that just ran from `tensor` (`fns`: its graph's autograd nodes,
        walk_graph's, when the caller has them)."""
        self.count += 1
        state = self.state
        if (
            state.quiet
        ):  # a pass no result shows (gradviz.program.recording.quiet_passes): counted only
            return
        self.recorded = self.count
        if fns is None:
            fns = walk_graph(tensor.grad_fn) if tensor.grad_fn is not None else []
        made = {id(fn) for fn in fns}
        leaves = {id(leaf) for fn in fns if (leaf := leaf_of(fn)) is not None}
        extra, outputs = joined(self.built, fns) if self.built.passes else (set(), [])
        made |= extra  # the graph a gradient came from, drawn with the gradient's own
        tensors = {id(t) for t in outputs}
        if tensor.grad_fn is None and tensor.requires_grad:
            leaves.add(id(tensor))
        bindings, notes, grads, copies = [], {}, [], {}
        room = [CALL_VALUES]  # the leaves' numbers a call copies: what its result may carry
        for b in state.bindings:
            t = b.tensor
            fn = t.grad_fn
            if (fn is not None and id(fn) in made) or t is tensor or (tensors and id(t) in tensors):
                bindings.append(b)
            elif id(t) in leaves:
                bindings.append(b)
                if id(t) not in notes:
                    notes[id(t)] = (self._hold(t, copies, room), hold(t.grad, room))
                    grads.append((b.name, notes[id(t)][1]))
        start = unnamed_gradient(self.built, tensor, record, bindings) if extra else None
        bindings += [start] if start is not None else []
        self.pending.append(
            _Pending(self.count, tuple(state.loops), record, bindings, notes, grads)
        )
        if len(self.pending) > self.first + self.last:
            del self.pending[self.first]
        self.copies = copies  # the leaves as they are now

    def before_step(self, params: list[torch.Tensor]) -> list | None:
        """The parameters before a step, when the step will be kept (after a kept call)."""
        if not self.pending or self.pending[-1].number != self.count:
            return None
        state = self.state
        copies = self.copies
        return [
            (state.name_of(p) or f"parameter {i + 1}", self._hold(p, copies))
            for i, p in enumerate(params[:MAX_STEP_PARAMETERS])
        ]

    def after_step(self, params: list[torch.Tensor], before, optimizer: str, line: int) -> None:
        self.step_count += 1
        for p in params:  # changed: a fused step leaves their version counters as they were
            self.copies.pop(id(p), None)
        if before is None:
            return
        after = [self._hold(p, self.copies) for p in params[: len(before)]]
        more = max(0, len(params) - MAX_STEP_PARAMETERS)
        self.pending[-1].steps.append(
            (self.step_count, line, optimizer, self.count, before, after, more)
        )

    # -- at the end

    def all_noted(self) -> bool:
        """Whether the calls noted are the ones kept had every call been noted: the first
        ones, the latest ones and the very last (quiet passes note none:
        gradviz.program.recording.quiet_passes)."""
        count = self.count
        first = list(range(1, min(self.first, count) + 1))
        last = list(range(max(self.first, count - self.last) + 1, count + 1))
        return [p.number for p in self.pending] == first + last and self.recorded == count

    def finish(self, fn_devices: dict) -> BackwardCalls:
        """The kept calls, each with its own graph (`fn_devices`: as RunRecord's). A run
        with one backward call keeps none here: the page and the command line show the whole
        run then, and `only_call` adds it with the run's graph once that is built."""
        if self.count == 1:
            return BackwardCalls(count=1, kept=[], steps=self.step_count)
        return BackwardCalls(
            count=self.count,
            kept=[self._build(p, fn_devices) for p in self.pending],
            steps=self.step_count,
        )

    def only_call(self, calls: BackwardCalls, graph) -> None:
        """The run's one backward call into `calls`, drawn by `graph`, the whole run's (built
        after `finish`, from the same record): building a second graph of the same tensors
        was most of a long program's run (a 2,003-node chain: 187 of 242 ms). Its `.grad`
        and the steps after it are as they were noted."""
        if self.count != 1 or len(self.pending) != 1 or calls.kept:
            return
        calls.kept.append(_call(self.pending[0], graph))

    def _build(self, pending: _Pending, fn_devices: dict) -> BackwardCall:
        state = self.state
        pending.record = copy.deepcopy(pending.record)
        record = RunRecord(
            pending.bindings,
            state.registry,
            state.device_of,
            fn_devices,
            [pending.record],
            state.simulated,
            state.module_calls,
            state.fn_modules,
            saved_before=state.saved_before,
            built_by=self.built.nodes,
            built_passes=self.built.passes,
        )
        graph = build_graph(record, ValueBudget(CALL_TENSORS_WITH_VALUES, CALL_VALUES))
        seen: dict[int, object] = {}
        for b in pending.bindings:  # graph.tensors: one per distinct tensor, in this order
            seen.setdefault(id(b.tensor), b)
        for info, key in zip(graph.tensors, seen, strict=False):
            note = pending.leaves.get(key)
            if note is not None:  # a leaf: its value and .grad as they were at the call
                keep = info.value is not None  # the budget kept its values
                info.value, info.preview = _values(note[0], keep)
                info.grad, info.grad_preview = _values(note[1], keep)
        return _call(pending, graph)


def _call(pending: _Pending, graph) -> BackwardCall:
    """A kept call from its notes, drawn by `graph` (its own, or the run's for a lone call)."""
    return BackwardCall(
        pending.number,
        pending.record.line,
        pending.passes,
        pending.record,
        graph,
        [g for g in (summary(n, h) for n, h in pending.grads) if g is not None],
        [_step(*held) for held in pending.steps],
    )


def _step(number, line, optimizer, after_call, before, after, more) -> OptimizerStep:
    return OptimizerStep(
        number,
        line,
        optimizer,
        after_call,
        [summary(name, h) for name, h in before],
        [summary(name, h) for (name, _), h in zip(before, after, strict=True)],
        more,
    )
