"""What a run gives back, as plain data: Trace, TensorInfo, the backward record, RunOptions,
the graph model (GraphModel, GraphNode, GraphEdge) and a gradient check's result (GradCheckResult).

No torch here (and no Streamlit): the server unpickles these from its workers and draws them
without importing PyTorch, which keeps the server process small (docs/BENCHMARKS.md, memory).
gradviz.run and gradviz.graph, which build them with torch, re-export them under their old
names.
"""

from __future__ import annotations

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
