"""The Python built-ins a program may call (`NAMES`), and `math` for `import math`.

Only what is listed exists: no getattr, setattr, eval, exec, open, __import__, type, vars,
globals or dir; iter and next only on the program's own objects (a loader, a layer's
parameters), never giving it a Python iterator. Each built-in takes a program's values only (numbers, strings,
lists, tuples, dicts, ranges, tensors, the program's own functions for `key=` and map()),
reads sequences through gradviz.program.runtime.iteration (a loop under the caps: `sum(range(10**9))`
is refused before it starts), sizes what it makes through gradviz.program.budgets.language_caps, and runs
tensor work through gradviz.program.runtime.torch_calls.Library.call, under the budget. `isinstance`
accepts the types named here and torch.Tensor only.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from collections.abc import Iterator

import numpy as np
import torch

from gradviz.program.allowlists import tables
from gradviz.program.allowlists.nntables import ObjectSpec
from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.precheck import Budget
from gradviz.program.recording.state import RunState
from gradviz.program.results.limits import MAX_OUTPUT_LINE_CHARS, MAX_OUTPUT_LINES
from gradviz.program.runtime import cifar_sample
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.runtime.containers import Containers
from gradviz.program.runtime.errors import runtime_error
from gradviz.program.runtime.iteration import Iteration, LazySequence
from gradviz.program.runtime.strings import Strings
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import (
    Builtin,
    Namespace,
    ProgramObject,
    TypeRef,
    checked,
    held,
    type_name,
)

NAMES = [
    "print",
    "len",
    "abs",
    "min",
    "max",
    "round",
    "float",
    "int",
    "bool",
    "str",
    "repr",
    "list",
    "tuple",
    "dict",
    "set",
    "range",
    "enumerate",
    "zip",
    "sum",
    "sorted",
    "reversed",
    "any",
    "all",
    "isinstance",
    "map",
    "filter",
    "divmod",
    "pow",
    "iter",
    "next",
    "gradviz_cifar10_sample",
]
# The built-ins a program could always call: they keep the rules they had (numbers,
# tensors, lists and tuples; no keywords) and cannot be reassigned.
ORIGINAL = {"len": len, "abs": abs, "min": min, "max": max, "round": round}
ORIGINAL |= {"float": float, "int": int}
RESERVED = ("print", *ORIGINAL)
_NO_DEFAULT = object()
ORDER = {"min": operator.lt, "max": operator.gt}  # what makes an item the new best
TYPES = {"int": int, "float": float, "bool": bool, "str": str, "list": list, "tuple": tuple}
TYPES["dict"] = dict
TYPES["set"] = set
_NUMBERS = (bool, int, float)
_SEQUENCE_KINDS = (
    list, tuple, str, range, dict, torch.Size, torch.Tensor, LazySequence, ProgramObject,
)  # fmt: skip

MATH = Namespace(
    "math",
    {
        **{
            name: tables.FnSpec(getattr(math, name), check="bounded")
            for name in [
                "sqrt",
                "exp",
                "log",
                "log2",
                "log10",
                "log1p",
                "expm1",
                "sin",
                "cos",
                "tan",
                "asin",
                "acos",
                "atan",
                "atan2",
                "sinh",
                "cosh",
                "tanh",
                "floor",
                "ceil",
                "trunc",
                "fabs",
                "isnan",
                "isinf",
                "isfinite",
                "isclose",
                "hypot",
                "degrees",
                "radians",
                "copysign",
                "fmod",
            ]
        },
        "pi": math.pi,
        "e": math.e,
        "tau": math.tau,
        "inf": math.inf,
        "nan": math.nan,
    },
)


@functools.cache
def _signatures() -> dict[str, inspect.Signature]:
    """The signatures of Builtins' own built-ins, as its bound methods have them (no self):
    the same for every run, read once (inspect.signature of each, 0.2 ms a run)."""
    return {
        name: inspect.signature(functools.partial(fn, None))
        for name in NAMES
        if (fn := getattr(Builtins, "_" + name, None)) is not None
    }


def extended(name, args, kwargs) -> bool:
    """Calls of len/abs/min/max/round/float/int the original rules did not take: key=/default=,
    one string, range, dict, set or lazy sequence to read, a string to convert, min()/max() of
    lists or tuples (their items compared a pair at a time, each pair sized first:
    Builtins._compare)."""
    one_iterable = len(args) == 1 and isinstance(args[0], str | range | dict | set | LazySequence)
    one_iterable = one_iterable or (
        name in ORDER and len(args) == 1 and isinstance(args[0], ProgramObject)
    )  # max(generator)
    read = (str, list, tuple) if name in ORDER else str
    return bool(kwargs) or one_iterable or any(isinstance(a, read) for a in args)


def is_type(value) -> bool:
    """A type isinstance() takes: int, float, ... or torch.Tensor."""
    return isinstance(value, TypeRef) or (isinstance(value, Builtin) and value.name in TYPES)


def isinstance_of(state: RunState, node, value, types) -> bool:
    """isinstance(value, types): Python's types from TYPES, torch.Tensor, the program's own
    classes and torch.nn's (isinstance(module, nn.Linear)); anything else a type error."""
    kinds = types if isinstance(types, tuple) else (types,)
    resolved = []
    for t in kinds:
        if isinstance(t, ProgramObject) and t.covers(value) is not None:
            if t.covers(value):  # one of the program's own classes
                return True
        elif isinstance(t, Builtin) and t.name in TYPES:
            resolved.append(TYPES[t.name])
        elif isinstance(t, TypeRef):
            resolved.append(checked_type(value, t.type))
        elif isinstance(spec := getattr(t, "member", getattr(t, "spec", None)), ObjectSpec):
            if isinstance(value, ProgramObject) and value.made_as(spec.target):
                return True  # isinstance(module, nn.Linear)
        else:
            raise state.error(
                "type",
                "isinstance() checks against int, float, bool, str, list, tuple, dict, set and "
                f"torch.Tensor only, not {t!r}",
                node,
            )
    return isinstance(value, tuple(resolved))


class Builtins:
    """Calls of the built-ins, under the run's caps."""

    def __init__(
        self,
        state: RunState,
        budget: Budget,
        quotas: Quotas,
        library: Library,
        iteration: Iteration,
        strings: Strings,
        containers: Containers,
        call_value,
        add,
    ):
        self.state = state
        self.budget = budget
        self.quotas = quotas
        self.library = library
        self.arrays = library.arrays
        self.iteration = iteration
        self.strings = strings
        self.containers = containers
        self.call_value = call_value  # (function, args, kwargs, node) -> result
        self.add = add  # (a, b, node) -> a + b, as the program's `+`
        self.table = {
            name: Builtin(name, ORIGINAL.get(name) or getattr(self, "_" + name)) for name in NAMES
        }
        self.own = {name: getattr(self, "_" + name, None) for name in NAMES}
        self.signatures = _signatures()

    def call(self, builtin: Builtin, args: tuple, kwargs: dict, node):
        name = builtin.name
        if name == "print" and set(kwargs) - {"sep", "end"}:
            raise self.state.error("type", "print() takes sep= and end= only", node)
        own = self.own[name]
        if own is None or (name in ORIGINAL and not extended(name, args, kwargs)):
            return self._original(builtin, args, kwargs, node)
        try:  # the built-in's own signature: refuse wrong arguments in plain words
            self.signatures[name].bind(node, *args, **kwargs)
        except TypeError as exc:
            raise self.state.error("type", f"{name}(): {exc}", node) from None
        return own(node, *args, **kwargs)

    def _original(self, builtin: Builtin, args, kwargs, node):
        """len, abs, min, max, round, float, int on numbers, tensors, lists and tuples."""
        name = builtin.name
        if kwargs:
            raise self.state.error("type", f"{name}() takes no keyword arguments here", node)
        if name == "len" and len(args) == 1 and isinstance(args[0], ProgramObject):
            return args[0].length(node)  # len(net), len(loader): the object's own answer
        if any(isinstance(a, ProgramArray) for a in args):  # float(a), abs(a), round(a, 2)
            return self.arrays.builtin(name, ORIGINAL[name], args, node)
        allowed = (bool, int, float, torch.Tensor, tuple, list, torch.Size, np.generic)
        allowed += (str, dict, set, range) if name == "len" else ()
        for a in args:
            if not isinstance(a, allowed):
                raise self.state.error("type", f"{name}() does not take a {type_name(a)}", node)
        if name in ("min", "max") and any(isinstance(a, torch.Tensor) for a in args):
            raise self.state.error("type", f"use torch.{name}(t) or t.{name}() for tensors", node)
        if name == "round":
            self.budget.check_round(args, node)
        fn = ORIGINAL[name]
        if name in ("abs", "round") and args and isinstance(args[0], torch.Tensor):
            return self.library.call(f"{name}()", fn, args, {}, node, "bounded")
        try:
            return checked(self.state, fn(*args), node, name)
        except Exception as exc:
            raise runtime_error(self.state, exc, node, name) from None

    # -- reading sequences

    def items(self, iterable, node, what: str) -> list:
        """Every item of `iterable`: an implicit loop, under the loop caps."""
        return list(self.each(iterable, node, what))

    def each(self, iterable, node, what: str) -> Iterator:
        """The items of `iterable` one by one (any() and all() stop reading at their answer,
        as Python's do: a generator's body runs no further), each a loop pass."""
        known = self.iteration.passes(iterable)
        if known is not None:
            self.quotas.planned(known, node, what)
        for item in self.iteration.over(iterable, node):
            self.quotas.loop_pass(node)
            yield item

    def _made(self, items: list, node, kind: str) -> list:
        self.quotas.items(len(items), node, kind)
        for item in items:
            held(self.state, item, node, f"a {kind}")
        return items

    # -- the built-ins (each takes the call's node first)

    def _print(self, node, *args, sep=" ", end="\n"):
        if not isinstance(sep, str) or not isinstance(end, str):
            raise self.state.error("type", "print's sep and end must be strings", node)
        text = sep.join(self.strings.show(a, node, cap=-1) for a in args)
        if len(self.state.stdout) + len(self.state.shown) < MAX_OUTPUT_LINES:
            self.state.stdout.append(text[:MAX_OUTPUT_LINE_CHARS] + ("" if end == "\n" else end))

    def _iter(self, node, value):
        return self.iteration.start(value, node)

    def _next(self, node, iterator, default=_NO_DEFAULT):
        return self.iteration.advance(iterator, node, None if default is _NO_DEFAULT else [default])

    def _gradviz_cifar10_sample(self, node, n=4):
        return cifar_sample.for_program(self.state, self.library, node, n)

    def _min(self, node, *args, key=None, default=_NO_DEFAULT):
        return self._extreme(node, "min", args, key, default, ORDER["min"])

    def _max(self, node, *args, key=None, default=_NO_DEFAULT):
        return self._extreme(node, "max", args, key, default, ORDER["max"])

    def _extreme(self, node, name, args, key, default, better):
        values = self.items(args[0], node, f"{name}()") if len(args) == 1 else list(args)
        self.containers.bounded(values, node, f"{name}()")
        if not values:
            if default is not _NO_DEFAULT:
                return default
            raise self.state.error(
                "runtime", f"ValueError: {name}() arg is an empty sequence", node
            )
        best, best_key = values[0], None
        for i, v in enumerate(values):
            k = v if key is None else self.call_value(key, (v,), {}, node)
            if i == 0 or self.iteration.truth(self._compare(better, k, best_key, node), node):
                best, best_key = v, k
        return best

    def _compare(self, fn, a, b, node):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return self.library.call("comparison", fn, (a, b), {}, node, "broadcast")
        self.budget.precheck_comparison(a, b, node, "comparison")  # lists holding tensors
        try:
            return fn(a, b)
        except TypeError as exc:
            raise self.containers.fail(exc, node) from None

    def _int(self, node, value=0, base=None):
        if isinstance(value, str):
            digits = len(value.strip().lstrip("+-").replace("_", ""))
            if digits * 3.33 > self.state.limits.max_int_bits:
                raise self.state.error(
                    "limit",
                    f"int() of {digits:,} digits; the limit is "
                    f"{self.state.limits.max_int_bits:,} bits",
                    node,
                )
        args = (value,) if base is None else (value, base)
        return self._convert(int, args, node)

    def _float(self, node, value=0.0):
        return self._convert(float, (value,), node)

    def _convert(self, fn, args, node):
        if not isinstance(args[0], _NUMBERS + (str, torch.Tensor, np.generic)):
            raise self.state.error(
                "type", f"{fn.__name__}() does not take a {type_name(args[0])}", node
            )
        try:
            return fn(*args)
        except (ValueError, TypeError, OverflowError, RuntimeError) as exc:
            raise runtime_error(self.state, exc, node, fn.__name__) from None

    def _bool(self, node, value=False):
        return self.iteration.truth(value, node)

    def _str(self, node, value=""):
        text = self.strings.show(value, node)
        self.quotas.chars(len(text), node)
        return text

    def _repr(self, node, value):
        text = self.strings.represent(value, node)
        self.quotas.chars(len(text), node)
        return text

    def _list(self, node, iterable=()):
        return self._made(self.items(iterable, node, "list()"), node, "list")

    def _tuple(self, node, iterable=()):
        return tuple(self._made(self.items(iterable, node, "tuple()"), node, "tuple"))

    def _dict(self, node, source=_NO_DEFAULT, **kwargs):
        pairs = [] if source is _NO_DEFAULT else self.containers.pairs(source, node)
        out = dict(pairs)
        out.update(kwargs)
        self._made(list(out.values()), node, "dict")
        return out

    def _set(self, node, iterable=()):
        return self.containers.new_set(self.items(iterable, node, "set()"), node)

    def _range(self, node, *args):
        if not 1 <= len(args) <= 3:
            raise self.state.error("type", f"range() takes 1 to 3 integers, not {len(args)}", node)
        try:
            return range(*(operator.index(a) for a in args))
        except (TypeError, ValueError) as exc:
            raise self.containers.fail(exc, node) from None

    def _enumerate(self, node, iterable, start=0):
        self._iterable(iterable, node, "enumerate()")
        if not isinstance(start, int):
            raise self.state.error("type", "enumerate()'s start must be an integer", node)
        return LazySequence("enumerate", (iterable,), start)

    def _zip(self, node, *iterables):
        for it in iterables:
            self._iterable(it, node, "zip()")
        return LazySequence("zip", iterables)

    def _reversed(self, node, sequence):
        if not isinstance(sequence, list | tuple | str | range | dict | torch.Size | torch.Tensor):
            raise self.state.error(
                "type", f"reversed() takes a sequence, not a {type_name(sequence)}", node
            )
        return LazySequence("reversed", (sequence,))

    def _iterable(self, value, node, what: str) -> None:
        if not isinstance(value, _SEQUENCE_KINDS):
            raise self.state.error("type", f"{what} cannot go over a {type_name(value)}", node)

    def _sum(self, node, iterable, start=0):
        if isinstance(start, str):
            raise self.state.error(
                "type", "sum() can't sum strings [use ''.join(seq) instead]", node
            )
        total = start
        for item in self.items(iterable, node, "sum()"):
            total = self.add(total, item, node)
        return total

    def _sorted(self, node, iterable, key=None, reverse=False):
        out = self._made(self.items(iterable, node, "sorted()"), node, "list")
        self.containers.sort(out, key, reverse, (), node)
        return out

    def _any(self, node, iterable):
        return any(self.iteration.truth(v, node) for v in self.each(iterable, node, "any()"))

    def _all(self, node, iterable):
        return all(self.iteration.truth(v, node) for v in self.each(iterable, node, "all()"))

    def _map(self, node, fn, *iterables):
        rows = self.items(LazySequence("zip", iterables), node, "map()")
        return self._made([self.call_value(fn, row, {}, node) for row in rows], node, "list")

    def _filter(self, node, fn, iterable):
        keep = []
        for item in self.items(iterable, node, "filter()"):
            test = item if fn is None else self.call_value(fn, (item,), {}, node)
            if self.iteration.truth(test, node):
                keep.append(item)
        return self._made(keep, node, "list")

    def _isinstance(self, node, value, types):
        return isinstance_of(self.state, node, value, types)

    def _divmod(self, node, a, b):
        self.budget.check_number_op("//", a, b, node)
        return self._arithmetic(divmod, (a, b), node)

    def _pow(self, node, base, exp, mod=None):
        if mod is None:
            self.budget.check_number_op("**", base, exp, node)
        return self._arithmetic(pow, (base, exp) if mod is None else (base, exp, mod), node)

    def _arithmetic(self, fn, args, node):
        for a in args:
            if not isinstance(a, _NUMBERS):
                raise self.state.error(
                    "type", f"{fn.__name__}() takes numbers, not a {type_name(a)}", node
                )
        try:
            return fn(*args)
        except (ZeroDivisionError, ValueError, OverflowError, TypeError) as exc:
            raise self.containers.fail(exc, node) from None


def checked_type(value, kind: type) -> type:
    """The type isinstance() checks `value` against for torch's `kind`: `object` (always
    true) for a layer where `kind` is torch.nn.Module, or an optimizer where it is
    torch.optim.Optimizer (the program holds gradviz's reference to the torch object)."""
    own = value.torch_type if isinstance(value, ProgramObject) else None
    return object if own is not None and issubclass(own, kind) else kind
