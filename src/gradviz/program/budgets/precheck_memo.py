"""The size pre-check's verdicts of one run, kept so a loop does not measure the same call twice.

`Budget.precheck` (gradviz.program.budgets.precheck) learns what a call would make (each output's
shape, count, element size and dtype) and how much matrix work it does by running it on
shape-only tensors on the meta device under torch's FLOP counter. That is the same for
every call with the same function, the same tensor shapes, strides, dtypes and devices and
the same other arguments: `Verdicts` keeps it under that key, so the 1,000 passes of a
training loop measure `net(x)` once. Only the measuring is skipped: every call, found here
or not, is still charged to the budgets and refused over a cap by `Budget.account`.

A call is keyed only when all of its arguments are plain (tensors, numbers, strings, None,
dtypes, devices, slices, and tuples, lists and dicts of them, `MAX_KEY_ITEMS` in all); anything
else (a program's object, a huge list) is measured every time, as before. A layer's forward
(a `Metered` call) is keyed by `Metered.cache_key`: the layers inside it, their modes, and
(through its arguments) its parameters' shapes. The store is per run and holds at most
`MAX_VERDICTS` verdicts, the oldest dropped first.
"""

from __future__ import annotations

from collections.abc import Hashable

import torch

from gradviz.program.allowlists import tables

MAX_VERDICTS = 1024  # verdicts one run keeps
MAX_KEY_ITEMS = 256  # values (tensors, numbers, containers) one call's key may hold

# One call's verdict: [(shape, numel, element size, dtype) per output], FLOPs of work.
Verdict = tuple[list[tuple[torch.Size, int, int, torch.dtype]], float]

_PLAIN = (bool, int, str, bytes, complex, type(None), type(...), torch.dtype, torch.device)
_PLAIN += (torch.layout, torch.memory_format)


class Unkeyable(Exception):
    """An argument the key cannot hold: the call is measured, not looked up."""


def call_key(fn, args: tuple, kwargs: dict) -> Hashable | None:
    """The key of fn(*args, **kwargs) for the pre-check, or None when it has none."""
    try:
        if _metered(fn):  # a layer's forward: its layers, not the call object
            head = fn.cache_key()
            if head is None:
                return None
        else:
            hash(fn)
            head = fn
        budget = [MAX_KEY_ITEMS]
        if fn is _TENSOR and len(args) == 1 and not kwargs:  # its numbers by their types
            keyed = (_data_key(args[0], budget), *[_key(a, budget) for a in args[1:]])
        else:
            keyed = [_key(a, budget) for a in args]
        return (
            head,
            torch.get_default_dtype(),
            tuple(keyed),
            tuple(sorted([(k, _key(v, budget)) for k, v in kwargs.items()])) if kwargs else (),
        )
    except (Unkeyable, TypeError, RuntimeError):
        return None


_METERED: dict[type, bool] = {}  # by the type of a call: whether it has cache_key


def _metered(fn) -> bool:
    """Whether `fn` is keyed by its cache_key (a Metered call: the method is its class's),
    asked once per type (hasattr on a torch function raises and catches an error)."""
    kind = type(fn)
    known = _METERED.get(kind)
    if known is None:
        known = _METERED[kind] = callable(getattr(kind, "cache_key", None))
    return known


def _key(v, budget: list[int]) -> Hashable:
    budget[0] -= 1
    if budget[0] < 0:
        raise Unkeyable
    if isinstance(v, torch.Tensor):
        return (type(v), v.shape, v.stride(), v.dtype, v.device, v.layout)
    if isinstance(v, float):
        return (float, v.hex())  # -0.0 and 0.0 apart, every NaN alike
    if isinstance(v, _PLAIN):
        return (type(v), v)
    if isinstance(v, torch.Generator):
        return (torch.Generator,)  # the pre-check never draws from it
    if type(v) in (tuple, list, torch.Size):
        return (type(v), tuple(_key(x, budget) for x in v))
    if type(v) is dict:
        return (dict, tuple((_key(k, budget), _key(x, budget)) for k, x in v.items()))
    if type(v) is slice:  # x[1:3], x[:, 0]
        return (slice, _key(v.start, budget), _key(v.stop, budget), _key(v.step, budget))
    raise Unkeyable


def _data_key(v, budget: list[int]) -> Hashable:
    """torch.tensor's data as its verdict depends on it: the nesting of its lists and the
    type of each number (which decide the shape and the dtype), and whether an integer fits
    in int64 (one that does not is refused by torch); not the numbers themselves, so a loop
    making a tensor of each batch's indices is measured once. Only for torch.tensor(data)
    alone: given a dtype, a number's value can decide whether it converts."""
    if type(v) in _NUMBERS:
        budget[0] -= 1
        if budget[0] < 0:
            raise Unkeyable
        return (type(v), type(v) is not int or _INT64[0] <= v <= _INT64[1])
    if type(v) in (tuple, list):
        budget[0] -= 1
        if budget[0] < 0:
            raise Unkeyable
        return (type(v), tuple([_data_key(x, budget) for x in v]))
    return _key(v, budget)


_TENSOR = tables.TORCH_FUNCTIONS["tensor"].target
_NUMBERS = frozenset({bool, int, float, complex})
_INT64 = (-(2**63), 2**63 - 1)


class Verdicts:
    """One run's pre-check verdicts by call key, at most MAX_VERDICTS of them."""

    def __init__(self, size: int = MAX_VERDICTS):
        self.size = size
        self.found: dict[Hashable, Verdict] = {}

    def get(self, key: Hashable | None) -> Verdict | None:
        return None if key is None else self.found.get(key)

    def put(self, key: Hashable | None, verdict: Verdict) -> None:
        if key is None:
            return
        if len(self.found) >= self.size:
            del self.found[next(iter(self.found))]
        self.found[key] = verdict
