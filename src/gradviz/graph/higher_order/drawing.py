"""How the drawing marks a gradient's own graph (higher-order gradients).

`torch.autograd.grad(y, x, create_graph=True)` (or `y.backward(create_graph=True)`) records
the gradient's computation as a graph of its own; gradviz.program.recording.higher_order marks
its nodes (GraphNode.made_by: the backward call that built them) and joins y to the gradient
by a "gradient" edge. The DOT writer (gradviz.graph.dot) draws those nodes inside a cluster
per backward call, in orange, with a legend entry; the edge from y to the gradient is an
orange arrow labelled dy/dx. torch.autograd.functional's hessian, jacobian, vjp and jvp with
create_graph=True mark the nodes their own passes built with the call's label (`maker`: "made
by hessian's backward passes at line 5"), drawn the same way, with no arrow (the function's
output is not one of the program's tensors). `summary` is the line the page and the
walk-through say about it. No torch: plain GraphModel data in, DOT text out.
"""

from __future__ import annotations

from gradviz.graph.model import BackwardRecord, GraphEdge, GraphModel, GraphNode
from gradviz.util.mdtext import dot_string

BUILT_TEXT = "built by backward (2nd order): create_graph=True"
EDGE_TIP = (
    "a gradient a create_graph=True backward computed: it has a graph of its own (the "
    "orange cluster), so it can be differentiated again"
)
# Per theme: (the marked nodes' border, a marked function's fill, the cluster's fill)
COLORS = {
    "light": ("#d9730d", "#ffe3c2", "#fff8f0"),
    "dark": ("#ffa94d", "#5c3a10", "#2b2119"),
    "print": ("black", "white", "white"),
    "lecture": ("#E69F00", "#FFE3B0", "#FFFFFF"),
}


def maker(made_by: int | str) -> str:
    """What built a marked node, in words: "backward call 2", or a torch.autograd.functional
    call's label as recorded ("hessian's backward passes at line 5")."""
    return made_by if isinstance(made_by, str) else f"backward call {made_by}"


def _order(made_by: int | str) -> tuple:
    """Backward calls by number, then functional calls by label."""
    return (1, 0, made_by) if isinstance(made_by, str) else (0, made_by, "")


def marked(model: GraphModel) -> bool:
    """Whether some node of the graph was built by a create_graph=True backward."""
    return any(n.made_by is not None for n in model.nodes)


def node_attrs(node: GraphNode, theme: str) -> dict[str, str]:
    """A built node's DOT attributes (border, and a function's fill); none for others."""
    if node.made_by is None:
        return {}
    border, fill, _ = COLORS.get(theme, COLORS["light"])
    attrs = {"color": dot_string(border), "penwidth": "2"}
    if node.kind == "function":
        attrs["fillcolor"] = dot_string(fill)
    return attrs


def tooltip(node: GraphNode, text: str) -> str:
    """A node's tooltip, saying which backward call built it when one did."""
    if node.made_by is None:
        return text
    return f"made by {maker(node.made_by)} (create_graph=True): {text}"


def clustered(model: GraphModel, body: list[str], lines: dict[str, str], theme: str) -> list[str]:
    """The drawing's node statements with the built nodes (those outside layer clusters) moved
    into a cluster per backward call that built them."""
    border, _, fill = COLORS.get(theme, COLORS["light"])
    calls: dict[int | str, list[str]] = {}
    for node in model.nodes:
        if node.made_by is not None:
            calls.setdefault(node.made_by, []).append("  " + lines[node.id])
    moved = {line for group in calls.values() for line in group}
    out = [line for line in body if line not in moved]
    style = '"rounded,filled"' if theme != "print" else '"rounded,dashed"'
    for k, number in enumerate(sorted(calls, key=_order)):
        present = [line for line in calls[number] if line in body]
        if not present:
            continue
        label = f"the gradient's own graph: made by {maker(number)} (create_graph=True)"
        name = f"cluster_built_{number}" if isinstance(number, int) else f"cluster_built_f{k}"
        out.append(f"  subgraph {dot_string(name)} {{")
        out.append(
            f"    label={dot_string(label)} fontsize=10 style={style} "
            f"color={dot_string(border)} fillcolor={dot_string(fill)} fontcolor={dot_string(border)};"
        )
        out.extend("  " + line for line in present)
        out.append("  }")
    return out


def edge_attrs(edge: GraphEdge, theme: str, edge_label: str = "label") -> str:
    """The arrow from the tensor a create_graph=True backward ran from to its gradient."""
    border = COLORS.get(theme, COLORS["light"])[0]
    return (
        f"style=dashed penwidth=2 color={dot_string(border)} fontcolor={dot_string(border)} "
        f"fontname=Helvetica fontsize=10 {edge_label}={dot_string(edge.label or 'gradient')} "
        f'tooltip={dot_string(EDGE_TIP)} class="gradient"'
    )


def legend_line(theme: str, size: int) -> str:
    """The legend's entry for the built nodes."""
    border, fill, _ = COLORS.get(theme, COLORS["light"])
    return (
        f'    "legend_built" [label={dot_string(BUILT_TEXT)} shape=box fontsize={size} '
        f'fillcolor={dot_string(fill)} color={dot_string(border)} penwidth=2 style="filled,rounded"];'
    )


def legend_entry(model: GraphModel, theme: str) -> list[list[str]]:
    """The interactive viewer's legend entry ([text, colour]) when the graph has built
    nodes; none otherwise."""
    if not marked(model):
        return []
    return [[BUILT_TEXT, COLORS.get(theme, COLORS["light"])[1]]]


def step_graph(node_id: str, model: GraphModel) -> str:
    """Which graph a walk-through step runs through: the gradient's own (built by a
    create_graph=True backward) or the program's."""
    node = model.node(node_id)
    if node is not None and node.made_by is not None:
        return f"gradient's graph (made by {maker(node.made_by)})"
    return "program's graph"


def gradient_names(model: GraphModel) -> tuple[str, str] | None:
    """("dy/dx", "d2y/dx2") from the first gradient edge, when the graph has one."""
    edge = next((e for e in model.edges if e.kind == "gradient" and e.label), None)
    if edge is None or "/" not in edge.label:
        return None
    top, _, bottom = edge.label.partition("/")
    return edge.label, f"d2{top[1:]}/{bottom}2"


def summary(model: GraphModel, records: list[BackwardRecord] | None = None) -> str | None:
    """In one line, what a graph with a gradient's own graph shows; None for other graphs."""
    if not marked(model):
        return None
    names = gradient_names(model)
    makers = sorted({n.made_by for n in model.nodes if n.made_by is not None}, key=_order)
    numbers = [str(n) for n in makers if isinstance(n, int)]
    made = [f"backward call {', '.join(numbers)}"] if numbers else []
    made += [n for n in makers if isinstance(n, str)]
    ran = records and any(s.node in _built_ids(model) for r in records for s in r.steps)
    verb = "this backward runs through it and gives" if ran else "its backward gives"
    if names:
        first, second = f"The gradient {names[0]}", names[1]
    else:  # torch.autograd.functional's result: its function's output is not drawn
        result = _built_tensor(model)
        first = result or "The result"
        second = f"the derivative of {result}" if result else "its derivative"
    return (
        f"{first} has its own graph because create_graph=True (the orange nodes, made by "
        f"{'; '.join(made)}); {verb} {second}."
    )


def building_note(model: GraphModel, records: list[BackwardRecord]) -> str | None:
    """For a backward call that ran with create_graph=True whose drawing shows none of what
    it built (its own call's graph: the gradient comes after it), what it did; else None."""
    if marked(model) or not any(r.create_graph for r in records):
        return None
    return (
        "This backward ran with create_graph=True: autograd recorded how it computed the "
        "gradient, so the gradient has a graph of its own (drawn in orange with a later "
        "backward call through it) and can be differentiated again."
    )


def _built_tensor(model: GraphModel) -> str | None:
    """The name of the first marked tensor that has one (a functional call's result)."""
    for node in model.nodes:
        info = model.tensor_info(node.tensor) if node.made_by is not None else None
        if info is not None and info.name:
            return info.name
    return None


def _built_ids(model: GraphModel) -> set[str]:
    return {n.id for n in model.nodes if n.made_by is not None}
