"""Images/s of the tutorial preset vs the fast preset vs a bare loop of the fast preset's model.

Measured side by side in one process, interleaved over several rounds (median reported), on the
same data and device. The bare loop does the same per-batch work as the fast preset (index the
resident uint8 data, random crop + flip, normalise, forward, backward, SGD step) with nothing else:
no progress events, no loss/accuracy sums, no learning-rate schedule. Its ratio to the fast preset
is the preset's own overhead.

    python bench/bench_training.py --seconds 8 --rounds 3 [--data DIR] [--device cpu] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gradviz.training.data import load_image_folder  # noqa: E402
from gradviz.training.hardware import Precision, plan_precision, resolve_device  # noqa: E402
from gradviz.training.inputs import norm_tensors, random_crop_flip  # noqa: E402
from gradviz.training.loop import run_to_end, train  # noqa: E402
from gradviz.training.models import build_model  # noqa: E402
from gradviz.training.settings import PRESETS  # noqa: E402
from gradviz.training.sources import shared_subset_dir  # noqa: E402


def preset_rate(data, preset: str, device, seconds: float, precision=None) -> float:
    result = run_to_end(
        train(data, preset, device, epochs=1000, time_limit=seconds, seed=None, precision=precision)
    )
    return result.images_per_s


def bare_rate(
    data,
    arch: str,
    batch_size: int,
    device,
    seconds: float,
    augment: bool = True,
    channels_last: bool = False,
) -> float:
    """The same model, batch and memory layout as the fast preset, trained with nothing but the
    work itself."""
    model = build_model(arch, len(data.classes)).to(device).train()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(
        model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4
    )
    x_all = data.train.images.to(device)
    y_all = data.train.labels.to(device)
    m, s = norm_tensors(arch, device)
    scale, shift = 1 / (255 * s), m / s
    n = len(data.train)
    seen = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        perm = torch.randperm(n, device=device)
        for i in range(0, n, batch_size):
            idx = perm[i : i + batch_size]
            xb = x_all[idx]
            if augment:
                xb = random_crop_flip(xb)
            xb = xb.float().mul_(scale).sub_(shift)
            if channels_last:
                xb = xb.contiguous(memory_format=torch.channels_last)
            loss = F.cross_entropy(model(xb), y_all[idx], label_smoothing=0.2)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            seen += idx.shape[0]
            if time.perf_counter() - t0 >= seconds:
                break
    if device.type == "cuda":
        torch.cuda.synchronize()
    return seen / (time.perf_counter() - t0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="ImageFolder folder (default: the shared cifar10-subset)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    folder = args.data or shared_subset_dir()
    if not folder:
        print(
            "No data: pass --data DIR (ImageFolder layout); the shared cifar10-subset was not found.",
            file=sys.stderr,
        )
        return 1
    data = load_image_folder(folder)
    device = resolve_device(args.device)
    fast = PRESETS["fast"]
    arch = fast.arch_for(device)
    layout = plan_precision(fast, device.type).channels_last
    print(
        f"{data.describe()} on {device}, torch {torch.__version__}, {torch.get_num_threads()} threads",
        file=sys.stderr,
    )

    runs = {
        "tutorial preset (TutorialNet, batch 4)": lambda: preset_rate(
            data, "tutorial", device, args.seconds
        ),
        f"fast preset ({arch}, batch {fast.batch_size})": lambda: preset_rate(
            data, "fast", device, args.seconds
        ),
        f"bare loop ({arch}, batch {fast.batch_size})": lambda: bare_rate(
            data, arch, fast.batch_size, device, args.seconds, channels_last=layout
        ),
        f"fast preset in NCHW ({arch}, batch {fast.batch_size}, channels_last off)": lambda: (
            preset_rate(data, "fast", device, args.seconds, precision=Precision())
        ),
        f"bare loop (tutorial net, batch {fast.batch_size}, no augmentation)": lambda: bare_rate(
            data, "tutorial", fast.batch_size, device, args.seconds, augment=False
        ),
    }
    bare_rate(data, arch, fast.batch_size, device, 1.0, channels_last=layout)  # warm-up
    rates: dict[str, list[float]] = {k: [] for k in runs}
    cpu_share: dict[str, list[float]] = {k: [] for k in runs}
    for r in range(args.rounds):
        for name, fn in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            rates[name].append(fn())
            # CPU seconds this process got per wall second: low values mean the host was busy.
            share = (time.process_time() - cpu) / (time.perf_counter() - wall)
            cpu_share[name].append(share)
            print(
                f"round {r + 1}: {name}: {rates[name][-1]:,.0f} images/s ({share:.2f} CPU s per s)",
                file=sys.stderr,
            )
    median = {k: statistics.median(v) for k, v in rates.items()}
    names = list(runs)
    out = {
        "machine": f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads",
        "device": str(device),
        "data": data.source,
        "seconds_per_measurement": args.seconds,
        "rounds": args.rounds,
        "images_per_s_median": {k: round(v, 1) for k, v in median.items()},
        "images_per_s_all": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "cpu_seconds_per_second_all": {k: [round(x, 2) for x in v] for k, v in cpu_share.items()},
        "fast_over_tutorial": round(median[names[1]] / median[names[0]], 2),
        "fast_over_bare": round(median[names[1]] / median[names[2]], 3),
        # Each round measures the two back to back, so a per-round ratio cancels slow drifts in
        # the load of a shared machine; its median is the steadier number.
        "fast_over_bare_per_round": [
            round(f / b, 3) for f, b in zip(rates[names[1]], rates[names[2]], strict=True)
        ],
    }
    out["fast_over_bare_median_of_rounds"] = round(
        statistics.median(out["fast_over_bare_per_round"]), 3
    )
    # What the memory layout alone buys: the fast preset against itself in NCHW, per round.
    out["channels_last_over_nchw_per_round"] = [
        round(f / b, 3) for f, b in zip(rates[names[1]], rates[names[3]], strict=True)
    ]
    out["channels_last_over_nchw_median_of_rounds"] = round(
        statistics.median(out["channels_last_over_nchw_per_round"]), 3
    )
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in median.items():
            print(f"{k:60s} {v:10,.0f} images/s")
        print(
            f"fast / tutorial: {out['fast_over_tutorial']}x;  fast / bare loop: {out['fast_over_bare']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
