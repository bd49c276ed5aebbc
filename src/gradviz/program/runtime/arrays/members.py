"""What a program reads and calls on numpy's values: an array's attributes and methods
(gradviz.program.runtime.arrays.tables.ATTRIBUTES and METHODS) and a numpy scalar's, each
method run by the run's `Arrays` (sized first, as numpy's functions are)."""

from __future__ import annotations

import numpy as np

from gradviz.program.budgets.object_sizes import hold, listed
from gradviz.program.runtime.arrays import sizes, tables
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.syntax.grammar import NUMPY_FILES
from gradviz.program.syntax.program_error import ProgramError, did_you_mean


class ArrayMembers:
    """Attributes and methods of arrays and numpy scalars, for one run's `Arrays`."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.state = arrays.state
        self.quotas = arrays.quotas

    def attribute(self, owner: ProgramArray, name: str, node):
        array = owner.array
        if name in tables.ATTRIBUTES:
            if name == "shape":
                return tuple(int(s) for s in array.shape)
            if name == "T":
                return self.arrays.wrap(array.T, node, ".T")
            return getattr(array, name)
        raise self.missing(name, node, "attribute")

    def missing(self, name: str, node, what: str) -> ProgramError:
        if name in tables.FILE_NAMES:
            return self.state.error("forbidden", NUMPY_FILES.format(name=f"a.{name}()"), node)
        if name in tables.METHODS and what == "attribute":
            return self.state.error(
                "type", f"`.{name}` is a method: call it, e.g. a.{name}()", node
            )
        known = set(tables.METHODS) | set(tables.ATTRIBUTES)
        return self.state.error(
            "name",
            f"numpy arrays have no {what} `.{name}` in this language",
            node,
            did_you_mean(name, known),
        )

    def method(self, owner: ProgramArray, name: str, args: tuple, kwargs: dict, node):
        kind = tables.METHODS.get(name)
        if kind is None:
            if name in tables.ATTRIBUTES:
                raise self.state.error(
                    "type", f"`.{name}` is an attribute, not a method: write a.{name}", node
                )
            raise self.missing(name, node, "method")
        label = f".{name}()"
        array = owner.array
        args, kwargs, dtype = self.arrays.arguments(label, args, kwargs, node)
        if name == "tolist":  # lists of numbers: counted as the tensor's tolist() is
            made = listed(array.shape)
            if made is not None:
                hold(self.state, self.quotas, self.arrays.budget, label, made, node)
            return self.arrays.run(label, array.tolist, (), {}, node, (array,))
        if name == "astype":
            self.arrays.sized(label, node, [sizes.out(array.shape, dtype)])
        else:
            self.arrays.precheck(label, kind, name, (array, *args), kwargs, dtype, node)
        result = self.arrays.run(label, getattr(array, name), args, kwargs, node, (array,))
        return self.arrays.made(result, kind, node, label)

    def scalar_attribute(self, value: np.generic, name: str, node):
        """x.dtype, x.shape, ... of a numpy scalar (what an array's number is)."""
        if name in tables.SCALAR_ATTRIBUTES:
            return self.arrays.wrap(getattr(value, name), node, f".{name}")
        raise self.state.error(
            "type", f"a numpy {value.dtype} has no attribute `.{name}` in this language", node
        )

    def scalar_method(self, value: np.generic, name: str, args: tuple, kwargs: dict, node):
        """x.item(), x.astype(np.float32), x.round(2), x.tolist() of a numpy scalar."""
        if name not in tables.SCALAR_METHODS:
            raise self.state.error(
                "type", f"a numpy {value.dtype} has no method `.{name}` in this language", node
            )
        label = f".{name}()"
        args, kwargs, _ = self.arrays.arguments(label, args, kwargs, node)
        return self.arrays.wrap(
            self.arrays.run(label, getattr(value, name), args, kwargs, node), node, label
        )
