"""Layers a program makes from the table of torch.nn classes (gradviz.program.allowlists.nntables).

`Layers.make` checks a layer's size before it exists: the class is built first on the meta
device (shapes, no data, no random numbers drawn), its parameters are held to the budgets of
parameters per model and in all and its tensors to the byte caps
(gradviz.program.budgets.precheck.Budget.count_parameters, .account); only then is it built for real,
drawing its initial values from the run's generator (so `torch.manual_seed(0)` gives the
numbers PyTorch gives). Containers (`nn.Sequential`, `nn.ModuleList`) hold layers the
program made.

A program holds a layer as a `LayerRef`, which answers what nntables lists: calls (the
forward runs as one checked call, gradviz.program.objects.forward), `.parameters()`, `.to(device)`,
`.train()`, `.state_dict()`, `.weight`, `net[0]`, `len(net)`, ... Everything else (hooks,
`apply`, `_modules`, files) is refused.
"""

from __future__ import annotations

import ast
import math

import torch
from torch import nn

from gradviz.devices import simulated as devices
from gradviz.program.allowlists import nntables
from gradviz.program.budgets import layer_sizes
from gradviz.program.objects.arguments import (
    TensorIterator,
    TensorTable,
    check_plain,
    given_arguments,
)
from gradviz.program.objects.forward import LayerCalls, LayerForward, layer_tensors
from gradviz.program.objects.lazy import size_lazy_layers, sized_count, unsized, waiting
from gradviz.program.runtime.errors import runtime_error, with_devices
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, tensors_in, type_name
from gradviz.program.syntax.program_error import ProgramError, did_you_mean

# Containers inside containers, at most (PyTorch walks them recursively).
MAX_DEPTH = 32


class Layers:
    """The layers of one run: made from the table, each held by one LayerRef."""

    def __init__(self, library: Library):
        self.library = library
        self.state = library.state
        self.budget = library.budget
        self.refs: dict[int, LayerRef] = {}  # id(module) -> its ref (which keeps it alive)
        self.call_value = None  # runs a program's function (net.apply(f)): set by the evaluator
        # a gradient check's float64 leaves, in place of the parameters they stand for
        self.overrides: dict[int, torch.Tensor] = {}
        self.calls = LayerCalls(self.state)  # what each layer's real call made, recorded
        # simulated CUDA: where a lazy layer's parameters go once made (net.to("cuda") first)
        self.lazy_places: dict[int, tuple[torch.Tensor, torch.device]] = {}

    def ref(self, module: nn.Module, path: str | None = None) -> LayerRef:
        found = self.refs.get(id(module))
        if found is None:
            found = self.refs[id(module)] = LayerRef(self, module)
        if found.path is None:
            found.path = path
        return found

    def make(self, label: str, spec: nntables.ObjectSpec, args, kwargs, node) -> LayerRef:
        what = self.state.segment(node, 50) or label
        if spec.kind == "container":
            return self.container(what, spec, args, kwargs, node)
        given = given_arguments(self.state, label, spec, args, kwargs, node)
        check_plain(self.state, label, given, nntables.TENSOR_ARGUMENTS, node)
        outputs, count = self.sizes(label, spec, given, node)
        self.budget.count_parameters(what, count, count, node)
        self.budget.account(label, outputs, 0.0, node)
        module = self.build(label, spec, given, node, meta=False)
        if self.state.leaf_overrides:  # a gradient check runs in float64
            module.to(torch.float64)
        return self.ref(module)

    def sizes(self, label: str, spec, given: dict, node) -> tuple[list, int]:
        """What the layer will allocate ([(shape, count, element size, dtype)], its
        parameters and buffers) and its parameter count, before it exists: from its
        arguments (layer_sizes) or from the layer made on the meta device."""
        known = layer_sizes.made(spec.target, given)
        if known is not None:  # parameters only
            outputs = [(torch.Size(s), math.prod(s), d.itemsize, d) for s, d in known]
            return outputs, sum(n for _, n, _, _ in outputs)
        shape_only = self.build(label, spec, given, node, meta=True)
        made = [t for t in (*shape_only.parameters(), *shape_only.buffers()) if t.is_meta]
        count = sum(p.numel() for p in shape_only.parameters())
        return [(t.shape, t.numel(), t.element_size(), t.dtype) for t in made], count

    def build(self, label: str, spec, given: dict, node, meta: bool) -> nn.Module:
        try:
            if meta:
                with torch.device("meta"):
                    return spec.target(**given)
            with self.state.torch_rng():
                return spec.target(**given)
        except ProgramError:
            raise
        except (RuntimeError, OverflowError) as exc:
            if "overflow" in str(exc).lower() or isinstance(exc, OverflowError):
                what = self.state.segment(node, 50) or label
                most = self.state.limits.max_model_parameters
                raise self.state.error(
                    "limit",
                    f"`{what}` would have more parameters than can be counted; the budget of "
                    f"parameters per model is {most:,}",
                    node,
                ) from None
            raise runtime_error(self.state, exc, node, label) from None
        except Exception as exc:
            raise runtime_error(self.state, exc, node, label) from None

    def container(self, what: str, spec, args, kwargs, node) -> LayerRef:
        name = spec.name
        if kwargs:
            raise self.state.error("type", f"nn.{name} takes layers only, not keywords", node)
        items = args
        if name == "ModuleList":
            if len(args) > 1 or (args and not isinstance(args[0], list | tuple)):
                raise self.state.error(
                    "type", "nn.ModuleList takes one list of layers: nn.ModuleList([a, b])", node
                )
            items = tuple(args[0]) if args else ()
        for item in items:
            if not isinstance(item, LayerRef):
                raise self.state.error(
                    "type", f"nn.{name} holds layers, not a {type_name(item)}", node
                )
        depth = 1 + max((r.depth for r in items), default=0)
        if depth > MAX_DEPTH:
            raise self.state.error(
                "limit",
                f"`{what}` nests layers {depth} containers deep; the limit is {MAX_DEPTH}",
                node,
            )
        if name == "ModuleList":
            module = nn.ModuleList([r.module for r in items])
        else:
            module = spec.target(*(r.module for r in items))
        self.check_model(what, module, node)
        made = self.ref(module)
        made.depth = depth
        return made

    def place_lazy(self, module: nn.Module) -> None:
        """Lazy layers' parameters just made go where the layer was moved (simulated CUDA)."""
        for t in (*module.parameters(), *module.buffers()):
            entry = self.lazy_places.pop(id(t), None)
            if entry is not None and entry[0] is t and self.state.shadow is not None:
                self.state.shadow.place(t, entry[1])

    def check_model(self, what: str, module: nn.Module, node) -> None:
        """A model made of layers already counted: its parameters together, per model."""
        self.budget.count_parameters(what, sized_count(module), 0, node)

    def device_error(self, err: ProgramError, ref: LayerRef, path: str, args, kwargs, node):
        """A device mismatch inside a layer, told as the layer against its inputs."""
        state = self.state
        mine = [*ref.module.parameters(), *ref.module.buffers()]
        named: dict[str, str] = {path: state.device_of(mine[0])} if mine else {}
        exprs = node.args if isinstance(node, ast.Call) else []
        if any(isinstance(e, ast.Starred) for e in exprs):  # net(*inputs): no text per input
            exprs = []
        for i, t in enumerate(tensors_in(args, kwargs)):
            name = state.name_of(t)
            if name is None and i < len(exprs):
                name = state.segment(exprs[i], 40)
            named[name or f"input {i + 1}"] = state.device_of(t)
        source = err.details.device.source if err.details.device else ""
        err = with_devices(err, named, source)
        move = err.details.device.move if err.details.device else None
        if mine and move is not None and move != path:  # an input moves: to the layer's device
            named = {f"next({path}.parameters())": named.pop(path), **named}
            err = with_devices(err, named, source)
        return err


class LayerRef(ProgramObject):
    """A layer (or a container of layers) as a program holds it."""

    torch_type = nn.Module

    def __init__(self, layers: Layers, module: nn.Module):
        super().__init__(layers.state)
        self.layers = layers
        self.module = module
        self.path: str | None = None  # the name the program gave it, or its place in one
        self.depth = 0  # containers inside containers: 1 for a Sequential of plain layers
        self.named: set[tuple[str, int]] = set()  # (graph name, id(tensor)) already bound

    def describe(self) -> str:
        return f"torch.nn.{type(self.module).__name__} layer"

    def __repr__(self) -> str:
        return repr(self.module)

    # -- what the graph calls its tensors

    def named_tensors(self, name: str, line: int) -> list[tuple[str, torch.Tensor, str]]:
        if self.path is None:
            self.path = name
        out = []
        for owner, sub in self.module.named_modules():
            what = repr(sub).split("\n")[0][:60]  # "Linear(in_features=3, out_features=4, ...)"
            for local, t in sub.named_parameters(recurse=False):
                if unsized(t):  # a lazy layer's, before its first call: nothing to draw yet
                    continue
                qualified = ".".join(p for p in (name, owner, local) if p)
                override = self.state.leaf_overrides.get((qualified, line))
                if override is not None:
                    self.layers.overrides[id(t)] = override
                    t = override
                if (qualified, id(t)) not in self.named:
                    self.named.add((qualified, id(t)))
                    out.append((qualified, t, what))
        return out

    # -- calls

    def call(self, args: tuple, kwargs: dict, node):
        state = self.state
        if isinstance(self.module, nn.ModuleList):
            raise state.error(
                "type",
                "an nn.ModuleList holds layers but has no forward of its own: call its layers, "
                "e.g. layers[0](x)",
                node,
            )
        check_plain(state, "a layer's call", {"": (args, kwargs)}, {""}, node)
        if isinstance(self.module, nn.Sequential) and any(
            type(m) is nn.Module
            for m in self.module.children()  # a class of the program's
        ):
            return self.step_through(args, kwargs, node)
        path = self.path or state.segment(getattr(node, "func", node), 30) or "layer"
        overrides = self.layers.overrides
        if waiting(self.module):  # lazy layers inside: sized from this call, then made
            size_lazy_layers(state, self.layers.budget, self.module, args, kwargs, node, path)
            self.layers.place_lazy(self.module)
        tensors = layer_tensors(self.module, overrides)
        line = getattr(node, "lineno", None)
        try:
            return self.layers.library.call(
                path,
                LayerForward(self.module, own=None if overrides else tensors),
                (tensors, *args),
                kwargs,
                node,
                "meta",
                around=lambda: self.layers.calls.recording(self.module, path, line),
            )
        except ProgramError as err:
            if err.details.device is None:
                raise
            raise self.layers.device_error(err, self, path, args, kwargs, node) from None

    def index(self, key, node):
        module = self.module
        if not isinstance(module, nn.Sequential | nn.ModuleList):
            raise self.refuse("cannot be indexed (only nn.Sequential and nn.ModuleList)", node)
        if isinstance(key, bool) or not isinstance(key, int | slice):
            raise self.refuse("is indexed with an integer or a slice", node)
        try:
            item = module[key]
        except (IndexError, ValueError, TypeError) as exc:
            raise runtime_error(self.state, exc, node, "indexing") from None
        if isinstance(key, int):
            key = key % len(module)
            return self.layers.ref(item, None if self.path is None else f"{self.path}.{key}")
        return self.layers.ref(item)

    def length(self, node) -> int:
        if not isinstance(self.module, nn.Sequential | nn.ModuleList):
            raise self.refuse("has no len() (only nn.Sequential and nn.ModuleList)", node)
        return len(self.module)

    def iterate(self, node) -> ProgramObject:
        if not isinstance(self.module, nn.Sequential | nn.ModuleList):
            raise self.refuse("cannot be iterated over", node)
        items = [self.index(i, node) for i in range(len(self.module))]
        return TensorIterator(self.state, items, f"{type(self.module).__name__} iterator")

    # -- attributes and methods

    def attribute(self, name: str, node):
        if name in nntables.MODULE_METHODS:
            raise self.state.error(
                "type", f"`.{name}` is a method: call it, e.g. net.{name}()", node
            )
        if name not in nntables.MODULE_ATTRIBUTES or not hasattr(self.module, name):
            reason = nntables.MODULE_REFUSALS.get(name)
            raise self.state.error(
                "name",
                f"a {self.describe()} has no attribute `.{name}` in this language"
                + (f": {reason}" if reason else ""),
                node,
                did_you_mean(name, self.available()),
            )
        value = getattr(self.module, name)
        if isinstance(value, nn.Module):
            return self.layers.ref(value, None if self.path is None else f"{self.path}.{name}")
        if isinstance(value, torch.Tensor):
            return self.layers.overrides.get(id(value), value)
        if isinstance(value, nntables.PLAIN) or (
            isinstance(value, tuple | list) and all(isinstance(v, nntables.PLAIN) for v in value)
        ):
            return tuple(value) if isinstance(value, list) else value
        raise self.refuse(f"has no attribute `.{name}`", node)

    def made_as(self, cls: type) -> bool:
        return isinstance(self.module, cls)

    def step_through(self, args: tuple, kwargs: dict, node):
        """An nn.Sequential that holds modules of the program's own classes (`nn.Sequential(
        *[Block(n_embd) for _ in range(n_layer)])`): each of its layers called in turn on the
        last one's output, as Sequential.forward calls them, so that the program's forward
        methods run in the interpreter."""
        if len(args) != 1 or kwargs:
            raise self.state.error(
                "type", f"Sequential.forward() takes 1 input, {len(args) + len(kwargs)} given", node
            )
        value = args[0]
        for name, child in self.module.named_children():
            path = None if self.path is None else f"{self.path}.{name}"
            value = self.layers.ref(child, path).call((value,), {}, node)
        return value

    def available(self) -> set[str]:
        attrs = {a for a in nntables.MODULE_ATTRIBUTES if hasattr(self.module, a)}
        return attrs | set(nntables.MODULE_METHODS)

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if name not in nntables.MODULE_METHODS:
            reason = nntables.MODULE_REFUSALS.get(name)
            raise self.state.error(
                "name",
                f"a {self.describe()} has no method `.{name}` in this language"
                + (f": {reason}" if reason else ""),
                node,
                did_you_mean(name, self.available()),
            )
        return LayerMethods(self, node).run(name, args, kwargs)


class LayerMethods:
    """The methods of one LayerRef, as nntables.MODULE_METHODS lists them."""

    def __init__(self, ref: LayerRef, node):
        self.ref = ref
        self.module = ref.module
        self.state = ref.state
        self.node = node

    def run(self, name: str, args: tuple, kwargs: dict):
        if name == "forward":
            return self.ref.call(args, kwargs, self.node)
        fn = getattr(self, "do_" + name)
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            if "do_" + name not in str(exc):
                raise
            message = str(exc).replace("LayerMethods.do_", "").replace(name + "()", f".{name}()")
            raise self.state.error("type", message, self.node) from None

    def do_apply(self, fn):
        """net.apply(fn): `fn` on each layer inside, children first, then on the layer
        itself, as PyTorch walks it; each call run by the interpreter (Layers.call_value)."""
        ref = self.ref
        for name, child in self.module.named_children():
            path = None if ref.path is None else f"{ref.path}.{name}"
            LayerMethods(ref.layers.ref(child, path), self.node).do_apply(fn)
        ref.layers.call_value(fn, (ref,), {}, self.node)
        return ref

    def do_parameters(self, recurse: bool = True):
        ps = list(self.module.parameters(recurse=bool(recurse)))
        return TensorIterator(self.state, [self.ref.layers.overrides.get(id(p), p) for p in ps])

    def do_named_parameters(self, prefix: str = "", recurse: bool = True):
        if not isinstance(prefix, str):
            raise self.state.error("type", "named_parameters(prefix=...) takes a string", self.node)
        items = self.module.named_parameters(prefix=prefix, recurse=bool(recurse))
        return TensorIterator(self.state, [(n, p) for n, p in items])

    def do_buffers(self, recurse: bool = True):
        return TensorIterator(self.state, list(self.module.buffers(recurse=bool(recurse))))

    def do_train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise self.state.error("type", "train(mode) takes True or False", self.node)
        self.module.train(mode)
        return self.ref

    def do_eval(self):
        self.module.eval()
        return self.ref

    def do_requires_grad_(self, requires_grad: bool = True):
        if not isinstance(requires_grad, bool):
            raise self.state.error("type", "requires_grad_() takes True or False", self.node)
        self.module.requires_grad_(requires_grad)
        return self.ref

    def do_zero_grad(self, set_to_none: bool = True):
        self.module.zero_grad(set_to_none=bool(set_to_none))

    def do_state_dict(self):
        return TensorTable(self.state, dict(self.module.state_dict()))

    def do_load_state_dict(self, state_dict, strict: bool = True):
        if not isinstance(state_dict, TensorTable):
            raise self.state.error(
                "type",
                "load_state_dict takes another layer's .state_dict() (no files here)",
                self.node,
            )
        if waiting(self.module):  # PyTorch would size lazy layers from it, past the budgets
            raise self.state.error(
                "type",
                "load_state_dict into lazy layers that have not been called yet",
                self.node,
                "Call the model once first (a dry run, e.g. net(x)), then load the weights.",
            )
        try:
            with torch.no_grad():
                result = self.module.load_state_dict(state_dict.items, strict=bool(strict))
        except Exception as exc:
            raise runtime_error(self.state, exc, self.node, "load_state_dict") from None
        return (list(result.missing_keys), list(result.unexpected_keys))

    def do_append(self, layer):
        if not isinstance(self.module, nn.Sequential | nn.ModuleList):
            raise self.ref.refuse("has no method `.append` (only containers)", self.node)
        if not isinstance(layer, LayerRef):
            raise self.state.error(
                "type", f"append takes a layer, not a {type_name(layer)}", self.node
            )
        if any(m is self.module for m in layer.module.modules()):
            raise self.state.error("type", "a layer cannot hold itself", self.node)
        depth = max(self.ref.depth, 1 + layer.depth)
        if depth > MAX_DEPTH:
            raise self.state.error(
                "limit",
                f"this nests layers {depth} containers deep; the limit is {MAX_DEPTH}",
                self.node,
            )
        self.module.append(layer.module)
        self.ref.depth = depth
        self.ref.layers.check_model(self.ref.path or "model", self.module, self.node)
        return self.ref

    def do_cpu(self):
        return self.do_to("cpu")

    def do_cuda(self, device=None):
        return self.do_to("cuda" if device is None else torch.device("cuda", device))

    def do_to(self, *args, **kwargs):
        return Move(self.ref, self.node).run(args, kwargs)


class Move:
    """layer.to(device) / .to(dtype): in place, as PyTorch does (the same parameters, now
    elsewhere), the copies counted against the bytes in all first; on simulated CUDA the
    parameters stay on the CPU and their fake twins move."""

    def __init__(self, ref: LayerRef, node):
        self.ref = ref
        self.state = ref.state
        self.node = node

    def run(self, args, kwargs):
        state, node = self.state, self.node
        if set(kwargs) - {"device", "dtype", "non_blocking"} or len(args) > 2:
            raise state.error("type", "a layer's .to() takes a device and/or a dtype", node)
        device = kwargs.get("device")
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, torch.dtype):
                dtype = a
            elif devices.is_device_like(a):
                device = a
            else:
                raise state.error(
                    "type", f"a layer's .to() takes a device or a dtype, not {a!r}", node
                )
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise state.error("type", "a layer's dtype must be a floating-point one", node)
        tensors = [*self.ref.module.parameters(), *self.ref.module.buffers()]
        where = torch.device(device) if device is not None else None
        if where is not None and where.type == "cuda" and where.index is None:
            where = torch.device("cuda", 0)  # where "cuda" puts it (PyTorch's current device)
        moving = [
            t for t in tensors if where is not None and torch.device(state.device_of(t)) != where
        ]
        converting = [t for t in tensors if dtype is not None and t.is_floating_point()]
        copies = {id(t): t for t in moving + converting}.values()
        self.ref.layers.budget.reserve(
            self.state.segment(node, 50) or ".to()", sum(t.nbytes for t in copies), node
        )
        try:
            self.move(where, dtype)
        except Exception as exc:
            raise runtime_error(state, exc, node, ".to()", rule_by_gradviz=True) from None
        return self.ref

    def move(self, where: torch.device | None, dtype: torch.dtype | None) -> None:
        module, shadow = self.ref.module, self.state.shadow
        if shadow is None:
            module.to(device=where, dtype=dtype)
            self.move_overrides(where)
            return
        places = {id(t): self.state.device_of(t) for t in module.parameters()}
        places.update({id(t): self.state.device_of(t) for t in module.buffers()})
        if dtype is not None:
            module.to(dtype=dtype)
        for t in (*module.parameters(), *module.buffers()):
            target = where if where is not None else places.get(id(t), t.device)
            if unsized(t):  # a lazy layer's: placed once made (Layers.place_lazy)
                self.ref.layers.lazy_places[id(t)] = (t, target)
                continue
            shadow.place(t, target)
            if t.grad is not None:
                shadow.place(t.grad, target)
        self.move_overrides(where)

    def move_overrides(self, where: torch.device | None) -> None:
        """A gradient check's float64 stand-ins for the layer's parameters go where the
        parameters went (they stay float64): a differentiable copy, so the check's gradient
        still reaches the stand-in itself."""
        overrides, shadow = self.ref.layers.overrides, self.state.shadow
        if where is None or not overrides:
            return
        for t in (*self.ref.module.parameters(), *self.ref.module.buffers()):
            stand_in = overrides.get(id(t))
            if stand_in is None:
                continue
            if shadow is None:
                overrides[id(t)] = stand_in.to(device=t.device)
            else:
                moved = stand_in.view_as(stand_in)
                shadow.place(moved, where)
                overrides[id(t)] = moved
