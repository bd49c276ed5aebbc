"""Higher-order gradients: which autograd nodes a create_graph=True backward pass built.

`torch.autograd.grad(y, x, create_graph=True)` and `y.backward(create_graph=True)` give
gradients with a graph of their own: differentiating ran PowBackward0's formula
(3·x²·upstream) with autograd recording, so the gradient `dy/dx` has MulBackward0,
PowBackward0, ... nodes that the program's own code never made. A second backward from
that gradient (`g.backward()`, `x.grad.backward()`) runs through them and gives d2y/dx2.

Right after such a pass (gradviz.program.runtime.torch_calls.Library.recorded_pass),
`note_built` walks back from the gradients it made and marks every node that did not exist
before it: not in the pass's own graph, not one the run had keyed already (NodeRegistry),
not in a given `grad_outputs`' graph. gradviz.graph.build reads the marks (RunRecord's
`built_by`) into GraphNode.made_by, and joins each pass's output tensor to its gradients by
a "gradient" edge; gradviz.program.recording.steps draws a later call's graph with the graph
of the pass that built its nodes, so both orders show together.

torch.autograd.functional's hessian, jacobian, vjp and jvp with create_graph=True run such
passes inside themselves (gradviz.program.objects.functional): `reached` notes the nodes the
program's function made each time torch calls it, and `note_functional` marks the nodes of
the call's result that are neither those nor older, with the call's label ("hessian's
backward passes at line 5") in place of a backward call's number. Without create_graph their
results are detached: nothing to mark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gradviz.graph.record import Binding

# Nodes one run marks at most: a loop that takes a gradient penalty each pass marks its
# first passes' nodes; the marks hold the nodes (and what they saved) alive.
MAX_MARKED = 20_000
# create_graph=True passes one run notes at most: each holds its output and gradients (and
# so their graphs) until the run ends
MAX_PASSES = 32


@dataclass
class BuiltPass:
    """One create_graph=True pass: its number, what it ran from, the gradients it made and
    the autograd nodes of the graph it ran through (ids; the registry keeps them alive)."""

    number: int  # the run's backward call, 1-based
    output: torch.Tensor
    gradients: list[tuple[torch.Tensor, torch.Tensor]]  # (input, d output / d input)
    forward: frozenset[int] = frozenset()


@dataclass
class BuiltNodes:
    """What the run's create_graph=True passes built: id(node) -> (node, what built it: the
    backward call's number, or a torch.autograd.functional call's label)."""

    nodes: dict[int, tuple[object, int | str]] = field(default_factory=dict)
    passes: list[BuiltPass] = field(default_factory=list)

    def pass_of(self, fn) -> int | str | None:
        entry = self.nodes.get(id(fn))
        return entry[1] if entry is not None and entry[0] is fn else None


def creates_graph(args, kwargs, position: int) -> bool:
    """Whether a call's create_graph argument (keyword, or the positional `position`) is
    true."""
    if "create_graph" in kwargs:
        return bool(kwargs["create_graph"])
    return len(args) > position and bool(args[position])


def gradients_of(result, fns: list, inputs=None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The gradients a pass made, each with the tensor it is the gradient for:
    autograd.grad's returned tuple (`result`, in the order of its `inputs`), or for
    backward() (result None) the `.grad` of its graph's leaves."""
    if result is None:
        pairs = [(fn.variable, fn.variable.grad) for fn in fns if hasattr(fn, "variable")]
    else:
        grads = list(result) if isinstance(result, tuple | list) else [result]
        given = list(inputs) if isinstance(inputs, tuple | list) else [inputs]
        pairs = list(zip(given, grads, strict=False))
    return [(t, g) for t, g in pairs if isinstance(g, torch.Tensor) and g.grad_fn is not None]


def note_built(
    built: BuiltNodes,
    registry,
    number: int,
    output,
    result,
    fns: list,
    grad_outputs=None,
    inputs=None,
) -> None:
    """Mark the nodes that create_graph=True pass `number` (from `output`, through `fns`)
    built for its gradients (`result`: autograd.grad's, of `inputs`; None for backward())."""
    gradients = gradients_of(result, fns, inputs)
    if not gradients or len(built.passes) >= MAX_PASSES:
        return
    known = {id(fn) for fn in fns} | set(registry.ids) | set(built.nodes)
    given = grad_outputs if isinstance(grad_outputs, list | tuple) else [grad_outputs]
    stack = [g.grad_fn for g in given if isinstance(g, torch.Tensor)]
    while stack:  # a given gradient's own graph was not built by the pass
        fn = stack.pop()
        if fn is None or id(fn) in known:
            continue
        known.add(id(fn))
        stack.extend(n for n, _ in fn.next_functions)
    stack = [g.grad_fn for _, g in gradients]
    while stack and len(built.nodes) < MAX_MARKED:
        fn = stack.pop()
        if fn is None or id(fn) in known:
            continue
        known.add(id(fn))
        built.nodes[id(fn)] = (fn, number)
        registry.key(fn)  # keyed (and held) now: its id stays its own
        stack.extend(n for n, _ in fn.next_functions)
    built.passes.append(BuiltPass(number, output, gradients, frozenset(id(fn) for fn in fns)))


def after_pass(state, record, output, result, args, kwargs, fns: list) -> None:
    """Right after a backward pass (Library.recorded_pass's `args`, `kwargs`: backward()'s
    (tensor, gradient, retain_graph, create_graph) or autograd.grad's keywords): when it
    ran with create_graph=True, `record` says so and the nodes it built are marked (not in a
    quiet pass: no result shows it)."""
    if not creates_graph(args, kwargs, 3):
        return
    record.create_graph = True
    if state.quiet:
        return
    given = kwargs.get("grad_outputs", kwargs.get("gradient"))
    if given is None and len(args) > 1:
        given = args[1]
    calls = state.calls
    note_built(
        calls.built,
        state.registry,
        calls.count,
        output,
        result,
        fns,
        given,
        kwargs.get("inputs"),
    )


def joined(built: BuiltNodes, fns: list) -> tuple[set[int], list[torch.Tensor]]:
    """For a backward call through `fns`: the nodes (ids) and the output tensors of the
    passes that built some of them, so the call's graph shows the graph the gradient came
    from too (empty when it runs through no built node)."""
    numbers = {n for fn in fns if (n := built.pass_of(fn)) is not None}
    ids: set[int] = set()
    outputs: list[torch.Tensor] = []
    for p in built.passes:
        if p.number in numbers:
            ids |= p.forward
            outputs.append(p.output)
    return ids, outputs


def unnamed_gradient(built: BuiltNodes, tensor: torch.Tensor, record, bindings: list):
    """A Binding for the gradient a backward call runs from when no name holds it
    (`x.grad.backward()`): named as the call names it, so the call's graph shows the
    gradient as the node its backward starts from. None when a name holds it or it is not
    a gradient a create_graph=True pass made."""
    fn = tensor.grad_fn
    if fn is None or built.pass_of(fn) is None or any(b.tensor is tensor for b in bindings):
        return None
    return Binding(record.target, tensor, record.line or 0, record.target, False, "grad")


def _tensors(value) -> list[torch.Tensor]:
    """The tensors in a torch.autograd.functional result: a tensor, or tuples of them
    (jacobian's of several inputs and outputs nests them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [t for item in value for t in _tensors(item)]
    return []


def reached(outputs, forward: dict[int, object], stop: set[int]) -> None:
    """Into `forward` (id(node) -> node, held until the call is marked): the autograd nodes
    behind `outputs`, what a program's function made when torch.autograd.functional called
    it (and the graph before it), up to the nodes in `stop`."""
    stack = [t.grad_fn for t in _tensors(outputs)]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in forward or id(fn) in stop:
            continue
        forward[id(fn)] = fn
        stack.extend(n for n, _ in fn.next_functions)


def note_functional(
    built: BuiltNodes, registry, label: str, result, forward: dict[int, object], stop: set[int]
) -> None:
    """Mark, as built by `label`, the nodes of a create_graph=True torch.autograd.functional
    call's `result` that its backward passes (and the stacking of their gradients) made: not
    the program function's own (`forward`, from `reached`), not older ones."""
    known = set(registry.ids) | set(built.nodes) | stop
    stack = [t.grad_fn for t in _tensors(result)]
    while stack and len(built.nodes) < MAX_MARKED:
        fn = stack.pop()
        if fn is None or id(fn) in known:
            continue
        known.add(id(fn))
        if forward.get(id(fn)) is fn:
            continue  # the function's forward: the graph the passes ran through
        built.nodes[id(fn)] = (fn, label)
        registry.key(fn)
        stack.extend(n for n, _ in fn.next_functions)
