"""What layers, optimizers and data loaders share (gradviz.program.objects.layers, .optimizers,
.data): the check of a class's arguments against its row of gradviz.program.allowlists.nntables
(`given_arguments`, `check_plain`), and the small objects their methods give back:
`TensorIterator` (what `.parameters()` gives: Python's one-pass iterator) and `TensorTable`
(an in-memory `.state_dict()`).
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten

from gradviz.program.allowlists import nntables
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.values import ProgramObject, type_name
from gradviz.program.syntax.program_error import did_you_mean

NO_DEVICE = (
    "`device=` is not taken when making it here: make it, then move it with .to(device), "
    "e.g. net = net.to(device)"
)


def given_arguments(state: RunState, label: str, spec: nntables.ObjectSpec, args, kwargs, node):
    """The arguments of a call of `spec`'s class by name, or a refusal naming the first one
    its row does not allow."""
    if len(args) > len(spec.args):
        allowed = ", ".join(spec.args) or "none"
        raise state.error(
            "type",
            f"{label} takes at most {len(spec.args)} positional arguments here ({allowed}); "
            f"it was given {len(args)}",
            node,
        )
    given = dict(zip(spec.args, args, strict=False))
    for name, value in kwargs.items():
        if name in given:
            raise state.error("type", f"{label} got `{name}` twice", node)
        if name not in spec.allowed():
            reason = nntables.DATA_REFUSALS.get(name) or (NO_DEVICE if name == "device" else None)
            if reason is None:
                takes = ", ".join(spec.allowed()) or "no arguments"
                reason = f"{label} has no argument `{name}` here; it takes {takes}"
            raise state.error(
                "forbidden" if name in nntables.DATA_REFUSALS or name == "device" else "type",
                reason,
                node,
                did_you_mean(name, spec.allowed()),
            )
        given[name] = value
    return given


def check_plain(state: RunState, label: str, given: dict, tensors_ok, node) -> None:
    """Each argument is a plain value (a number, a string, a dtype, None, or lists and
    tuples of them), or a tensor where `tensors_ok` names it: never a function, a module or
    an object of the program's."""
    for name, value in given.items():
        for leaf in _leaves(value):
            if isinstance(leaf, nntables.PLAIN):
                continue
            if isinstance(leaf, torch.Tensor) and name in tensors_ok:
                continue
            where = f"`{name}`" if name else "an argument"
            raise state.error("type", f"{label}: {where} cannot be a {type_name(leaf)} here", node)


def _leaves(value) -> list:
    """tree_flatten's leaves, without its cost for a tensor, a number and the plain tuples,
    lists and dicts a call takes (anything else: tree_flatten's own)."""
    kind = type(value)
    if kind is torch.Tensor or kind in nntables.PLAIN:
        return [value]
    if kind is tuple or kind is list or kind is dict:
        out = []
        for v in value.values() if kind is dict else value:
            out.extend(_leaves(v))
        return out
    leaves, _ = tree_flatten(value)
    return leaves


class TensorIterator(ProgramObject):
    """A one-pass iterator over tensors (or (name, tensor) pairs, or layers), as
    `.parameters()` and `.named_parameters()` give in PyTorch: next() takes the next one; an
    optimizer takes them all."""

    def __init__(self, state: RunState, items: list, kind: str = "generator"):
        super().__init__(state)
        self.items = list(items)
        self.taken = 0
        self.kind = kind

    def describe(self) -> str:
        return self.kind

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        if self.taken >= len(self.items):
            raise StopIteration
        self.taken += 1
        return self.items[self.taken - 1]

    def rest(self) -> list:
        """What is left, taken all at once."""
        out = self.items[self.taken :]
        self.taken = len(self.items)
        return out


class TensorTable(ProgramObject):
    """A layer's `.state_dict()`, in memory: name -> tensor (sharing the layer's values, as
    in PyTorch). `sd["0.weight"]`, `len(sd)`, `.keys()`, `.values()`, `.items()`; another
    layer's `.load_state_dict(sd)` copies it in."""

    def __init__(self, state: RunState, items: dict[str, torch.Tensor]):
        super().__init__(state)
        self.items = items

    def describe(self) -> str:
        return "state dict"

    def index(self, key, node):
        if not isinstance(key, str):
            raise self.refuse("is indexed with a parameter's name, e.g. sd['0.weight']", node)
        if key not in self.items:
            raise self.state.error(
                "name", f"the state dict has no `{key}`", node, did_you_mean(key, self.items)
            )
        return self.items[key]

    def length(self, node) -> int:
        return len(self.items)

    def entries(self) -> dict:
        return self.items  # printed as PyTorch's OrderedDict of the layer's tensors

    def iterate(self, node) -> ProgramObject:
        return TensorIterator(self.state, list(self.items), "state dict iterator")

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if args or kwargs:
            raise self.refuse(f"method `.{name}()` takes no arguments", node)
        if name == "keys":
            return list(self.items)
        if name == "values":
            return list(self.items.values())
        if name == "items":
            return list(self.items.items())
        raise self.state.error(
            "name",
            f"a state dict has no method `.{name}` in this language",
            node,
            did_you_mean(name, ["keys", "values", "items"]),
        )
