"""What plain data costs once unpickled: the bytes a worker's result takes in the server.

A pickle can be small and unpickle big: an empty list is 2 bytes pickled and 56 in memory,
so a 5 MB result of 2.5 million empty lists took 160 MB in the server. `decoded_size` counts
a value as the server will hold it after pickle.loads: every list, dict, tuple, set, string,
number and dataclass instance at its CPython size (sys.getsizeof, with the container's
slots; a list, dict or set as unpickling fills it, so that the count does not depend on
the process that made the value), each object once where pickle sends it once (containers, strings and instances are
memoised by pickle; numbers are not, so each occurrence of a float counts), and nothing for
what the interpreter shares (None, booleans, small integers, the empty string and one-
character strings, the empty tuple). Iterative, so deep nesting costs no recursion; nesting
deeper than `max_depth` is refused, as is a type that is not plain data.

No torch and no Streamlit: the worker counts its result with it, the server its cache.
"""

from __future__ import annotations

import dataclasses
import functools
import sys

MAX_DEPTH = 64  # lists within lists within ... : a tensor has at most 64 dimensions

_SHARED_INTS = range(-5, 257)  # CPython's cached small integers
_FLOAT = sys.getsizeof(0.0)


_LIST = sys.getsizeof([])


def _list_size(n: int) -> int:
    """A list of n items as unpickling builds it: extended from empty, so over-allocated as
    CPython's list_resize does (n + n/8 + 6 slots, rounded down to 4)."""
    return _LIST + 8 * ((n + (n >> 3) + 6) & ~3 if n else 0)


@functools.lru_cache(maxsize=512)
def _built_size(kind: type, n: int) -> int:
    """A dict or set of n items filled one at a time, as unpickling fills it. Not the size of
    the one at hand, which depends on its history (a dict that was larger, an instance's
    dict sharing its keys with others of its class): the count is the same in every process."""
    return sys.getsizeof(kind.fromkeys(range(n)) if kind is dict else kind(range(n)))


_STR = sys.getsizeof("")


def _str_size(text: str) -> int:
    """A string as unpickling makes it, from its UTF-8: without the UTF-8 copy that CPython
    keeps beside a non-ASCII string once something (pickling it, for one) has asked for it."""
    if text.isascii():
        return _STR + len(text)
    return sys.getsizeof(text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass"))


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
                    total += _str_size(obj)
            elif kind is bytes:
                total += getsizeof(obj)
            elif kind is list:
                total += _list_size(len(obj))
                inner.extend(obj)
            elif kind is tuple:
                total += getsizeof(obj) if obj else 0
                inner.extend(obj)
            elif kind in (set, frozenset):
                total += _built_size(set, len(obj))
                inner.extend(obj)
            elif kind is dict:
                total += _built_size(dict, len(obj))
                inner.extend(obj.keys())
                inner.extend(obj.values())
            elif dataclasses.is_dataclass(kind):
                fields = getattr(obj, "__dict__", None)
                if fields is None:
                    raise NotPlain(f"a {kind.__name__} without a __dict__ is not plain data")
                total += getsizeof(obj) + _built_size(dict, len(fields))
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
