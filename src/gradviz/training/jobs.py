"""Training and weight evaluation as worker jobs (gradviz.workers.jobs): what the page runs out of process.

A job reads its data itself (the server only checks the folder and counts files), so the
images, the model and its gradients live in the worker and go back to the system when it
exits. `train_job` streams the events of gradviz.training.events (DataRead, Started, the
Progress readings, Evaluating) and returns a TrainingSummary: numbers, the report lines, PNG
bytes and the weights. Only plain data crosses to the server (`plain` checks it): those
dataclasses, whose fields are plain too, and plain values; unpickling a tensor or a numpy
number there would import torch or numpy. `evaluate_weights_job` loads uploaded bytes with
torch.load(weights_only=True) in the worker, never in the server, and returns a
WeightsEvaluation. No Streamlit here.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Generator
from dataclasses import fields, replace

import torch

from gradviz.training.checkpoint import load_weights, save_state_dict
from gradviz.training.data import Dataset, load_source
from gradviz.training.distributed import RunSpec, Trained, launch
from gradviz.training.evaluation import evaluate
from gradviz.training.events import (
    PLAIN_CLASSES,
    DataRead,
    Evaluating,
    Started,
    TrainingEvent,
    TrainingSummary,
    WeightsEvaluation,
)
from gradviz.training.hardware import resolve_device
from gradviz.training.loop import train
from gradviz.training.pictures import confusion_png, prediction_grid_png
from gradviz.training.settings import (
    check_batch_size,
)
from gradviz.training.sources import display_classes
from gradviz.util.settings import public_host

GRID_IMAGES = 24
PLAIN_TYPES = (str, bytes, int, float, bool, type(None))


def plain(value, where: str = "the result"):
    """The value itself, when it is plain data: str, bytes, numbers, None, lists, tuples and
    dicts of them, and the dataclasses of gradviz.training.events with plain fields. That is all
    the server may unpickle: a tensor, or even a numpy float (a float subclass, so types are
    compared exactly), would import torch or numpy there, about 190 MB. Anything else is a
    TypeError that names where it sits."""
    kind = type(value)
    if kind in PLAIN_CLASSES:
        for f in fields(value):
            plain(getattr(value, f.name), f"{where}.{f.name}")
    elif kind is dict:
        for key, item in value.items():
            plain(key, f"a key of {where}")
            plain(item, f"{where}[{key!r}]")
    elif kind is list or kind is tuple:
        for i, item in enumerate(value):
            plain(item, f"{where}[{i}]")
    elif kind not in PLAIN_TYPES:
        raise TypeError(
            f"{where} is a {kind.__module__}.{kind.__qualname__}, not plain data; "
            "convert it (float(), int(), .tolist(), PNG bytes) before it leaves the worker."
        )
    return value


def summarize(result, data: Dataset) -> TrainingSummary:
    """Evaluate a finished (or stopped) run on the test split: plain data for the page."""
    model, arch = result.model, result.arch
    device = next(model.parameters()).device
    classes = display_classes(data.classes)
    ev = evaluate(model, data.test, arch, device, classes)
    pick = torch.randperm(len(data.test), generator=torch.Generator().manual_seed(0))[:GRID_IMAGES]
    seconds = float(result.train_seconds or 0.0)
    seen = int(result.images_seen or 0)
    return TrainingSummary(
        preset=str(result.preset),
        arch=str(arch),
        device=str(result.device),
        device_type=str(device.type),
        data=data.source,
        stopped=result.stopped,
        seconds=seconds,
        images_seen=seen,
        images_per_s=seen / seconds if seconds > 0 else 0.0,
        epochs_done=seen / max(1, len(data.train)),
        accuracy=float(ev.accuracy),
        flip_tta=bool(ev.flip_tta),
        per_class={str(k): float(v) for k, v in ev.per_class.items()},
        report=tuple(ev.report_lines()),
        confusion_png=confusion_png(ev.confusion, classes),
        grid_png=prediction_grid_png(
            data.test.images[pick], data.test.labels[pick], ev.predictions[pick], classes
        ),
        weights=save_state_dict(model),
        history=tuple(result.history),
    )


def train_job(
    source: dict, settings: dict, *, should_stop
) -> Generator[TrainingEvent, None, TrainingSummary]:
    """Read the data, train (stopping cleanly on request), evaluate: events, then the results."""
    check_batch_size(settings["batch_size"])
    data = load_source(source)
    yield DataRead(data.describe())
    device = resolve_device(settings["device_choice"])  # DeviceError before any work
    if int(settings.get("nproc") or 1) > 1:
        trained = yield from _in_processes(source, settings, should_stop)
        final = trained.result(len(data.classes))
        final.model.to(device)
        yield Evaluating()
        summary = replace(summarize(final, data), placement=trained.placement)
        return plain(summary, "the training result")
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
        if ev.kind == "start":
            event = Started(arch=ev.result.arch, device=ev.result.device)
        else:
            event = ev.plain()
        if ev.kind == "end":
            final = ev.result
        yield plain(event, f"the {ev.kind} event")
    yield Evaluating()
    return plain(summarize(final, data), "the training result")


def _in_processes(
    source: dict, settings: dict, should_stop
) -> Generator[TrainingEvent, None, Trained]:
    """Train in settings["nproc"] processes (DistributedDataParallel, gradviz.training.distributed):
    rank 0's Started and Progress events, then its Trained result. A job worker is a daemonic
    process, which multiprocessing forbids to start others; its ranks end with it all the same
    (each watches its parent, and the launcher ends them when it stops)."""
    if public_host():
        raise ValueError(
            "Training in several processes is for a host of your own, not a public one."
        )
    if settings["batch_size"] % int(settings["nproc"]):
        raise ValueError(
            f"Batch size {settings['batch_size']} does not split evenly over "
            f"{settings['nproc']} processes; choose a multiple of {settings['nproc']}."
        )
    multiprocessing.current_process().daemon = False
    spec = RunSpec(
        source=source,
        preset=settings["preset"],
        device=settings["device_choice"],
        epochs=settings["epochs"],
        batch_size=settings["batch_size"],
        lr=settings["lr"],
        time_limit=settings["time_limit"] or None,
        eval_each_epoch=True,
    )
    return (yield from launch(spec, int(settings["nproc"]), should_stop))


def evaluate_weights_job(
    source: dict, blob: bytes, *, should_stop
) -> Generator[DataRead, None, WeightsEvaluation]:
    """Load uploaded weights (weights_only) and evaluate them on the data's test split."""
    data = load_source(source)
    yield DataRead(data.describe())
    arch, model = load_weights(blob, num_classes=len(data.classes))
    classes = display_classes(data.classes)
    ev = evaluate(model, data.test, arch, "cpu", classes)
    result = WeightsEvaluation(
        arch=str(arch),
        accuracy=float(ev.accuracy),
        report=tuple(ev.report_lines()),
        confusion_png=confusion_png(ev.confusion, classes),
        test_images=len(data.test),
        data=data.source,
    )
    return plain(result, "the evaluation result")
