"""The autograd graph as plain data: TensorInfo (one tensor a program named, with value and
gradient), GraphNode, GraphEdge, ModuleCall (a layer's call, drawn as a cluster), GraphModel,
the backward record, and the ValueBudget that bounds how many values a graph carries; and
DrawOptions, how one graph is drawn (view, direction, theme, saved tensors, legend, colouring,
layer depths), the one set of drawing options every face passes to the DOT writer.

No torch and no Streamlit: workers build these (gradviz.graph.build) and the server
unpickles and draws them (gradviz.graph.render).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

MAX_STORED_ELEMENTS = 4096  # a tensor with more values sends its first few only
MAX_TENSORS_WITH_VALUES = 200  # tensors whose values (and gradients) are sent in full
MAX_RESULT_VALUES = 100_000  # numbers sent in all, over every tensor's value and gradient


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
    stats: dict[str, float] | None = None  # min, max, mean, norm of every value
    grad_size: float | None = None  # mean |grad| over every value (colour by gradient)


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
    # the nodes in the order autograd ran them; kept for a run's last backward only (the one
    # the page walks through), empty for the passes before it
    steps: list[BackwardStep] = field(default_factory=list)
    # leaves whose .grad already held a gradient: this pass adds to it (no zero_grad())
    accumulated: list[str] = field(default_factory=list)
    # create_graph=True: the pass built a graph of its own for the gradients it made
    create_graph: bool = False


@dataclass
class ValueBudget:
    """The values a result may still carry: the one rule for which tensors keep theirs.

    Offered each tensor in order, it lets a tensor that carries values keep them while fewer
    than MAX_TENSORS_WITH_VALUES tensors have, and while its numbers fit in what is left of
    MAX_RESULT_VALUES; tensors without values (only a preview) spend nothing. It is spent
    while the worker builds the graph (gradviz.graph.build): 2,500 tensors of 4,096 values
    each would otherwise become 10 million Python floats (about 330 MB in the worker) before
    they could be dropped. program.results.cap_result applies it again to the finished
    result, so the two always agree (a second pass keeps exactly what the first kept)."""

    tensors: int = MAX_TENSORS_WITH_VALUES
    numbers: int = MAX_RESULT_VALUES
    left_out: int = 0  # tensors whose values did not fit
    kept: int = 0  # tensors whose values fit

    def take(self, count: int) -> bool:
        """Whether `count` more numbers (one tensor's value and gradient) fit."""
        if count == 0:
            return True
        if self.tensors <= 0 or count > self.numbers:
            self.left_out += 1
            return False
        self.tensors -= 1
        self.numbers -= count
        self.kept += 1
        return True


@dataclass
class ModuleCall:
    """One call of a layer (nn.Linear, a Sequential, ...): the graph draws the nodes it made
    as a cluster, inside its parent's."""

    id: str  # "m0", "m1", ...
    path: str  # the layer as the program reaches it: "net", "net.0"
    kind: str  # its class: "Linear", "Sequential"
    line: int | None
    parent: str | None = None  # the call it ran inside


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
    module: str | None = None  # ModuleCall.id of the layer call that made it (its cluster)
    # the backward call (1-based) whose create_graph=True pass made it, or the label of the
    # torch.autograd.functional call whose passes did ("hessian's backward passes at line
    # 5"): a node of a gradient's own graph (a higher-order gradient differentiates through
    # it); None for a node the program's forward code made
    made_by: int | str | None = None


@dataclass
class GraphEdge:
    src: str
    dst: str
    copy: str | None = None  # "cpu→cuda:0" where a value crosses devices (a copy)
    # "data": autograd's own; "cut": a detach()/no_grad result from the tensor it was made
    # of; "input": a tensor that does not require grad into the function that used it;
    # "gradient": from the tensor a create_graph=True backward ran from to a gradient it made
    # (the gradient's own graph was built by that pass)
    kind: str = "data"
    label: str | None = None  # "detached", "no_grad"
    # a "data" edge into a function: the positions among that function's inputs (autograd's
    # next_functions, the order of a backward step's `produced`) it stands for; more than
    # one where the function took the same input twice (x * x)
    slots: tuple[int, ...] = ()


@dataclass
class GraphModel:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    tensors: list[TensorInfo] = field(default_factory=list)
    simulated: bool = False  # CUDA devices here are simulated (gradviz.devices.simulated)
    values_left_out: int = 0  # tensors whose values the ValueBudget did not carry
    modules: list[ModuleCall] = field(default_factory=list)  # the layer calls, outer first
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def node(self, node_id: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def with_tensors(self, tensors: list[TensorInfo]) -> GraphModel:
        """This graph with `tensors` in place of its own (the same ids: another view of
        them, such as one without gradients)."""
        return replace(self, tensors=tensors, _index={})

    def tensor_info(self, tensor_id: str | None) -> TensorInfo | None:
        if len(self._index) != len(self.tensors):
            self._index = {t.id: t for t in self.tensors}
        return self._index.get(tensor_id)

    def by_title(self, title: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.title == title), None)


# ---------------------------------------------------------------- how a graph is drawn

VIEWS = ("values", "classic")  # gradviz's drawing, or torchviz's make_dot's (graph/dot.py)
RANKDIRS = ("TB", "LR")  # top-down or left-right
THEME_NAMES = ("light", "dark", "print", "lecture")  # gradviz.graph.dot.THEMES, in order
# What tensors are coloured by (the library's color=, the command line's --color): "role"
# (the legend's fills; borders by device only when some node is off the CPU), "device"
# (borders by device and the device legend always), "grad" (each tensor with a gradient
# filled by its mean |grad|, on a log scale over the graph's range).
COLORS = ("role", "device", "grad")
# The fields with a fixed set of values, in the order they are checked, each with the name
# a message gives it (the library's keyword for the direction is `direction`).
CHOICES = (
    ("view", "view", VIEWS),
    ("color", "color", COLORS),
    ("rankdir", "direction", RANKDIRS),
    ("theme", "theme", THEME_NAMES),
)


def choice_problem(label: str, value: object, choices: tuple[str, ...]) -> str | None:
    """Why `value` is not one of `choices` (a field called `label`), or None when it is."""
    if isinstance(value, str) and value in choices:
        return None
    return f"unknown {label} {value!r}; choose one of {', '.join(choices)}"


def _depth_problem(label: str, value: object, folds: bool) -> str | None:
    if value is None or (folds and isinstance(value, bool)):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    also = ", True, False" if folds else ""
    return f"{label} must be a whole number, 0 or more (or None{also}), not {value!r}"


@dataclass(frozen=True)
class DrawOptions:
    """How one graph is drawn: chosen once by whoever asks for a drawing (the Autograd page,
    a share link, the command line, the library) and passed whole to the DOT writer
    (gradviz.graph.dot.to_dot, render.draw), the walk-through and slides. Every field is
    checked when an instance is made (ValueError saying which field and what to choose);
    a variation is `dataclasses.replace(options, legend=False)`."""

    view: str = "values"  # VIEWS
    rankdir: str = "TB"  # RANKDIRS (the library's `direction`)
    theme: str = "light"  # THEME_NAMES
    saved: bool = False  # show what each backward function saved
    legend: bool = True  # the legend in the drawing (a slide's goes below it)
    color: str = "role"  # COLORS
    # Layers' calls drawn as clusters this deep (0: none; None: to_dot's default).
    module_depth: int | None = None
    # Every layer call at this depth folded into one node (gradviz.graph.collapse; the
    # library's): None or True automatically for a big graph, False or 0 never.
    collapse_depth: int | bool | None = None

    def __post_init__(self) -> None:
        for name, label, choices in CHOICES:
            problem = choice_problem(label, getattr(self, name), choices)
            if problem is not None:
                raise ValueError(problem)
        for name in ("saved", "legend"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, not {getattr(self, name)!r}")
        problem = _depth_problem("module_depth", self.module_depth, folds=False)
        problem = problem or _depth_problem("collapse_depth", self.collapse_depth, folds=True)
        if problem is not None:
            raise ValueError(problem)


DEFAULT_DRAWING = DrawOptions()
