"""What moving data costs, measured live: copy bandwidth, hidden syncs, one big op vs many small.

Timing done right: warm-up runs first, then the median of several runs. On a GPU, device
work is timed with CUDA events and every measurement ends with a synchronize (GPU work is
asynchronous: a wall clock around a kernel launch measures the launch, not the work). On the
CPU, time.perf_counter. Nothing here asserts on speed; the numbers are what this machine did.

Recorded GPU reference numbers live in bench/transfer_reference.json, written by
`python -m gradviz.devices.transfer --record bench/transfer_reference.json` on a machine with a GPU.
No such file exists until someone runs that on a GPU: gradviz never makes numbers up.

The measuring functions run in a job worker; the server reads Measurement and the recorded
reference from gradviz.devices.transfer_reference, without PyTorch.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from gradviz.devices.transfer_reference import (
    CPU_SYNC_NOTE,
    CPU_THREADS_NOTE,
    Measurement,
    median_and_iqr,
)
from gradviz.util.format import fmt_in
from gradviz.util.timer import WallClock, no_sync, time_calls


def _is_cuda(device: str) -> bool:
    import torch

    return torch.device(device).type == "cuda"


def time_it(fn: Callable[[], object], device: str, repeats: int = 5, warmup: int = 2) -> float:
    """Median seconds of fn(); CUDA events and synchronize on a GPU, perf_counter on the CPU."""
    return statistics.median(time_runs(fn, device, repeats, warmup))


def time_runs(
    fn: Callable[[], object], device: str, repeats: int = 5, warmup: int = 2
) -> list[float]:
    """Seconds of each of `repeats` calls of fn() after `warmup` calls (as time_it): CUDA
    events on a GPU, perf_counter on the CPU (gradviz.util.timer, the one timer)."""
    watch = CudaEvents(device) if _is_cuda(device) else WallClock()
    return time_calls(fn, repeats=repeats, warmup=warmup, stopwatch=watch)


class CudaEvents:
    """A stopwatch (gradviz.util.timer) of two CUDA events on `device`: the time the GPU
    spent between them, read once the second has happened."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.events: tuple = ()

    def settle(self) -> None:
        import torch

        torch.cuda.synchronize(self.device)

    def start(self) -> None:
        import torch

        self.events = tuple(torch.cuda.Event(enable_timing=True) for _ in range(2))
        self.events[0].record()

    def stop(self) -> float:
        start, end = self.events
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0


def wall_times(
    fn: Callable[[], object], device: str, repeats: int = 5, warmup: int = 2
) -> list[float]:
    """Wall-clock seconds until fn() returns to Python (what a hidden sync costs the host).

    The device is idle before each run, so only fn's own work and waiting are counted."""
    import torch

    cuda = _is_cuda(device)
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else no_sync
    watch = WallClock(synchronize=sync, wait_after=False)
    times = time_calls(fn, repeats=repeats, warmup=warmup, stopwatch=watch)
    sync()
    return times


def copy_bandwidth(device: str, nbytes: int = 16 * 2**20, repeats: int = 5) -> list[Measurement]:
    """Host->device and device->host copies, pageable and pinned host memory.

    On the CPU there is no host-device copy: it measures a host memory copy (the CPU side
    of a transfer) and says that pinned memory needs CUDA."""
    import torch

    n = nbytes // 4
    out = []
    if _is_cuda(device):
        dev = torch.empty(n, device=device)
        for pinned in (False, True):
            host = torch.empty(n, pin_memory=pinned)
            kind = "pinned" if pinned else "pageable"
            t = time_runs(lambda h=host, p=pinned: dev.copy_(h, non_blocking=p), device, repeats)
            m = Measurement(f"h2d_{kind}", f"host → {device}, {kind}", device, 0.0, nbytes)
            out.append(m.keep_spread(t))
            t = time_runs(lambda h=host, p=pinned: h.copy_(dev, non_blocking=p), device, repeats)
            m = Measurement(f"d2h_{kind}", f"{device} → host, {kind}", device, 0.0, nbytes)
            out.append(m.keep_spread(t))
        return out
    src = torch.ones(n)
    dst = torch.empty(n)
    times = time_runs(lambda: dst.copy_(src), "cpu", repeats)
    copy = Measurement(
        "host_copy",
        "host memory copy (the CPU side of a transfer)",
        "cpu",
        0.0,
        nbytes,
        "no GPU here: host→device and device→host copies cannot be measured",
    )
    out.append(copy.keep_spread(times))
    out.append(
        Measurement(
            "pinned",
            "pinned (page-locked) host memory",
            "cpu",
            float("nan"),
            None,
            "needs CUDA: pin_memory() asks the CUDA driver to lock the pages",
        )
    )
    return out


def sync_costs(device: str, size: int = 512, repeats: int = 9) -> list[Measurement]:
    """What .item(), print, .numpy() and .cpu() cost right after queued work.

    On a GPU, work is queued and Python goes on; each of these must wait for the queue to
    drain and copy back, so the host stalls (a hidden synchronisation). The product is
    written into one tensor made beforehand, so no row times allocating and first touching
    its result (on a CPU that cost can outweigh the product itself)."""
    import torch

    x = torch.randn(size, size, device=device)
    y = torch.empty(size, size, device=device)

    def queued():
        return torch.matmul(x, x, out=y)

    def sync(call):
        def go():
            return call(queued())

        return go

    cases = [
        ("queue_only", "x @ x queued, no sync", queued),
        ("item", "(x @ x).sum().item()", sync(lambda y: y.sum().item())),
        ("print", "print(x @ x) (repr copies to the host)", sync(lambda y: repr(y))),
        ("numpy", "(x @ x).cpu().numpy()", sync(lambda y: y.cpu().numpy())),
        ("cpu", "(x @ x).cpu()", sync(lambda y: y.cpu())),
    ]
    out = []
    for key, what, fn in cases:
        note = "" if _is_cuda(device) else CPU_SYNC_NOTE
        m = Measurement(f"sync_{key}", what, device, 0.0, None, note)
        out.append(m.keep_spread(wall_times(fn, device, repeats)))
    return out


def one_vs_many_work(device: str, pieces: int, size: int):
    """The two ways of doing the same additions, each writing into outputs made beforehand
    (a new output each call would time allocating and first touching memory, which on a CPU
    costs more than the additions): (one large add, many small adds)."""
    import torch

    big = torch.randn(pieces * size, device=device)
    out = torch.empty_like(big)
    pairs = list(zip(big.split(size), out.split(size), strict=True))

    def one():
        return torch.add(big, 1.0, out=out)

    def many():
        for s, o in pairs:
            torch.add(s, 1.0, out=o)
        return out

    return one, many


def one_vs_many(device: str, pieces: int = 256, size: int = 1024, repeats: int = 9):
    """The same additions as one large op and as many small ones (each a launch on a GPU)."""
    one, many = one_vs_many_work(device, pieces, size)
    nbytes = pieces * size * 4
    note = (
        ""
        if _is_cuda(device)
        else "on the CPU each small add costs a call into PyTorch, not a kernel launch"
    )
    return [
        Measurement(
            "one_large",
            f"one add over {pieces * size:,} values",
            device,
            0.0,
            nbytes,
            "" if _is_cuda(device) else CPU_THREADS_NOTE,
        ).keep_spread(time_runs(one, device, repeats)),
        Measurement(
            "many_small", f"{pieces} adds over {size:,} values each", device, 0.0, nbytes, note
        ).keep_spread(time_runs(many, device, repeats)),
    ]


# The copy sweep's sizes: 4 KiB to 1 GiB, by fours (the Devices page's "copy speed by size").
COPY_SWEEP_BYTES = tuple(4 * 1024 * 4**i for i in range(10))


def copy_sweep(
    device: str, sizes: tuple[int, ...] = COPY_SWEEP_BYTES, repeats: int = 5
) -> list[dict]:
    """Copy time and rate by size: on a GPU host to device and back, from pageable and from
    pinned memory (one row each); on the CPU a host memory copy (the CPU side of a transfer).
    Sizes over 64 MiB are timed 3 times. Rows: direction, memory, nbytes, seconds (median),
    spread (interquartile range), gb_per_s."""
    import torch

    rows: list[dict] = []

    def add(direction: str, memory: str, nbytes: int, times: list[float]) -> None:
        median, iqr = median_and_iqr(times)
        rate = nbytes / median / 1e9 if median > 0 else None
        rows.append(
            {
                "direction": direction,
                "memory": memory,
                "nbytes": nbytes,
                "seconds": median,
                "spread": iqr,
                "gb_per_s": rate,
            }
        )

    for nbytes in sizes:
        n = max(1, nbytes // 4)
        reps = repeats if nbytes <= 64 * 2**20 else min(repeats, 3)
        if not _is_cuda(device):
            src, dst = torch.ones(n), torch.empty(n)
            times = time_runs(lambda d=dst, s=src: d.copy_(s), "cpu", reps, 1)
            add("host copy", "pageable", nbytes, times)
            del src, dst
            continue
        dev = torch.empty(n, device=device)
        for pinned in (False, True):
            host = torch.empty(n, pin_memory=pinned)
            memory = "pinned" if pinned else "pageable"
            up = time_runs(
                lambda h=host, p=pinned, d=dev: d.copy_(h, non_blocking=p), device, reps, 1
            )
            add(f"host → {device}", memory, nbytes, up)
            down = time_runs(
                lambda h=host, p=pinned, d=dev: h.copy_(d, non_blocking=p), device, reps, 1
            )
            add(f"{device} → host", memory, nbytes, down)
            del host
        del dev
        torch.cuda.empty_cache()
    return rows


@contextmanager
def one_cpu_thread(device: str) -> Iterator[None]:
    """On the CPU, time with one thread (CPU_THREADS_NOTE); on a GPU, change nothing."""
    import torch

    if _is_cuda(device):
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def measure_all(device: str, quick: bool = False) -> list[Measurement]:
    with one_cpu_thread(device):
        if quick:
            return (
                copy_bandwidth(device, 2**20, 3)
                + sync_costs(device, 64, 3)
                + one_vs_many(device, 32, 256, 2)
            )
        return copy_bandwidth(device) + sync_costs(device) + one_vs_many(device)


def measure_job(device: str, quick: bool = False, *, should_stop):
    """measure_all as a worker job (gradviz.workers.jobs): one progress line, then the measurements as
    the job's result. Copies allocate and time tensors, so they run outside the server."""
    yield f"measuring copies and synchronisations on {device}"
    return measure_all(device, quick=quick)


def device_name(device: str) -> str:
    import torch

    if _is_cuda(device):
        return torch.cuda.get_device_name(torch.device(device))
    import platform

    return platform.processor() or platform.machine() or "CPU"


def record(
    path: Path, device: str, sweep: tuple[int, ...] | None = None, extra: dict | None = None
) -> dict:
    """Measure on `device` and write the numbers with the device's name and the date; with
    `sweep`, also copy_sweep over those sizes ("sweep"); `extra`: more fields about the
    machine (driver, ...)."""
    import torch

    data = {
        "device": device,
        "device_name": device_name(device),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        **(extra or {}),
        "measured_on": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "measurements": [
            # NaN (not measurable here) is written as null: the file stays standard JSON
            {**asdict(m), "seconds": None if math.isnan(m.seconds) else m.seconds}
            | {"gb_per_s": m.gb_per_s}
            for m in measure_all(device)
        ],
    }
    if sweep:
        data["sweep"] = copy_sweep(device, sweep)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return data


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(prog="python -m gradviz.devices.transfer", description=__doc__)
    parser.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--record", type=Path, help="write the measurements as JSON here")
    parser.add_argument(
        "--sweep", action="store_true", help="with --record: also copies from 4 KiB to 1 GiB"
    )
    args = parser.parse_args(argv)
    if args.record:
        data = record(args.record, args.device, COPY_SWEEP_BYTES if args.sweep else None)
        print(f"recorded {len(data['measurements'])} measurements on {data['device_name']}")
        return 0
    for m in measure_all(args.device):
        rate = f" {m.gb_per_s:.2f} GB/s" if m.gb_per_s else ""
        print(f"{m.key:14s} {fmt_in(m.seconds, 'µs', width=12)}{rate}  {m.what} {m.note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
