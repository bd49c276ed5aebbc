"""The `time` module a program may import (time, perf_counter, a capped sleep), and the
lesson its clocks teach about GPUs.

Seed 003 times GPU work with `time.time()` on both sides and no `torch.cuda.synchronize()`.
CUDA queues work and returns at once, so such a figure measures launching the work, not
doing it. ClockWatch follows a run's calls: when the clock is read again while CUDA work
launched since the last read may still be running (nothing waited for the GPU in between),
it leaves a note beside the result, on simulated CUDA as on a real GPU.
"""

from __future__ import annotations

import time

import torch

from gradviz.program.allowlists.tables import FnSpec
from gradviz.program.runtime.values import Namespace

MAX_SLEEP_S = 1.0  # one call's longest sleep; the run's own time limit bounds them all


def sleep(seconds) -> None:
    """time.sleep, held to MAX_SLEEP_S a call."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"time.sleep takes a number of seconds, not {type(seconds).__name__}")
    if seconds != seconds:
        raise ValueError("time.sleep takes a number of seconds, not NaN")
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    if seconds > MAX_SLEEP_S:
        raise ValueError(
            f"time.sleep({seconds:g}) is longer than this app allows: at most {MAX_SLEEP_S:g} s "
            "a call here (a program shares its worker's time with other visitors)"
        )
    time.sleep(seconds)


TIME = Namespace(
    "time",
    {
        "time": FnSpec(time.time, check="bounded"),
        "perf_counter": FnSpec(time.perf_counter, check="bounded"),
        "monotonic": FnSpec(time.monotonic, check="bounded"),
        "sleep": FnSpec(sleep, check="bounded"),
    },
)
CLOCKS = frozenset({"time.time", "time.perf_counter", "time.monotonic"})
# Calls that wait for the GPU's queue to finish before they return.
WAITS = ("torch.cuda.synchronize", ".item()", ".cpu()", ".tolist()", ".numpy()")
MEASURED = "measured on an H100 for seed 003's loop: 0.39 s without synchronize, 0.79 s with it"


class ClockWatch:
    """Clock reads, CUDA work launched and waits, in the order a run makes them."""

    def __init__(self, notes: list[str], simulated: bool) -> None:
        self.last_read: int | None = None  # the line of the last clock read
        self.pending = False  # CUDA work launched since the last wait
        self.notes = notes  # where the run's notes beside the result go
        self.simulated = simulated

    def after_call(self, label: str, args: tuple, result, line: int, device_of) -> None:
        """Called for a clock read (`CLOCKS`) and, once the clock has been read, for every
        call: before the first read nothing is pending (only a read sets `pending`), so no
        other call has anything to change."""
        if label in CLOCKS:
            if self.last_read is not None and self.pending:
                self._note(self.last_read, line)
            self.last_read = line
            return
        if label in WAITS:
            if label == "torch.cuda.synchronize" or _on_cuda(args[:1], device_of):
                self.pending = False
            return
        if self.last_read is not None and _on_cuda((result,), device_of):
            self.pending = True

    def _note(self, start: int, end: int) -> None:
        note = (
            f"Lines {start}–{end}: the clock was read while CUDA work started in between may "
            "still be running (nothing waited for the GPU: no torch.cuda.synchronize()). A GPU "
            "queues work and returns at once, so on a real GPU this figure measures launching "
            f"the work, not doing it ({MEASURED}). Call torch.cuda.synchronize() before "
            "reading the clock; the Speed page times it both ways."
        )
        if self.simulated:
            note += (
                " Here CUDA is simulated: the figure times this CPU doing the work plus the "
                "simulation's own bookkeeping, not a GPU."
            )
        if note not in self.notes:
            self.notes.append(note)


def _on_cuda(values, device_of) -> bool:
    for value in values:
        first = value[0] if isinstance(value, tuple | list) and value else value
        if isinstance(first, torch.Tensor) and str(device_of(first)).startswith("cuda"):
            return True
    return False
