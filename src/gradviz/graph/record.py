"""What a run leaves for the graph: the tensors a program named (Binding), stable ids for
autograd nodes (NodeRegistry), the devices their outputs live on, and the backward record,
as one RunRecord; walk_graph reaches every autograd node from some roots, and claim_nodes
gives a layer's call the nodes it made (the graph's clusters)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from gradviz.graph.model import BackwardRecord, ModuleCall


@dataclass
class Binding:
    name: str
    tensor: torch.Tensor
    line: int
    expr: str
    no_grad: bool
    op: str
    constant: bool = False  # made by a constructor or a literal: requires_grad=False
    step: tuple[int, ...] = ()  # the pass of each loop around the assignment, outermost first
    # named tensors its expression read that autograd does not link to it, each with the
    # function that used it (None for a cut result): program.sources
    sources: tuple = ()
    quiet: bool = (
        False  # bound in a quiet pass (gradviz.program.recording.quiet_passes): no sources read
    )
    # the tensor as it was when bound: an in-place change later gives it a new grad_fn
    grad_fn: object = field(default=None, init=False)
    output_nr: int = field(default=0, init=False)
    version: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.grad_fn = self.tensor.grad_fn
        self.output_nr = self.tensor.output_nr if self.grad_fn is not None else 0
        self.version = self.tensor._version


class NodeRegistry:
    """Stable ids for autograd nodes; keeps each node alive so its id() is not reused."""

    def __init__(self) -> None:
        self.ids: dict[int, str] = {}
        self.nodes: dict[str, object] = {}

    def key(self, fn) -> str:
        k = self.ids.get(id(fn))
        if k is None:
            k = f"f{len(self.ids)}"
            self.ids[id(fn)] = k
            self.nodes[k] = fn
        return k


_ACCUMULATES: dict[type, bool] = {}  # by an autograd node's type: whether it has `.variable`


def accumulates(fn) -> bool:
    """Whether `fn` is a leaf's AccumulateGrad (it has `.variable`): asked once per type of
    node of torch's own (hasattr on a node without it raises and catches an AttributeError),
    each time for a node of Python's own (it has a `__dict__`)."""
    kind = type(fn)
    known = _ACCUMULATES.get(kind)
    if known is None:
        known = hasattr(fn, "variable")
        if not hasattr(fn, "__dict__") and len(_ACCUMULATES) < 4096:
            _ACCUMULATES[kind] = known
    return known


def claim_nodes(
    fn_modules: dict[int, tuple[object, str]],
    call: str,
    inputs: list,
    outputs: list,
    own: Callable[[], set[int]],
) -> None:
    """Give layer call `call` the autograd nodes it made (into `fn_modules`, id(node) ->
    (node, call)): those between its output tensors and its input tensors not given to an
    inner call already, and the AccumulateGrad nodes of its own parameters (ids from `own()`,
    asked only when a leaf is reached: most calls reach none)."""
    stop = {id(t.grad_fn) for t in inputs if isinstance(t, torch.Tensor) and t.grad_fn is not None}
    stack = [t.grad_fn for t in outputs if isinstance(t, torch.Tensor)]
    seen: set[int] = set()
    mine: set[int] | None = None
    while stack:
        fn = stack.pop()
        if fn is None:
            continue
        key = id(fn)
        if key in seen or key in stop:
            continue
        seen.add(key)
        if accumulates(fn):  # a leaf's AccumulateGrad: only the layer's own
            if key in fn_modules:  # an inner call's already (an outer layer asks no own())
                continue
            if mine is None:
                mine = own()
            if id(fn.variable) in mine:
                fn_modules[key] = (fn, call)
            continue
        if key not in fn_modules:
            fn_modules[key] = (fn, call)
        stack.extend(n for n, _ in fn.next_functions)


def walk_graph(*roots) -> list:
    """Every autograd node reachable from the roots (each once), without recursion."""
    seen: dict[int, object] = {}
    stack = list(roots)
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = fn
        stack.extend(n for n, _ in fn.next_functions)
    return list(seen.values())


@dataclass
class RunRecord:
    """Everything gradviz.graph.build and .classic read of a finished run."""

    bindings: list[Binding]
    registry: NodeRegistry
    device_of: Callable[[torch.Tensor], str]  # real device, or the simulated one
    fn_devices: dict[int, tuple[object, str]] = field(default_factory=dict)
    backward: list[BackwardRecord] = field(default_factory=list)
    simulated: bool = False  # CUDA devices in this run are simulated
    module_calls: list[ModuleCall] = field(default_factory=list)  # layer calls, in order
    fn_modules: dict[int, tuple[object, str]] = field(default_factory=dict)  # node -> call
    # (id(tensor), version) -> (tensor, its values before an in-place change), from
    # program.inplace
    snapshots: dict[tuple[int, int], tuple] = field(default_factory=dict)
    # id(autograd node) -> (node, graph.build.held_saved_tensors(node) before the first
    # backward pass through it ran), from program.recording
    saved_before: dict[int, tuple[object, frozenset[str]]] = field(default_factory=dict)
    # id(autograd node) -> (node, the backward call whose create_graph=True pass built it,
    # or the label of the torch.autograd.functional call that did), and those backward
    # calls' passes (program.recording.higher_order's BuiltPass: output, gradients)
    built_by: dict[int, tuple[object, int | str]] = field(default_factory=dict)
    built_passes: list = field(default_factory=list)
