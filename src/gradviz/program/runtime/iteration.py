"""Iterating a program's values, and their truth: what `for`, comprehensions, unpacking,
`if`, `while`, `and`/`or` and the built-ins that read a whole sequence share.

`Iteration.over` walks lists, tuples, strings, ranges, dicts (their keys), sizes, a
tensor's first dimension (each row made through gradviz.program.runtime.torch_calls.Library.call, under
the budget, as `t[i]` would be), the lazy `LazySequence`s that enumerate(), zip() and
reversed() give, and the program's objects through their own next() (a loader, a layer's
parameters, a program's generator: gradviz.program.runtime.generators). Nothing else can be
iterated: no Python iterator or generator object ever reaches a program (a generator's
frame would be a way out). `length` is what a loop may
know before its first pass (gradviz.program.budgets.language_caps.Quotas.planned refuses `range(10**9)`
then). `truth` is `bool()` as Python applies it, a tensor's with PyTorch's own message
when it has more than one value.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from gradviz.program.budgets.object_sizes import MAX_NESTING
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.errors import runtime_error
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, type_name

PLAIN_SEQUENCES = (list, tuple, str, range, dict, set, torch.Size)
# The exact types whose Python iterators never raise (a list changed while it is read goes
# on, as in Python; a dict or a set changed raises, which `over` makes the program's error)
UNCHANGING_ITERATORS = frozenset({list, tuple, str, range})


@dataclass(frozen=True, eq=False)
class LazySequence:
    """What enumerate(), zip() and reversed() give: read lazily by a loop, never a Python
    iterator a program could reach into."""

    kind: str  # enumerate | zip | reversed
    sources: tuple
    start: int = 0

    type_label = "lazy sequence"

    def __repr__(self) -> str:
        return f"<{self.kind} object>"


class Iteration:
    """Iterates a program's values and decides their truth."""

    def __init__(self, state: RunState, library: Library):
        self.state = state
        self.library = library

    def over(self, value, node) -> Iterator:
        """The items of `value`, in order."""
        if type(value) in UNCHANGING_ITERATORS:  # their iterators raise nothing to guard
            return iter(value)
        if isinstance(value, PLAIN_SEQUENCES):
            return self._guarded(iter(value), node)
        if isinstance(value, torch.Tensor):
            return self._rows(value, node)
        if isinstance(value, LazySequence):
            return self._sequence(value, node)
        if isinstance(value, ProgramObject):  # a loader's batches, a layer's parameters
            return self._objects(value, node)
        raise self.state.error("type", f"a {type_name(value)} cannot be iterated over", node)

    def length(self, value) -> int | None:
        """How many items `over` will give, where that is known before the first."""
        if isinstance(value, range):
            return range_length(value)
        if isinstance(value, PLAIN_SEQUENCES):
            return len(value)
        if isinstance(value, torch.Tensor):
            return value.shape[0] if value.dim() else None
        if isinstance(value, LazySequence):
            lengths = [self.length(s) for s in value.sources]
            if any(n is None for n in lengths):
                return None
            return min(lengths) if lengths else 0
        return None

    def passes(self, value) -> int | None:
        """How many passes a loop over `value` will run, where known before the first: its
        `length`, or one of the program's objects' own count (a loader's batches), through
        enumerate(), zip() and reversed() too."""
        if isinstance(value, LazySequence):
            counts = [self.passes(s) for s in value.sources]
            return None if None in counts else min(counts, default=0)
        known = self.length(value)
        if known is None and isinstance(value, ProgramObject):
            return value.passes()
        return known

    def truth(self, value, node) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, torch.Tensor):
            try:
                return bool(value)
            except (RuntimeError, ValueError) as exc:
                raise runtime_error(self.state, exc, node, "truth value", (value,)) from None
        if isinstance(value, ProgramObject):
            decided = value.truth(node)
            return True if decided is None else decided
        return bool(value)

    def unpack(self, value, count: int, node) -> list:
        """Exactly `count` items of `value`, for `a, b = value`."""
        known = self.length(value)
        if known is not None and known != count:
            raise self.state.error(
                "type",
                f"{count} names on the left but {known} values on the right",
                node,
            )
        if known is None and not isinstance(value, LazySequence | ProgramObject):
            raise self.state.error("type", f"cannot unpack a {type_name(value)} into names", node)
        items = []
        for item in self.over(value, node):
            items.append(item)
            if len(items) > count:
                break
        if len(items) != count:
            raise self.state.error(
                "type", f"{count} names on the left but {len(items)} values on the right", node
            )
        return items

    def unpack_into(self, value, elts: list[ast.expr], node) -> list:
        """The values `elts` take in `a, b = value` or `first, *rest = value` (the starred
        one a list of what is left over, within the item cap on one list)."""
        star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), None)
        if star is None:
            return self.unpack(value, len(elts), node)
        need = len(elts) - 1
        known = self.length(value)
        most = self.state.limits.max_container_length + need
        if known is None and not isinstance(value, LazySequence | ProgramObject):
            raise self.state.error("type", f"cannot unpack a {type_name(value)} into names", node)
        if known is not None and known > most:
            raise self.state.error(
                "limit",
                f"this would make a list of {known - need:,} items; the limit is "
                f"{self.state.limits.max_container_length:,} items per list, tuple, dict or set",
                node,
            )
        items = []
        for item in self.over(value, node):
            items.append(item)
            if len(items) > most:
                return self.unpack_into(range(len(items) + 1), elts, node)  # the cap's error
        if len(items) < need:
            raise self.state.error(
                "type",
                f"not enough values to unpack (expected at least {need}, got {len(items)})",
                node,
            )
        after = len(items) - (len(elts) - 1 - star)
        return [*items[:star], items[star:after], *items[after:]]

    def assign(self, target: ast.AST, value, node, store: Callable[[str, object], None]) -> None:
        """Bind a loop or unpacking target (a name, or nested tuples of names, one of them
        perhaps starred)."""
        if isinstance(target, ast.Starred):
            target = target.value
        if isinstance(target, ast.Name):
            store(target.id, value)
            return
        elts = target.elts  # checked: a tuple or list of names
        for elt, item in zip(elts, self.unpack_into(value, elts, target), strict=True):
            self.assign(elt, item, node, store)

    # -- the iterators

    def _guarded(self, it: Iterator, node) -> Iterator:
        """Python's own iterator, with its errors (a dict changed while read) as the program's."""
        while True:
            try:
                item = next(it)
            except StopIteration:
                return
            except (RuntimeError, TypeError, ValueError) as exc:
                raise self.state.error("runtime", f"{type(exc).__name__}: {exc}", node) from None
            yield item

    def start(self, value, node) -> ProgramObject:
        """iter(loader), iter(net.parameters()): the object's own iterator; iter(items) of
        a list, tuple, string, range or dict: a `SequenceIterator` (Python's own iterator
        held inside it, never reached by the program)."""
        if isinstance(value, PLAIN_SEQUENCES):
            return SequenceIterator(self, value, node)
        if not isinstance(value, ProgramObject):
            raise self.state.error(
                "type",
                f"iter() takes a data loader or a layer's parameters here, not a "
                f"{type_name(value)}: loop over it with `for` instead",
                node,
            )
        return value.iterate(node)

    def advance(self, iterator, node, default: list | None = None):
        """next(it) / next(it, default): the next value, or `default[0]` at the end."""
        if not isinstance(iterator, ProgramObject):
            raise self.state.error(
                "type", f"next() takes an iterator from iter(), not a {type_name(iterator)}", node
            )
        try:
            return iterator.next_value(node)
        except StopIteration:
            if default is None:
                raise self.state.error(
                    "runtime", "StopIteration: the iterator is exhausted", node
                ) from None
            return default[0]

    def _objects(self, obj: ProgramObject, node) -> Iterator:
        """The values of one of the program's objects, through its own iterator (which
        answers only its table: gradviz.program.objects.arguments, .data), its Python
        errors the program's as `_guarded` makes them (one generator, not two, to resume
        at each value)."""
        it = None
        while True:
            try:
                if it is None:
                    it = obj.iterate(node)
                item = it.next_value(node)
            except StopIteration:
                return
            except (RuntimeError, TypeError, ValueError) as exc:
                raise self.state.error("runtime", f"{type(exc).__name__}: {exc}", node) from None
            yield item

    def _rows(self, tensor: torch.Tensor, node) -> Iterator:
        if tensor.dim() == 0:
            raise self.state.error("type", "iteration over a 0-d tensor (it has no rows)", node)
        for i in range(tensor.shape[0]):
            yield self.library.call("iteration", operator.getitem, (tensor, i), {}, node, "meta")

    def _sequence(self, seq: LazySequence, node) -> Iterator:
        if seq.kind == "enumerate":
            yield from enumerate(self.over(seq.sources[0], node), seq.start)
        elif seq.kind == "zip":
            yield from zip(*(self.over(s, node) for s in seq.sources), strict=False)
        else:  # reversed: of something with a length and items by index
            source = seq.sources[0]
            if isinstance(source, torch.Tensor):
                rows = self._rows(source, node)
                yield from reversed(list(rows))
            else:
                yield from self._guarded(reversed(source), node)


class SequenceIterator(ProgramObject):
    """iter(items) of a plain sequence (a class's `__iter__` returning iter(self.data)):
    next() reads Python's own iterator over it, with its errors as the program's."""

    def __init__(self, iteration: Iteration, items, node):
        super().__init__(iteration.state)
        self.items = iteration._guarded(iter(items), node)
        self.kind = type(items).__name__

    def describe(self) -> str:
        return f"{self.kind}_iterator"

    def iterate(self, node) -> ProgramObject:
        return self

    def next_value(self, node):
        return next(self.items)


def oversized(value, max_items: int, max_depth: int = MAX_NESTING) -> str | None:
    """Why `value` is too large to hand to code that reads it all in C (torch reading a
    nested list, Python hashing a tuple or comparing two lists), or None: "deep" if it nests
    lists, tuples or dicts more than `max_depth` deep, "big" if read in full (a list that
    holds another twice is read twice, one that holds itself forever) it has more than
    `max_items` items. A range counts as its length. Each container is looked at once."""
    if not isinstance(value, CONTAINERS):
        return None
    done: dict[int, tuple[int, int]] = {}  # id -> (items read in full, nesting depth)
    open_: set[int] = set()  # containers whose insides are being read
    stack: list[tuple[object, bool]] = [(value, False)]
    while stack:
        v, finished = stack.pop()
        key = id(v)
        if finished:
            open_.discard(key)
            items = () if isinstance(v, range) else _items(v)
            size = range_length(v) if isinstance(v, range) else len(items)
            depth = 1
            for item in items:
                if isinstance(item, CONTAINERS):
                    inner_size, inner_depth = done[id(item)]
                    size, depth = size + inner_size, max(depth, inner_depth + 1)
            if depth > max_depth:
                return "deep"
            if size > max_items:
                return "big"
            done[key] = (size, depth)
        elif key in open_:
            return "big"  # it holds itself
        elif key not in done:
            kind = type(v)
            if (kind is list or kind is tuple) and LEAVES.issuperset(map(type, v)):
                # no container inside: what its finished pass below comes to, at once
                if max_depth < 1:
                    return "deep"
                if len(v) > max_items:
                    return "big"
                done[key] = (len(v), 1)
                continue
            open_.add(key)
            stack.append((v, True))
            if not isinstance(v, range):
                stack.extend((i, False) for i in _items(v) if isinstance(i, CONTAINERS))
    return None


def _items(v) -> tuple | list:
    if isinstance(v, dict):
        return (*v.keys(), *v.values())
    return tuple(v) if isinstance(v, set) else v


CONTAINERS = (list, tuple, dict, set, range)
# The exact types of the items that are no container (a list of only these is read at once)
LEAVES = frozenset({int, float, bool, str, type(None), torch.Tensor})


def range_length(r: range) -> int:
    """len(range) without Python's OverflowError for ranges longer than sys.maxsize."""
    try:
        return len(r)
    except OverflowError:
        return max(0, (r.stop - r.start + r.step + (-1 if r.step > 0 else 1)) // r.step)
