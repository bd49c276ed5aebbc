"""Images/s and test accuracy of the fast preset in 1 process vs N processes (DistributedDataParallel).

Measured in one run, alternating 1 and N processes for each seed, on the same data and device:
1 process is `gradviz.training.loop.train` in this process; N processes are
`gradviz.training.distributed.launch` (spawned ranks, gloo on the CPU, NCCL on GPUs), with the
same global batch. Images/s counts the images of all ranks over the training time (start-up,
data reading and evaluation excluded); test accuracy is the network the run returned (for N
processes: rank 0's weights loaded as a saved file is), scored with the flip test-time augmentation.

    python bench/ddp_bench.py --epochs 3 --seeds 0 1 2 [--nproc 2] [--data DIR] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gradviz.training.data import load_image_folder  # noqa: E402
from gradviz.training.distributed import RunSpec, launch  # noqa: E402
from gradviz.training.evaluation import evaluate  # noqa: E402
from gradviz.training.hardware import resolve_device  # noqa: E402
from gradviz.training.loop import run_to_end, train  # noqa: E402
from gradviz.training.sources import shared_subset_dir  # noqa: E402


def one_process(data, args, seed: int, threads: int):
    torch.set_num_threads(threads)
    t = time.perf_counter()
    result = run_to_end(train(data, "fast", args.device, epochs=args.epochs, seed=seed))
    return result, time.perf_counter() - t


def processes(data, args, seed: int, folder: Path):
    spec = RunSpec(
        source={"kind": "folder", "path": str(folder)},
        device=args.device,
        epochs=args.epochs,
        seed=seed,
        threads=args.threads,
    )
    t = time.perf_counter()
    events = launch(spec, args.nproc)
    while True:
        try:
            next(events)
        except StopIteration as done:
            trained = done.value
            break
    return trained.result(len(data.classes)), time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="ImageFolder root (default: the shared CIFAR-10 subset)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--threads", type=int, help="torch threads per rank (default: cores / N)")
    ap.add_argument(
        "--also-one-thread",
        action="store_true",
        help="also time 1 process with 1 torch thread (the ranks' share on 2 cores)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    folder = Path(args.data) if args.data else shared_subset_dir()
    if folder is None:
        sys.exit("no data: pass --data DIR")
    data = load_image_folder(folder)
    device = resolve_device(args.device)
    rows = []
    default_threads = torch.get_num_threads()
    configs = (
        [(1, default_threads)] + ([(1, 1)] if args.also_one_thread else []) + [(args.nproc, 0)]
    )
    for seed in args.seeds:
        for nproc, threads in configs:
            if nproc == 1:
                result, wall = one_process(data, args, seed, threads)
            else:
                result, wall = processes(data, args, seed, folder)
            ev = evaluate(result.model.to(device), data.test, result.arch, device)
            rows.append(
                {
                    "processes": nproc,
                    "threads": threads or (args.threads or max(1, os.cpu_count() // nproc)),
                    "seed": seed,
                    "images_per_s": round(result.images_per_s, 1),
                    "train_s": round(result.train_seconds, 2),
                    "wall_s": round(wall, 2),
                    "test_accuracy": round(ev.accuracy, 4),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    summary = {}
    for nproc, threads in configs:
        mine = [
            r for r in rows if r["processes"] == nproc and (nproc > 1 or r["threads"] == threads)
        ]
        summary[f"{nproc}x{mine[0]['threads']}"] = {
            "images_per_s_median": statistics.median(r["images_per_s"] for r in mine),
            "accuracy_mean": round(statistics.fmean(r["test_accuracy"] for r in mine), 4),
            "accuracy_min": min(r["test_accuracy"] for r in mine),
            "accuracy_max": max(r["test_accuracy"] for r in mine),
        }
    machine = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "device": str(device),
        "data": str(folder),
        "epochs": args.epochs,
    }
    if args.json:
        print(json.dumps({"machine": machine, "rows": rows, "summary": summary}))
        return
    print(machine)
    print("| processes | threads each | seed | images/s | training s | wall s | test accuracy |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['processes']} | {r['threads']} | {r['seed']} | {r['images_per_s']:,.0f} | {r['train_s']} | "
            f"{r['wall_s']} | {100 * r['test_accuracy']:.1f}% |"
        )
    for config, s in summary.items():
        print(
            f"{config} (processes x threads): median {s['images_per_s_median']:,.0f} images/s, accuracy "
            f"mean {100 * s['accuracy_mean']:.1f}% (min {100 * s['accuracy_min']:.1f}%, "
            f"max {100 * s['accuracy_max']:.1f}%)"
        )


if __name__ == "__main__":
    main()
