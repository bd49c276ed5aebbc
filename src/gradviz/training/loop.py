"""Presets, devices, the `train` generator of progress events, and evaluation.

Two paths share one event stream:

* tutorial: the tutorial's loop, faithfully: a DataLoader of batch 4 that converts one image at a
  time (ToTensor + Normalize), a host->device copy per batch, and `loss.item()` every step.
* fast: the whole dataset as uint8 tensors on the training device, large batches, random crop
  (padding 4) + horizontal flip done on batched tensors, SGD with Nesterov momentum, label
  smoothing and a one-cycle learning rate; on CUDA also channels_last, autocast (bf16 where
  supported, else fp16 with a GradScaler) and cudnn.benchmark. Loss and accuracy are summed on the
  device and read back only when a progress event is due.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace

import torch
import torch.nn.functional as F
from torch import nn

from gradviz.devices.simulated import mps_available
from gradviz.training.data import Dataset, Split
from gradviz.training.events import Progress
from gradviz.training.models import build_model, normalization_for
from gradviz.training.settings import (
    PRESETS,
    Preset,
    TrainingDevices,
    preset_unavailable_reason,
)


class DeviceError(Exception):
    """The requested device is not present on this host; the message says why."""


# ----------------------------------------------------------------------------- devices


def host_devices() -> TrainingDevices:
    """Which devices this process's torch can train on (the server asks host.facts() instead)."""
    return TrainingDevices(bool(torch.cuda.is_available()), mps_available(), torch.version.cuda)


def available_devices() -> list[str]:
    """Device choices on this host: auto and cpu always, cuda and mps where present."""
    return host_devices().choices()


def device_unavailable_reason(name: str) -> str | None:
    """Why a device cannot be used here, or None when it can."""
    return host_devices().unavailable_reason(name)


def resolve_device(name: str) -> torch.device:
    """'auto' picks cuda, then mps, then cpu. Asking for an absent device raises DeviceError."""
    name = (name or "auto").strip().lower()
    reason = device_unavailable_reason(name)
    if reason:
        raise DeviceError(f"Cannot train on {name}: {reason}. Choose cpu or auto.")
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if mps_available() else torch.device("cpu")
    return torch.device(name)


def device_name(device: torch.device) -> str:
    """The device a training ran on, with the GPU's name: cuda (NVIDIA H100 80GB HBM3)."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


# ------------------------------------------------------------------ precision (presets: settings)


@dataclass(frozen=True)
class Precision:
    """Speed settings of the fast preset: channels_last on CPU and CUDA, the rest CUDA only."""

    channels_last: bool = False
    autocast_dtype: torch.dtype | None = None
    grad_scaler: bool = False
    cudnn_benchmark: bool = False


def plan_precision(
    preset: Preset, device_type: str, bf16_supported: bool | None = None
) -> Precision:
    """For the fast preset: channels_last + autocast (bf16, else fp16 with a GradScaler) +
    cudnn.benchmark on CUDA, and channels_last alone on the CPU (oneDNN's convolutions run the
    fast preset's net about 1.35x faster in NHWC on 2 cores; docs/BENCHMARKS.md). Nothing for the
    tutorial preset, which stays as the tutorial wrote it, nor on MPS."""
    if not preset.resident:
        return Precision()
    if device_type == "cpu":
        return Precision(channels_last=True)
    if device_type != "cuda":
        return Precision()
    if bf16_supported is None:
        bf16_supported = torch.cuda.is_bf16_supported()
    dtype = torch.bfloat16 if bf16_supported else torch.float16
    return Precision(
        channels_last=True,
        autocast_dtype=dtype,
        grad_scaler=dtype == torch.float16,
        cudnn_benchmark=True,
    )


# ----------------------------------------------------------------------------- events


@dataclass
class TrainResult:
    model: nn.Module
    arch: str
    preset: str
    device: str
    epochs_done: float
    images_seen: int
    train_seconds: float
    images_per_s: float
    stopped: str | None  # None: ran to the end; else "stop requested" / "time limit"
    history: list[Progress] = field(default_factory=list)  # every reading but start


@dataclass(frozen=True)
class Event(Progress):
    """One progress reading in the process that trains. kind: start | progress | epoch | end.

    `result` is set on start (the live model being trained, history filling as it goes) and on
    end (the final numbers). It holds the model, so an Event never leaves the worker: `plain()`
    is the reading alone, which does (gradviz.training.events)."""

    result: TrainResult | None = None

    def plain(self) -> Progress:
        return Progress(**{f.name: getattr(self, f.name) for f in fields(Progress)})


def lr_factor(progress: float, warmup: float = 0.2, start: float = 0.1) -> float:
    """One-cycle shape: linear from start to 1 over `warmup`, then linear down to 0 at 1."""
    p = min(max(progress, 0.0), 1.0)
    if p < warmup:
        return start + (1 - start) * p / warmup
    return max(0.0, (1 - p) / (1 - warmup))


# ----------------------------------------------------------------------------- augmentation


def random_crop_flip(x: torch.Tensor, padding: int = 4, generator=None) -> torch.Tensor:
    """Random crop with zero padding + random horizontal flip, for a whole batch [B,C,H,W] at once."""
    b, c, h, w = x.shape
    dev = x.device
    padded = F.pad(x, (padding, padding, padding, padding))
    dy = torch.randint(0, 2 * padding + 1, (b,), device=dev, generator=generator)
    dx = torch.randint(0, 2 * padding + 1, (b,), device=dev, generator=generator)
    rows = (dy[:, None] + torch.arange(h, device=dev))[:, None, :, None]
    cols = (dx[:, None] + torch.arange(w, device=dev))[:, None, None, :]
    bi = torch.arange(b, device=dev)[:, None, None, None]
    ci = torch.arange(c, device=dev)[None, :, None, None]
    out = padded[bi, ci, rows, cols]
    flip = torch.rand(b, device=dev, generator=generator) < 0.5
    return torch.where(flip[:, None, None, None], out.flip(3), out)


def norm_tensors(arch: str, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    mean, std = normalization_for(arch)
    m = torch.tensor(mean, device=device).view(1, 3, 1, 1)
    s = torch.tensor(std, device=device).view(1, 3, 1, 1)
    return m, s


def to_input(images_u8: torch.Tensor, arch: str, channels_last: bool = False) -> torch.Tensor:
    """uint8 [B,3,H,W] -> normalised float (ToTensor + Normalize for the architecture)."""
    m, s = norm_tensors(arch, images_u8.device)
    x = (images_u8.float().div_(255) - m) / s
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


class TutorialImages(torch.utils.data.Dataset):
    """Like torchvision.datasets.CIFAR10 with the tutorial's transform: each item becomes a PIL
    image, then ToTensor() and Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)), one image at a time."""

    def __init__(self, split: Split, arch: str) -> None:
        from torchvision import transforms

        self.images = (
            split.images.permute(0, 2, 3, 1).contiguous().numpy()
        )  # HWC, as CIFAR10 keeps it
        self.labels = split.labels.tolist()
        mean, std = normalization_for(arch)
        self.transform = transforms.Compose(
            [transforms.ToTensor(), transforms.Normalize(mean, std)]
        )

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        from PIL import Image

        return self.transform(Image.fromarray(self.images[i])), self.labels[i]


# ----------------------------------------------------------------------------- training


def train(
    data: Dataset,
    preset: str | Preset = "fast",
    device: str | torch.device = "auto",
    epochs: int | None = None,
    batch_size: int | None = None,
    lr: float | None = None,
    time_limit: float | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress_every_s: float = 0.5,
    eval_each_epoch: bool = False,
    seed: int | None = 0,
    precision: Precision | None = None,
    threads: int | None = None,
) -> Iterator[Event]:
    """Train and yield Events: one `start`, `progress` at most every progress_every_s, one `epoch`
    per finished epoch, and a final `end` whose `result` holds the model (also when stopped).

    should_stop is polled every step; when it returns True (or time_limit seconds of training have
    passed) the loop ends after the current step and the model keeps what it learned.
    """
    p = PRESETS[preset] if isinstance(preset, str) else preset
    p = replace(
        p,
        epochs=int(epochs) if epochs else p.epochs,
        batch_size=int(batch_size) if batch_size else p.batch_size,
        lr=float(lr) if lr else p.lr,
    )
    if p.epochs < 1 or p.batch_size < 1 or p.lr <= 0:
        raise ValueError("epochs and batch size must be at least 1 and the learning rate above 0.")
    if reason := preset_unavailable_reason(p):
        raise ValueError(reason)
    dev = device if isinstance(device, torch.device) else resolve_device(device)
    if threads:
        torch.set_num_threads(threads)
    if seed is not None:
        torch.manual_seed(seed)
    arch = p.arch_for(dev)
    num_classes = len(data.classes)
    model = build_model(arch, num_classes).to(dev)
    prec = precision if precision is not None else plan_precision(p, dev.type)
    if prec.cudnn_benchmark and dev.type == "cuda":
        torch.backends.cudnn.benchmark = True
    if prec.channels_last:
        model = model.to(memory_format=torch.channels_last)

    n = len(data.train)
    steps_per_epoch = math.ceil(n / p.batch_size)
    steps_total = steps_per_epoch * p.epochs
    images_total = n * p.epochs
    if p.weight_decay:
        decay = [q for q in model.parameters() if q.ndim > 1]
        no_decay = [q for q in model.parameters() if q.ndim <= 1]
        groups = [
            {"params": decay, "weight_decay": p.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
    else:  # as the tutorial: optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
        groups = list(model.parameters())
    optimizer = torch.optim.SGD(groups, lr=p.lr, momentum=p.momentum, nesterov=p.nesterov)
    criterion = nn.CrossEntropyLoss(label_smoothing=p.label_smoothing)
    scaler = torch.amp.GradScaler(dev.type) if prec.grad_scaler else None

    state = {"step": 0, "seen": 0, "last_emit": 0.0, "t0": 0.0}
    history: list[Progress] = []
    sums = {
        "loss": torch.zeros((), device=dev),
        "correct": torch.zeros((), device=dev, dtype=torch.int64),
        "count": 0,
    }
    stopped: str | None = None

    def elapsed() -> float:
        return time.perf_counter() - state["t0"]

    def make_event(kind: str, epoch: int, **extra) -> Event:
        t = elapsed()
        rate = state["seen"] / t if t > 0 else 0.0
        left = images_total - state["seen"]
        eta = left / rate if rate > 0 else None
        if time_limit and eta is not None:
            eta = min(eta, max(0.0, time_limit - t))
        return Event(
            kind=kind,
            epoch=epoch,
            epochs=p.epochs,
            step=state["step"],
            steps_total=steps_total,
            images_seen=state["seen"],
            images_total=images_total,
            elapsed_s=t,
            images_per_s=rate,
            eta_s=eta,
            lr=optimizer.param_groups[0]["lr"],
            **extra,
        )

    def drain(kind: str, epoch: int, **extra) -> Event:
        # The one host sync per event: read the summed loss/correct back from the device.
        count = sums["count"]
        loss = accuracy = None
        if count:
            loss = float(sums["loss"].item()) / count
            accuracy = float(sums["correct"].item()) / count
        sums["loss"].zero_()
        sums["correct"].zero_()
        sums["count"] = 0
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        event = make_event(kind, epoch, loss=loss, accuracy=accuracy, **extra)
        history.append(event.plain())
        state["last_emit"] = time.perf_counter()
        return event

    def want_stop() -> str | None:
        if should_stop is not None and should_stop():
            return "stop requested"
        if time_limit and elapsed() >= time_limit:
            return "time limit"
        return None

    def set_lr() -> None:
        if not p.one_cycle:
            return
        progress = state["step"] / steps_total
        if time_limit:
            progress = max(progress, elapsed() / time_limit)
        for group in optimizer.param_groups:
            group["lr"] = p.lr * lr_factor(progress)

    model.train()
    if p.resident:
        x_all = data.train.images.to(dev)
        y_all = data.train.labels.to(dev)
        m, s = norm_tensors(arch, dev)
        scale, shift = (1 / (255 * s)), (m / s)
    else:
        gen = torch.Generator().manual_seed(seed if seed is not None else 0)
        loader = torch.utils.data.DataLoader(
            TutorialImages(data.train, arch), batch_size=p.batch_size, shuffle=True, generator=gen
        )

    state["t0"] = time.perf_counter()
    state["last_emit"] = state["t0"]
    # The live model (trained in place): a caller interrupted mid-run still has what it learned.
    start_result = TrainResult(
        model=model,
        arch=arch,
        preset=p.name,
        device=device_name(dev),
        epochs_done=0.0,
        images_seen=0,
        train_seconds=0.0,
        images_per_s=0.0,
        stopped=None,
        history=history,
    )
    yield make_event("start", 1, result=start_result)
    epoch = 0
    for epoch in range(1, p.epochs + 1):
        model.train()
        if p.resident:
            perm = torch.randperm(n, device=dev)
            batches = ((perm[i : i + p.batch_size]) for i in range(0, n, p.batch_size))
        else:
            batches = iter(loader)
        for epoch_step, batch in enumerate(batches, start=1):
            stopped = want_stop()
            if stopped:
                break
            set_lr()
            if p.resident:
                xb = x_all[batch]
                yb = y_all[batch]
                if p.augment:
                    xb = random_crop_flip(xb)
                xb = xb.float().mul_(scale).sub_(shift)
                if prec.channels_last:
                    xb = xb.contiguous(memory_format=torch.channels_last)
                with torch.autocast(
                    dev.type,
                    dtype=prec.autocast_dtype or torch.float32,
                    enabled=prec.autocast_dtype is not None,
                ):
                    out = model(xb)
                    loss = criterion(out, yb)
                optimizer.zero_grad(set_to_none=True)
                if scaler is not None:
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    loss.backward()
                    optimizer.step()
                nb = yb.shape[0]
                sums["loss"] += loss.detach().float() * nb
                sums["correct"] += (out.detach().argmax(1) == yb).sum()
            else:
                # The tutorial's loop as written: copy each batch, step, loss.item() every step.
                inputs, labels = batch
                inputs, labels = inputs.to(dev), labels.to(dev)
                optimizer.zero_grad()
                outputs = model(inputs)
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()
                running = loss.item()
                nb = labels.shape[0]
                sums["loss"] += running * nb
                sums["correct"] += (outputs.detach().argmax(1) == labels).sum()
            sums["count"] += nb
            state["step"] += 1
            state["seen"] += nb
            # The last step of an epoch reports in the epoch event that follows at once.
            due = time.perf_counter() - state["last_emit"] >= progress_every_s
            if due and epoch_step < steps_per_epoch:
                yield drain("progress", epoch)
        if stopped:
            break
        extra = {}
        if eval_each_epoch:
            t_eval = time.perf_counter()
            extra["test_accuracy"] = evaluate(
                model, data.test, arch, dev, channels_last=prec.channels_last
            ).accuracy
            model.train()
            state["t0"] += time.perf_counter() - t_eval  # evaluation time is not training time
        yield drain("epoch", epoch, **extra)

    end = drain("end", epoch, stopped=stopped)
    model.eval()
    end = replace(
        end,
        result=TrainResult(
            model=model,
            arch=arch,
            preset=p.name,
            device=device_name(dev),
            epochs_done=state["seen"] / n,
            images_seen=state["seen"],
            train_seconds=end.elapsed_s,
            images_per_s=end.images_per_s,
            stopped=stopped,
            history=history,
        ),
    )
    yield end


def run_to_end(events: Iterator[Event]) -> TrainResult:
    """Consume a train() generator and return its result."""
    result = None
    for event in events:
        if event.kind == "end":
            result = event.result
    assert result is not None
    return result


# ----------------------------------------------------------------------------- evaluation


def uses_flip_tta(arch: str) -> bool:
    """The fast networks, trained on randomly flipped images, are scored on each test image
    and its mirror image with their logits summed (test-time augmentation, as fast CIFAR-10
    recipes do: +0.6 and +1.4 points on the subset's test images after 20 epochs, two seeds).
    The tutorial's network is scored as the tutorial scores it."""
    return arch != "tutorial"


@dataclass
class Evaluation:
    accuracy: float
    per_class: dict[str, float]
    confusion: torch.Tensor  # int64 [C, C], rows true, columns predicted
    predictions: torch.Tensor  # int64 [N]
    classes: tuple[str, ...]
    flip_tta: bool = False  # each image scored with its mirror image, logits summed

    def report_lines(self) -> list[str]:
        """As the tutorial prints them."""
        how = " (each image and its mirror image, averaged)" if self.flip_tta else ""
        lines = [
            f"Accuracy of the network on the {len(self.predictions)} test images: {100 * self.accuracy:.1f} %{how}"
        ]
        lines += [
            f"Accuracy for class: {name:5s} is {100 * acc:.1f} %"
            for name, acc in self.per_class.items()
        ]
        return lines


@torch.no_grad()
def evaluate(
    model: nn.Module,
    split: Split,
    arch: str,
    device: str | torch.device = "cpu",
    classes: tuple[str, ...] | None = None,
    batch_size: int = 250,  # small: on a 690 MB host a batch of 1000 cost ~100 MB more at peak
    channels_last: bool = False,
    flip_tta: bool | None = None,
) -> Evaluation:
    """Overall and per-class accuracy and the confusion matrix on a split.

    flip_tta (default: uses_flip_tta(arch)) scores each image together with its mirror image."""
    dev = device if isinstance(device, torch.device) else resolve_device(device)
    tta = uses_flip_tta(arch) if flip_tta is None else bool(flip_tta)
    was_training = model.training
    model.eval()
    preds = []
    for i in range(0, len(split), batch_size):
        xb = to_input(split.images[i : i + batch_size].to(dev), arch, channels_last)
        logits = model(xb)
        if tta:
            logits = logits + model(xb.flip(3))
        preds.append(logits.argmax(1).cpu())
    if was_training:
        model.train()
    pred = torch.cat(preds) if preds else torch.zeros(0, dtype=torch.int64)
    num_classes = len(classes) if classes else int(model_output_count(model))
    names = tuple(classes) if classes else tuple(str(i) for i in range(num_classes))
    truth = split.labels
    confusion = torch.bincount(truth * num_classes + pred, minlength=num_classes**2).view(
        num_classes, num_classes
    )
    totals = confusion.sum(1)
    per_class = {
        names[c]: (float(confusion[c, c]) / float(totals[c])) if totals[c] else float("nan")
        for c in range(num_classes)
    }
    accuracy = float((pred == truth).float().mean()) if len(truth) else float("nan")
    return Evaluation(accuracy, per_class, confusion, pred, names, flip_tta=tta)


def model_output_count(model: nn.Module) -> int:
    last = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]
    return last.out_features
