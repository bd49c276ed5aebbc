"""The one timer for repeated calls: warm-up calls first, then each timed call on a stopwatch.

`time_calls(work, repeats=, warmup=, stopwatch=)` gives the seconds of each timed call. A
stopwatch says how a call is timed, and what it waits for:

- `WallClock(clock, synchronize, wait_after)`: a clock (time.perf_counter) read after
  `synchronize()` has waited for work queued before the call, and, with `wait_after`, after
  it has waited for the call's own queued work (what the call costs the device); without it,
  the time until the call returns to Python (what a hidden synchronisation costs the host).
  On a CPU `synchronize` is `no_sync`.
- Anything with `settle()`, `start()` and `stop() -> seconds`: gradviz.devices.transfer's
  CUDA events, timed on the GPU itself.

`settle()` runs once after the warm-up, so the first timed call does not pay for the warm-up's
queued work. Used by gradviz.speed.measure (the Speed page's figures, then median and spread
by torch.utils.benchmark) and gradviz.devices.transfer (the Devices page's costs). No torch
here: callers with torch pass the device's synchronize.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol


def no_sync() -> None:
    """What waits for queued work on a CPU: nothing (its work is done when a call returns)."""
    return None


class Stopwatch(Protocol):
    def settle(self) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> float: ...


class WallClock:
    """A clock read between synchronizes (see the module's docstring)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        synchronize: Callable[[], None] = no_sync,
        wait_after: bool = True,
    ) -> None:
        self.clock = clock
        self.synchronize = synchronize
        self.wait_after = wait_after
        self.started = 0.0

    def settle(self) -> None:
        self.synchronize()

    def start(self) -> None:
        self.synchronize()
        self.started = self.clock()

    def stop(self) -> float:
        if self.wait_after:
            self.synchronize()
        return self.clock() - self.started


def time_calls(
    work: Callable[[], Any],
    *,
    repeats: int = 5,
    warmup: int = 1,
    stopwatch: Stopwatch | None = None,
) -> list[float]:
    """Seconds of each of `repeats` calls of work(), after `warmup` untimed calls, on
    `stopwatch` (default: WallClock(), perf_counter on a CPU)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if warmup < 0:
        raise ValueError(f"warmup must be 0 or more, got {warmup}")
    watch = WallClock() if stopwatch is None else stopwatch
    for _ in range(warmup):
        work()
    watch.settle()
    times = []
    for _ in range(repeats):
        watch.start()
        work()
        times.append(watch.stop())
    return times
