"""A run's record -> GraphModel: the autograd graph as plain data.

Nodes are the tensors a program named (with value and gradient) and the backward
functions between them (PowBackward0, MeanBackward0, ...). A leaf's AccumulateGrad
node is folded into the leaf itself: it is where `x.grad` comes from. Edges point
the way data flows forward (inputs -> function -> output), as torchviz draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gradviz.graph.cuts import cut_edges
from gradviz.graph.model import GraphEdge, GraphModel, GraphNode, TensorInfo, ValueBudget
from gradviz.graph.record import Binding, RunRecord, walk_graph
from gradviz.graph.rules import rule_for
from gradviz.graph.values import (
    grad_size,
    recalled,
    stored_count,
    tensor_stats,
    tensor_values,
)


def _note(binding, tensor: torch.Tensor) -> str | None:
    if tensor.requires_grad:
        return None
    if binding.no_grad:
        return "made under torch.no_grad(): autograd recorded nothing"
    if binding.op in ("detach", "detach_"):
        return "detached: cut out of the graph, no gradient flows through it"
    if binding.constant:
        return "requires_grad=False: a constant as far as autograd is concerned"
    return "none of its inputs requires grad, so autograd recorded nothing"


_SAVED_ATTRS: dict[type, list[str]] = {}
_FREED = "(freed by backward)"


def _saved_attrs(fn) -> list[str]:
    attrs = _SAVED_ATTRS.get(type(fn))
    if attrs is None:  # dir() of an autograd node is slow; its class fixes the answer
        attrs = _SAVED_ATTRS[type(fn)] = [a for a in dir(fn) if a.startswith("_saved_")]
    return attrs


def _held(fn, attr: str) -> bool:
    """Whether the saved tensor `attr` (_saved_self, ...) of `fn` holds a tensor now, read
    from its SavedTensor (`_raw_saved_self`) without unpacking it; False for a list of them
    or none at all."""
    raw = getattr(fn, "_raw" + attr, None)
    return raw is not None and getattr(raw, "data", None) is not None


_TENSOR_ATTRS: dict[type, list[tuple[str, str]]] = {}


def held_saved_tensors(fn) -> frozenset[str]:
    """The saved tensors `fn` holds now. Taken before a backward pass runs through it
    (program.recording, RunRecord.saved_before), it tells _saved_values which ones the pass
    freed without reading each: reading a freed one raises, at about 8 µs a time (a
    2,003-node chain's 1,500 saved tensors: 12 ms)."""
    attrs = _TENSOR_ATTRS.get(type(fn))
    if attrs is None:  # the saved tensors' names: those with a SavedTensor twin (its name)
        kind = type(fn)
        attrs = _TENSOR_ATTRS[kind] = [
            (a, "_raw" + a) for a in _saved_attrs(fn) if hasattr(kind, "_raw" + a)
        ]
    if not attrs:
        return _NONE_HELD
    held = []
    for attr, raw_name in attrs:  # _held's reading, with the twin's name made once
        raw = getattr(fn, raw_name, None)
        if raw is not None and getattr(raw, "data", None) is not None:
            held.append(attr)
    return frozenset(held)


_NONE_HELD: frozenset[str] = frozenset()


def _saved_values(fn, before: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """What `fn` saved for backward, as (name, text); `before`: held_saved_tensors(fn) from
    before a backward pass (one held then and not now was freed: a saved tensor's data only
    goes when autograd releases it)."""
    out = []
    for attr in _saved_attrs(fn):
        if attr in before and not _held(fn, attr):
            out.append((attr[len("_saved_") :], _FREED))
            continue
        try:
            value = getattr(fn, attr)
        except RuntimeError:
            out.append((attr[len("_saved_") :], _FREED))
            continue
        if isinstance(value, torch.Tensor):
            shape = "x".join(map(str, value.shape)) or "scalar"
            out.append((attr[len("_saved_") :], f"{shape} {tensor_values(value)[1]}"))
        elif value is None:
            continue
        else:
            text = repr(value)
            out.append((attr[len("_saved_") :], text if len(text) <= 40 else text[:39] + "…"))
    return out


def _saved_before(record: RunRecord, fn) -> frozenset[str]:
    entry = record.saved_before.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else frozenset()


def _labels(record: RunRecord) -> dict[int, str]:
    """Each binding's label: its name if the name was bound once; else name·L3 (the line),
    and in a loop name[2] (the pass; name[1,2] in nested loops), with the line only when the
    name is bound on several lines and this one is not its only line inside a loop."""
    counts: dict[str, int] = {}
    lines: dict[str, set[int]] = {}
    loop_lines: dict[str, set[int]] = {}
    for b in record.bindings:
        counts[b.name] = counts.get(b.name, 0) + 1
        lines.setdefault(b.name, set()).add(b.line)
        if b.step:
            loop_lines.setdefault(b.name, set()).add(b.line)
    labels = {}
    for i, b in enumerate(record.bindings):
        if counts[b.name] == 1:
            labels[i] = b.name
            continue
        only_loop_line = b.step and len(loop_lines[b.name]) == 1
        where = "" if len(lines[b.name]) == 1 or only_loop_line else f"·L{b.line}"
        if not b.step and not where:
            where = f"·L{b.line}"
        step = f"[{','.join(map(str, b.step))}]" if b.step else ""
        labels[i] = f"{b.name}{where}{step}"
    return labels


def _tensor_info(
    b, tid: str, label: str, record: RunRecord, budget: ValueBudget, stats: tuple[bool, bool]
) -> TensorInfo:
    """One named tensor as plain data; its values only while `budget` lasts. A tensor changed
    in place after it was bound shows the values it had then (program.inplace's copy)."""
    t = b.tensor
    kept = record.snapshots.get((id(t), b.version))
    changed = t._version != b.version
    # a copy from before the change, when autograd drew the change as a node of its own
    then = kept[1] if changed and kept and kept[0] is t and t.grad_fn is not b.grad_fn else None
    shown = t if then is None else then
    note = _note(b, t)
    if changed:
        when = "it had at this line" if then is not None else "after the change"
        later = f"changed in place later: the values shown are the ones {when}"
        note = f"{note}; {later}" if note else later
    grad = t.grad if (t.is_leaf or t.retains_grad) else None
    keep = budget.take(stored_count(shown) + stored_count(grad))
    value, preview = tensor_values(shown, keep)
    grad_value, grad_preview = tensor_values(grad, keep) if grad is not None else (None, None)
    return TensorInfo(
        id=tid,
        name=b.name,
        label=label,
        line=b.line,
        expr=b.expr,
        shape=list(t.shape),
        dtype=str(t.dtype).replace("torch.", ""),
        device=record.device_of(t),
        requires_grad=t.requires_grad,
        is_leaf=t.is_leaf,
        retains_grad=bool(t.retains_grad) if not t.is_leaf else False,
        grad_fn=b.grad_fn.name() if b.grad_fn is not None else None,
        value=value,
        preview=preview,
        grad=grad_value,
        grad_preview=grad_preview,
        note=note,
        stats=tensor_stats(shown) if stats[0] else None,
        grad_size=grad_size(grad) if stats[1] else None,
    )


def _add_tensors(
    record: RunRecord, model: GraphModel, budget: ValueBudget, stats: tuple[bool, bool]
) -> dict[str, Binding]:
    """1. One TensorInfo per distinct tensor a program named, in model.tensors: aliases
    (`x = h`) share a node, labelled with both names; a tensor changed in place by autograd
    (`y += 1`: a new grad_fn) gets a node per state. Returns each info's first binding.
    Values are left out as they are built, not after, once `budget` is spent."""
    seen: dict[tuple[int, int], TensorInfo] = {}  # (id(tensor), id(its grad_fn then))
    labels = _labels(record)
    bound: dict[str, Binding] = {}
    for i, b in enumerate(record.bindings):
        key = (id(b.tensor), id(b.grad_fn))
        if key in seen:
            info = seen[key]
            if b.name != info.name and b.name not in info.label.split(" = "):
                info.label = f"{info.label} = {b.name}"
            continue
        info = _tensor_info(b, f"t{len(model.tensors)}", labels[i], record, budget, stats)
        seen[key] = info
        bound[info.id] = b
        model.tensors.append(info)
    model.values_left_out = budget.left_out
    return bound


@dataclass
class _Places:
    """2. Where each named tensor sits in the autograd graph, and the graph's functions."""

    output_slot: dict[tuple[str, int], str]  # (function key, output_nr) -> tensor node
    leaf_node: dict[int, str]  # id(leaf tensor) -> tensor node
    functions: list  # every autograd node reached, in the order the registry keyed them
    leaf_module: dict[str, str] = field(default_factory=dict)  # leaf node -> its layer's call


def _places(record: RunRecord, model: GraphModel, bound: dict[str, Binding]) -> _Places:
    registry = record.registry
    output_slot: dict[tuple[str, int], str] = {}
    leaf_node: dict[int, str] = {}
    roots = []
    for info in model.tensors:
        b = bound[info.id]
        t = b.tensor
        if b.grad_fn is not None:
            output_slot.setdefault((registry.key(b.grad_fn), b.output_nr), info.id)
            roots.append(b.grad_fn)
            if t.grad_fn is not b.grad_fn:  # changed in place since (y.add_(1)): draw that
                roots.append(t.grad_fn)
        elif t.requires_grad:
            leaf_node[id(t)] = info.id
    functions = walk_graph(*reversed(roots))
    for fn in functions:
        registry.key(fn)
    functions.sort(key=lambda f: int(registry.key(f)[1:]))
    return _Places(output_slot, leaf_node, functions)


def _built_by(record: RunRecord, fn) -> int | str | None:
    """The backward call whose create_graph=True pass built an autograd node (or the
    torch.autograd.functional call's label), if one did."""
    entry = record.built_by.get(id(fn)) if fn is not None else None
    return entry[1] if entry is not None and entry[0] is fn else None


def _gradient_edges(
    record: RunRecord, model: GraphModel, tensor_node: dict[int, str], node_of_fn: dict[str, str]
) -> list[GraphEdge]:
    """From the tensor a create_graph=True pass ran from to each gradient it made (the
    gradient's node, or the last node of its graph when no name holds it), labelled
    dy/dx: the second graph hangs off the first."""
    out = []
    for built in record.built_passes:
        src = tensor_node.get(id(built.output))
        if src is None:
            continue
        for wrt, grad in built.gradients:
            dst = tensor_node.get(id(grad)) or node_of_fn.get(
                record.registry.ids.get(id(grad.grad_fn), "")
            )
            if dst is None or dst == src:
                continue
            a, b = model.tensor_info(src), model.tensor_info(tensor_node.get(id(wrt)))
            label = f"d{a.name}/d{b.name}" if a and b else "gradient"
            out.append(GraphEdge(src, dst, kind="gradient", label=label))
    return out


def _module_of(record: RunRecord, fn) -> str | None:
    """The layer call (ModuleCall.id) that made an autograd node, if one did."""
    entry = record.fn_modules.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def _add_functions(
    record: RunRecord, model: GraphModel, places: _Places, saved: bool = True
) -> dict[str, str]:
    """3. Function nodes; AccumulateGrad folds into its leaf. Returns function key -> node."""
    node_of_fn: dict[str, str] = {}
    unnamed_leaves = 0
    for fn in places.functions:
        key = record.registry.key(fn)
        if hasattr(fn, "variable"):  # AccumulateGrad
            var = fn.variable
            tid = places.leaf_node.get(id(var))
            if tid is not None and _module_of(record, fn):
                places.leaf_module[tid] = _module_of(record, fn)
            if tid is None:
                unnamed_leaves += 1
                tid = f"u{unnamed_leaves}"
                model.nodes.append(
                    GraphNode(
                        tid,
                        "tensor",
                        "unnamed leaf",
                        "leaf",
                        shape=list(var.shape),
                        device=record.device_of(var),
                        module=_module_of(record, fn),
                    )
                )
            node_of_fn[key] = tid
            continue
        node_of_fn[key] = key
        model.nodes.append(
            GraphNode(
                key,
                "function",
                fn.name(),
                "function",
                rule=rule_for(fn.name()),
                # the same nodes are in a run's graph and its backward calls' graphs
                saved=list(
                    recalled(
                        "saved", fn, lambda fn=fn: _saved_values(fn, _saved_before(record, fn))
                    )
                )
                if saved
                else [],
                # not recorded: made while every tensor was still on the CPU
                device=record.fn_devices.get(id(fn), (None, "cpu"))[1],
                module=_module_of(record, fn),
                made_by=_built_by(record, fn),
            )
        )
    return node_of_fn


def _tensor_nodes(
    record: RunRecord, model: GraphModel, bound: dict[str, Binding], places: _Places
) -> list[GraphNode]:
    """4. Tensor nodes, with roles."""
    registry = record.registry
    consumed: set[str] = set()
    for fn in places.functions:
        if hasattr(fn, "variable"):
            continue
        for u, nr in fn.next_functions:
            if u is not None:
                consumed.add(places.output_slot.get((registry.key(u), nr), ""))
    tensor_nodes = []
    for info in model.tensors:
        t = bound[info.id].tensor
        if not t.requires_grad:
            role = "untracked"
        elif t.is_leaf:
            role = "leaf"
        elif info.id in consumed:
            role = "intermediate"
        else:
            role = "output"
        tensor_nodes.append(
            GraphNode(
                info.id,
                "tensor",
                info.label,
                role,
                tensor=info.id,
                device=info.device,
                module=places.leaf_module.get(info.id),
                made_by=_built_by(record, bound[info.id].grad_fn),
            )
        )
    return tensor_nodes


def _edges(
    record: RunRecord, model: GraphModel, places: _Places, node_of_fn: dict[str, str]
) -> list[GraphEdge]:
    """5. Edges, forward: input -> function, function -> named output; a copy between
    devices is marked on the edge into its Copy function."""
    registry = record.registry
    # (src, dst) -> the positions among dst's inputs the edge stands for (none: into a tensor)
    edges: dict[tuple[str, str], list[int]] = {}
    for fn in places.functions:
        if hasattr(fn, "variable"):
            continue
        key = registry.key(fn)
        for slot, (u, nr) in enumerate(fn.next_functions):
            if u is None:
                continue
            ukey = registry.key(u)
            src = places.output_slot.get((ukey, nr)) or node_of_fn.get(ukey)
            if src:
                edges.setdefault((src, key), []).append(slot)
    for (fkey, _nr), tid in places.output_slot.items():
        if fkey in node_of_fn:
            edges.setdefault((fkey, tid), [])
    device_of = {n.id: n.device for n in model.nodes}
    copy_fns = {n.id for n in model.nodes if n.kind == "function" and "Copy" in n.title}
    out = []
    for (s, d), slots in edges.items():
        copy = None
        a, b = device_of.get(s), device_of.get(d)
        if d in copy_fns and a and b and a != b:
            copy = f"{a}→{b}"
        out.append(GraphEdge(s, d, copy, slots=tuple(slots)))
    return out


def _module_calls(record: RunRecord, model: GraphModel) -> list:
    """6. The layer calls that made some node of the graph, with the calls around them."""
    by_id = {c.id: c for c in record.module_calls}
    used: set[str] = set()
    for node in model.nodes:
        call = node.module
        while call is not None and call not in used:
            used.add(call)
            call = by_id[call].parent if call in by_id else None
    return [c for c in record.module_calls if c.id in used]


def build_graph(
    record: RunRecord,
    budget: ValueBudget | None = None,
    saved: bool = True,
    stats: bool = True,
    grad_sizes: bool | None = None,
) -> GraphModel:
    """The GraphModel of a run; `budget` bounds the values it carries (default: a result's,
    ValueBudget(); values are left out as they are built, not after); `saved`: read what
    each backward function saved (a fifth of the time on a resnet; the library skips it
    unless asked to show it); `stats`: each tensor's min, max, mean and norm over all its
    values (the Tensors tab's; four passes over every value: on resnet18's 11 million
    parameters three quarters of the library's drawing time, which does not show them);
    `grad_sizes`: each gradient's mean |grad|, for colouring by gradient (default: as
    `stats`)."""
    model = GraphModel(simulated=record.simulated)
    budget = ValueBudget() if budget is None else budget
    sizes = stats if grad_sizes is None else grad_sizes
    bound = _add_tensors(record, model, budget, (stats, sizes))
    places = _places(record, model, bound)
    node_of_fn = _add_functions(record, model, places, saved)
    model.nodes = _tensor_nodes(record, model, bound, places) + model.nodes
    model.edges = _edges(record, model, places, node_of_fn)
    tensor_node = {id(b.tensor): tid for tid, b in bound.items()}
    model.edges += cut_edges(record, tensor_node, node_of_fn)
    if record.built_passes:
        model.edges += _gradient_edges(record, model, tensor_node, node_of_fn)
    model.modules = _module_calls(record, model)
    # 7. Backward steps point at graph nodes.
    for done in record.backward:
        for step in done.steps:
            step.node = node_of_fn.get(step.node, step.node)
    return model
