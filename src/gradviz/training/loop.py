"""The `train` generator of progress events: presets settled, the steps of both paths, the
`Trainer` that runs them.

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
Devices and precision are gradviz.training.hardware, what the network is fed (augmentation,
normalisation) gradviz.training.inputs, the evaluation gradviz.training.evaluation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace

import torch
from torch import nn

from gradviz.training.data import Dataset, Split
from gradviz.training.evaluation import evaluate
from gradviz.training.events import Progress
from gradviz.training.hardware import Precision, device_name, plan_precision, resolve_device
from gradviz.training.inputs import TutorialImages, norm_tensors, random_crop_flip
from gradviz.training.models import build_model
from gradviz.training.settings import (
    PRESETS,
    Preset,
    preset_unavailable_reason,
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
