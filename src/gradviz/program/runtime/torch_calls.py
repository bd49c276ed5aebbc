"""Calls a program makes into torch: torch functions and tensor methods.

Everything a program calls in torch goes through `Library`: members of the `torch` and `F`
namespaces (gradviz.program.runtime.values.NAMESPACES, built from the allow-lists in
gradviz.program.allowlists.tables) and tensor methods (tables.TENSOR_METHODS); Python's built-ins are
gradviz.program.runtime.builtins'. `Library.call` is the one place tensor work happens: the budget
checks its cost first (gradviz.program.budgets.precheck), simulated CUDA decides devices
(gradviz.program.runtime.placement), torch runs it, and only plain values come back
(gradviz.program.runtime.values.checked). `backward()` runs watched (gradviz.program.recording.backward).
"""

from __future__ import annotations

import functools
import warnings

import torch
from torch.nn.parameter import UninitializedTensorMixin

from gradviz.devices import simulated as devices
from gradviz.program.allowlists import tables
from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.object_sizes import OBJECT_MAKERS, hold, objects_made
from gradviz.program.budgets.precheck import Budget
from gradviz.program.recording import higher_order
from gradviz.program.recording.backward import BackwardWatch
from gradviz.program.recording.state import RunState
from gradviz.program.results.reports import RunWarning
from gradviz.program.runtime.arrays.module import Arrays, for_torch
from gradviz.program.runtime.clocks import CLOCKS, ClockWatch
from gradviz.program.runtime.errors import NoneGrads, call_error, runtime_error
from gradviz.program.runtime.placement import Placement
from gradviz.program.runtime.values import (
    AUTOGRAD_GRAD,
    AUTOGRAD_MARKERS,
    DEVICE,
    ENABLE_GRAD,
    GENERATOR,
    INFERENCE_MODE,
    MANUAL_SEED,
    NO_GRAD,
    PARAMETER,
    ProgramObject,
    RandomGenerator,
    TypeRef,
    checked,
    tensors_in,
    type_name,
)
from gradviz.program.syntax.program_error import ProgramError, did_you_mean


class Library:
    """Dispatches a program's calls through the allow-lists, and runs them under the caps."""

    def __init__(self, state: RunState, budget: Budget, placement: Placement, quotas: Quotas):
        self.state = state
        self.budget = budget
        self.quotas = quotas
        self.placement = placement
        self.watch = BackwardWatch(state)
        self.none_grads = NoneGrads(state)
        self.clocks = ClockWatch(placement.device_notes, state.simulated)
        self.hooks = None  # the program's tensor hooks, set by the evaluator that runs them
        self.functional = None  # torch.autograd.functional's calls, set by the evaluator too
        self.arrays = Arrays(state, budget, quotas)  # `import numpy as np`

    # -- the one place tensor work happens

    def call(self, label: str, fn, args: tuple, kwargs: dict, node, check: str, around=None):
        """`around`, when given, makes a context manager held around the real call only (a
        layer's: gradviz.program.objects.forward.LayerCalls.recording), not its checks."""
        state = self.state
        state.node = node
        if unsized_in(args, kwargs):
            raise state.error(
                "runtime",
                f"{label} is given a lazy layer's parameter, which has no shape before the "
                "layer's first call",
                node,
                "Call the layer once first (a dry run, e.g. net(x)).",
            )
        if fn in MAKES_OBJECTS:
            count_objects(self, label, fn, args, kwargs, node)
        self.budget.before_call(label, fn, args, kwargs, node, check)
        placement = self.placement
        fake_out, real_fn = None, fn  # without simulated CUDA, Placement.before_call's answer
        if placement.shadow is not None:
            fake_out, real_fn, args, kwargs = placement.before_call(label, fn, args, kwargs, node)
        inplace = state.inplace
        token = None
        if inplace.watches(label, args):  # y += 1, y.add_(1), y[0] = 5
            token = inplace.before(args[0], state.bound_now(args[0]))
        try:
            if around is None:
                result = real_fn(*args, **kwargs)
            else:
                with around():
                    result = real_fn(*args, **kwargs)
        except ProgramError:
            raise
        except Exception as exc:
            raise call_error(state, exc, node, label, tensors_in(args, kwargs)) from None
        if token is not None:
            inplace.after(token, functools.partial(state.where, node))
        if placement.cpu_only:  # Placement.after_call's first test, without its call
            placement.note_cpu_outputs(result)
        else:
            placement.after_call(result, args, kwargs, fake_out)
        if self.clocks.last_read is not None or label in CLOCKS:  # see ClockWatch.after_call
            self.clocks.after_call(label, args, result, node.lineno, state.device_of)
        if check == "bounded":
            self.budget.count_new_bytes(result, args, node)
        if type(result) is torch.Tensor:  # checked's answer for the most common result
            return result
        return checked(state, result, node, label)

    # -- torch's namespaces and tensor methods

    def call_member(self, label: str, member, args, kwargs, node):
        if member is NO_GRAD or member is ENABLE_GRAD or member is INFERENCE_MODE:
            raise self.state.error(
                "type",
                f"{label}() is used as `with {label}():` followed by an indented block",
                node,
            )
        if member is MANUAL_SEED:
            if len(args) != 1 or kwargs or not isinstance(args[0], int):
                raise self.state.error("type", "torch.manual_seed takes one integer", node)
            self.state.manual_seed(args[0] % 2**63)  # the run's own, not torch's
            return None
        if member is DEVICE:
            return self.call("torch.device", torch.device, args, kwargs, node, "bounded")
        if member is PARAMETER:
            return new_parameter(self, args, kwargs, node)
        if member is GENERATOR:
            return new_generator(self.state, args, kwargs, node)
        if member is AUTOGRAD_GRAD:
            return self.autograd_grad(args, kwargs, node)
        if any(member is m for m in AUTOGRAD_MARKERS):  # gradviz.program.objects.functional
            return self.functional.call_marker(member, args, kwargs, node)
        if isinstance(member, TypeRef) and member.type is torch.Tensor:
            label, member, args, kwargs = tensor_class_call(self.state, args, kwargs, node)
        if self.state.shadow is not None and label in SIMULATED_CUDA_ANSWERS:
            return self.placement.simulated_cuda_answer(label)
        if not isinstance(member, tables.FnSpec):
            raise self.state.error("type", f"`{label}` cannot be called", node)
        if label.endswith("norm"):
            refuse_matrix_norm(self.state, args, kwargs, node)
        plain = plain_arguments(args, kwargs)  # no array to unwrap, no object to refuse
        if not plain:
            args, kwargs = for_torch(args, kwargs)  # torch.tensor(a), from_numpy(a)
        if member.random:
            kwargs = random_kwargs(self.state, label, args, kwargs, node)
        if not plain:
            self.refuse_objects(label, args, kwargs, node)
        return self.call(label, member.target, args, kwargs, node, member.check)

    def tensor_method(self, tensor: torch.Tensor, name: str, args, kwargs, node):
        if name == "register_hook" and self.hooks is not None:  # gradviz.program.objects.hooks
            return self.hooks.register(tensor, args, kwargs, node)
        check = tables.TENSOR_METHODS.get(name)
        if check is None:
            if name in tables.TENSOR_ATTRIBUTES:
                raise self.state.error(
                    "type", f"`.{name}` is an attribute, not a method: write t.{name}", node
                )
            raise self.state.error(
                "name",
                f"tensors have no method `.{name}` in this language",
                node.func,
                did_you_mean(name, set(tables.TENSOR_METHODS) | set(tables.TENSOR_ATTRIBUTES)),
            )
        if name == "backward":
            if self.state.skip_backward:
                return None
            return self.backward(tensor, args, kwargs, node, origin="program")
        if name == "numpy" and self.state.shadow is not None:
            where = self.state.shadow.device_of(tensor)
            if where.type != "cpu":  # PyTorch's own message; FakeTensorMode cannot run .numpy()
                exc = TypeError(devices.numpy_message(where))
                raise runtime_error(
                    self.state, exc, node, ".numpy()", (tensor,), rule_by_gradviz=True
                )
        if name == "numpy":  # an array (runtime.arrays); `call`: the clocks see it wait
            made = self.arrays.from_tensor
            return self.call(".numpy()", lambda t: made(t, node), (tensor,), {}, node, "bounded")
        if name == "norm":
            refuse_matrix_norm(self.state, args, kwargs, node)
        if name == "type":
            dtype_only(self.state, args, kwargs, node)
        if not plain_arguments(args, kwargs):
            self.refuse_objects(f".{name}()", args, kwargs, node)
        method = getattr(torch.Tensor, name)
        return self.call(f".{name}()", method, (tensor, *args), kwargs, node, check)

    def refuse_objects(self, label: str, args, kwargs, node) -> None:
        """A layer, an optimizer or a loader is not data: torch's functions never get one."""
        for v in (*args, *kwargs.values()):
            items = v if isinstance(v, tuple | list) else (v,)
            for item in items:
                if isinstance(item, ProgramObject):
                    raise self.state.error(
                        "type", f"{label} takes tensors and numbers, not a {type_name(item)}", node
                    )

    def tensor_attribute(self, obj: torch.Tensor, name: str, node):
        """t.name for a tensor attribute of the allow-list (a method named without its call,
        or any other name, is refused with a hint)."""
        shadow = self.state.shadow
        if name in tables.TENSOR_ATTRIBUTES:
            if name == "grad_fn":
                return self.state.grad_fns.ref(obj.grad_fn)  # gradviz.program.recording.grad_fns
            if name == "data":  # writes through it leave no version: calls copy afresh
                if self.hooks is not None and self.hooks.gives(obj):
                    raise self.state.error(
                        "forbidden",
                        "a hook's gradient has no `.data` here: a hook must not change its "
                        "gradient",
                        node,
                        "Return a new tensor instead, e.g. lambda g: g * 2.",
                    )
                self.state.calls.aliased()
            if shadow is not None and name in ("device", "is_cuda"):
                where = shadow.device_of(obj)
                return where if name == "device" else where.type == "cuda"
            if name == "grad":
                return self.grad_of(obj, node)
            return self.read(obj, name, node)
        if name in tables.TENSOR_METHODS:
            raise self.state.error("type", f"`.{name}` is a method: call it, e.g. t.{name}()", node)
        raise self.state.error(
            "name",
            f"tensors have no attribute `.{name}` in this language",
            node,
            did_you_mean(name, set(tables.TENSOR_ATTRIBUTES) | set(tables.TENSOR_METHODS)),
        )

    def read(self, obj: torch.Tensor, name: str, node):
        """t.name, a tensor's own attribute (tables.TENSOR_ATTRIBUTES): what the tensor holds
        already (its gradient, its values, a view, its shape), so no values are made and no
        work is done ("read": counted as an operation only). On a run on the CPU alone with
        no clock read, nothing else of `call` applies (no device to place, no launch to
        time, no in-place change, no lazy parameter): the attribute is read at once."""
        placement = self.placement
        if placement.cpu_only and placement.shadow is None and self.clocks.last_read is None:
            if name in PLAIN_READS:
                self.state.node = node
                self.budget.ops += 1
                result = getattr(obj, name)
                placement.note_cpu_outputs(result)
                if type(result) is torch.Tensor or result is None:
                    return result
                return checked(self.state, result, node, f".{name}")
        return self.call(f".{name}", getattr, (obj, name), {}, node, "read")

    def grad_of(self, obj: torch.Tensor, node):
        """t.grad; a None says why (gradviz.program.runtime.errors.NoneGrads): in place of
        PyTorch's warning for a non-leaf, a warning in plain words; for its use, an error."""
        kept = obj.is_leaf or obj.retains_grad
        if kept:  # no warning to silence
            grad = self.read(obj, "grad", node)
        else:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*not a leaf Tensor")
                grad = self.read(obj, "grad", node)
        shadow = self.state.shadow
        if shadow is not None and isinstance(grad, torch.Tensor):
            shadow.place(grad, shadow.device_of(obj))  # a gradient lives on its tensor's device
        reason = self.none_grads.read(obj, node, grad)
        if reason is not None and not kept:
            warnings.warn(reason, UserWarning, stacklevel=1)
        return grad

    def autograd_grad(self, args, kwargs, node):
        """torch.autograd.grad(outputs, inputs, ...): the gradients of `outputs` with respect
        to `inputs`, returned rather than added to `.grad`; recorded step by step as a
        backward call is (walk-through, call picker). With create_graph=True the gradients
        have a graph of their own, its nodes marked as built by this call
        (gradviz.program.recording.higher_order)."""
        given = dict(zip(AUTOGRAD_GRAD_ARGUMENTS, args, strict=False))
        if len(args) > len(AUTOGRAD_GRAD_ARGUMENTS) or set(given) & set(kwargs):
            raise self.state.error("type", "torch.autograd.grad: too many arguments", node)
        given |= kwargs
        extra = set(given) - set(AUTOGRAD_GRAD_ARGUMENTS)
        if extra:
            raise self.state.error(
                "type",
                f"torch.autograd.grad takes {', '.join(AUTOGRAD_GRAD_ARGUMENTS)}; not "
                f"{', '.join(sorted(extra))}",
                node,
            )
        outputs, inputs = tensor_list(given.get("outputs")), tensor_list(given.get("inputs"))
        if outputs is None or inputs is None:
            raise self.state.error(
                "type",
                "torch.autograd.grad(outputs, inputs): each a tensor or a list of tensors",
                node,
            )
        first = outputs[0]
        self.not_in_a_hook("torch.autograd.grad", node)
        record = self.watch.begin(first, (), {}, node, "program")
        return self.recorded_pass(
            first, record, "torch.autograd.grad", torch.autograd.grad, (), given, node
        )

    def backward(
        self, tensor: torch.Tensor, args, kwargs, node, origin: str, target: str | None = None
    ):
        """Run backward from `tensor`, recording each node's step (gradviz.program.recording.backward)."""
        self.not_in_a_hook(".backward()", node)
        record = self.watch.begin(tensor, args, kwargs, node, origin, target)
        backward = torch.Tensor.backward
        self.recorded_pass(tensor, record, ".backward()", backward, (tensor, *args), kwargs, node)
        return None

    def not_in_a_hook(self, label: str, node) -> None:
        """A hook runs inside a backward pass: it cannot start another one."""
        if self.state.in_backward:
            raise self.state.error(
                "forbidden",
                f"{label} cannot run inside a hook: the hook runs during a backward pass",
                node,
                "Return the changed gradient from the hook instead, e.g. lambda g: g * 2.",
            )

    def recorded_pass(self, tensor: torch.Tensor, record, label: str, fn, args, kwargs, node):
        """One backward pass from `tensor` (`fn`: backward() or autograd.grad): each node's
        step recorded in `record`, which then joins the run's backward calls. The program's
        own hooks run inside it (gradviz.program.objects.hooks), and may not start another."""
        with self.watch.hooks(tensor, record):
            self.state.in_backward = True
            try:
                result = self.call(label, fn, args, kwargs, node, "bounded")
            finally:
                self.state.in_backward = False
        self.watch.done(record)
        self.state.backward.append(record)
        self.state.calls.backward(tensor, record, self.watch.fns)
        higher_order.after_pass(self.state, record, tensor, result, args, kwargs, self.watch.fns)
        return result


# What simulated CUDA answers itself (gradviz.program.runtime.placement).
SIMULATED_CUDA_ANSWERS = ("torch.cuda.is_available", "torch.cuda.device_count")
AUTOGRAD_GRAD_ARGUMENTS = (
    "outputs",
    "inputs",
    "grad_outputs",
    "retain_graph",
    "create_graph",
    "allow_unused",
)


def tensor_list(value) -> list | None:
    """`value` as autograd.grad takes its outputs and inputs: one tensor, or a list or tuple of
    tensors; None if it is neither."""
    items = [value] if isinstance(value, torch.Tensor) else value
    if (
        isinstance(items, list | tuple)
        and items
        and all(isinstance(t, torch.Tensor) for t in items)
    ):
        return list(items)
    return None


def unsized_in(args: tuple, kwargs: dict) -> bool:
    """Whether any argument is `unsized` (a plain tensor or number never is)."""
    for v in args:
        if type(v) not in NEVER_UNSIZED and unsized(v):
            return True
    if kwargs:
        for v in kwargs.values():
            if type(v) not in NEVER_UNSIZED and unsized(v):
                return True
    return False


NEVER_UNSIZED = frozenset({torch.Tensor, int, float, bool, str, type(None), torch.dtype})
# Tensor attributes whose reading cannot fail (t.T of a 3-d tensor, t.mT of a 1-d one raise
# torch's own errors: they take `call`, which explains them).
PLAIN_READS = frozenset({"data", "grad", "shape", "dtype", "requires_grad", "is_leaf", "ndim"})
# Arguments that need neither for_torch (no program array in them) nor refuse_objects (no
# layer, optimizer or loader): exact tensors and parameters (a lazy layer's parameter is a
# type of its own), plain numbers, strings, dtypes.
TORCH_PLAIN_ARGUMENTS = NEVER_UNSIZED | {torch.nn.Parameter}


def plain_arguments(args: tuple, kwargs: dict) -> bool:
    """Whether every argument's type is one of TORCH_PLAIN_ARGUMENTS (a tuple, a list, anything
    else takes the checks)."""
    for v in args:
        if type(v) not in TORCH_PLAIN_ARGUMENTS:
            return False
    if kwargs:
        for v in kwargs.values():
            if type(v) not in TORCH_PLAIN_ARGUMENTS:
                return False
    return True


def unsized(value) -> bool:
    """A lazy layer's parameter before its first call (nn.LazyLinear), or a list of them."""
    if isinstance(value, list | tuple):
        return any(isinstance(v, UninitializedTensorMixin) for v in value)
    return isinstance(value, UninitializedTensorMixin)


def tensor_class_call(state: RunState, args: tuple, kwargs: dict, node):
    """`torch.Tensor(...)`, the class called as the older tutorials do, as the call it
    stands for: (label, member, args, kwargs). `torch.Tensor([[1, 2], [3, 4]])` is
    torch.tensor(data, dtype=torch.float32). `torch.Tensor(2, 3)` is PyTorch's uninitialised
    memory: here zeros (the same on every run), with a warning at its line saying so;
    `torch.Tensor()` is an empty tensor. Nothing else (a tensor, keywords) is taken."""
    if kwargs:
        raise state.error(
            "type",
            "torch.Tensor(...) takes no keywords here; use torch.tensor(data, dtype=..., "
            "device=...)",
            node,
        )
    if not args:
        return "torch.Tensor", tables.TORCH_FUNCTIONS["tensor"], ([],), {"dtype": torch.float32}
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], torch.Size) else args
    if all(isinstance(a, int) and not isinstance(a, bool) for a in sizes):
        line = getattr(node, "lineno", 0)
        state.warnings.append(
            RunWarning(
                line=line,
                message=f"torch.Tensor({', '.join(map(str, sizes))}) holds uninitialised memory "
                "in PyTorch; here it is zeros. Write torch.zeros or torch.empty to say which "
                "you mean.",
                category="UserWarning",
            )
        )
        return "torch.Tensor", tables.TORCH_FUNCTIONS["zeros"], sizes, {"dtype": torch.float32}
    if len(args) == 1 and isinstance(args[0], list | tuple):
        data = args[0]
        return "torch.Tensor", tables.TORCH_FUNCTIONS["tensor"], (data,), {"dtype": torch.float32}
    hint = None
    if len(args) == 1 and isinstance(args[0], torch.Tensor):
        hint = "To make a float copy of a tensor, write t.float() or t.clone()."
    raise state.error(
        "type",
        "torch.Tensor(...) takes a (nested) list of numbers, like torch.tensor, or sizes "
        f"(torch.Tensor(2, 3)), not {', '.join(type_name(a) for a in args)}",
        node,
        hint or "torch.tensor([1.0, 2.0]) makes a tensor from numbers.",
    )


# The functions `objects_made` may find Python objects in (gradviz.program.budgets.object_sizes).
MAKES_OBJECTS = frozenset(OBJECT_MAKERS)


def count_objects(library: Library, label: str, fn, args: tuple, kwargs: dict, node) -> None:
    """A call that makes Python objects (unbind, split and chunk: a tuple of tensors;
    tolist: lists of numbers) is held to the item quotas and the memory budget before it
    runs, and before its pre-check (which would make as many shape-only tensors): a tensor
    with no values, `torch.zeros(10**7, 0)`, weighs nothing but unbinds into 10**7 tensors
    of about 640 bytes each (gradviz.program.budgets.object_sizes.hold)."""
    made = objects_made(label, fn, args, kwargs)
    if made is not None:
        hold(library.state, library.quotas, library.budget, label, made, node)


CPU = torch.device("cpu")


def random_device(args, kwargs) -> torch.device:
    """Where a random call makes its numbers: its device=, else its first tensor's (rand_like,
    normal, bernoulli, multinomial), else the CPU. A device PyTorch would refuse counts as
    the CPU here: the call itself then says what is wrong."""
    device = kwargs.get("device")
    if device is None:
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), CPU)
    if type(device) is torch.device:
        return device
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        return CPU


def dtype_only(state: RunState, args, kwargs, node) -> None:
    """`t.type(torch.float32)` converts as `.to(dtype)` does, and `t.type()` names the
    tensor's type; a type named by a string (which may name a device) is refused."""
    given = [*args, *kwargs.values()]
    if (
        set(kwargs) - {"dtype"}
        or len(given) > 1
        or any(not isinstance(v, torch.dtype) for v in given)
    ):
        raise state.error(
            "type",
            "t.type(...) takes one dtype here, such as torch.float32 (or nothing, to name "
            "the tensor's type)",
            node,
            "To move a tensor to a device, write t.to(device).",
        )


def new_parameter(library: Library, args, kwargs, node) -> torch.Tensor:
    """nn.Parameter(data, requires_grad=True): a leaf that a class registers as its
    parameter when set on `self` (gradviz.program.interpreter.classes)."""
    state = library.state
    if len(args) > 2 or set(kwargs) - {"data", "requires_grad"} or (args and "data" in kwargs):
        raise state.error("type", "nn.Parameter takes a tensor and requires_grad=", node)
    data = args[0] if args else kwargs.get("data")
    requires_grad = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
    if not isinstance(data, torch.Tensor):
        raise state.error(
            "type",
            f"nn.Parameter wraps a tensor, not {type_name(data)}",
            node,
            "Make the tensor first, e.g. nn.Parameter(torch.randn(3)).",
        )
    if not isinstance(requires_grad, bool):
        raise state.error("type", "nn.Parameter's requires_grad must be True or False", node)
    if requires_grad and not (data.is_floating_point() or data.is_complex()):
        raise state.error(
            "type",
            "Only Tensors of floating point and complex dtype can require gradients: "
            f"this nn.Parameter's tensor is {str(data.dtype).replace('torch.', '')}",
            node,
            "Make it a float tensor (torch.randn, or .float()), or pass requires_grad=False.",
        )
    return library.call(
        "nn.Parameter", torch.nn.Parameter, (data, requires_grad), {}, node, "bounded"
    )


def new_generator(state: RunState, args, kwargs, node) -> RandomGenerator:
    """torch.Generator(), or torch.Generator('cpu'): a generator of the program's own."""
    where = [*args, *kwargs.values()]
    if set(kwargs) - {"device"} or len(where) > 1 or any(str(v) != "cpu" for v in where):
        raise state.error(
            "type",
            "torch.Generator() makes a CPU generator here: write torch.Generator() with "
            "no arguments (or device='cpu')",
            node,
        )
    return RandomGenerator(state)


def random_kwargs(state: RunState, label: str, args, kwargs: dict, node) -> dict:
    """A random function's keywords with the generator it draws from: the program's own
    torch.Generator() where it gave one as `generator=`, the run's otherwise."""
    own = kwargs.get("generator")
    if own is not None and not isinstance(own, RandomGenerator):
        raise state.error(
            "type", f"{label}'s generator= takes a torch.Generator(), not a {type_name(own)}", node
        )
    chosen = own.generator if own is not None else state.generator_for(random_device(args, kwargs))
    return {**kwargs, "generator": chosen}


def refuse_matrix_norm(state: RunState, args, kwargs, node) -> None:
    """Nuclear and spectral norms run an SVD (cubic cost the FLOP counter cannot see)."""
    for v in (*args, kwargs.get("p"), kwargs.get("ord")):
        if isinstance(v, str) and v != "fro":
            raise state.error(
                "forbidden",
                f"the '{v}' norm is not available here (it needs a matrix decomposition); "
                "use the default (Frobenius/2-norm) or p=1, p=2, p=float('inf')",
                node,
            )
