"""`gradviz.draw(loss)`: the graph of any PyTorch code as a Figure, drawn by the app's own
graph model and renderer (gradviz.graph.build, .collapse, .render).

`draw_tensor` checks what it is given, names the graph's tensors (gradviz.library.naming:
the caller's variables, parameters; or what a `gradviz.record()` block recorded), builds the
GraphModel, folds a big graph by module (gradviz.graph.collapse), and writes the DOT. A
`Figure` turns it into SVG, PNG or PDF with Graphviz under the command line's limits, and
shows itself in Jupyter, VS Code and Colab notebooks as SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType

import torch
from torch import nn

from gradviz.graph import render
from gradviz.graph.build import build_graph
from gradviz.graph.collapse import auto_depth, collapse
from gradviz.graph.dot import COMPACT_NODES, coloring, restyle_classic, to_dot
from gradviz.graph.model import (
    DEFAULT_DRAWING,
    DrawOptions,
    GraphModel,
    ModuleCall,
    ValueBudget,
)
from gradviz.graph.record import Binding, NodeRegistry, RunRecord
from gradviz.graph.values import is_fake
from gradviz.library.naming import (
    GraphMembers,
    binding,
    frame_modules,
    frame_tensors,
    parameter_bindings,
    user_frames,
)

# draw()'s keyword for each field of DrawOptions (docs/library.md): `direction` is rankdir.
KEYWORDS = {
    "view": "view",
    "direction": "rankdir",
    "theme": "theme",
    "saved": "saved",
    "legend": "legend",
    "module_depth": "module_depth",
    "collapse_depth": "collapse_depth",
    "color": "color",
}
SAVE_FORMATS = render.FORMATS  # svg, png, pdf, dot
BEFORE_BACKWARD = "before backward(): no gradients yet (call backward(), then draw again)"
AFTER_BACKWARD = "after backward(): each tensor shows data | grad"
# The user's own code on their own machine: the command line's ceilings on size and time,
# without rlimits on the dot process (setting them means forking this process, torch and
# all, which costs about 100 ms a drawing; gradviz.graph.render._run_dot).
LIBRARY_LIMITS = replace(render.CLI_LIMITS, memory_bytes=None, cpu_seconds=None)
# Numbers a figure's GraphModel keeps in full (TensorInfo.value and .grad), in all: the
# drawing shows previews only, and turning every small parameter of a resnet into lists
# was a fifth of draw()'s time. Nor does it compute each tensor's min/max/mean/norm (the
# app's Tensors tab): four passes over resnet18's 11 million parameters, 14 of draw()'s
# 18 ms of CPU.
LIBRARY_VALUES = 2_000
# With model=, the clusters are the layers that own parameters, in their parents: by default
# two levels (resnet's layer1 > layer1.0). Deeper levels give each conv and norm a cluster
# around its weight and the node reading it, which the weight's name (layer1.0.conv1.weight)
# already says; on resnet18 those 41 clusters cost `dot` about 2.4 of its 29 ms of CPU.
# module_depth=6 draws every level.
MODEL_CLUSTER_DEPTH = 2
# A graph over COMPACT_NODES nodes is folded by module, at the deepest depth that
# leaves at most this many (resnet50: its 16 blocks, each one node).
AUTO_FOLD_NODES = 150


@dataclass
class Figure:
    """A drawn autograd graph: `dot` (text), `svg()`, `save(path)`, inline in notebooks."""

    dot: str
    graph: GraphModel
    caption: str
    view: str = "values"
    _svg: str | None = field(default=None, repr=False)

    def render(self, fmt: str, scale: float = 1.0) -> bytes:
        """svg, png, pdf or dot bytes (Graphviz's `dot` for all but dot)."""
        if fmt not in SAVE_FORMATS:
            raise ValueError(_format_message(fmt))
        return render.render_bytes(self.dot, fmt, scale=scale, limits=LIBRARY_LIMITS)

    def svg(self) -> str:
        if self._svg is None:
            self._svg = self.render("svg").decode("utf-8")
        return self._svg

    def save(self, path: str | Path, scale: float = 1.0) -> Path:
        """Write the drawing; the format comes from the suffix (.svg .png .pdf .dot)."""
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in SAVE_FORMATS:
            raise ValueError(_format_message(fmt or path.name))
        path.write_bytes(self.render(fmt, scale))
        return path

    def _repr_svg_(self) -> str | None:
        """Jupyter's inline picture (None without Graphviz: the text repr says why)."""
        try:
            return self.svg()
        except render.RenderUnavailable:
            return None

    def __repr__(self) -> str:
        tensors = sum(1 for n in self.graph.nodes if n.kind == "tensor")
        text = (
            f"<gradviz Figure ({self.view}): {len(self.graph.nodes)} nodes, {tensors} tensors; "
            f"{self.caption}>"
        )
        if not render.dot_available():
            text += " (Graphviz's `dot` is not installed: fig.dot has the DOT text)"
        return text


def _format_message(fmt: str) -> str:
    if fmt == "html":
        return (
            "gradviz cannot save HTML: the figure saves as .svg, .png, .pdf or .dot "
            "(an SVG opens in any browser)"
        )
    return f"cannot save as {fmt!r}: choose .svg, .png, .pdf or .dot"


def check_tensor(tensor) -> None:
    """Raise TypeError/ValueError, saying what to pass, unless `tensor` ends a graph."""
    if isinstance(tensor, nn.Module):
        raise TypeError(
            "gradviz.draw needs the tensor a model computed, not the model: "
            "draw(model(x)) or draw(loss), with model=model for its layers"
        )
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            f"gradviz.draw needs a torch.Tensor (the output whose graph to draw, such as "
            f"the loss); got {type(tensor).__name__}"
        )
    if tensor.grad_fn is None and not tensor.requires_grad:
        raise ValueError(
            "this tensor has no autograd graph: nothing that made it requires grad. Create "
            "the inputs or parameters with requires_grad=True, outside torch.no_grad() and "
            "without .detach(), then draw the result"
        )


def _bindings(tensor, frames, recorder, params, model, members) -> list[Binding]:
    """Parameters first, then the block's or the caller's variables, then the tensor drawn."""
    if recorder is not None:
        modules, variables = recorder.modules_at_exit, recorder.names_at_exit
    else:
        modules = [vm for frame in frames for vm in frame_modules(frame)]
        variables = [nt for frame in frames for nt in frame_tensors(frame)]
    found = parameter_bindings(params, model, modules, members)
    if recorder is not None:  # the block's tensors in this graph, and its untracked ones
        found += [
            b for b in recorder.bindings if members.holds(b.tensor) or not b.tensor.requires_grad
        ]
    named = {id(b.tensor) for b in found}
    for name, t in variables:
        if members.holds(t) and id(t) not in named:
            named.add(id(t))
            found.append(binding(name, t))
    if not any(b.tensor is tensor for b in found):
        found.append(binding("output", tensor))
    return found


def parameter_clusters(model: nn.Module, fns: list) -> tuple[list[ModuleCall], dict]:
    """Clusters without a recording: each layer that owns parameters, holding its parameters
    and the autograd nodes that read them (nested as the layers are: layer1 > layer1.0)."""
    owner = {}
    for path, sub in model.named_modules():
        for p in sub.parameters(recurse=False):
            owner.setdefault(id(p), path)
    kinds = {path: type(sub).__name__ for path, sub in model.named_modules()}
    calls: dict[str, ModuleCall] = {}

    def call_for(path: str) -> ModuleCall:
        if path not in calls:
            parent = call_for(path.rpartition(".")[0]).id if "." in path else None
            calls[path] = ModuleCall(f"m{len(calls)}", path or "model", kinds[path], None, parent)
        return calls[path]

    fn_modules: dict[int, tuple[object, str]] = {}
    for fn in fns:
        if hasattr(fn, "variable"):
            continue
        for u, _ in fn.next_functions:
            if u is not None and hasattr(u, "variable") and id(u.variable) in owner:
                call = call_for(owner[id(u.variable)]).id
                fn_modules.setdefault(id(u), (u, call))
                fn_modules.setdefault(id(fn), (fn, call))
    return list(calls.values()), fn_modules


def function_devices(fns: list) -> dict[int, tuple[object, str]]:
    """Where each autograd node's output lives, as autograd itself recorded it (the
    metadata of the gradient it receives), for the graph's device colours."""
    out = {}
    for fn in fns:
        try:
            out[id(fn)] = (fn, str(fn._input_metadata[0].device))
        except (AttributeError, IndexError, RuntimeError):
            continue  # an older torch, or a node without inputs: drawn without a device
    return out


def _record(fns: list, bindings, recorder, model) -> RunRecord:
    calls, fn_modules = [], {}
    if recorder is not None:
        calls, fn_modules = recorder.module_calls, recorder.fn_modules
    elif model is not None:
        calls, fn_modules = parameter_clusters(model, fns)
    simulated = any(is_fake(b.tensor) and b.tensor.device.type == "cuda" for b in bindings)
    return RunRecord(
        bindings=bindings,
        registry=NodeRegistry(),
        device_of=lambda t: str(t.device),
        fn_devices=function_devices(fns),
        simulated=simulated,
        module_calls=calls,
        fn_modules=fn_modules,
    )


def _has_gradients(model: GraphModel) -> bool:
    return any(t.grad_preview is not None for t in model.tensors)


def check_keywords(options: object, keywords: dict[str, object]) -> None:
    """TypeError for a keyword draw() does not take, or an `options` not a DrawOptions."""
    for name in keywords:
        if name not in KEYWORDS:
            raise TypeError(
                f"gradviz.draw got an unexpected keyword argument {name!r}; its drawing "
                f"options are {', '.join(KEYWORDS)} and options= (a DrawOptions)"
            )
    if options is not None and not isinstance(options, DrawOptions):
        raise TypeError(
            f"options= takes a gradviz.graph.model.DrawOptions, not {type(options).__name__}"
        )


def drawing_options(options: DrawOptions | None, keywords: dict[str, object]) -> DrawOptions:
    """`options` (default: DrawOptions()) with draw()'s keywords (KEYWORDS) in place of its
    fields; saved and legend count as true or false as Python's `if` does. ValueError
    (DrawOptions') for a value it does not offer."""
    fields = {KEYWORDS[name]: value for name, value in keywords.items()}
    for name in ("saved", "legend"):
        if name in fields:
            fields[name] = bool(fields[name])
    return replace(options or DEFAULT_DRAWING, **fields)


def draw_tensor(
    tensor: torch.Tensor,
    frame: FrameType | None,
    *,
    recorder=None,
    params: dict[str, torch.Tensor] | None = None,
    model: nn.Module | None = None,
    options: DrawOptions | None = None,
    **keywords,
) -> Figure:
    """The Figure of the graph that ends at `tensor`, its tensors named from `frame`'s
    variables (or `recorder`'s block), `params` and `model`'s parameters.

    `options` (a DrawOptions) and the keywords (KEYWORDS, each in place of its field):
    view: "values" (gradviz's drawing) or "classic" (torchviz's make_dot); direction: TB or
    LR; theme: light, dark, print or lecture; saved: show what backward functions saved;
    module_depth: how deep layers' clusters are drawn (default: to_dot's; with
    `model=` and no recording, MODEL_CLUSTER_DEPTH); collapse_depth: fold every layer call
    at that depth into one node (None or True: automatically, when the graph has over
    COMPACT_NODES nodes, to at most AUTO_FOLD_NODES; False: never); color: one of
    COLORS (coloring: role, device or grad)."""
    check_keywords(options, keywords)
    check_tensor(tensor)
    options = drawing_options(options, keywords)
    frames = user_frames(frame, frame) if recorder is None else []
    members = GraphMembers.of(tensor)
    bindings = _bindings(tensor, frames, recorder, params, model, members)
    record = _record(members.nodes, bindings, recorder, model)
    graph = build_graph(
        record,
        ValueBudget(numbers=LIBRARY_VALUES),
        saved=options.saved,
        stats=False,
        grad_sizes=options.color == "grad",
    )
    caption = AFTER_BACKWARD if _has_gradients(graph) else BEFORE_BACKWARD
    fills, by_device, note = coloring(graph, options.color)
    if options.view == "classic":
        from gradviz.graph.classic import classic_dot  # torchviz only when asked for

        source = classic_dot(record)
        if source is None:
            raise ValueError("torchviz's make_dot could not draw this graph; use view='values'")
        return Figure(restyle_classic(source, options), graph, caption, options.view)
    collapse_depth = options.collapse_depth
    if collapse_depth is None or collapse_depth is True:
        collapse_depth = auto_depth(graph, COMPACT_NODES, AUTO_FOLD_NODES)
    if collapse_depth:
        graph = collapse(graph, int(collapse_depth))
    if options.module_depth is None and recorder is None and model is not None:
        depth = MODEL_CLUSTER_DEPTH if len(graph.nodes) <= COMPACT_NODES else 1
        options = replace(options, module_depth=depth)
    dot = to_dot(
        graph,
        options,
        caption=f"{caption}; {note}" if note else caption,
        fills=fills,
        by_device=by_device,
    )
    return Figure(dot, graph, caption, options.view)
