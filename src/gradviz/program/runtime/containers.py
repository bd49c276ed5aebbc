"""Lists, tuples, dicts and strings: their operators, items and methods, under the caps.

Every list, tuple, dict or string a program makes or grows here is sized first
(gradviz.program.budgets.language_caps: items per container and in all, characters per string and in
all), so `[0] * 10**9`, `'a' * 10**9` or `s.replace('a', s)` are refused before Python
builds them. Methods are an allow-list per type (`METHODS`); anything else is refused
(str.format is run by gradviz.program.runtime.strings, which reads no attribute in a field).
Containers never hold a module or a built-in function (gradviz.program.runtime.values.held).
"""

from __future__ import annotations

import torch

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.object_sizes import MAX_NESTING
from gradviz.program.budgets.precheck import Budget
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.iteration import CONTAINERS, Iteration, oversized
from gradviz.program.runtime.values import held, tensors_in, type_name
from gradviz.program.syntax.program_error import did_you_mean

METHODS: dict[type, frozenset[str]] = {
    list: frozenset(
        [
            "append",
            "extend",
            "insert",
            "pop",
            "remove",
            "index",
            "count",
            "clear",
            "copy",
            "reverse",
            "sort",
        ]
    ),
    dict: frozenset(
        ["keys", "values", "items", "get", "pop", "update", "setdefault", "copy", "clear"]
    ),
    str: frozenset(
        [
            "upper",
            "lower",
            "strip",
            "lstrip",
            "rstrip",
            "title",
            "capitalize",
            "split",
            "rsplit",
            "splitlines",
            "join",
            "replace",
            "startswith",
            "endswith",
            "find",
            "rfind",
            "count",
            "index",
            "isdigit",
            "isalpha",
            "isspace",
            "zfill",
            "ljust",
            "rjust",
            "center",
        ]
    ),
    tuple: frozenset(["index", "count"]),
    set: frozenset(
        [
            "add",
            "update",
            "remove",
            "discard",
            "pop",
            "clear",
            "copy",
            "union",
            "intersection",
            "difference",
            "symmetric_difference",
            "issubset",
            "issuperset",
            "isdisjoint",
        ]
    ),
}
# A set's methods that make or grow a set from other iterables, and its operators.
_SET_GROWS = frozenset(["update", "union", "symmetric_difference"])
SET_OPERATORS = {"|": "union", "&": "intersection", "-": "difference", "^": "symmetric_difference"}
_SIZED = frozenset(["zfill", "ljust", "rjust", "center"])  # str methods taking a width
_FAILURES = (IndexError, KeyError, ValueError, TypeError, RuntimeError, OverflowError)
SEQUENCES = (list, tuple, str)
# The exact types of the items a list or display holds as they are (else checked by `held`)
PLAIN_ITEMS = frozenset({int, float, bool, str, type(None), list, tuple, dict, set, torch.Tensor})


class Containers:
    """Operators, items and methods of a program's lists, tuples, dicts and strings."""

    def __init__(
        self, state: RunState, quotas: Quotas, budget: Budget, iteration: Iteration, call_value
    ):
        self.state = state
        self.quotas = quotas
        self.budget = budget
        self.iteration = iteration
        self.call_value = call_value  # (function, args, kwargs, node) -> result

    def fail(self, exc: Exception, node):
        return self.state.error("runtime", f"{type(exc).__name__}: {exc}", node)

    def bounded(self, value, node, what: str):
        """`value`, unless reading it in full (as torch reads a nested list, and Python
        hashes a tuple or compares two lists, in C, without the caps) would be too much."""
        if not isinstance(value, CONTAINERS):  # nothing to read in full
            self.quotas.clock(node)
            return value
        why = oversized(value, self.state.limits.max_total_items)
        if why == "deep":
            raise self.state.error(
                "limit",
                f"{what} nests lists, tuples or dicts more than {MAX_NESTING} deep; "
                "that is the limit",
                node,
            )
        if why == "big":
            raise self.state.error(
                "limit",
                f"{what} holds more than {self.state.limits.max_total_items:,} items when read "
                "in full (a list inside it more than once counts each time; one that holds "
                "itself never ends); that is the limit",
                node,
            )
        self.quotas.clock(node)
        return value

    def key(self, value, node):
        """A dict key: Python hashes a tuple's items recursively, so not a deep one."""
        return self.bounded(value, node, "a dict key") if isinstance(value, tuple) else value

    # -- operators

    def concat(self, left, right, node):
        """a + b for two lists, two tuples or two strings (None if not that)."""
        if type(left) is not type(right) or not isinstance(left, SEQUENCES):
            return None
        if isinstance(left, str):
            self.quotas.chars(len(left) + len(right), node)
            return left + right
        self.quotas.items(len(left) + len(right), node, type(left).__name__)
        return left + right

    def repeat(self, left, right, node):
        """seq * n or n * seq (None if not that)."""
        if isinstance(right, SEQUENCES) and isinstance(left, int):
            left, right = right, left
        if not isinstance(left, SEQUENCES) or not isinstance(right, int):
            return None
        length = len(left) * max(right, 0)
        if isinstance(left, str):
            self.quotas.chars(length, node)
        else:
            self.quotas.items(length, node, type(left).__name__)
        return left * right

    # -- items

    def get_item(self, obj, index, node):
        """obj[index] for a list, tuple, string, range, size or dict."""
        if isinstance(obj, dict):
            self.key(index, node)
        try:
            item = obj[index]
        except _FAILURES as exc:
            raise self.fail(exc, node) from None
        if isinstance(index, slice) and isinstance(item, str):
            self.quotas.chars(len(item), node)
        elif isinstance(index, slice) and isinstance(item, list | tuple):
            self.quotas.items(len(item), node, type(item).__name__)
        return item

    def set_item(self, obj, index, value, node) -> None:
        """obj[index] = value for a list (one item) or a dict."""
        held(self.state, value, node, f"a {type_name(obj)}")
        if isinstance(obj, dict):
            self.key(index, node)
            try:
                if index not in obj:
                    self.quotas.items(len(obj) + 1, node, "dict", made=1)
                obj[index] = value
            except TypeError as exc:  # unhashable key
                raise self.fail(exc, node) from None
            return
        if not isinstance(obj, list):
            raise self.state.error(
                "type", f"a {type_name(obj)} does not support item assignment", node
            )
        if isinstance(index, slice):
            raise self.state.error(
                "type",
                "assigning to a slice of a list is not supported: set items one by one",
                node,
            )
        try:
            obj[index] = value
        except _FAILURES as exc:
            raise self.fail(exc, node) from None

    # -- methods

    def method(self, owner, name: str, args: tuple, kwargs: dict, node):
        allowed = METHODS.get(type(owner), frozenset())
        if name not in allowed:
            hint = did_you_mean(name, allowed)
            raise self.state.error(
                "type", f"a {type_name(owner)} has no method `.{name}` in this language", node, hint
            )
        if name in ("index", "count", "remove"):  # they compare every item, in C
            for value in (owner, *args):
                self.bounded(value, node, f"`.{name}()`")
            for item in owner if args else ():
                self.budget.precheck_comparison(args[0], item, node, f".{name}()")
        if isinstance(owner, list):
            return self._list_method(owner, name, args, kwargs, node)
        if isinstance(owner, dict):
            return self._dict_method(owner, name, args, kwargs, node)
        if isinstance(owner, str):
            return self._str_method(owner, name, args, kwargs, node)
        if isinstance(owner, set):
            return self._set_method(owner, name, args, kwargs, node)
        return self._call(getattr(owner, name), args, kwargs, node)

    def _call(self, fn, args, kwargs, node):
        try:
            return fn(*args, **kwargs)
        except _FAILURES as exc:
            raise self.fail(exc, node) from None

    def new_set(self, items, node, what: str = "a set") -> set:
        """A set of `items` (each held, each hashable), sized before it is kept."""
        for item in items:
            held(self.state, item, node, what)
            if isinstance(item, tuple):
                self.key(item, node)  # hashing reads a tuple in full
        try:
            out = set(items)
        except TypeError as exc:  # an unhashable item: a list, a dict, a set
            raise self.fail(exc, node) from None
        self.quotas.items(len(out), node, "set")
        return out

    def set_operator(self, symbol: str, left: set, right: set, node):
        """a | b, a & b, a - b, a ^ b for two sets (None for other symbols)."""
        name = SET_OPERATORS.get(symbol)
        if name is None:
            return None
        if symbol in ("|", "^"):
            self.quotas.items(len(left) + len(right), node, "set", made=0)
        return self.new_set(list(getattr(left, name)(right)), node)

    def _set_method(self, owner: set, name: str, args, kwargs, node):
        if kwargs:
            raise self.state.error("type", f"set.{name}() takes no keyword arguments", node)
        if name in ("add", "remove", "discard") and len(args) != 1:
            raise self.state.error("type", f"set.{name}() takes exactly one argument", node)
        if name == "add":
            self.new_set([args[0]], node)  # held and hashable
            self.quotas.items(len(owner) + 1, node, "set", made=1)
            owner.add(args[0])
            return None
        if name in ("remove", "discard"):
            self.new_set([args[0]], node)  # held and hashable, as add's
            return self._call(getattr(owner, name), args, {}, node)
        if name in ("pop", "clear", "copy"):
            if args:
                raise self.state.error("type", f"set.{name}() takes no arguments", node)
            return self._call(getattr(owner, name), (), {}, node)
        others = [set(self.items_of(a, node)) if not isinstance(a, set) else a for a in args]
        if name in _SET_GROWS:
            grown = len(owner) + sum(len(o) for o in others)
            self.quotas.items(grown, node, "set", made=0)
            for other in others:
                self.new_set(list(other), node)
        result = self._call(getattr(owner, name), tuple(others) or args, {}, node)
        if isinstance(result, set):
            self.quotas.items(len(result), node, "set")
        return result

    def items_of(self, iterable, node) -> list:
        """Every item of `iterable` as a list, sized before and while it is read."""
        known = self.iteration.length(iterable)
        if known is not None:
            self.quotas.items(known, node, "list", made=0)
        out, quotas = [], self.quotas
        for item in self.iteration.over(iterable, node):
            quotas.steps += 1  # Quotas.step, inline
            if quotas.steps > quotas.max_steps:
                raise quotas.too_many_steps(node)
            out.append(item)
            if known is None and len(out) > quotas.max_items:
                quotas.items(len(out), node, "list", made=0)
        self.quotas.items(len(out), node, "list")
        return out

    def _list_method(self, owner: list, name: str, args, kwargs, node):
        if name in ("append", "insert"):
            held(self.state, args[-1] if args else None, node, "a list")
            self.quotas.items(len(owner) + 1, node, "list", made=1)
        elif name == "extend" and len(args) == 1:
            new = self.items_of(args[0], node)
            for item in new:
                held(self.state, item, node, "a list")
            self.quotas.items(len(owner) + len(new), node, "list", made=0)
            args = (new,)
        elif name == "copy":
            self.quotas.items(len(owner), node, "list")
        elif name == "sort":
            return self.sort(owner, kwargs.get("key"), kwargs.get("reverse", False), args, node)
        return self._call(getattr(owner, name), args, kwargs, node)

    def sort(self, items: list, key, reverse, args, node) -> None:
        """list.sort (and sorted()): keys are numbers, strings or tuples of them."""
        if args:
            raise self.state.error("type", "sort() takes key= and reverse= only", node)
        keys = [item if key is None else self.call_value(key, (item,), {}, node) for item in items]
        self.bounded(keys, node, "sorting")
        if tensors_in((keys,), {}):  # a tensor inside a key too: `[t]`, `(1, t)`
            raise self.state.error(
                "type",
                "sorting compares numbers and strings here; for tensors use torch.sort, "
                "or sort by key=lambda t: t.item()",
                node,
            )
        order = list(range(len(items)))
        try:
            order.sort(key=keys.__getitem__, reverse=bool(reverse))
        except TypeError as exc:
            raise self.fail(exc, node) from None
        items[:] = [items[i] for i in order]

    def _dict_method(self, owner: dict, name: str, args, kwargs, node):
        if name in ("get", "pop", "setdefault") and args:
            self.key(args[0], node)
        if name in ("keys", "values", "items"):
            self.quotas.items(len(owner), node, "list")
            return list(getattr(owner, name)())
        if name == "copy":
            self.quotas.items(len(owner), node, "dict")
        elif name == "update":
            other = dict(self.pairs(args[0], node)) if args else {}
            other.update(kwargs)
            for v in other.values():
                held(self.state, v, node, "a dict")
            self.quotas.items(len(owner) + len(other), node, "dict", made=len(other))
            args, kwargs = (other,), {}
        elif name == "setdefault":
            held(self.state, args[-1] if len(args) > 1 else None, node, "a dict")
            self.quotas.items(len(owner) + 1, node, "dict", made=1)
        return self._call(getattr(owner, name), args, kwargs, node)

    def pairs(self, source, node) -> list[tuple]:
        """(key, value) pairs of a dict, or of an iterable of two-item sequences."""
        if isinstance(source, dict):
            return list(source.items())
        out = []
        for item in self.items_of(source, node):
            k, v = self.iteration.unpack(item, 2, node)
            out.append((self.key(k, node), v))
        return out

    def _str_method(self, owner: str, name: str, args, kwargs, node):
        if name == "join" and len(args) == 1:
            parts = self.items_of(args[0], node)
            self.quotas.chars(
                sum(len(p) if isinstance(p, str) else 0 for p in parts)
                + len(owner) * max(len(parts) - 1, 0),
                node,
            )
            args = (parts,)
        elif name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
            found = owner.count(args[0]) if args[0] else len(owner) + 1
            self.quotas.chars(len(owner) + found * max(len(args[1]) - len(args[0]), 0), node)
        elif name in _SIZED and args and isinstance(args[0], int):
            self.quotas.chars(max(args[0], len(owner)), node)
        elif name in ("split", "rsplit", "splitlines"):
            self.quotas.items(len(owner) + 1, node, "list", made=0)
        result = self._call(getattr(owner, name), args, kwargs, node)
        if isinstance(result, list):
            self.quotas.items(len(result), node, "list")
        return result


def append(state: RunState, quotas: Quotas, owner: list, value, node) -> None:
    """`owner.append(value)`: what Containers' list methods do for it, without the
    look-ups (a plain item needs no `held`)."""
    if type(value) not in PLAIN_ITEMS:
        held(state, value, node, "a list")
    quotas.items(len(owner) + 1, node, "list", made=1)
    owner.append(value)
