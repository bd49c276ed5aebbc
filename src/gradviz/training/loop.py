"""Presets, devices, the `train` generator of progress events, and evaluation.

Two paths share one event stream:

* tutorial: the tutorial's loop, faithfully: a DataLoader of batch 4 that converts one image at a
  time (ToTensor + Normalize), a host->device copy per batch, and `loss.item()` every step.
* fast: the whole dataset as uint8 tensors on the training device, large batches, random crop
  (padding 4) + horizontal flip done on batched tensors, SGD with Nesterov momentum, label
  smoothing and a one-cycle learning rate; on CUDA also channels_last, autocast (bf16 where
  supported, else fp16 with a GradScaler) and cudnn.benchmark. Loss and accuracy are summed on the
  device and read back only when a progress event is due.

`train` is the entry point; a `Trainer` does the run, in small parts: set-up (`settle_preset`,
the device, the model, `make_optimizer`, the data in a `ResidentSteps` or `TutorialSteps`, which
also do one step each), one epoch (`train_epoch`), the per-epoch evaluation (`end_epoch`),
stopping (`stop_reason`), the learning rate (`set_lr`) and the readings (`reading`, summed in a
`Meter`). Saving weights is the caller's (gradviz.training.checkpoint). The events are Progress
readings (gradviz.training.events, no torch) carrying the live result on start and end.
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


def settle_preset(
    preset: str | Preset,
    epochs: int | None = None,
    batch_size: int | None = None,
    lr: float | None = None,
) -> Preset:
    """The preset with the settings typed over it (None or 0: the preset's), checked: a
    ValueError says what cannot run."""
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
    return p


def make_optimizer(model: nn.Module, p: Preset) -> torch.optim.SGD:
    """SGD as the preset says; with weight decay, none on biases and norms (1-d parameters)."""
    if p.weight_decay:
        decay = [q for q in model.parameters() if q.ndim > 1]
        no_decay = [q for q in model.parameters() if q.ndim <= 1]
        groups = [
            {"params": decay, "weight_decay": p.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
    else:  # as the tutorial: optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
        groups = list(model.parameters())
    return torch.optim.SGD(groups, lr=p.lr, momentum=p.momentum, nesterov=p.nesterov)


class Meter:
    """Loss and correct predictions summed on the device since the last reading: the host
    waits for the device only in `read`, once per progress event."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.loss = torch.zeros((), device=device)
        self.correct = torch.zeros((), device=device, dtype=torch.int64)
        self.count = 0

    def add(self, loss_sum, correct: torch.Tensor, count: int) -> None:
        """loss_sum: the batch's loss times its size (a tensor, or a float already read)."""
        self.loss += loss_sum
        self.correct += correct
        self.count += count

    def read(self) -> tuple[float | None, float | None]:
        """(mean loss, accuracy) since the last read, None for both when nothing was added; starts
        over. The one host sync per event; on CUDA it also waits for the device's queued work."""
        loss = accuracy = None
        if self.count:
            loss = float(self.loss.item()) / self.count
            accuracy = float(self.correct.item()) / self.count
        self.loss.zero_()
        self.correct.zero_()
        self.count = 0
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return loss, accuracy


class Steps:
    """One training step at a time, as the chosen preset does it."""

    def __init__(self, model: nn.Module, optimizer, p: Preset, prec: Precision, device) -> None:
        self.model, self.optimizer, self.prec, self.device = model, optimizer, prec, device
        self.criterion = nn.CrossEntropyLoss(label_smoothing=p.label_smoothing)
        self.scaler = torch.amp.GradScaler(device.type) if prec.grad_scaler else None


class ResidentSteps(Steps):
    """The fast path: the whole split on the device as uint8, shuffled by index each epoch,
    augmented (random crop + flip) and normalised per batch on the device, then autocast
    and a GradScaler where the precision plan says so. Nothing is read back here."""

    def __init__(self, model, optimizer, p: Preset, prec: Precision, device, split: Split, arch):
        super().__init__(model, optimizer, p, prec, device)
        self.batch_size, self.augment = p.batch_size, p.augment
        self.x_all = split.images.to(device)
        self.y_all = split.labels.to(device)
        m, s = norm_tensors(arch, device)
        self.scale, self.shift = (1 / (255 * s)), (m / s)

    def batches(self) -> Iterator[torch.Tensor]:
        """This epoch's batches, as index tensors (the permutation is drawn now)."""
        n = len(self.y_all)
        perm = torch.randperm(n, device=self.device)
        return (perm[i : i + self.batch_size] for i in range(0, n, self.batch_size))

    def step(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """One step on a batch: (loss x batch size, correct predictions, batch size)."""
        xb, yb = self.x_all[batch], self.y_all[batch]
        if self.augment:
            xb = random_crop_flip(xb)
        xb = xb.float().mul_(self.scale).sub_(self.shift)
        if self.prec.channels_last:
            xb = xb.contiguous(memory_format=torch.channels_last)
        dtype = self.prec.autocast_dtype
        with torch.autocast(
            self.device.type, dtype=dtype or torch.float32, enabled=dtype is not None
        ):
            out = self.model(xb)
            loss = self.criterion(out, yb)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        nb = yb.shape[0]
        return loss.detach().float() * nb, (out.detach().argmax(1) == yb).sum(), nb


class TutorialSteps(Steps):
    """The tutorial's loop as written: a DataLoader of PIL images, a copy to the device per
    batch, and loss.item() every step."""

    def __init__(self, model, optimizer, p, prec, device, split: Split, arch, seed: int | None):
        super().__init__(model, optimizer, p, prec, device)
        gen = torch.Generator().manual_seed(seed if seed is not None else 0)
        self.loader = torch.utils.data.DataLoader(
            TutorialImages(split, arch), batch_size=p.batch_size, shuffle=True, generator=gen
        )

    def batches(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return iter(self.loader)

    def step(self, batch) -> tuple[float, torch.Tensor, int]:
        inputs, labels = batch
        inputs, labels = inputs.to(self.device), labels.to(self.device)
        self.optimizer.zero_grad()
        outputs = self.model(inputs)
        loss = self.criterion(outputs, labels)
        loss.backward()
        self.optimizer.step()
        running = loss.item()
        nb = labels.shape[0]
        return running * nb, (outputs.detach().argmax(1) == labels).sum(), nb


@dataclass
class Options:
    """How a run is watched (stop, time limit, progress, evaluation) and seeded, laid out and
    threaded: the arguments of `train`, which documents them."""

    time_limit: float | None = None
    should_stop: Callable[[], bool] | None = None
    progress_every_s: float = 0.5
    eval_each_epoch: bool = False
    seed: int | None = 0
    precision: Precision | None = None
    threads: int | None = None


class Trainer:
    """One training run: everything is set up on construction (device, model, optimizer,
    data), `run()` trains and yields the Events that `train` documents."""

    def __init__(self, data: Dataset, p: Preset, device: str | torch.device, opts: Options):
        self.data, self.p, self.opts = data, p, opts
        self.dev = device if isinstance(device, torch.device) else resolve_device(device)
        if opts.threads:
            torch.set_num_threads(opts.threads)
        if opts.seed is not None:
            torch.manual_seed(opts.seed)
        self.arch = p.arch_for(self.dev)
        self.prec = (
            opts.precision if opts.precision is not None else plan_precision(p, self.dev.type)
        )
        self.ranks = 1  # processes training together; each counts its images times this
        self.model = self._build_model()
        self.optimizer = make_optimizer(self.model, p)
        self.n = len(data.train)
        self.steps_per_epoch = math.ceil(self.n / p.batch_size)
        self.steps_total = self.steps_per_epoch * p.epochs
        self.images_total = self.n * p.epochs
        self.meter = Meter(self.dev)
        self.step = self.seen = 0
        self.t0 = self.last_emit = 0.0
        self.history: list[Progress] = []
        self.stopped: str | None = None
        self.model.train()
        if p.resident:
            self.steps = ResidentSteps(
                self.model, self.optimizer, p, self.prec, self.dev, data.train, self.arch
            )
        else:
            self.steps = TutorialSteps(
                self.model, self.optimizer, p, self.prec, self.dev, data.train, self.arch, opts.seed
            )

    def _build_model(self) -> nn.Module:
        model = build_model(self.arch, len(self.data.classes)).to(self.dev)
        if self.prec.cudnn_benchmark and self.dev.type == "cuda":
            torch.backends.cudnn.benchmark = True
        if self.prec.channels_last:
            model = model.to(memory_format=torch.channels_last)
        return model

    # -- the run

    def run(self) -> Iterator[Event]:
        self.t0 = self.last_emit = time.perf_counter()
        # The live model (trained in place): a caller interrupted mid-run still has what it learned.
        yield self.event("start", 1, result=self.result(0.0, 0.0))
        epoch = 0
        for epoch in range(1, self.p.epochs + 1):
            yield from self.train_epoch(epoch)
            if self.stopped:
                break
            yield self.end_epoch(epoch)
        end = self.reading("end", epoch, stopped=self.stopped)
        self.model.eval()
        yield replace(end, result=self.result(end.elapsed_s, end.images_per_s))

    def train_epoch(self, epoch: int) -> Iterator[Event]:
        """The epoch's steps, with progress readings between them; ends early (self.stopped
        says why) when a stop is asked for or the time limit has passed."""
        self.model.train()
        for epoch_step, batch in enumerate(self.steps.batches(), start=1):
            self.stopped = self.stop_reason()
            if self.stopped:
                return
            self.set_lr()
            loss_sum, correct, nb = self.steps.step(batch)
            self.meter.add(loss_sum, correct, nb)
            self.step += 1
            self.seen += nb * self.ranks
            # The last step of an epoch reports in the epoch event that follows at once.
            due = time.perf_counter() - self.last_emit >= self.opts.progress_every_s
            if due and epoch_step < self.steps_per_epoch:
                yield self.reading("progress", epoch)

    def end_epoch(self, epoch: int) -> Event:
        """The epoch's reading, with the test accuracy when each epoch is evaluated (its time is
        not counted as training time)."""
        if not self.opts.eval_each_epoch:
            return self.reading("epoch", epoch)
        t_eval = time.perf_counter()
        accuracy = evaluate(
            self.network(),
            self.data.test,
            self.arch,
            self.dev,
            channels_last=self.prec.channels_last,
        ).accuracy
        self.model.train()
        self.t0 += time.perf_counter() - t_eval
        return self.reading("epoch", epoch, test_accuracy=accuracy)

    def network(self) -> nn.Module:
        """The network itself (a subclass may train it through a wrapper such as DDP)."""
        return self.model

    # -- stopping and the learning rate

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def clock(self) -> float:
        """The training time the learning rate follows (processes training together agree on one)."""
        return self.elapsed()

    def stop_reason(self) -> str | None:
        if self.opts.should_stop is not None and self.opts.should_stop():
            return "stop requested"
        if self.opts.time_limit and self.elapsed() >= self.opts.time_limit:
            return "time limit"
        return None

    def set_lr(self) -> None:
        """The one-cycle schedule, over steps or, with a time limit, over time if that is ahead."""
        if not self.p.one_cycle:
            return
        progress = self.step / self.steps_total
        if self.opts.time_limit:
            progress = max(progress, self.clock() / self.opts.time_limit)
        for group in self.optimizer.param_groups:
            group["lr"] = self.p.lr * lr_factor(progress)

    # -- readings and results

    def event(self, kind: str, epoch: int, **extra) -> Event:
        t = self.elapsed()
        rate = self.seen / t if t > 0 else 0.0
        left = self.images_total - self.seen
        eta = left / rate if rate > 0 else None
        if self.opts.time_limit and eta is not None:
            eta = min(eta, max(0.0, self.opts.time_limit - t))
        return Event(
            kind=kind,
            epoch=epoch,
            epochs=self.p.epochs,
            step=self.step,
            steps_total=self.steps_total,
            images_seen=self.seen,
            images_total=self.images_total,
            elapsed_s=t,
            images_per_s=rate,
            eta_s=eta,
            lr=self.optimizer.param_groups[0]["lr"],
            **extra,
        )

    def reading(self, kind: str, epoch: int, **extra) -> Event:
        """An event with the loss and accuracy since the last one (read back from the device
        now), kept in the history."""
        loss, accuracy = self.meter.read()
        event = self.event(kind, epoch, loss=loss, accuracy=accuracy, **extra)
        self.history.append(event.plain())
        self.last_emit = time.perf_counter()
        return event

    def result(self, seconds: float, rate: float) -> TrainResult:
        return TrainResult(
            model=self.network(),
            arch=self.arch,
            preset=self.p.name,
            device=device_name(self.dev),
            epochs_done=self.seen / self.n if self.seen else 0.0,
            images_seen=self.seen,
            train_seconds=seconds,
            images_per_s=rate,
            stopped=self.stopped,
            history=self.history,
        )


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
    Nothing runs before the first event is asked for.
    """
    p = settle_preset(preset, epochs, batch_size, lr)
    opts = Options(
        time_limit=time_limit,
        should_stop=should_stop,
        progress_every_s=progress_every_s,
        eval_each_epoch=eval_each_epoch,
        seed=seed,
        precision=precision,
        threads=threads,
    )
    yield from Trainer(data, p, device, opts).run()


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
