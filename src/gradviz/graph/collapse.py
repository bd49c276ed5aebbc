"""A big graph folded by module: every layer call at some depth becomes one node.

No torch: it reads and returns GraphModels (gradviz.graph.model). A call at `depth` (1: the
outermost calls) and everything it ran inside it (its nodes, the calls inside it) are
replaced by one "module" node titled with the layer's path and class and how many nodes it
holds; the calls above that depth stay clusters around what they hold. Edges follow their
nodes into the folded ones; an edge inside one folded call disappears.
"""

from __future__ import annotations

from dataclasses import replace

from gradviz.graph.model import GraphEdge, GraphModel, GraphNode, ModuleCall


def call_depths(model: GraphModel) -> dict[str, int]:
    """Each call's depth: 1 for a call that ran inside no other, 2 inside one, ..."""
    calls = {c.id: c for c in model.modules}
    depths: dict[str, int] = {}
    for c in model.modules:  # outer calls come first
        parent = c.parent if c.parent in calls else None
        depths[c.id] = 1 if parent is None else depths.get(parent, 0) + 1
    return depths


def _folded_into(model: GraphModel, depth: int) -> dict[str, str]:
    """call -> the call at `depth` it folds into, for calls at `depth` or deeper."""
    calls = {c.id: c for c in model.modules}
    depths = call_depths(model)
    out: dict[str, str] = {}
    for c in model.modules:
        if depths[c.id] < depth:
            continue
        top = c
        while depths[top.id] > depth:
            top = calls[top.parent]
        out[c.id] = top.id
    return out


def _folded_into_calls(model: GraphModel, chosen: set[str]) -> dict[str, str]:
    """call -> the outermost chosen call it is (or ran inside), for calls in or under one."""
    calls = {c.id: c for c in model.modules}
    out: dict[str, str] = {}
    for c in model.modules:
        top, at, seen = None, c, 0
        while at is not None and seen <= len(calls):
            if at.id in chosen:
                top = at.id
            at, seen = calls.get(at.parent or ""), seen + 1
        if top is not None:
            out[c.id] = top
    return out


def collapse(model: GraphModel, depth: int) -> GraphModel:
    """`model` with every layer call at `depth` (and all inside it) folded into one node."""
    return _fold(model, _folded_into(model, depth))


def fold_calls(model: GraphModel, calls) -> GraphModel:
    """`model` with the named layer calls (ModuleCall ids; unknown ones are ignored) folded
    into one node each, with everything they ran inside them: a call inside a folded one
    goes into the outer fold."""
    return _fold(model, _folded_into_calls(model, set(calls)))


def _fold(model: GraphModel, into: dict[str, str]) -> GraphModel:
    if not into:
        return model
    calls: dict[str, ModuleCall] = {c.id: c for c in model.modules}
    members: dict[str, list[GraphNode]] = {}
    node_of: dict[str, str] = {}
    nodes: list[GraphNode] = []
    for node in model.nodes:
        top = into.get(node.module or "")
        if top is None:
            node_of[node.id] = node.id
            nodes.append(node)
            continue
        node_of[node.id] = "fold_" + top
        members.setdefault(top, []).append(node)
    for top, inside in members.items():
        call = calls[top]
        devices = [n.device for n in inside if n.device]
        nodes.append(
            GraphNode(
                "fold_" + top,
                "module",
                f"{call.path}: {call.kind}\n({len(inside)} nodes)",
                "module",
                rule="a layer's call, folded into one node (collapse_depth)",
                device=max(set(devices), key=devices.count) if devices else None,
                module=call.parent if call.parent in calls else None,
            )
        )
    edges: dict[tuple[str, str], GraphEdge] = {}
    for e in model.edges:
        src, dst = node_of.get(e.src, e.src), node_of.get(e.dst, e.dst)
        # into a function left as it was, an edge keeps the inputs it stands for (edges
        # out of one folded call into it become one, standing for all of theirs)
        slots = e.slots if dst == e.dst and e.kind == "data" else ()
        if src == dst:
            continue
        had = edges.get((src, dst))
        if had is None:  # a cut, input or gradient edge stays one, drawn as before
            edges[(src, dst)] = GraphEdge(src, dst, e.copy, e.kind, e.label, slots)
        elif e.kind == "data":  # autograd's own among those that became one: drawn as it
            kept = had if had.kind == "data" else GraphEdge(src, dst, had.copy or e.copy)
            edges[(src, dst)] = replace(kept, slots=tuple(sorted({*kept.slots, *slots})))
    return replace(
        model,
        nodes=nodes,
        edges=list(edges.values()),
        modules=[c for c in model.modules if c.id not in into],  # the clusters left
        _index={},
    )


def auto_depth(model: GraphModel, over: int, target: int) -> int | None:
    """For a graph of more than `over` nodes, the deepest fold that leaves at most `target`
    (None: no fold needed, or none possible: the graph has no layer calls)."""
    if len(model.nodes) <= over or not model.modules:
        return None
    deepest = max(call_depths(model).values())
    for depth in range(deepest, 0, -1):
        if len(collapse(model, depth).nodes) <= target:
            return depth
    return 1
