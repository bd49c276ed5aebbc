"""`python -m gradviz train`: train on CIFAR-10 or an ImageFolder folder from the command line.

Progress goes to stderr; with --json the final metrics are one JSON object on stdout. Ctrl-C stops
training cleanly (the model keeps what it learned and is still evaluated and saved).
With --nproc N it trains in N processes (DistributedDataParallel, gradviz.training.distributed);
under torchrun each process is one rank of torchrun's group, and rank 0 alone reports and saves.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from gradviz.training.checkpoint import save_state_dict
from gradviz.training.data import Dataset, load_dataset, load_source
from gradviz.training.distributed import (
    TIMEOUT_S,
    DistributedError,
    RunSpec,
    end_group,
    exit_rank,
    group_run,
    launch,
    rank_device,
    rank_threads,
    start_group,
)
from gradviz.training.evaluation import Evaluation, evaluate
from gradviz.training.events import Progress, Started
from gradviz.training.hardware import DeviceError, resolve_device
from gradviz.training.loop import TrainResult, train
from gradviz.training.settings import PRESETS, ddp_backend
from gradviz.training.sources import DataError, default_cache_dir, display_classes
from gradviz.util.format import fmt_in


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {value}")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "train",
        help="train the tutorial CNN or the fast preset on CIFAR-10 or an image folder",
        description=(
            "Train on CIFAR-10 (downloaded once into a cache folder) or a folder with "
            "train/<class>/* and test/<class>/*, then report overall and per-class test accuracy."
        ),
    )
    p.add_argument(
        "--data", required=True, help="'cifar10' to download/use CIFAR-10, or a folder path"
    )
    p.add_argument("--preset", choices=sorted(PRESETS), default="fast")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or mps (default auto)")
    p.add_argument("--epochs", type=_positive_int, help="default: the preset's")
    p.add_argument("--batch-size", type=_positive_int, help="default: the preset's")
    p.add_argument("--lr", type=_positive_float, help="peak learning rate; default: the preset's")
    p.add_argument(
        "--time-limit", type=_positive_float, metavar="S", help="stop training after S seconds"
    )
    p.add_argument(
        "--cache-dir", help="where CIFAR-10 is downloaded (default ~/.cache/gradviz/cifar10)"
    )
    p.add_argument("--save", metavar="PATH", help="write the trained state_dict here (torch.save)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=_positive_int, help="CPU threads for torch")
    p.add_argument("--json", action="store_true", help="print the final metrics as JSON on stdout")
    p.add_argument(
        "--nproc",
        type=_positive_int,
        default=1,
        metavar="N",
        help="train in N processes with DistributedDataParallel (one per GPU with --device cuda, "
        "gloo on the CPU); under torchrun the launcher's processes are used instead",
    )
    p.add_argument(
        "--ddp-timeout",
        type=_positive_float,
        default=TIMEOUT_S,
        metavar="S",
        help="with several processes: a gradient exchange waiting longer fails the run",
    )
    p.set_defaults(func=run)


def _progress_line(event: Progress) -> str:
    eta = fmt_in(event.eta_s, "s", width=5) if event.eta_s is not None else "  ?    "
    loss = f"{event.loss:.3f}" if event.loss is not None else "  -  "
    acc = f"{100 * event.accuracy:5.1f}%" if event.accuracy is not None else "   -  "
    return (
        f"epoch {event.epoch}/{event.epochs} step {event.step}/{event.steps_total} "
        f"{100 * event.fraction:5.1f}% | {event.images_per_s:8.0f} img/s | ETA {eta} | "
        f"loss {loss} | train acc {acc}"
    )


def _download_progress(done: int, total: int | None) -> None:
    if total:
        print(
            f"\rdownloading CIFAR-10: {fmt_in(done, 'MB', width=6)} of {fmt_in(total, 'MB')}",
            end="",
            file=sys.stderr,
        )


def _train(args: argparse.Namespace, data: Dataset, device) -> TrainResult:
    """Train with progress on stderr; the first Ctrl-C stops after the current step (the model
    keeps what it learned), a second one aborts."""
    err = sys.stderr
    stop = {"requested": False}

    def on_sigint(signum, frame):
        if stop["requested"]:
            raise KeyboardInterrupt
        stop["requested"] = True
        print("\nStopping after this step (Ctrl-C again to abort)...", file=err)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        result = None
        for event in train(
            data,
            args.preset,
            device,
            epochs=args.epochs,
            batch_size=args.batch_size,
            lr=args.lr,
            time_limit=args.time_limit,
            should_stop=lambda: stop["requested"],
            seed=args.seed,
            threads=args.threads,
        ):
            if event.kind in ("progress", "epoch"):
                print(_progress_line(event), file=err)
            elif event.kind == "end":
                result = event.result
                if event.stopped:
                    print(f"stopped: {event.stopped}", file=err)
    finally:
        signal.signal(signal.SIGINT, previous)
    return result


def _spec(args: argparse.Namespace) -> RunSpec:
    """What each rank trains: the data as the ranks read it (CIFAR-10 from the cache folder
    the launcher filled), the settings typed."""
    if args.data.strip().lower() in {"cifar10", "cifar-10"}:
        source = {"kind": "cifar", "path": str(args.cache_dir or default_cache_dir())}
    else:
        source = {"kind": "folder", "path": str(Path(args.data).expanduser().resolve())}
    return RunSpec(
        source=source,
        preset=args.preset,
        device=args.device,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        time_limit=args.time_limit,
        seed=args.seed,
        threads=args.threads,
        timeout_s=args.ddp_timeout,
    )


def _follow(events, num_classes: int) -> TrainResult | None:
    """Print rank 0's events; return the result loaded from its weights (None on other ranks)."""
    err = sys.stderr
    while True:
        try:
            event = next(events)
        except StopIteration as done:
            return done.value.result(num_classes) if done.value is not None else None
        if isinstance(event, Started):
            print(f"training {event.arch} in {event.device}", file=err)
        elif event.kind in ("progress", "epoch"):
            print(_progress_line(event), file=err)
        elif event.kind == "end" and event.stopped:
            print(f"stopped: {event.stopped}", file=err)


def train_processes(args: argparse.Namespace, data: Dataset) -> TrainResult:
    """--nproc N: N ranks on this host (DistributedDataParallel); the first Ctrl-C asks rank 0
    to stop after the current step (all ranks stop at the same step), a second one aborts."""
    stop = {"requested": False}

    def on_sigint(signum, frame):
        if stop["requested"]:
            raise KeyboardInterrupt
        stop["requested"] = True
        print("\nStopping all ranks after this step (Ctrl-C again to abort)...", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        events = launch(_spec(args), args.nproc, lambda: stop["requested"])
        return _follow(events, len(data.classes))
    finally:
        signal.signal(signal.SIGINT, previous)


def under_torchrun() -> bool:
    """Started by torchrun (torch.distributed.run): the environment names this rank."""
    return "TORCHELASTIC_RUN_ID" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1


def run_torchrun_rank(args: argparse.Namespace) -> int:
    """One rank of a torchrun job: rank 0 reports, evaluates and saves; the others only train.
    CIFAR-10 must already be in the cache folder (every rank reads it; none downloads)."""
    err = sys.stderr
    try:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        device = rank_device(args.device, local_rank)
        spec = _spec(args)
        data = load_source(spec.source)
        start_group(ddp_backend(device.type), spec.timeout_s)
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        events = group_run(data, spec, device, threads=rank_threads(spec, local_world))
        result = _follow(events, len(data.classes))
    except (DataError, DeviceError, ValueError, OSError) as exc:
        print(f"error: rank {os.environ.get('RANK')}: {exc}", file=err)
        return 1
    finally:
        end_group()  # every rank, before rank 0 evaluates and the others exit
    if result is None:
        return 0
    return report(args, data, result, device)


def _metrics(data: Dataset, result: TrainResult, ev: Evaluation, device) -> dict:
    """The --json object (its keys are documented in docs/training.md)."""
    return {
        "data": data.source,
        "train_images": len(data.train),
        "test_images": len(data.test),
        "preset": result.preset,
        "arch": result.arch,
        "device": result.device,
        "epochs_done": round(result.epochs_done, 3),
        "images_seen": result.images_seen,
        "train_seconds": round(result.train_seconds, 3),
        "images_per_s": round(result.images_per_s, 1),
        "test_accuracy": round(ev.accuracy, 4),
        "test_time_augmentation": "flip" if ev.flip_tta else None,
        "per_class_accuracy": {k: round(v, 4) for k, v in ev.per_class.items()},
        "stopped": result.stopped,
        "peak_gpu_memory_bytes": _peak_gpu_memory(device),
    }


def _peak_gpu_memory(device) -> int | None:
    """The most memory PyTorch's CUDA allocator held for tensors in this process on `device`
    (a torch.device; None off CUDA): training and evaluation together."""
    import torch

    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    return int(torch.cuda.max_memory_allocated(device))


def run(args: argparse.Namespace) -> int:
    err = sys.stderr
    if under_torchrun():  # the rank's process ends here (exit_rank: not by its shutdown)
        exit_rank(run_torchrun_rank(args))
    try:
        device = resolve_device(args.device)
        print(f"loading data: {args.data}", file=err)
        data = load_dataset(args.data, cache_dir=args.cache_dir, progress=_download_progress)
        print(data.describe(), file=err)
        if args.nproc > 1:
            result = train_processes(args, data)
        else:
            result = _train(args, data, device)
        return report(args, data, result, device)
    except (DataError, DeviceError, DistributedError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=err)
        return 1


def report(args: argparse.Namespace, data: Dataset, result: TrainResult, device) -> int:
    """Evaluate the trained network on the test split, save it with --save, print the report
    (or the --json object)."""
    err = sys.stderr
    try:
        classes = display_classes(data.classes)
        ev = evaluate(result.model.to(device), data.test, result.arch, device, classes)
        if args.save:
            Path(args.save).write_bytes(save_state_dict(result.model))
            print(f"saved state_dict to {args.save}", file=err)
    except (DeviceError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=err)
        return 1
    if args.json:
        print(json.dumps(_metrics(data, result, ev, device)))
    else:
        print("\n".join(ev.report_lines()))
        print(
            f"{result.train_seconds:.1f} s of training on {result.device}, "
            f"{result.images_per_s:,.0f} images/s"
        )
    return 0
