"""The training loop: events, stop flag, time limit, presets, GPU settings planned on CPU, evaluate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from gradviz.training.data import Dataset, Split, load_image_folder
from gradviz.training.evaluation import evaluate
from gradviz.training.hardware import (
    DeviceError,
    Precision,
    available_devices,
    device_unavailable_reason,
    plan_precision,
    resolve_device,
)
from gradviz.training.inputs import random_crop_flip
from gradviz.training.loop import lr_factor, run_to_end, train
from gradviz.training.settings import PRESETS

SUBSET = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "cifar10-subset"


def _toy(n_train=64, n_test=40, seed=0) -> Dataset:
    """Ten classes told apart by the colour of the image: learnable in a few steps."""
    g = torch.Generator().manual_seed(seed)

    def split(n):
        labels = torch.arange(n) % 10
        base = (labels * 25).view(n, 1, 1, 1).expand(n, 3, 32, 32).clone()
        noise = torch.randint(0, 10, (n, 3, 32, 32), generator=g)
        return Split((base + noise).to(torch.uint8), labels)

    from gradviz.training import CLASSES as classes

    return Dataset(split(n_train), split(n_test), classes, "toy")


@pytest.mark.parametrize("preset", ["tutorial", "fast"])
def test_events_in_order_with_required_fields(preset):
    batch = 4 if preset == "tutorial" else 16
    events = list(train(_toy(), preset, "cpu", epochs=2, batch_size=batch, progress_every_s=0.0))
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert kinds.count("epoch") == 2
    assert "progress" in kinds
    steps_per_epoch = 64 // batch
    end = events[-1]
    assert end.step == end.steps_total == 2 * steps_per_epoch
    assert end.images_seen == end.images_total == 128
    assert end.fraction == 1.0 and end.stopped is None
    seen = [e.images_seen for e in events]
    assert seen == sorted(seen)
    for e in events[1:]:
        assert e.images_per_s > 0 and e.eta_s is not None and e.eta_s >= 0
        assert e.loss is None or e.loss > 0
        assert e.accuracy is None or 0 <= e.accuracy <= 1
    assert events[-2].eta_s == pytest.approx(0.0)  # after the last epoch
    result = end.result
    assert result.images_seen == 128 and result.epochs_done == 2
    assert result.arch == ("tutorial" if preset == "tutorial" else "fast-cpu")
    assert result.device == "cpu"
    assert len(result.history) == len(events) - 1  # every event but start


def test_stop_flag_ends_cleanly_and_keeps_weights():
    calls = {"n": 0}

    def should_stop():
        calls["n"] += 1
        return calls["n"] > 3  # stop before the 4th step

    events = list(train(_toy(), "fast", "cpu", epochs=5, batch_size=8, should_stop=should_stop))
    end = events[-1]
    assert end.kind == "end" and end.stopped == "stop requested"
    assert end.result.stopped == "stop requested"
    assert end.step == 3 and end.images_seen == 24
    assert not any(e.kind == "epoch" for e in events)
    # The model learned something and is usable.
    assert evaluate(end.result.model, _toy().test, end.result.arch).confusion.sum() == 40


def test_time_limit_stops():
    events = list(train(_toy(n_train=512), "tutorial", "cpu", epochs=50, time_limit=0.2))
    assert events[-1].stopped == "time limit"
    assert events[-1].images_seen < events[-1].images_total


def test_editable_settings_and_validation():
    end = list(train(_toy(), "fast", "cpu", epochs=1, batch_size=32, lr=0.05))[-1]
    assert end.steps_total == 2
    with pytest.raises(ValueError):
        list(train(_toy(), "fast", "cpu", epochs=1, lr=-1))


def test_fast_learns_toy_and_evaluate_reports():
    data = _toy(n_train=320, n_test=100)
    result = run_to_end(train(data, "fast", "cpu", epochs=8, batch_size=32, lr=0.2))
    ev = evaluate(result.model, data.test, result.arch, "cpu", data.classes)
    assert ev.accuracy > 0.5
    assert ev.confusion.shape == (10, 10) and int(ev.confusion.sum()) == 100
    assert sum(int(ev.confusion[i, i]) for i in range(10)) == round(ev.accuracy * 100)
    assert list(ev.per_class) == list(data.classes)
    lines = ev.report_lines()
    assert lines[0].startswith("Accuracy of the network on the 100 test images:")
    assert lines[1].startswith("Accuracy for class: plane is")


def test_eval_each_epoch_gives_test_accuracy():
    events = list(train(_toy(), "fast", "cpu", epochs=2, batch_size=32, eval_each_epoch=True))
    assert all(e.test_accuracy is not None for e in events if e.kind == "epoch")


def test_devices_on_this_host():
    assert available_devices()[:2] == ["auto", "cpu"]
    assert resolve_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        assert "cuda" not in available_devices()
        assert device_unavailable_reason("cuda")
        with pytest.raises(DeviceError, match="Cannot train on cuda"):
            resolve_device("cuda")
        assert resolve_device("auto").type in ("cpu", "mps")
    assert "unknown device" in device_unavailable_reason("tpu")


def test_the_server_sees_the_same_devices_from_host_facts():
    """The page asks host.facts() (gathered in a worker) instead of torch: same choices and
    the same reasons as the worker's own check."""
    from gradviz.devices.facts import gather
    from gradviz.training.settings import TrainingDevices

    found = TrainingDevices.from_facts(gather())
    assert found.choices() == available_devices()
    for name in ("auto", "cpu", "cuda", "mps", "tpu"):
        assert found.unavailable_reason(name) == device_unavailable_reason(name)
    off = TrainingDevices(cuda=False, mps=False, cuda_build=None)
    assert off.choices() == ["auto", "cpu"]
    assert off.unavailable_reason("cuda") == "this PyTorch build has no CUDA support"
    assert "built for CUDA 12.4" in TrainingDevices(False, False, "12.4").unavailable_reason("cuda")
    assert TrainingDevices(True, True).choices() == ["auto", "cpu", "cuda", "mps"]


def test_precision_plan():
    fast, tutorial = PRESETS["fast"], PRESETS["tutorial"]
    assert plan_precision(fast, "cpu") == Precision(channels_last=True)
    assert plan_precision(fast, "mps") == Precision()
    assert plan_precision(tutorial, "cpu") == Precision()
    assert plan_precision(tutorial, "cuda", bf16_supported=True) == Precision()
    bf16 = plan_precision(fast, "cuda", bf16_supported=True)
    assert bf16 == Precision(
        channels_last=True, autocast_dtype=torch.bfloat16, grad_scaler=False, cudnn_benchmark=True
    )
    fp16 = plan_precision(fast, "cuda", bf16_supported=False)
    assert fp16.autocast_dtype == torch.float16 and fp16.grad_scaler


@pytest.mark.parametrize(
    "precision",
    [
        Precision(channels_last=True, autocast_dtype=torch.bfloat16),
        Precision(channels_last=True, autocast_dtype=torch.float16, grad_scaler=True),
    ],
)
def test_gpu_code_path_runs_on_cpu(precision):
    """The channels_last / autocast / GradScaler branch, exercised on the CPU backend."""
    events = list(train(_toy(), "fast", "cpu", epochs=1, batch_size=32, precision=precision))
    end = events[-1]
    assert end.images_seen == 64
    assert end.result.model.features[0].weight.is_contiguous(memory_format=torch.channels_last)
    assert torch.isfinite(end.result.model.head.weight).all()


def test_random_crop_flip_is_a_shifted_copy():
    x = torch.randint(0, 255, (64, 3, 32, 32), dtype=torch.uint8)
    y = random_crop_flip(x, padding=4, generator=torch.Generator().manual_seed(0))
    assert y.shape == x.shape and y.dtype == torch.uint8
    # Each output is the input (maybe flipped) shifted by at most 4 pixels, zeros outside.
    for i in range(8):
        found = False
        for cand in (x[i], x[i].flip(2)):
            padded = torch.nn.functional.pad(cand, (4, 4, 4, 4))
            for dy in range(9):
                for dx in range(9):
                    if torch.equal(padded[:, dy : dy + 32, dx : dx + 32], y[i]):
                        found = True
        assert found


def test_lr_factor_shape():
    assert lr_factor(0.0) == pytest.approx(0.1)
    assert lr_factor(0.2) == pytest.approx(1.0)
    assert lr_factor(1.0) == 0.0
    assert lr_factor(0.6) == pytest.approx(0.5)


def test_tutorial_preset_is_the_tutorials():
    p = PRESETS["tutorial"]
    assert (p.arch, p.epochs, p.batch_size, p.lr, p.momentum, p.nesterov) == (
        "tutorial",
        2,
        4,
        0.001,
        0.9,
        False,
    )
    assert not p.resident and not p.augment and not p.one_cycle


@pytest.mark.slow
def test_fast_preset_learns_real_cifar_subset():
    """On the shared 5,000-image CIFAR-10 subset, 5 epochs on CPU are well above chance (10%)."""
    if not SUBSET.is_dir():
        pytest.skip(f"shared cifar10-subset not found at {SUBSET}")
    data = load_image_folder(SUBSET)
    # A fixed amount of work (no time limit): the result must not depend on how busy the host is.
    result = run_to_end(train(data, "fast", "cpu", epochs=5))
    ev = evaluate(result.model, data.test, result.arch, "cpu", data.classes)
    print(
        f"subset: {ev.accuracy:.3f} test accuracy after {result.train_seconds:.1f}s, {result.epochs_done:.1f} epochs"
    )
    assert ev.accuracy > 0.30


def test_tutorial_transform_matches_to_tensor_normalize():
    from torchvision import transforms

    from gradviz.training.inputs import TutorialImages, to_input

    data = _toy(n_train=4)
    ds = TutorialImages(data.train, "tutorial")
    x, y = ds[2]
    ref = transforms.Normalize((0.5,) * 3, (0.5,) * 3)(data.train.images[2].float() / 255)
    assert torch.allclose(x, ref, atol=1e-6) and y == int(data.train.labels[2])
    # The fast path's batched conversion gives the same numbers.
    assert torch.allclose(to_input(data.train.images[2:3], "tutorial")[0], ref, atol=1e-6)


def test_epoch_events_carry_the_epochs_last_loss():
    events = list(train(_toy(), "fast", "cpu", epochs=2, batch_size=16, progress_every_s=0.0))
    for e in events:
        if e.kind in ("progress", "epoch"):
            assert e.loss is not None and e.accuracy is not None


def test_without_torchvision_tutorial_refuses_and_fast_trains(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", None)
    with pytest.raises(ValueError, match="tutorial preset converts images with torchvision"):
        next(train(_toy(), "tutorial", device="cpu", epochs=1))
    events = list(train(_toy(), "fast", device="cpu", epochs=1, batch_size=32))
    assert events[-1].kind == "end"


class _LeftVsRight(torch.nn.Module):
    """Class 0's score is how much brighter the left half is than the right; class 1's is a
    constant 0.5. An image and its mirror image get opposite class-0 scores, so, summed, every
    image goes to class 1: flipped scoring is visible in the predictions."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(2, 2)  # evaluate() reads the class count from it

    def forward(self, x):
        left, right = x[..., :16].mean((1, 2, 3)), x[..., 16:].mean((1, 2, 3))
        return torch.stack([left - right, torch.full_like(left, 0.5)], 1)


def test_fast_networks_are_scored_with_their_mirror_images():
    from gradviz.training.evaluation import uses_flip_tta

    assert uses_flip_tta("fast-cpu") and uses_flip_tta("fast-gpu")
    assert not uses_flip_tta("tutorial")  # scored as the tutorial does
    images = torch.zeros(2, 3, 32, 32, dtype=torch.uint8)
    images[0, ..., :16] = 200  # bright left: class 0 alone, class 1 with its mirror image
    images[1, ..., 16:] = 200  # bright right: class 1 either way
    split = Split(images, torch.tensor([0, 1]))
    plain = evaluate(_LeftVsRight(), split, "fast-cpu", flip_tta=False)
    assert plain.predictions.tolist() == [0, 1] and not plain.flip_tta
    mirrored = evaluate(_LeftVsRight(), split, "fast-cpu")
    assert mirrored.flip_tta and mirrored.predictions.tolist() == [1, 1]
    assert "mirror image" in mirrored.report_lines()[0]
    assert "mirror" not in plain.report_lines()[0]
    assert evaluate(_LeftVsRight(), split, "tutorial").predictions.tolist() == [0, 1]
