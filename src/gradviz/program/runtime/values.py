"""The values a program can hold, and the check every result passes before it may.

A program's variables hold plain values (`SAFE_VALUE_TYPES`: tensors, numbers, strings,
dtypes, devices, sizes, ...), the lists, tuples and dicts it makes of them, its own functions
(gradviz.program.runtime.functions.UserFunction) and the `ProgramObject`s it made from the tables of
gradviz.program.allowlists.nntables (layers, optimizers, data loaders), which answer only what those
tables allow. The names a program can reach without making them, `torch`, `F`
(torch.nn.functional), `nn` and `optim` (and what imports bind), are `Namespace`s built from
the allow-lists in gradviz.program.allowlists.tables and .nntables: a program can call what they hold,
never keep a module, a built-in function or a type (`TypeRef`: torch.Tensor, for isinstance)
in a variable, a container or a default argument (`held`). `checked` is the gate between a
call's result and the program.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.utils._pytree import tree_flatten

from gradviz.program.allowlists import nntables, tables
from gradviz.program.budgets.object_sizes import leaves
from gradviz.program.recording.grad_fns import GradFnRef
from gradviz.program.recording.state import RunState


@dataclass(frozen=True)
class Namespace:
    path: str
    members: dict

    def __repr__(self) -> str:
        return f"<module {self.path}>"


@dataclass(frozen=True)
class Builtin:
    name: str
    fn: object

    type_label = "built-in function"

    def __repr__(self) -> str:
        return f"<built-in {self.name}>"


@dataclass(frozen=True)
class TypeRef:
    """A type a program may name for isinstance() (torch.Tensor), never call or keep."""

    path: str
    type: type

    type_label = "type"

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"


@dataclass(frozen=True)
class ClassRef:
    """A class a program imported by name (`from torch.utils.data import DataLoader`): it may
    call it, never keep it in another variable or a container."""

    path: str
    spec: object  # the class's row of gradviz.program.allowlists.nntables (an ObjectSpec)

    type_label = "class"

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"


@dataclass(frozen=True)
class FunctionRef:
    """A torch function or class named without calling it (`loss_func = F.cross_entropy`,
    `act = nn.ReLU`): a program may keep it and call it later, which calls it as if named
    there (gradviz.program.runtime.torch_calls's allow-lists and caps); nothing of it can be read."""

    path: str
    member: object  # its row: a tables.FnSpec or an nntables.ObjectSpec

    type_label = "function"

    def __repr__(self) -> str:
        return f"<function {self.path}>"


class Marker:
    """A member of `torch` the interpreter handles itself (no_grad, manual_seed, ...)."""

    type_label = "function"

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<function {self.name}>"


NO_GRAD = Marker("no_grad")
ENABLE_GRAD = Marker("enable_grad")
INFERENCE_MODE = Marker("inference_mode")
# torch's grad modes, by the mode each sets for a `with` block or a decorated function
GRAD_MODES = (
    (NO_GRAD, "no_grad"),
    (ENABLE_GRAD, "enable_grad"),
    (INFERENCE_MODE, "inference_mode"),
)
MANUAL_SEED = Marker("manual_seed")
DEVICE = Marker("device")
PARAMETER = Marker("Parameter")  # nn.Parameter(tensor): gradviz.program.runtime.torch_calls
DATACLASS = Marker("dataclass")  # from dataclasses import dataclass: a class decorator only
DATACLASS_FIELD = Marker("field")  # from dataclasses import field: a dataclass's field


@dataclass(frozen=True)
class FieldSpec:
    """What `field(default=3)` or `field(default_factory=list)` makes: a dataclass's field
    with a default, or a function each instance's default is made by (run by the
    interpreter, gradviz.program.interpreter.plain_classes)."""

    default: object = None
    factory: object = None  # a built-in (list, dict), a function or a class of the program's
    has_default: bool = False

    type_label = "Field"

    def __repr__(self) -> str:
        return "Field(default_factory=...)" if self.factory is not None else "Field(...)"


def field_spec(state: RunState, args: tuple, kwargs: dict, node) -> FieldSpec:
    """field(default=...) or field(default_factory=...), keywords only, as Python's."""
    if args:
        raise state.error(
            "type", f"field() takes 0 positional arguments but {len(args)} were given", node
        )
    extra = set(kwargs) - {"default", "default_factory"}
    if extra:
        raise state.error(
            "type",
            f"field() takes default= or default_factory= here, not {', '.join(sorted(extra))}",
            node,
        )
    if len(kwargs) == 2:
        raise state.error(
            "runtime", "ValueError: cannot specify both default and default_factory", node
        )
    if "default" in kwargs:
        return FieldSpec(default=kwargs["default"], has_default=True)
    factory = kwargs.get("default_factory")
    if factory is None:
        return FieldSpec()
    if isinstance(factory, Namespace | Marker | TypeRef | ClassRef):
        raise state.error(
            "type", f"default_factory takes a function or a class, not {factory!r}", node
        )
    return FieldSpec(factory=factory, has_default=True)


AUTOGRAD_GRAD = Marker("grad")  # torch.autograd.grad: gradviz.program.runtime.torch_calls
# torch.autograd.functional's calls and anomaly detection: gradviz.program.objects.functional
AUTOGRAD_FUNCTIONAL = {name: Marker(name) for name in ("jacobian", "hessian", "vjp", "jvp")}
SET_DETECT_ANOMALY = Marker("set_detect_anomaly")
DETECT_ANOMALY = Marker("detect_anomaly")
AUTOGRAD_MARKERS = (*AUTOGRAD_FUNCTIONAL.values(), SET_DETECT_ANOMALY, DETECT_ANOMALY)
GENERATOR = Marker("Generator")  # torch.Generator(): a RandomGenerator


class ProgramObject:
    """A value a program holds that is more than data: a layer, an optimizer, a data loader
    (gradviz.program.objects.layers, .optimizers, .data). A program reaches it only through these
    methods, each answering from the allow-lists of gradviz.program.allowlists.nntables; by default
    each refuses. `iterate` and `next_value` are Python's iter() and next() for it (a `for`
    loop over it), `named_tensors` what the graph calls its tensors once it has a name."""

    map_style = False  # a dataset class of the program's own: a DataLoader reads it by index
    torch_type: type | None = None  # what isinstance() finds it is (torch.nn.Module, ...)

    def __init__(self, state: RunState):
        self.state = state

    def describe(self) -> str:
        """How messages name it after "a": "torch.nn.Linear layer", "DataLoader", ..."""
        return type(self).__name__

    def refuse(self, what: str, node):
        return self.state.error("type", f"a {self.describe()} {what} in this language", node)

    def attribute(self, name: str, node):
        raise self.refuse(f"has no attribute `.{name}`", node)

    def method(self, name: str, args: tuple, kwargs: dict, node):
        raise self.refuse(f"has no method `.{name}`", node)

    def call(self, args: tuple, kwargs: dict, node):
        raise self.refuse("cannot be called", node)

    def index(self, key, node):
        raise self.refuse("cannot be indexed", node)

    def length(self, node) -> int:
        raise self.refuse("has no len()", node)

    def as_str(self) -> str | None:
        """str() of it where that is not its repr() (a caught exception's message)."""
        return None

    def entries(self) -> dict | None:
        """What print() shows as an OrderedDict of name -> value (a state dict), or None: it
        prints as its own repr."""
        return None

    def iterate(self, node) -> ProgramObject:
        raise self.refuse("cannot be iterated over", node)

    def passes(self) -> int | None:
        """How many values a loop over it will read, where known before the first (a
        loader's batches): the loop caps refuse a loop that could not finish up front."""
        return None

    def next_value(self, node):
        """The next value, or StopIteration at the end."""
        raise self.refuse("is not an iterator (use iter() first)", node)

    def equals(self, other) -> bool | None:
        """`it == other` where it decides (the program's classes and instances); None:
        refused as for any object."""
        return None

    def truth(self, node) -> bool | None:
        """bool(it) where it decides (a class of the program's with `__len__`); None: true."""
        return None

    def made_as(self, cls: type) -> bool:
        """isinstance(it, nn.Linear) and the like: whether torch's object inside it (a
        layer's module) is one of `cls`, a class of the allow-lists."""
        return False

    def covers(self, value) -> bool | None:
        """isinstance(value, it) where it is one of the program's own classes; None where
        it is not a class."""
        return None

    def named_tensors(self, name: str, line: int) -> list[tuple[str, torch.Tensor, str]]:
        """(name the graph shows, tensor, what it is) for each tensor it holds, once bound to
        `name` on `line`."""
        return []

    def __iter__(self):
        return self.iterate(self.state.node)

    def __next__(self):
        return self.next_value(self.state.node)


class RandomGenerator(ProgramObject):
    """A program's own `torch.Generator()` (on the CPU): seeded by `.manual_seed(n)`, which
    returns it (`g = torch.Generator().manual_seed(2147483647)`), and passed as
    `generator=g` to torch's random functions, which then draw what PyTorch draws."""

    def __init__(self, state: RunState):
        super().__init__(state)
        self.generator = torch.Generator()
        self.address: int | None = None  # RunState.made_up_address, when first shown

    def describe(self) -> str:
        return "torch.Generator"

    def __repr__(self) -> str:  # PyTorch's form, at an address of the run's
        if self.address is None:
            self.address = self.state.made_up_address()
        return f"<torch._C.Generator object at {self.address:#x}>"

    def method(self, name: str, args: tuple, kwargs: dict, node):
        if name == "initial_seed" and not args and not kwargs:
            return self.generator.initial_seed()
        if name != "manual_seed":
            raise self.refuse(f"has no method `.{name}`", node)
        seed = args[0] if len(args) == 1 and not kwargs else kwargs.get("seed")
        if len(args) + len(kwargs) != 1 or isinstance(seed, bool) or not isinstance(seed, int):
            raise self.state.error("type", "Generator.manual_seed takes one integer", node)
        if not -(2**63) <= seed < 2**64:
            raise self.state.error(
                "runtime",
                "Overflow when unpacking long: a generator's seed is a 64-bit integer",
                node,
            )
        self.generator.manual_seed(seed)
        return self


def _namespaces() -> dict[str, Namespace]:
    functional = Namespace("torch.nn.functional", dict(tables.FUNCTIONAL))
    init = Namespace("torch.nn.init", dict(tables.NN_INIT))
    nn = Namespace(
        "torch.nn",
        {
            "functional": functional,
            "init": init,
            "Parameter": PARAMETER,
            "Module": TypeRef("torch.nn.Module", torch.nn.Module),
            **nntables.LAYERS,
        },
    )
    schedulers = Namespace("torch.optim.lr_scheduler", dict(nntables.SCHEDULERS))
    optimizer = TypeRef("torch.optim.Optimizer", torch.optim.Optimizer)
    optim = Namespace(
        "torch.optim",
        {**nntables.OPTIMIZERS, "lr_scheduler": schedulers, "Optimizer": optimizer},
    )
    dataset = TypeRef("torch.utils.data.Dataset", torch.utils.data.Dataset)  # a class's base
    data = Namespace("torch.utils.data", {**nntables.DATA, "Dataset": dataset})
    utils = Namespace("torch.utils", {"data": data})
    cuda = Namespace(
        "torch.cuda",
        {
            "is_available": tables.FnSpec(torch.cuda.is_available, check="bounded"),
            "device_count": tables.FnSpec(torch.cuda.device_count, check="bounded"),
            "synchronize": tables.FnSpec(tables.cuda_synchronize, check="bounded"),
        },
    )
    linalg = Namespace("torch.linalg", dict(tables.LINALG))
    functional_ = Namespace("torch.autograd.functional", dict(AUTOGRAD_FUNCTIONAL))
    autograd = Namespace(
        "torch.autograd",
        {
            "grad": AUTOGRAD_GRAD,
            "functional": functional_,
            "set_detect_anomaly": SET_DETECT_ANOMALY,
            "detect_anomaly": DETECT_ANOMALY,
        },
    )
    members: dict = {
        **tables.TORCH_FUNCTIONS,
        **tables.DTYPES,
        **tables.CONSTANTS,
        "nn": nn,
        "optim": optim,
        "utils": utils,
        "cuda": cuda,
        "linalg": linalg,
        "autograd": autograd,
        "no_grad": NO_GRAD,
        "enable_grad": ENABLE_GRAD,
        "inference_mode": INFERENCE_MODE,
        "manual_seed": MANUAL_SEED,
        "device": DEVICE,
        "Generator": GENERATOR,
        "Tensor": TypeRef("torch.Tensor", torch.Tensor),
    }
    return {"torch": Namespace("torch", members), "F": functional, "nn": nn, "optim": optim}


NAMESPACES = _namespaces()


def marker_path(marker: Marker) -> str:
    """Where torch keeps what a Marker stands for: torch.manual_seed, torch.autograd.grad,
    torch.autograd.functional.jacobian."""
    autograd = NAMESPACES["torch"].members["autograd"]
    if autograd.members.get(marker.name) is marker:
        return f"torch.autograd.{marker.name}"
    if AUTOGRAD_FUNCTIONAL.get(marker.name) is marker:
        return f"torch.autograd.functional.{marker.name}"
    return f"torch.{marker.name}"


SAFE_VALUE_TYPES = (
    torch.Tensor,
    bool,
    int,
    float,
    str,
    type(None),
    torch.dtype,
    torch.device,
    torch.Size,
    GradFnRef,
    slice,
    type(Ellipsis),
    ProgramObject,
    FunctionRef,
    np.bool_,  # numpy's scalars and dtypes (gradviz.program.runtime.arrays)
    np.number,
    np.dtype,
)


def type_name(value) -> str:
    """A value's type as error messages name it."""
    if isinstance(value, torch.Tensor):
        return "tensor"
    if isinstance(value, Namespace):
        return f"module ({value.path})"
    if isinstance(value, ProgramObject):
        return value.describe()
    label = getattr(type(value), "type_label", None)  # the interpreter's own kinds of value
    return label if isinstance(label, str) else type(value).__name__


def clipped(text: str, size: int = 40) -> str:
    """Text a program made, as an error message quotes it: its first `size` characters."""
    return text if len(text) <= size else text[:size] + "…"


def held(state: RunState, value, node, where: str):
    """A value a program keeps (in a list, a dict, a default argument): never a module, a
    built-in function or a type, which a program may only call or name."""
    if isinstance(value, Namespace | Builtin | Marker | TypeRef | ClassRef):
        raise state.error(
            "type",
            f"{where} cannot hold {value!r}: modules and built-in functions can only be "
            "called or named where they are used",
            node,
        )
    return value


def checked(state: RunState, value, node, label: str):
    """Only plain, safe values reach a program's variables."""
    if isinstance(value, tuple) and type(value) is not tuple and not isinstance(value, torch.Size):
        value = tuple(value)  # torch.return_types.* (named tuples of tensors)
    if isinstance(value, SAFE_VALUE_TYPES):
        if isinstance(value, str) and len(value) > 10_000:
            raise state.error("limit", f"{label} made a string that is too long", node)
        return value
    if isinstance(value, set):  # a set's methods: items are the program's own, already held
        return value
    if isinstance(value, tuple | list):
        inside = leaves(value)
        if len(inside) > 1_000_000:
            raise state.error("limit", f"{label} made a list with {len(inside):,} items", node)
        for leaf in inside:
            if not isinstance(leaf, SAFE_VALUE_TYPES):
                raise state.error(
                    "type",
                    f"{label} gave a {type(leaf).__name__}, which programs cannot hold",
                    node,
                )
        return value
    raise state.error(
        "type", f"{label} gave a {type(value).__name__}, which programs cannot hold", node
    )


def tensors_in(args, kwargs) -> list[torch.Tensor]:
    """The tensors among a call's arguments, nested ones included."""
    leaves, _ = tree_flatten((args, kwargs))
    return [v for v in leaves if isinstance(v, torch.Tensor)]
