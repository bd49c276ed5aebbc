"""What plain data costs once unpickled: the bytes a worker's result takes in the server.

A pickle can be small and unpickle big: an empty list is 2 bytes pickled and 56 in memory,
so a 5 MB result of 2.5 million empty lists took 160 MB in the server. `decoded_size` counts
a value as the server will hold it after pickle.loads: every list, dict, tuple, set, string,
number and dataclass instance at its CPython size (sys.getsizeof, with the container's
slots; a list as unpickling grows it), each object once where pickle sends it once (containers, strings and instances are
memoised by pickle; numbers are not, so each occurrence of a float counts), and nothing for
what the interpreter shares (None, booleans, small integers, the empty string and one-
character strings, the empty tuple). Iterative, so deep nesting costs no recursion; nesting
deeper than `max_depth` is refused, as is a type that is not plain data.

No torch and no Streamlit: the worker counts its result with it, the server its cache.
"""

from __future__ import annotations

import dataclasses
import sys

MAX_DEPTH = 64  # lists within lists within ... : a tensor has at most 64 dimensions

_SHARED_INTS = range(-5, 257)  # CPython's cached small integers
_FLOAT = sys.getsizeof(0.0)


_LIST = sys.getsizeof([])


def _list_size(n: int) -> int:
    """A list of n items as unpickling builds it: extended from empty, so over-allocated as
    CPython's list_resize does (n + n/8 + 6 slots, rounded down to 4)."""
    return _LIST + 8 * ((n + (n >> 3) + 6) & ~3 if n else 0)


class NotPlain(ValueError):
    """The value holds something that is not plain data, or nests deeper than allowed."""


def decoded_size(value: object, limit: int | None = None, max_depth: int = MAX_DEPTH) -> int:
    """The bytes `value` takes once unpickled; counting stops early (returning more than
    `limit`) as soon as it passes `limit`. NotPlain: a type outside plain data and
    dataclasses, or nesting deeper than max_depth. Walked one level of nesting at a time."""
    total = 0
    seen: set[int] = set()
    getsizeof = sys.getsizeof
    level: list = [value]
    for _ in range(max_depth + 1):
        inner: list = []
        for obj in level:
            kind = type(obj)
            if obj is None or kind is bool:
                continue
            if kind is float:
                total += _FLOAT
                continue
            if kind is int:
                if obj not in _SHARED_INTS:
                    total += getsizeof(obj)
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if kind is str:
                if len(obj) > 1 or (obj and ord(obj) > 255):
                    total += getsizeof(obj)
            elif kind is bytes:
                total += getsizeof(obj)
            elif kind is list:
                total += _list_size(len(obj))
                inner.extend(obj)
            elif kind in (tuple, set, frozenset):
                if obj or kind is not tuple:
                    total += getsizeof(obj)
                inner.extend(obj)
            elif kind is dict:
                total += getsizeof(obj)
                inner.extend(obj.keys())
                inner.extend(obj.values())
            elif dataclasses.is_dataclass(kind):
                fields = getattr(obj, "__dict__", None)
                if fields is None:
                    raise NotPlain(f"a {kind.__name__} without a __dict__ is not plain data")
                total += getsizeof(obj) + getsizeof(fields)
                inner.extend(fields.keys())
                inner.extend(fields.values())
            else:
                raise NotPlain(f"a {kind.__name__} is not plain data")
            if limit is not None and total > limit:
                return total
        if not inner:
            return total
        level = inner
    raise NotPlain(f"the result nests deeper than {max_depth} levels")
