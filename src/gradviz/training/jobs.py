"""Training and weight evaluation as worker jobs (gradviz.jobs): what the page runs out of process.

A job reads its data itself (the server only checks the folder and counts files), so the
images, the model and its gradients live in the worker and go back to the system when it
exits. `train_job` streams plain dicts (Event.as_dict, plus the network and device on
`start`) and returns everything the results need as plain data: numbers, the report lines,
PNG bytes and the weights. `evaluate_weights_job` loads uploaded bytes with
torch.load(weights_only=True) in the worker, never in the server. No Streamlit here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import torch

from gradviz.training.checkpoint import load_weights, save_state_dict
from gradviz.training.data import (
    Dataset,
    display_classes,
    load_cifar10,
    load_image_folder,
    public_mode,
)
from gradviz.training.loop import evaluate, resolve_device, train
from gradviz.training.pictures import confusion_png, prediction_grid_png

GRID_IMAGES = 24
TRAINING_SECONDS = 600.0  # longest training a page run may ask for (GRADVIZ_TRAINING_SECONDS)
MARGIN_SECONDS = 120.0  # a worker's wall clock beyond that: reading data, evaluating, pictures
TRAINING_MEMORY = 1_500_000_000  # per training worker, beyond its own (GRADVIZ_TRAINING_MEMORY)
# A public host (GRADVIZ_PUBLIC=1) shares a small container among all visitors: smaller batches
# (activations grow with the batch) and a tighter memory cap, so a run that outgrows it is
# stopped with a message instead of the whole app being killed. docs/BENCHMARKS.md has numbers.
MAX_BATCH = 8192
PUBLIC_MAX_BATCH = 128  # GRADVIZ_PUBLIC_MAX_BATCH
PUBLIC_TRAINING_MEMORY = 400_000_000
EVALUATE_SECONDS = 120.0
STOP_REASONS = {"stop requested": "stopped by you", "time limit": "time limit reached"}


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def max_batch_size() -> int:
    """The largest batch a page run may ask for: PUBLIC_MAX_BATCH on a public host."""
    if not public_mode():
        return MAX_BATCH
    return max(1, int(_env_number("GRADVIZ_PUBLIC_MAX_BATCH", PUBLIC_MAX_BATCH)))


def training_memory() -> int:
    default = PUBLIC_TRAINING_MEMORY if public_mode() else TRAINING_MEMORY
    return int(_env_number("GRADVIZ_TRAINING_MEMORY", default))


def check_batch_size(batch_size: int) -> None:
    cap = max_batch_size()
    if batch_size > cap:
        raise ValueError(
            f"Batch size {batch_size:,} is above this server's limit of {cap:,} "
            "(a public server keeps batches small so that training fits its memory)."
        )


def max_training_seconds() -> float:
    return _env_number("GRADVIZ_TRAINING_SECONDS", TRAINING_SECONDS)


def effective_time_limit(requested: float | None) -> float:
    """The user's time limit (0 or None: none), never beyond the server's maximum."""
    cap = max_training_seconds()
    if requested is None or not math.isfinite(requested) or requested <= 0:
        return cap
    return min(float(requested), cap)


def training_limits(time_limit: float, threads: int):
    """Wall clock = the run's time limit plus a margin; memory from GRADVIZ_TRAINING_MEMORY,
    lowered to what the host has free."""
    from gradviz.jobs import JobLimits, memory_for_job

    memory = training_memory()
    return JobLimits(
        seconds=time_limit + MARGIN_SECONDS,
        memory_bytes=memory_for_job(memory),
        threads=threads,
    )


def evaluate_limits(threads: int):
    from gradviz.jobs import JobLimits, memory_for_job

    memory = training_memory()
    return JobLimits(seconds=EVALUATE_SECONDS, memory_bytes=memory_for_job(memory), threads=threads)


def load_data(source: dict) -> Dataset:
    """{"kind": "folder" | "cifar", "path": ...}: read the data in the worker."""
    if source["kind"] == "folder":
        return load_image_folder(Path(source["path"]))
    return load_cifar10(source["path"], download=False)


def summarize(result, data: Dataset) -> dict:
    """Evaluate a finished (or stopped) run on the test split: plain data for the page."""
    model, arch = result.model, result.arch
    device = next(model.parameters()).device
    classes = display_classes(data.classes)
    ev = evaluate(model, data.test, arch, device, classes)
    pick = torch.randperm(len(data.test), generator=torch.Generator().manual_seed(0))[:GRID_IMAGES]
    seconds = float(result.train_seconds or 0.0)
    seen = int(result.images_seen or 0)
    return {
        "preset": result.preset,
        "arch": arch,
        "device": result.device,
        "device_type": device.type,
        "data": data.source,
        "stopped": result.stopped,
        "seconds": seconds,
        "images_seen": seen,
        "images_per_s": seen / seconds if seconds > 0 else 0.0,
        "epochs_done": seen / max(1, len(data.train)),
        "accuracy": ev.accuracy,
        "flip_tta": ev.flip_tta,
        "per_class": ev.per_class,
        "report": ev.report_lines(),
        "confusion_png": confusion_png(ev.confusion, classes),
        "grid_png": prediction_grid_png(
            data.test.images[pick], data.test.labels[pick], ev.predictions[pick], classes
        ),
        "weights": save_state_dict(model),
        "history": list(result.history),
    }


def train_job(source: dict, settings: dict, *, should_stop) -> Iterator[dict]:
    """Read the data, train (stopping cleanly on request), evaluate: events, then the results."""
    check_batch_size(settings["batch_size"])
    data = load_data(source)
    yield {"kind": "data", "describe": data.describe()}
    resolve_device(settings["device_choice"])  # DeviceError before any work
    final = None
    for ev in train(
        data,
        settings["preset"],
        settings["device_choice"],
        epochs=settings["epochs"],
        batch_size=settings["batch_size"],
        lr=settings["lr"],
        time_limit=settings["time_limit"] or None,
        should_stop=should_stop,
        eval_each_epoch=True,
        progress_every_s=0.5,
    ):
        event = ev.as_dict()
        if ev.kind == "start":
            event.update(arch=ev.result.arch, device=ev.result.device)
        if ev.kind == "end":
            final = ev.result
        yield event
    yield {"kind": "evaluating"}
    return summarize(final, data)


def evaluate_weights_job(source: dict, blob: bytes, *, should_stop) -> Iterator[dict]:
    """Load uploaded weights (weights_only) and evaluate them on the data's test split."""
    data = load_data(source)
    yield {"kind": "data", "describe": data.describe()}
    arch, model = load_weights(blob, num_classes=len(data.classes))
    classes = display_classes(data.classes)
    ev = evaluate(model, data.test, arch, "cpu", classes)
    return {
        "arch": arch,
        "accuracy": ev.accuracy,
        "report": ev.report_lines(),
        "confusion_png": confusion_png(ev.confusion, classes),
        "test_images": len(data.test),
        "data": data.source,
    }
