"""What a run gives back, as plain data: Trace, TensorInfo, the backward record, RunOptions,
the graph model (GraphModel, GraphNode, GraphEdge) and a gradient check's result (GradCheckResult).

No torch here (and no Streamlit): the server unpickles these from its workers and draws them
without importing PyTorch, which keeps the server process small (docs/BENCHMARKS.md, memory).
gradviz.run and gradviz.graph, which build them with torch, re-export them under their old
names.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field

from gradviz.lang import DEFAULT_LIMITS, Limits


@dataclass
class TensorInfo:
    """One tensor a program named, as plain data."""

    id: str
    name: str
    label: str  # name, or name·L3 when the name was bound more than once
    line: int
    expr: str
    shape: list[int]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    grad_fn: str | None
    value: list | float | int | bool | None
    preview: str
    grad: list | float | None = None
    grad_preview: str | None = None
    note: str | None = None  # why autograd does not track it, when it does not


@dataclass
class BackwardStep:
    index: int
    node: str  # graph node id (a function node, or a leaf tensor for AccumulateGrad)
    fn: str
    upstream: list[str]  # gradients flowing in (grad_outputs), previews
    produced: list[str]  # gradients for the inputs (grad_inputs), previews


@dataclass
class BackwardRecord:
    target: str
    line: int | None
    gradient: str  # "implicit" (scalar) | "ones" | "given"
    origin: str  # "program" or "request"
    steps: list[BackwardStep] = field(default_factory=list)


@dataclass
class Trace:
    source: str
    tensors: list[TensorInfo] = field(default_factory=list)
    error: dict | None = None
    backward: list[BackwardRecord] = field(default_factory=list)
    stdout: list[str] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    graph: object = None  # gradviz.graph.GraphModel
    classic_dot: str | None = None
    stats: dict = field(default_factory=dict)
    simulated: bool = False  # CUDA devices in this run are simulated (gradviz.devices)
    moves: list[dict] = field(default_factory=list)  # leaves moved by device_overrides
    device_notes: list[str] = field(default_factory=list)
    memory: list[dict] = field(default_factory=list)  # real CUDA allocators after the run
    # what cap_result left out of this result, in words ("2,500 tensors: ...")
    summary: list[str] = field(default_factory=list)

    def tensor(self, name: str) -> TensorInfo | None:
        """The latest tensor bound to `name`."""
        found = [t for t in self.tensors if t.name == name]
        return found[-1] if found else None

    def to_json(self) -> dict:
        """The CLI's JSON: tensors, error and backward, as documented in the README."""
        last = self.backward[-1] if self.backward else None
        return {
            "tensors": [
                {
                    "name": t.label,
                    "shape": t.shape,
                    "dtype": t.dtype,
                    "device": t.device,
                    "requires_grad": t.requires_grad,
                    "is_leaf": t.is_leaf,
                    "value": t.value,
                    "grad": t.grad,
                    "line": t.line,
                }
                for t in self.tensors
            ],
            "error": self.error,
            "backward": None
            if last is None
            else {
                "output": last.target,
                "origin": last.origin,
                "gradient": last.gradient,
                "order": [s.fn for s in last.steps],
            },
            "stdout": self.stdout,
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------- what a result may carry

MAX_TENSORS_WITH_VALUES = 200  # tensors whose values (and gradients) are sent in full
MAX_RESULT_VALUES = 100_000  # numbers sent in all, over every tensor's value and gradient
MAX_RESULT_BYTES = 8_000_000  # the pickled Trace; beyond it, less detail, then an error


def _count_values(value) -> int:
    """Numbers in a nested list (1 for a plain number, 0 for None), without recursion."""
    if value is None:
        return 0
    if not isinstance(value, list):
        return 1
    count, stack = 0, [value]
    while stack:
        v = stack.pop()
        for item in v:
            if isinstance(item, list):
                stack.append(item)
            else:
                count += 1
    return count


def result_size(trace: Trace) -> int:
    """The bytes the Trace takes pickled (what a worker sends and the server keeps)."""
    return len(pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL))


@dataclass
class ValueBudget:
    """The values a result may still carry, spent while the worker builds it: 2,500 tensors
    of 4,096 values each would otherwise become 10 million Python floats (about 330 MB in
    the worker) before cap_result could drop them."""

    tensors: int = MAX_TENSORS_WITH_VALUES
    numbers: int = MAX_RESULT_VALUES
    left_out: int = 0  # tensors whose values did not fit

    def take(self, count: int) -> bool:
        """Whether `count` more numbers (one tensor's value and gradient) fit."""
        if count == 0:
            return True
        if self.tensors <= 0 or count > self.numbers:
            self.left_out += 1
            return False
        self.tensors -= 1
        self.numbers -= count
        return True


def cap_result(trace: Trace) -> Trace:
    """Bound what a result carries to the server, and say in trace.summary what was left out.

    Values (and gradients) are sent for the first MAX_TENSORS_WITH_VALUES tensors, within
    MAX_RESULT_VALUES numbers in all; the others keep their shape and preview. If the pickled
    Trace is still over MAX_RESULT_BYTES, every value, the classic DOT, saved-tensor texts and
    backward steps are left out; if even that is too big, the result is an error. The size
    is recorded in trace.stats["result_bytes"]. Plain data only: runs in the worker.
    """
    n = len(trace.tensors)
    budget = MAX_RESULT_VALUES
    kept = cut = 0
    for i, t in enumerate(trace.tensors):
        count = _count_values(t.value) + _count_values(t.grad)
        if count and (i >= MAX_TENSORS_WITH_VALUES or count > budget):
            t.value = t.grad = None
            cut += 1
        elif count:
            budget -= count
            kept += 1
    cut += trace.graph.values_left_out if trace.graph is not None else 0
    if cut:
        trace.summary.append(
            f"{n:,} tensors: values are shown for {kept:,} of them; the other {cut:,} show "
            f"their shape and first values only (a result carries the values of at most "
            f"{MAX_TENSORS_WITH_VALUES:,} tensors, {MAX_RESULT_VALUES:,} numbers in all)"
        )
    size = result_size(trace)
    if size > MAX_RESULT_BYTES:
        for t in trace.tensors:
            t.value = t.grad = None
        for node in getattr(trace.graph, "nodes", []):
            node.saved = []
        for record in trace.backward:
            record.steps = []
        trace.classic_dot = None
        trace.summary.append(
            f"the result was {size / 1e6:.1f} MB, over the {MAX_RESULT_BYTES / 1e6:.0f} MB a "
            "result may take: values, saved tensors, backward steps and the classic view "
            "are left out"
        )
        size = result_size(trace)
    if size > MAX_RESULT_BYTES:
        trace = Trace(
            source=trace.source,
            error={
                "kind": "limit",
                "message": f"the result of this program is {size / 1e6:.1f} MB even without its "
                f"values; the limit is {MAX_RESULT_BYTES / 1e6:.0f} MB: name fewer tensors",
                "line": None,
                "col": None,
                "hint": "Use fewer names, or fewer operations.",
                "details": {},
            },
            stats=dict(trace.stats),
        )
        size = result_size(trace)
    trace.stats["result_bytes"] = size
    return trace


@dataclass
class RunOptions:
    backward: str | None = None  # name of a tensor to run backward on after the program
    backward_ones: bool = False  # use a ones-like gradient for a non-scalar output
    retain_intermediate: bool = False  # retain_grad() on every named non-leaf tensor
    classic: bool = True  # also build torchviz's classic DOT
    seed: int = 0
    limits: Limits = DEFAULT_LIMITS
    # None: simulate CUDA exactly when torch has no CUDA device (gradviz.devices)
    simulate_cuda: bool | None = None
    # leaf name (or "*" for every leaf) -> device: the interpreter moves those leaves when
    # they are bound, as if the program had made them there
    device_overrides: dict[str, str] | None = None


# ---------------------------------------------------------------- the graph


@dataclass
class GraphNode:
    id: str
    kind: str  # tensor | function
    title: str  # a tensor's label, or a function's name
    role: str  # leaf | intermediate | output | untracked | function
    tensor: str | None = None  # TensorInfo.id for tensor nodes
    rule: str | None = None
    saved: list[tuple[str, str]] = field(default_factory=list)
    shape: list[int] | None = None  # for unnamed leaves
    device: str | None = None  # where the tensor (or the function's output) lives


@dataclass
class GraphEdge:
    src: str
    dst: str
    copy: str | None = None  # "cpu→cuda:0" where a value crosses devices (a copy)


@dataclass
class GraphModel:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    tensors: list[TensorInfo] = field(default_factory=list)
    simulated: bool = False  # CUDA devices here are simulated (gradviz.devices)
    values_left_out: int = 0  # tensors whose values the ValueBudget did not carry
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def node(self, node_id: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def tensor_info(self, tensor_id: str | None) -> TensorInfo | None:
        if len(self._index) != len(self.tensors):
            self._index = {t.id: t for t in self.tensors}
        return self._index.get(tensor_id)

    def by_title(self, title: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.title == title), None)


# ---------------------------------------------------------------- gradient checks (gradviz.check)


@dataclass
class LeafCheck:
    name: str
    line: int
    shown: list | float | None
    numerical: list | float
    max_abs_diff: float | None
    ok: bool


@dataclass
class GradCheckResult:
    ok: bool
    message: str
    gradcheck_passed: bool | None = None
    leaves: list[LeafCheck] = field(default_factory=list)
