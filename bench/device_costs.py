"""The Devices page's cost table on this host: the old way of timing it beside the new one.

The old table timed `big.add(1.0)` and `x @ x`, each making a new output per call: on a CPU
that times allocating and first touching fresh memory (glibc hands tensors over 128 KiB
out with mmap), which can outweigh the work. The new one (gradviz.devices.transfer) writes
into outputs made beforehand. Both are timed side by side in one process (median of the
repeats after two warm-up calls, and their interquartile range), and the new table is
measured twice to show how much it moves.

    python bench/device_costs.py [--threads N] [--repeats 9]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _app import machine  # noqa: E402


def _us(times: list[float]) -> str:
    from gradviz.devices.transfer_reference import median_and_iqr

    median, iqr = median_and_iqr(times)
    return f"{median * 1e6:10,.1f} µs (IQR {iqr * 1e6:,.1f})"


def main() -> int:
    import torch

    from gradviz.devices import transfer

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(machine())
    print(f"torch {torch.__version__}, {args.threads} threads, {args.repeats} repeats")
    big = torch.randn(256 * 1024)
    small = list(big.split(1024))
    x = torch.randn(512, 512)
    one, many = transfer.one_vs_many_work("cpu", 256, 1024)
    y = torch.empty(512, 512)
    cases = [
        ("old: one add over 262,144 values (new output)", lambda: big.add(1.0)),
        ("old: 256 adds over 1,024 values (new outputs)", lambda: [s.add(1.0) for s in small]),
        ("new: one add over 262,144 values (out=)", one),
        ("new: 256 adds over 1,024 values (out=)", many),
        ("old: x @ x, no sync (new output)", lambda: x @ x),
        ("old: (x @ x).sum().item() (new output)", lambda: (x @ x).sum().item()),
        ("new: x @ x, no sync (out=)", lambda: torch.matmul(x, x, out=y)),
        ("new: (x @ x).sum().item() (out=)", lambda: torch.matmul(x, x, out=y).sum().item()),
    ]
    for label, fn in cases:
        print(f"{label:50s} {_us(transfer.time_runs(fn, 'cpu', args.repeats))}")
    for run in (1, 2):
        rows = transfer.measure_all("cpu")
        print(f"page table, measurement {run}:")
        for m in rows:
            if m.seconds == m.seconds:  # not NaN
                spread = "" if m.spread is None else f" (IQR {m.spread * 1e6:,.1f})"
                print(f"  {m.what:50s} {m.seconds * 1e6:10,.1f} µs{spread}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
