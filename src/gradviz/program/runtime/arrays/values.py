"""The values `numpy` gives a program: `ProgramArray` (a plain numeric ndarray the program
holds, reached only through the allow-lists of gradviz.program.runtime.arrays.tables),
numpy's scalars and dtypes (plain values), `NumpyType` (np.float32: a dtype and a scalar's
maker).

`Plain` is the gate into numpy: what a program passes to a numpy function is turned into
numbers, nested lists of numbers, arrays, dtypes, slices and None, or refused. Nothing else
(a function, a layer, one of the program's objects) ever reaches numpy, so numpy never
calls back into the program or makes an object array. `wrap` is the gate out: only numeric
arrays and scalars come back.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from gradviz.program.recording.state import RunState
from gradviz.program.runtime.arrays import tables
from gradviz.program.runtime.values import Builtin, ProgramObject, clipped, type_name

SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)
_BUILTIN_DTYPES = {"float": float, "int": int, "bool": bool}


class NumpyType(ProgramObject):
    """np.float32, np.int64, ...: a dtype to pass (dtype=np.float32) and a scalar's maker
    (np.float32(1.5)), never the class itself."""

    def __init__(self, arrays, name: str, kind: type):
        super().__init__(arrays.state)
        self.arrays = arrays
        self.name = name
        self.type = kind

    def describe(self) -> str:
        return "numpy type"

    def __repr__(self) -> str:
        return f"<class 'numpy.{self.type.__name__}'>"

    def call(self, args: tuple, kwargs: dict, node):
        return self.arrays.scalar(self, args, kwargs, node)

    def equals(self, other) -> bool | None:
        if isinstance(other, np.dtype):
            return bool(other == self.type)
        return other is self or (isinstance(other, NumpyType) and other.type is self.type)


class ProgramArray(ProgramObject):
    """A numpy array a program holds: its methods and attributes are those of
    gradviz.program.runtime.arrays.tables, run by the run's `Arrays`."""

    def __init__(self, arrays, array: np.ndarray):
        super().__init__(arrays.state)
        self.arrays = arrays
        self.array = array

    def describe(self) -> str:
        return "numpy.ndarray"

    def __repr__(self) -> str:
        self.check_printable()
        return repr(self.array)

    def as_str(self) -> str:
        self.check_printable()
        return str(self.array)

    def check_printable(self) -> None:
        """numpy prints every value of an array of up to 1,000 and, past that, the first
        and last 3 along each dimension: an array of many short dimensions (2, 2, ..., 2)
        is printed in full. Refused where that text would pass the string cap."""
        shown = printed_values(self.array.shape)
        limit = self.state.limits.max_string_length
        if 2 * shown > limit:
            raise self.state.error(
                "limit",
                f"printing this array would show {shown:,} values, a string of more than "
                f"{limit:,} characters (the limit per string)",
                self.state.node,
                "Print a part of it (a[:3]) or its shape.",
            )

    def attribute(self, name: str, node):
        return self.arrays.members.attribute(self, name, node)

    def method(self, name: str, args: tuple, kwargs: dict, node):
        return self.arrays.members.method(self, name, args, kwargs, node)

    def index(self, key, node):
        return self.arrays.get_item(self, key, node)

    def length(self, node) -> int:
        if self.array.ndim == 0:
            raise self.state.error("type", "TypeError: len() of unsized object", node)
        return len(self.array)

    def passes(self) -> int | None:
        return len(self.array) if self.array.ndim else None

    def iterate(self, node) -> ProgramObject:
        if self.array.ndim == 0:
            raise self.state.error("type", "TypeError: iteration over a 0-d array", node)
        return ArrayRows(self)

    def truth(self, node) -> bool:
        try:
            return bool(self.array)
        except ValueError as exc:
            raise self.state.error("runtime", f"ValueError: {exc}", node) from None


class ArrayRows(ProgramObject):
    """iter(array): its rows (or numbers), one at a time."""

    def __init__(self, owner: ProgramArray):
        super().__init__(owner.state)
        self.owner = owner
        self.at = 0

    def describe(self) -> str:
        return "iterator"

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        array = self.owner.array
        if self.at >= len(array):
            raise StopIteration
        self.at += 1
        return self.owner.arrays.wrap(array[self.at - 1], node, "iteration")


class Plain:
    """Turns a program's arguments into what numpy may read (see the module's docstring)."""

    def __init__(self, state: RunState):
        self.state = state

    def value(self, value, node, label: str, tensors: bool = False):
        if isinstance(value, ProgramArray):
            return value.array
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
            raise self.state.error(
                "type",
                f"{label}: numpy works on integers of 64 bits; {clipped(str(value))} is too big",
                node,
                "Use a float (1e30) for a huge number.",
            )
        if value is None or value is Ellipsis or isinstance(value, (*SCALARS, np.dtype)):
            return value
        if isinstance(value, slice):
            return slice(
                *(self.value(p, node, label) for p in (value.start, value.stop, value.step))
            )
        if isinstance(value, str):
            if value not in tables.TEXT_DTYPES:
                raise self.state.error(
                    "type", f"{label} takes numbers and arrays here, not the text {value!r}", node
                )
            return value
        if isinstance(value, NumpyType):
            return value.type
        if isinstance(value, Builtin) and value.name in _BUILTIN_DTYPES:
            return _BUILTIN_DTYPES[value.name]
        if isinstance(value, list | tuple):
            if too_big(value, self.state.limits.max_total_items):
                raise self.state.error(
                    "limit", f"{label} is given a list too big or too deep to read", node
                )
            return type(value)(self.value(v, node, label, tensors) for v in value)
        if isinstance(value, torch.Tensor) and tensors:
            return value
        if isinstance(value, torch.Tensor):
            raise self.state.error(
                "type",
                f"{label} takes numpy arrays and numbers, not a tensor",
                node,
                "Convert it first: t.numpy() (or np.asarray(t)); back with torch.from_numpy(a).",
            )
        raise self.state.error(
            "type",
            f"{label} takes numbers, lists of numbers and arrays here, not a {type_name(value)}",
            node,
        )

    def dtype(self, value, node, label: str):
        """A dtype argument: a numeric one, or refused (no object or string arrays)."""
        if value is None:
            return None
        dtype = None
        if isinstance(value, str | type | np.dtype):
            try:
                dtype = np.dtype(value)
            except TypeError:
                dtype = None
        if dtype is None or dtype.kind not in tables.NUMERIC_KINDS:
            raise self.state.error(
                "type",
                f"{label}: arrays here hold numbers only (bool, int, uint8, float): not {value!r}",
                node,
            )
        return dtype


def too_big(value, max_items: int, max_depth: int = 32) -> bool:
    """Whether a nested list numpy would read has more than `max_items` items in all, or
    nests deeper than `max_depth` (a list that holds itself does)."""
    count = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, list | tuple):
            if depth > max_depth:
                return True
            count += len(item)
            if count > max_items:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False


def printed_values(shape: tuple[int, ...]) -> int:
    """How many values numpy's default printing shows for an array of `shape`."""
    size = math.prod(shape)
    if size <= np.get_printoptions()["threshold"]:
        return size
    edge = 2 * np.get_printoptions()["edgeitems"]
    return math.prod(min(d, edge) for d in shape)
