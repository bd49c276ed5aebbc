"""A thread-safe LRU cache bounded by bytes, entries and age, for values the server keeps.

The server is shared by every visitor: a cache bounded only by its number of entries can
hold a few huge values (a 40 MB PNG each) and take the host's memory. `ByteLRU` counts
each value's size with a size function and drops the least recently used entries past
`max_bytes`, and entries older than `ttl` seconds. A value larger than `max_bytes` is
not kept. No Streamlit and no torch here: pages hold one instance with st.cache_resource.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


def byte_size(value: object) -> int:
    """The size of bytes/str values (len), 1 for anything else: the default size function."""
    if isinstance(value, (bytes, bytearray, str)):
        return len(value)
    return 1


class ByteLRU(Generic[V]):
    """key -> value, least recently used dropped first past max_bytes or max_entries."""

    def __init__(
        self,
        max_bytes: int,
        ttl: float | None = None,
        max_entries: int | None = None,
        size: Callable[[V], int] = byte_size,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Limits in bytes (counted by `size`), seconds since stored, and entries."""
        self.max_bytes = int(max_bytes)
        self.ttl = ttl
        self.max_entries = max_entries
        self._size = size
        self._clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[V, int, float]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        """How many entries are held now (expired ones included until touched)."""
        with self._lock:
            return len(self._items)

    @property
    def total_bytes(self) -> int:
        """The summed size of the values held, to check the bound."""
        with self._lock:
            return self._bytes

    def get(self, key: Hashable, default: V | None = None) -> V | None:
        """The value stored under key, or default when missing or expired."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return default
            value, _, stored = item
            if self.ttl is not None and self._clock() - stored > self.ttl:
                self._drop(key)
                return default
            self._items.move_to_end(key)
            return value

    def __contains__(self, key: Hashable) -> bool:
        """True when get(key) would find a live value."""
        sentinel = object()
        return self.get(key, sentinel) is not sentinel  # type: ignore[arg-type]

    def put(self, key: Hashable, value: V) -> bool:
        """Store value; False (and nothing kept) when it alone exceeds max_bytes."""
        size = max(0, int(self._size(value)))
        with self._lock:
            if key in self._items:
                self._drop(key)
            if size > self.max_bytes:
                return False
            self._items[key] = (value, size, self._clock())
            self._bytes += size
            self._evict()
            return True

    def pop(self, key: Hashable) -> None:
        """Forget key, if held."""
        with self._lock:
            if key in self._items:
                self._drop(key)

    def clear(self) -> None:
        """Forget everything (tests, and a server that wants its memory back)."""
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def _drop(self, key: Hashable) -> None:
        _, size, _ = self._items.pop(key)
        self._bytes -= size

    def _evict(self) -> None:
        now = self._clock()
        if self.ttl is not None:
            for key in [k for k, (_, _, t) in self._items.items() if now - t > self.ttl]:
                self._drop(key)
        while self._items and (
            self._bytes > self.max_bytes
            or (self.max_entries is not None and len(self._items) > self.max_entries)
        ):
            self._drop(next(iter(self._items)))


class _Flight:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: object = None
        self.ok = False


class SingleFlight(Generic[V]):
    """Equal keys asked at the same time run once: while one call for a key runs, the others
    for that key wait for it and get its value, instead of doing the same work again (thirty
    sessions submitting the exercise's program at the same moment, before it is cached).

    A waiter gets the first call's value only when `shareable(value)` says so; when the first
    call raised or its value is not shareable (a run a worker did not finish), each waiter
    runs the work itself, as if alone."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[Hashable, _Flight] = {}

    def run(
        self, key: Hashable, work: Callable[[], V], shareable: Callable[[V], bool] = lambda v: True
    ) -> tuple[V, bool]:
        """(value, whether this call ran `work` itself)."""
        with self._lock:
            flight = self._flights.get(key)
            first = flight is None
            if first:
                flight = self._flights[key] = _Flight()
        if not first:
            flight.done.wait()
            if flight.ok and shareable(flight.value):  # type: ignore[arg-type]
                return flight.value, False  # type: ignore[return-value]
            return work(), True
        try:
            flight.value = work()
            flight.ok = True
            return flight.value, True  # type: ignore[return-value]
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()

    def running(self) -> int:
        """How many keys are being worked on now (tests)."""
        with self._lock:
            return len(self._flights)
