"""gradviz.util.timer: the one timer, used by the Speed page (speed.measure) and the Devices
page (devices.transfer)."""

from __future__ import annotations

import pytest

from gradviz.devices import transfer
from gradviz.speed import measure as measuring
from gradviz.util.timer import WallClock, time_calls


class Device:
    """A fake device whose calls queue `work_s` of work; the clock is fake too."""

    def __init__(self, work_s: float = 2.0, launch_s: float = 0.001):
        self.now = 0.0
        self.pending = 0.0
        self.work_s, self.launch_s = work_s, launch_s
        self.log: list[str] = []

    def clock(self) -> float:
        return self.now

    def synchronize(self) -> None:
        self.log.append("sync")
        self.now += self.pending
        self.pending = 0.0

    def call(self) -> None:
        self.log.append("call")
        self.now += self.launch_s
        self.pending += self.work_s


def test_warm_up_then_each_call_between_synchronizes():
    dev = Device()
    dev.pending = 7.0  # queued before: not counted
    watch = WallClock(dev.clock, dev.synchronize)
    times = time_calls(dev.call, repeats=3, warmup=2, stopwatch=watch)
    assert times == pytest.approx([2.001] * 3)
    assert dev.log[:3] == ["call", "call", "sync"]  # warm-up, then settle
    assert dev.log[3:] == ["sync", "call", "sync"] * 3


def test_without_waiting_after_a_call_only_its_return_is_timed():
    dev = Device()
    watch = WallClock(dev.clock, dev.synchronize, wait_after=False)
    assert time_calls(dev.call, repeats=2, warmup=0, stopwatch=watch) == pytest.approx([0.001] * 2)
    assert dev.log == ["sync", "sync", "call", "sync", "call"]


def test_the_default_stopwatch_is_the_wall_clock_on_a_cpu():
    calls = []
    times = time_calls(lambda: calls.append(1), repeats=4, warmup=3)
    assert len(calls) == 7 and len(times) == 4 and all(t >= 0 for t in times)


@pytest.mark.parametrize(("repeats", "warmup"), [(0, 1), (-1, 0), (1, -1)])
def test_bad_counts_are_refused(repeats, warmup):
    with pytest.raises(ValueError):
        time_calls(lambda: None, repeats=repeats, warmup=warmup)


def test_both_pages_time_on_it(monkeypatch):
    """speed.measure and devices.transfer have no timing loop of their own: both go through
    util.timer.time_calls."""
    seen = []

    def counting(work, *, repeats, warmup, stopwatch):
        seen.append(type(stopwatch).__name__)
        return [1.0] * repeats

    monkeypatch.setattr(measuring, "time_calls", counting)
    monkeypatch.setattr(transfer, "time_calls", counting)
    assert measuring.measure(lambda: None, repeats=3, warmup=0).median_s == 1.0
    assert transfer.time_runs(lambda: None, "cpu", repeats=2) == [1.0, 1.0]
    assert transfer.wall_times(lambda: None, "cpu", repeats=2) == [1.0, 1.0]
    assert seen == ["WallClock"] * 3


def test_cuda_events_stopwatch_times_on_the_gpu(monkeypatch):
    """devices.transfer on a GPU: warm-up, a synchronize, then per call two fresh events
    around it and a wait for the second, as its own loop did (a stand-in torch.cuda here)."""
    import torch

    log: list[str] = []

    class Event:
        count = 0

        def __init__(self, enable_timing: bool):
            assert enable_timing
            Event.count += 1
            self.at = None

        def record(self):
            log.append("record")
            self.at = len(log)

        def synchronize(self):
            log.append("wait")

        def elapsed_time(self, end) -> float:
            return float(end.at - self.at)  # "milliseconds"

    monkeypatch.setattr(transfer, "_is_cuda", lambda device: True)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: log.append(f"sync {device}"))
    times = transfer.time_runs(lambda: log.append("call"), "cuda:0", repeats=2, warmup=1)
    assert log == ["call", "sync cuda:0"] + ["record", "call", "record", "wait"] * 2
    assert times == [0.002, 0.002] and Event.count == 4
