"""The backward walk-through as frames for slides: one drawing per backward step (the running
function highlighted, those already run greyed, only the gradients that have arrived so far
shown) plus the final graph, as a multi-page PDF (Graphviz's vector pages merged by pypdf).
The animated GIF is gradviz.graph.walkthrough_gif's (Pillow): this module stays free of PIL,
so the page's server process can make the PDF itself."""

from __future__ import annotations

import io
from dataclasses import replace

from gradviz.graph.dot import to_dot
from gradviz.graph.higher_order import drawing as built
from gradviz.graph.model import DEFAULT_DRAWING, BackwardRecord, DrawOptions, GraphModel
from gradviz.graph.render import CLI_LIMITS, RenderLimits, render_bytes
from gradviz.graph.rules import rule_for
from gradviz.util.mdtext import dot_string


def arrived(model: GraphModel, record: BackwardRecord, ran: int) -> set[str]:
    """The tensor nodes whose gradient has arrived once the first `ran` steps have run: the
    output backward started from, a leaf whose AccumulateGrad ran, and a tensor every one of
    whose backward functions (in this backward) has run."""
    done = {s.node for s in record.steps[:ran]}
    in_backward = {s.node for s in record.steps}
    consumers: dict[str, set[str]] = {}
    for e in model.edges:
        if e.dst in in_backward:
            consumers.setdefault(e.src, set()).add(e.dst)
    out = set()
    for node in model.nodes:
        if node.kind != "tensor":
            continue
        info = model.tensor_info(node.tensor)
        started = info is not None and info.label == record.target
        all_ran = bool(consumers.get(node.id)) and consumers[node.id] <= done
        if node.id in done or started or all_ran:
            out.add(node.id)
    return out


def _so_far(model: GraphModel, record: BackwardRecord, shown: set[str]) -> GraphModel:
    """The model showing only the gradients that have arrived (the others read grad —); an
    intermediate tensor, whose .grad PyTorch does not keep, shows the gradient its producing
    function received (that step's upstream)."""
    step_of = {s.node: s for s in record.steps}
    producer = {e.dst: e.src for e in model.edges if e.src in step_of}
    upstream = {}
    for node in model.nodes:
        if node.id in shown and node.tensor and producer.get(node.id) in step_of:
            upstream[node.tensor] = ", ".join(step_of[producer[node.id]].upstream)
    keep = {n.tensor for n in model.nodes if n.id in shown}
    tensors = []
    for t in model.tensors:
        if t.id not in keep:
            t = replace(t, grad=None, grad_preview=None)
        elif t.grad_preview is None and upstream.get(t.id):
            t = replace(t, grad_preview=upstream[t.id])
        tensors.append(t)
    return replace(model, tensors=tensors, _index={})


def _titled(dot: str, title: str) -> str:
    """DOT with a caption at the top of the drawing."""
    head, sep, _ = dot.rstrip().rpartition("}")
    return (
        head + f"  graph [label={dot_string(title)} labelloc=t labeljust=l];\n}}\n" if sep else dot
    )


def frames(
    model: GraphModel, record: BackwardRecord, options: DrawOptions = DEFAULT_DRAWING
) -> list[str]:
    """One DOT per backward step, then the final graph (all steps run, every gradient), in
    `options`' direction and theme; the frames have no legend, nor saved tensors, layer
    depth or colouring of their own (each frame's highlight is the step)."""
    look = replace(DEFAULT_DRAWING, rankdir=options.rankdir, theme=options.theme, legend=False)
    steps = record.steps
    out = []
    for k, step in enumerate(steps, start=1):
        name = step.fn.split("::")[-1]
        node = model.node(step.node)
        if node is not None and node.made_by is not None:  # a gradient's own graph
            name += f" (in the gradient's graph, made by {built.maker(node.made_by)})"
        dot = to_dot(
            _so_far(model, record, arrived(model, record, k - 1)),
            look,
            highlight=step.node,
            done=frozenset(s.node for s in steps[: k - 1]),
        )
        out.append(_titled(dot, f"Backward from {record.target}, step {k} of {len(steps)}: "
                                f"{name}: {rule_for(step.fn)}"))  # fmt: skip
    every = _so_far(model, record, arrived(model, record, len(steps)))
    final = to_dot(every, look, done=frozenset(s.node for s in steps))
    out.append(_titled(final, f"After backward from {record.target}: every gradient"))
    return out


def pdf_bytes(dots: list[str], limits: RenderLimits = CLI_LIMITS) -> bytes:
    """The frames as one PDF, a page each."""
    from pypdf import PdfWriter  # about 0.1 s to import: only when a PDF is asked for

    writer = PdfWriter()
    for dot in dots:
        writer.append(io.BytesIO(render_bytes(dot, "pdf", limits=limits)))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def flow(model: GraphModel, record: BackwardRecord | None, node: str | None) -> list[dict]:
    """The edges a walk-through step passes gradients along: from the step's function `node`
    back to each input it gives a gradient (autograd's own edges into it), each as
    {"src", "dst" (the drawn edge), "to" (the node receiving), "grad" (the gradient that
    arrives there, as the walk-through shows it, or None where none does)}.
    A leaf's AccumulateGrad passes nothing on: no edges.

    Each edge's gradient is the step's gradient for the input the edge stands for (its
    `slots`, positions in autograd's order of the function's inputs, the order of the
    step's `produced`): an input autograd has no edge for (a constant) is skipped, whatever
    the function gives it. An input taken twice (x * x) gets the sum of its gradients where
    the walk-through has it (the input goes into this function only: the gradient that
    arrives at it), else both, joined by +."""
    if record is None or node is None:
        return []
    steps = {s.node: s for s in record.steps}
    step = steps.get(node)
    if step is None:
        return []
    out = []
    for e in model.edges:
        if e.dst != node or e.kind != "data":
            continue
        given = [step.produced[i] for i in e.slots if i < len(step.produced)]
        given = [g for g in given if g != "None"]
        grad = given[0] if len(given) == 1 else _summed(model, steps, e.src, given)
        out.append({"src": e.src, "dst": e.dst, "to": e.src, "grad": grad})
    return out


def _summed(model: GraphModel, steps: dict, src: str, given: list[str]) -> str | None:
    """What arrives at `src` from gradients `given` for several of a function's inputs that
    are all `src`: the gradient `src` receives in all (its AccumulateGrad's, or its producing
    function's, upstream) when this function is its only user, else `given` joined by +."""
    if not given:
        return None
    users = {e.dst for e in model.edges if e.src == src and e.kind == "data" and e.dst in steps}
    producer = next((e.src for e in model.edges if e.dst == src and e.src in steps), None)
    arrives = steps.get(src) or steps.get(producer or "")
    if len(users) == 1 and arrives is not None:
        return ", ".join(arrives.upstream)
    return " + ".join(given)
