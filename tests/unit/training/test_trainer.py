"""The Trainer's parts, each on its own: settings, optimizer, the device-side sums, the
batches, stopping, the learning rate, the readings and the per-epoch evaluation."""

from __future__ import annotations

import time

import pytest
import torch

from gradviz.training import CLASSES
from gradviz.training.data import Dataset, Split
from gradviz.training.events import Progress
from gradviz.training.hardware import Precision
from gradviz.training.loop import (
    Meter,
    Options,
    ResidentSteps,
    Trainer,
    TutorialSteps,
    lr_factor,
    make_optimizer,
    settle_preset,
    train,
)
from gradviz.training.models import build_model
from gradviz.training.settings import PRESETS


def _toy(n_train=40, n_test=20) -> Dataset:
    g = torch.Generator().manual_seed(0)

    def split(n):
        labels = torch.arange(n) % 10
        images = torch.randint(0, 255, (n, 3, 32, 32), generator=g, dtype=torch.uint8)
        return Split(images, labels)

    return Dataset(split(n_train), split(n_test), CLASSES, "toy")


def _trainer(preset="fast", **opts) -> Trainer:
    p = settle_preset(preset, epochs=opts.pop("epochs", 2), batch_size=opts.pop("batch_size", 8))
    return Trainer(_toy(), p, "cpu", Options(**opts))


def test_settle_preset_types_over_the_preset_and_checks():
    p = settle_preset("fast", epochs=3, batch_size=16, lr=0.05)
    assert (p.epochs, p.batch_size, p.lr) == (3, 16, 0.05)
    assert p.arch == PRESETS["fast"].arch and p.weight_decay == PRESETS["fast"].weight_decay
    kept = settle_preset(PRESETS["tutorial"], epochs=None, batch_size=0, lr=None)
    assert kept == PRESETS["tutorial"]
    with pytest.raises(ValueError, match="learning rate above 0"):
        settle_preset("fast", lr=-1)
    with pytest.raises(ValueError, match="at least 1"):
        settle_preset("fast", epochs=-2)


def test_optimizer_spares_biases_from_weight_decay():
    fast = settle_preset("fast")
    model = build_model(fast.arch_for(torch.device("cpu")), 10)
    opt = make_optimizer(model, fast)
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == fast.weight_decay and no_decay["weight_decay"] == 0.0
    assert all(q.ndim > 1 for q in decay["params"]) and all(q.ndim <= 1 for q in no_decay["params"])
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))
    assert opt.defaults["nesterov"] and opt.defaults["lr"] == fast.lr
    tutorial = PRESETS["tutorial"]
    (group,) = make_optimizer(build_model("tutorial", 10), tutorial).param_groups
    assert group["weight_decay"] == 0 and group["momentum"] == 0.9 and not group["nesterov"]


def test_meter_sums_on_the_device_and_starts_over_when_read():
    meter = Meter(torch.device("cpu"))
    assert meter.read() == (None, None)
    meter.add(torch.tensor(4.0), torch.tensor(3), 4)
    meter.add(2.0, torch.tensor(1), 4)  # the tutorial's loss, already read as a float
    loss, accuracy = meter.read()
    assert loss == pytest.approx(6.0 / 8) and accuracy == pytest.approx(4 / 8)
    assert meter.read() == (None, None) and meter.count == 0


def test_resident_batches_cover_every_image_once_per_epoch():
    trainer = _trainer(batch_size=16)
    steps = trainer.steps
    assert isinstance(steps, ResidentSteps) and steps.x_all.dtype == torch.uint8
    batches = list(steps.batches())
    assert [len(b) for b in batches] == [16, 16, 8]
    assert sorted(torch.cat(batches).tolist()) == list(range(40))
    loss_sum, correct, nb = steps.step(batches[-1])
    assert nb == 8 and 0 <= int(correct) <= 8 and float(loss_sum) > 0


def test_the_tutorial_steps_through_a_data_loader():
    pytest.importorskip("torchvision")
    trainer = _trainer("tutorial", batch_size=4)
    assert isinstance(trainer.steps, TutorialSteps)
    batch = next(trainer.steps.batches())
    assert batch[0].shape == (4, 3, 32, 32) and batch[0].dtype == torch.float32
    loss_sum, correct, nb = trainer.steps.step(batch)
    assert isinstance(loss_sum, float) and nb == 4  # loss.item() every step, as the tutorial


def test_stop_reason_asks_first_then_watches_the_clock():
    asked = {"stop": False}
    trainer = _trainer(should_stop=lambda: asked["stop"], time_limit=10.0)
    trainer.t0 = time.perf_counter()
    assert trainer.stop_reason() is None
    trainer.t0 -= 11.0
    assert trainer.stop_reason() == "time limit"
    asked["stop"] = True
    assert trainer.stop_reason() == "stop requested"


def test_one_cycle_follows_steps_or_time_whichever_is_ahead():
    trainer = _trainer(time_limit=100.0)  # fast preset: one-cycle
    peak = trainer.p.lr
    trainer.t0 = time.perf_counter()
    trainer.step = trainer.steps_total // 2
    trainer.set_lr()
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(peak * lr_factor(0.5), rel=1e-3)
    trainer.t0 -= 90.0  # 90% of the time limit gone: time is ahead of the steps
    trainer.set_lr()
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(peak * lr_factor(0.9), rel=1e-3)
    tutorial = _trainer("tutorial", batch_size=4)  # no schedule: the lr stays
    tutorial.step = 5
    tutorial.set_lr()
    assert tutorial.optimizer.param_groups[0]["lr"] == PRESETS["tutorial"].lr


def test_a_reading_reads_the_meter_keeps_history_and_caps_eta_by_the_time_limit():
    trainer = _trainer(time_limit=5.0)
    trainer.t0 = trainer.last_emit = time.perf_counter() - 2.0
    trainer.step, trainer.seen = 3, 24
    trainer.meter.add(torch.tensor(12.0), torch.tensor(6), 24)
    event = trainer.reading("progress", 1)
    assert event.loss == pytest.approx(0.5) and event.accuracy == pytest.approx(0.25)
    assert event.images_total == 80 and event.steps_total == 10
    assert event.images_per_s == pytest.approx(12, rel=0.05)
    # 56 images left at 12/s is about 4.7 s, but the time limit leaves about 3 s.
    assert event.eta_s == pytest.approx(3.0, abs=0.1)
    assert trainer.history == [event.plain()] and type(trainer.history[0]) is Progress
    assert trainer.last_emit > trainer.t0 + 2.0 - 0.1
    assert trainer.meter.count == 0


def test_evaluating_each_epoch_is_not_training_time():
    trainer = _trainer(eval_each_epoch=True)
    trainer.t0 = time.perf_counter()
    before = trainer.t0
    event = trainer.end_epoch(1)
    assert event.kind == "epoch" and 0 <= event.test_accuracy <= 1
    assert trainer.t0 > before  # the clock moved on by the evaluation's time
    assert trainer.model.training
    plain = _trainer()
    assert plain.end_epoch(1).test_accuracy is None


def test_the_trainer_is_what_train_runs():
    """Same seed, same data: Trainer.run() and train() give the same readings and weights."""
    data = _toy()
    p = settle_preset("fast", epochs=2, batch_size=8)
    direct = list(Trainer(data, p, "cpu", Options(progress_every_s=0.0)).run())
    via = list(train(data, "fast", "cpu", epochs=2, batch_size=8, progress_every_s=0.0))
    assert [e.kind for e in direct] == [e.kind for e in via]
    assert [e.loss for e in direct] == [e.loss for e in via]
    a, b = direct[-1].result.model.state_dict(), via[-1].result.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_precision_plan_shapes_the_model_and_the_steps():
    trainer = _trainer(precision=Precision(channels_last=True, autocast_dtype=torch.bfloat16))
    weight = trainer.model.features[0].weight
    assert weight.is_contiguous(memory_format=torch.channels_last)
    assert trainer.steps.scaler is None
    scaled = _trainer(precision=Precision(autocast_dtype=torch.float16, grad_scaler=True))
    assert scaled.steps.scaler is not None
