"""What `t.grad_fn` gives a program: a read-only view of one node of autograd's graph.

A `GradFnRef` answers what PyTorch's autograd notes read from a node and nothing more:
`.next_functions` (a tuple of (GradFnRef or None, int) pairs, the nodes it feeds its
gradients to), `.name()`, `.variable` on an AccumulateGrad node (the leaf tensor it adds
gradients to), and what the node saved for its backward pass (`._saved_self`,
`._saved_other`, ...: only the names of gradviz.program.syntax.grammar.SAVED_VIEWS, and only
when the value is a tensor, a number or a size). Everything else a node has (hooks,
`metadata`, `apply`, calling it) is refused. It prints as PyTorch prints a node,
`<MulBackward0 object at 0x7f0000000040>`, but with an address of its own: the run numbers
its nodes in the order the program first reads them (`GradFns`), so the same program prints
the same text on every run, and the same node always the same address.
"""

from __future__ import annotations

import ast

import torch

from gradviz.graph.record import accumulates
from gradviz.program.syntax.grammar import SAVED_VIEWS

FIRST_ADDRESS = 0x7F0000000000  # the address the first node a run reads prints with
ADDRESS_STEP = 0x40  # and each next one, this much higher


class GradFnRef:
    """One autograd node as a program holds it; the interpreter answers for it (`attribute`,
    `method`), never Python's attribute lookup."""

    __slots__ = ("address", "node")
    type_label = "grad_fn"

    def __init__(self, node, address: int):
        self.node = node
        self.address = address

    @property
    def name(self) -> str:
        return self.node.name()

    def __repr__(self) -> str:
        return f"<{type(self.node).__name__} object at {self.address:#x}>"


class GradFns:
    """The nodes a run's program has read, each with the one GradFnRef it always gets."""

    def __init__(self):
        self.refs: dict[int, GradFnRef] = {}  # id(node) -> its view (which keeps it alive)

    def ref(self, node) -> GradFnRef | None:
        if node is None:
            return None
        ref = self.refs.get(id(node))
        if ref is None or ref.node is not node:
            ref = GradFnRef(node, FIRST_ADDRESS + ADDRESS_STEP * (len(self.refs) + 1))
            self.refs[id(node)] = ref
        return ref


def attribute(state, ref: GradFnRef, name: str, node: ast.AST):
    """`fn.name` for a program: the read-only views above, or a refusal."""
    fn = ref.node
    if name == "next_functions":
        return tuple((state.grad_fns.ref(nxt), nr) for nxt, nr in fn.next_functions)
    if name == "variable" and type(fn).__name__ == "AccumulateGrad":
        return fn.variable
    if name in SAVED_VIEWS:
        return saved_value(state, ref, name, node)
    hint = None
    if name == "variable":
        hint = "Only an AccumulateGrad node (a leaf's, in next_functions) has `.variable`."
    raise state.error(
        "type",
        f"a grad_fn has no attribute `.{name}` in this language "
        "(it has .next_functions, .name(), .variable on AccumulateGrad, ._saved_*)",
        node,
        hint,
    )


def method(state, ref: GradFnRef, name: str, args: tuple, kwargs: dict, node: ast.AST):
    if name == "name":
        if args or kwargs:
            raise state.error("type", "grad_fn.name() takes no arguments", node)
        return ref.name
    raise state.error(
        "type", f"a grad_fn has no method `.{name}` in this language (only .name())", node
    )


def saved_value(state, ref: GradFnRef, name: str, node: ast.AST):
    """What the node saved under `name`: a tensor, a number, a size or None; never an
    object of Python's or torch's own."""
    try:
        value = getattr(ref.node, name)
    except AttributeError:
        raise state.error(
            "type", f"{type(ref.node).__name__} has no attribute `.{name}`", node
        ) from None
    except RuntimeError as exc:  # freed by a backward pass that ran through it
        raise state.error("runtime", str(exc).split("\n")[0], node) from None
    if isinstance(value, list):
        value = tuple(value)
    items = value if isinstance(value, tuple) else (value,)
    if all(isinstance(v, PLAIN) for v in items):
        return value
    raise state.error(
        "type", f"`{name}` of {type(ref.node).__name__} is not a value programs can hold", node
    )


PLAIN = (torch.Tensor, bool, int, float, str, type(None), torch.Size)


def leaf_of(fn):
    """The leaf tensor an AccumulateGrad node adds gradients to (its `.variable`), or None
    for any other node (told by gradviz.graph.record.accumulates, once per type of node of
    torch's own)."""
    return fn.variable if accumulates(fn) else None
