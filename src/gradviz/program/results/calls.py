"""A program's backward calls one by one, as plain data: what the page's picker shows.

A training loop calls backward() once per pass. For each call a result keeps what is needed
to draw that call's graph on its own (a GraphModel of the tensors in it, with the leaves'
values as they were when it ran and their `.grad` right after it: without zero_grad() the
gradients grow call after call), and for each optimizer step the parameters before and
after it. Only a few calls are kept: the first ones and the last ones (RunState's
`Limits.backward_calls_kept`, fewer on a public host), with the number of calls in all.
gradviz.program.recording.steps records them in the worker; this module has no torch, so the
server unpickles and draws them without PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradviz.graph.model import BackwardRecord, GraphModel

MAX_STEP_PARAMETERS = 24  # parameters one optimizer step lists, before and after


@dataclass(frozen=True)
class ValueSummary:
    """One tensor's values in a line: a short preview and the norm."""

    name: str
    shape: tuple[int, ...]
    preview: str
    norm: float | None  # None when it has no values (meta) or is not floating point


@dataclass
class OptimizerStep:
    """One `opt.step()`: each parameter it changed, before and after."""

    number: int  # 1: the run's first step
    line: int
    optimizer: str  # "opt (SGD)"
    after_call: int  # the backward call it followed (0: none yet)
    before: list[ValueSummary] = field(default_factory=list)
    after: list[ValueSummary] = field(default_factory=list)
    more: int = 0  # parameters it changed beyond MAX_STEP_PARAMETERS


@dataclass
class BackwardCall:
    """One backward() the program ran (or the one the page asked for)."""

    number: int  # 1: the run's first backward call
    line: int | None
    passes: tuple[int, ...]  # the pass of each loop around the call, outermost first
    record: BackwardRecord  # its walk-through; its steps point at `graph`'s nodes
    graph: GraphModel  # the tensors in this call's graph, values as they were then
    grads: list[ValueSummary] = field(default_factory=list)  # leaves' .grad right after it
    steps: list[OptimizerStep] = field(default_factory=list)  # the steps that followed it

    def title(self, count: int) -> str:
        """ "backward call 2 of 3 (line 10, iteration 1)"."""
        where = [f"line {self.line}"] if self.line else []
        if self.passes:
            where.append("iteration " + ",".join(map(str, self.passes)))
        inside = f" ({', '.join(where)})" if where else ""
        return f"backward call {self.number} of {count}{inside}"


@dataclass
class BackwardCalls:
    """The calls a result keeps (the first and the last few) and how many there were."""

    count: int = 0  # backward calls the program ran in all
    kept: list[BackwardCall] = field(default_factory=list)
    steps: int = 0  # optimizer steps the program ran in all

    def call(self, number: int | None) -> BackwardCall | None:
        """Call `number` (1-based; None: the last), when this result kept it."""
        if not self.kept:
            return None
        if number is None:
            return self.kept[-1]
        return next((c for c in self.kept if c.number == number), None)

    def left_out(self) -> str | None:
        """In words, which calls are not kept, or None when every call is."""
        if len(self.kept) >= self.count:
            return None
        numbers = [c.number for c in self.kept]
        gaps = [(a + 1, b - 1) for a, b in zip(numbers, numbers[1:], strict=False) if b - a > 1]
        spans = ", ".join(f"{a}" if a == b else f"{a} to {b}" for a, b in gaps)
        return (
            f"{self.count - len(self.kept):,} of the {self.count:,} backward calls are not "
            f"kept ({spans}): a result keeps the first and the last ones"
        )
