"""One run's `numpy`: the namespace `import numpy as np` binds, and every call into numpy.

`Arrays.run` is the one place numpy works for a program: its arguments pass
`values.Plain` (numbers, lists of numbers, arrays, numeric dtypes), its output is sized
first (gradviz.program.runtime.arrays.sizes) and held to the same budget as tensors
(gradviz.program.budgets.precheck.Budget: bytes and values per array and in all, FLOPs of
matrix work), numpy's own errors become the program's, and only numeric arrays and scalars
come back (`wrap`). Random numbers come from the run's own generator
(gradviz.program.runtime.arrays.random).
"""

from __future__ import annotations

import operator

import numpy as np
import torch

from gradviz.devices import simulated as devices
from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.precheck import Budget
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.arrays import sizes, tables
from gradviz.program.runtime.arrays.members import ArrayMembers
from gradviz.program.runtime.arrays.random import NumpyRandom
from gradviz.program.runtime.arrays.values import (
    SCALARS,
    NumpyType,
    Plain,
    ProgramArray,
)
from gradviz.program.runtime.errors import call_error, runtime_error
from gradviz.program.runtime.values import Namespace, ProgramObject
from gradviz.program.syntax.program_error import ProgramError

NUMPY_OPERANDS = (ProgramArray, np.generic)


class NumpyFunction(ProgramObject):
    """np.exp, np.random.rand, ...: a function of the allow-lists, kept or called."""

    def __init__(self, arrays: Arrays, path: str, name: str, kind: str):
        super().__init__(arrays.state)
        self.arrays = arrays
        self.path = path
        self.name = name
        self.kind = kind

    def describe(self) -> str:
        return "function"

    def __repr__(self) -> str:
        return f"<function {self.path}>"

    def call(self, args: tuple, kwargs: dict, node):
        if self.kind == "random":
            return self.arrays.random.call(self.name, args, kwargs, node)
        return self.arrays.function(self, args, kwargs, node)


class Arrays:
    """numpy for one run (see the module's docstring)."""

    def __init__(self, state: RunState, budget: Budget, quotas: Quotas):
        self.state = state
        self.budget = budget
        self.quotas = quotas
        self.plain = Plain(state)
        self.random = NumpyRandom(self)
        self.unseeded_generators = 0  # np.random.default_rng() calls: each its own stream
        self.members = ArrayMembers(self)  # a.reshape(...), a.shape, x.item()
        self._namespace: Namespace | None = None

    # -- the module

    def namespace(self) -> Namespace:
        if self._namespace is None:
            self._namespace = self._make_namespace()
        return self._namespace

    def _make_namespace(self) -> Namespace:
        def functions(path: str, table: dict) -> dict:
            return {n: NumpyFunction(self, f"{path}.{n}", n, k) for n, k in table.items()}

        random = functions("numpy.random", dict.fromkeys(tables.RANDOM, "random"))
        members = {
            **functions("numpy", tables.FUNCTIONS),
            **{n: NumpyType(self, n, getattr(np, n)) for n in tables.DTYPE_NAMES if hasattr(np, n)},
            **tables.CONSTANTS,
            "inf": float("inf"),
            "nan": float("nan"),
            "newaxis": None,
            "random": Namespace("numpy.random", random),
            "linalg": Namespace("numpy.linalg", functions("numpy.linalg", tables.LINALG)),
        }
        return Namespace("numpy", members)

    # -- calls

    def run(self, label: str, fn, args: tuple, kwargs: dict, node, reads: tuple = ()):
        """fn(*args, **kwargs) on plain arguments, numpy's errors as the program's; the
        arrays among `reads` (and the arguments) count as values it computes, but for
        indexing (reads=None: a view reads nothing)."""
        self.state.node = node
        self.budget.ops += 1
        if reads is not None:
            self.work(label, (*reads, *args, *kwargs.values()), node)
        try:
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)
        except ProgramError:
            raise
        except Exception as exc:
            raise call_error(self.state, exc, node, label) from None

    def work(self, label: str, values, node) -> None:
        """Every value a call reads counts toward the values computed in all, as a tensor
        operation's inputs do (a loop of sums over a big array stops at the cap)."""
        budget = self.budget
        for v in values:
            parts = v if isinstance(v, list | tuple) else (v,)
            budget.total_elements += sum(p.size for p in parts if isinstance(p, np.ndarray))
        if budget.total_elements > self.state.limits.max_total_elements:
            raise self.state.error(
                "limit",
                f"this program would compute more than {self.state.limits.max_total_elements:,} "
                f"values in all (the limit) by this line ({label})",
                node,
            )

    def sized(self, label: str, node, outputs, flops: float = 0.0) -> None:
        """Refuse a call whose outputs (gradviz.program.runtime.arrays.sizes) pass a cap."""
        if outputs is not None:
            self.budget.account(label, outputs, flops, node)

    def size_of(self, label: str, node, measure, *args):
        try:
            return measure(*args)
        except sizes.SizeError as exc:
            raise self.state.error("type", f"{label}: {exc}", node) from None

    def arguments(self, label: str, args: tuple, kwargs: dict, node):
        if "out" in kwargs:
            raise self.state.error("type", f"{label} takes no out= here: use its result", node)
        args = tuple(self.plain.value(a, node, label) for a in args)
        kwargs = {k: self.plain.value(v, node, label) for k, v in kwargs.items()}
        dtype = None
        for v in (*args, *kwargs.values()):
            if isinstance(v, str | type | np.dtype):
                dtype = self.plain.dtype(v, node, label)
        return args, kwargs, dtype

    def function(self, fn: NumpyFunction, args: tuple, kwargs: dict, node):
        label = fn.path
        if fn.kind == "array":
            return self.array(fn.name, args, kwargs, node)
        args, kwargs, dtype = self.arguments(label, args, kwargs, node)
        if fn.name == "norm" and (len(args) > 1 or kwargs.get("ord") is not None):
            raise self.state.error(
                "forbidden",
                "np.linalg.norm takes its default order only here (other matrix norms need a "
                "matrix decomposition): np.linalg.norm(a) or np.linalg.norm(a, axis=...)",
                node,
            )
        target = getattr(np.linalg if fn.path.startswith("numpy.linalg") else np, fn.name)
        self.precheck(label, fn.kind, fn.name, args, kwargs, dtype, node)
        result = self.run(label, target, args, kwargs, node)
        return self.made(result, fn.kind, node, label)

    def precheck(self, label, kind, name, args, kwargs, dtype, node) -> None:
        """Size a call of `kind` (gradviz.program.runtime.arrays.tables) before it runs."""
        made = self.size_of(label, node, sizes.by_kind, kind, name, args, kwargs, dtype)
        if made is not None:
            self.sized(label, node, *made)

    def made(self, result, kind: str, node, label: str):
        """The program's value for `result`; a bounded call's output counted now."""
        if kind == "bounded":
            for part in result if isinstance(result, tuple) else (result,):
                if isinstance(part, np.ndarray):
                    self.sized(label, node, [sizes.out(part.shape, part.dtype)])
        return self.wrap(result, node, label)

    def array(self, name: str, args: tuple, kwargs: dict, node):
        """np.array / np.asarray of numbers, nested lists, an array or a CPU tensor."""
        label = f"numpy.{name}"
        source = args[0] if args else kwargs.get("object", kwargs.get("a"))
        rest = {k: v for k, v in kwargs.items() if k not in ("object", "a")}
        if set(rest) - {"dtype"} or len(args) > 2:
            raise self.state.error("type", f"{label} takes a value and dtype= here", node)
        dtype = self.plain.dtype(
            self.plain.value(args[1] if len(args) > 1 else rest.get("dtype"), node, label),
            node,
            label,
        )
        if isinstance(source, torch.Tensor):
            source = self.tensor_source(source, node, label)
        else:
            source = self.plain.value(source, node, label)
        if isinstance(source, np.ndarray | torch.Tensor):
            shape = tuple(source.shape)
        else:
            shape = self.run(label, np.shape, (source,), {}, node)
        self.sized(label, node, [sizes.out(shape, dtype)])
        fn = np.asarray if name == "asarray" else np.array
        return self.wrap(self.run(label, fn, (source,), {"dtype": dtype}, node), node, label)

    def tensor_source(self, tensor: torch.Tensor, node, label: str) -> torch.Tensor:
        """A tensor numpy may read: on the CPU (PyTorch's own error otherwise)."""
        shadow = self.state.shadow
        if shadow is not None:
            where = shadow.device_of(tensor)
            if where.type != "cpu":
                exc = TypeError(devices.numpy_message(where))
                raise runtime_error(self.state, exc, node, label, (tensor,), rule_by_gradviz=True)
        return tensor

    def from_tensor(self, tensor: torch.Tensor, node):
        """t.numpy(): the tensor's own memory as an array (torch refuses what it refuses)."""
        return self.wrap(
            self.run(".numpy()", torch.Tensor.numpy, (tensor,), {}, node), node, ".numpy()"
        )

    def wrap(self, value, node, label: str):
        """Only numeric arrays and scalars reach the program."""
        if isinstance(value, np.ndarray):
            self.numeric(value.dtype, node, label)
            return ProgramArray(self, value)
        if isinstance(value, np.generic):
            self.numeric(value.dtype, node, label)
            return value
        if isinstance(value, tuple | list):
            return type(value)(self.wrap(v, node, label) for v in value)
        if value is None or isinstance(value, (*SCALARS, np.dtype, str)):
            return value
        raise self.state.error(
            "type", f"{label} gave a {type(value).__name__}, which programs cannot hold", node
        )

    def numeric(self, dtype: np.dtype, node, label: str) -> None:
        if dtype.kind not in tables.NUMERIC_KINDS:
            raise self.state.error(
                "type",
                f"{label} would make an array of {dtype} values: arrays here hold numbers only "
                "(no object or text arrays)",
                node,
            )

    # -- arrays' attributes, methods, items and operators

    def get_item(self, owner: ProgramArray, key, node):
        key = self.plain.value(key, node, "an index")
        self.sized("indexing", node, sizes.indexing(owner.array.shape, key))
        result = self.run("indexing", operator.getitem, (owner.array, key), {}, node, None)
        return self.wrap(result, node, "indexing")

    def set_item(self, owner: ProgramArray, key, value, node) -> None:
        key = self.plain.value(key, node, "an index")
        value = self.plain.value(value, node, "an item assignment")
        args = (owner.array, key, value)
        self.run("item assignment", operator.setitem, args, {}, node, None)

    @staticmethod
    def involved(*operands) -> bool:
        """Whether an operator on these goes through numpy: an array is among them, or a
        numpy scalar with numbers (one isinstance per operand where none is numpy's)."""
        if not any(isinstance(v, NUMPY_OPERANDS) for v in operands):
            return False
        if any(isinstance(v, ProgramArray) for v in operands):
            return True
        return all(isinstance(v, SCALARS) for v in operands)

    def binop(self, symbol: str, fn, left, right, node):
        label = f"`{symbol}`"
        for v in (left, right):
            if isinstance(v, torch.Tensor):
                raise self.state.error(
                    "type",
                    f"{label} between a numpy array and a tensor: convert one first",
                    node,
                    "torch.from_numpy(a) makes a tensor of an array; t.numpy() an array of "
                    "a tensor.",
                )
        a = self.plain.value(left, node, label)
        b = self.plain.value(right, node, label)
        kind = "matrix" if symbol in ("@", "@=") else "broadcast"
        self.precheck(label, kind, "matmul", (a, b), {}, None, node)
        return self.wrap(self.run(label, fn, (a, b), {}, node), node, label)

    def unary(self, symbol: str, fn, operand, node):
        value = self.plain.value(operand, node, f"`{symbol}`")
        return self.made(self.run(f"`{symbol}`", fn, (value,), {}, node), "bounded", node, symbol)

    def contains(self, owner: ProgramArray, item, node) -> bool:
        value = self.plain.value(item, node, "`in`")
        self.sized("`in`", node, sizes.broadcast((owner.array, value), {}))
        return bool(self.run("`in`", operator.contains, (owner.array, value), {}, node))

    def scalar(self, kind: NumpyType, args: tuple, kwargs: dict, node):
        """np.float32(1.5), np.int64(3), np.float32(a) (an array's values as that type)."""
        label = f"numpy.{kind.name}"
        if kwargs or len(args) > 1:
            raise self.state.error("type", f"{label} takes one number or array here", node)
        value = self.plain.value(args[0] if args else 0, node, label)
        self.sized(label, node, [sizes.out(sizes.shape_of(value), np.dtype(kind.type))])
        return self.wrap(self.run(label, kind.type, (value,), {}, node), node, label)

    def builtin(self, name: str, fn, args: tuple, node):
        """float(a), int(a) (of a one-value array), abs(a), round(a, n), min(a), max(a)."""
        label = f"{name}()"
        if name == "len":
            return args[0].length(node)
        values = tuple(self.plain.value(a, node, label) for a in args)
        return self.made(self.run(label, fn, values, {}, node), "bounded", node, label)


def for_torch(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """torch.tensor(a), torch.from_numpy(a): a program's arrays as torch reads them."""

    def bare(v):
        if isinstance(v, ProgramArray):
            return v.array
        if isinstance(v, list) and any(isinstance(i, ProgramArray) for i in v):
            return [bare(i) for i in v]
        return v

    return tuple(map(bare, args)), {k: bare(v) for k, v in kwargs.items()}
