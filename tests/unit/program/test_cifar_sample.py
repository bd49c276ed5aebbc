"""gradviz_cifar10_sample(n): the real CIFAR-10 images shipped with gradviz, as a program
gets them (the tutorial_net preset's batch), checked against the project's CIFAR-10 subset."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions
from gradviz.program.runtime import cifar_sample

SUBSET = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "cifar10-subset"
# the sample's images: test/<class>/<file>.jpg of the subset (scripts/make_cifar10_sample.py)
FIRST_FOUR = [("cat", "0900"), ("ship", "0900"), ("ship", "0901"), ("airplane", "0900")]


def subset_image(cls: str, name: str):
    if not SUBSET.is_dir():
        pytest.skip(f"shared cifar10-subset not found at {SUBSET}")
    PIL = pytest.importorskip("PIL.Image")
    return PIL.open(SUBSET / "test" / cls / f"{name}.jpg").convert("RGB")


def as_uint8(images: torch.Tensor) -> torch.Tensor:
    """Undo the tutorial's Normalize((0.5,)*3, (0.5,)*3) and ToTensor's /255."""
    return torch.round((images * 0.5 + 0.5) * 255).to(torch.uint8)


def test_the_sample_is_the_subsets_real_images():
    images, labels = cifar_sample.cifar10_sample(cifar_sample.COUNT)
    assert images.shape == (20, 3, 32, 32) and images.dtype == torch.float32
    assert labels.tolist()[:4] == [3, 8, 8, 0]  # cat, ship, ship, plane
    assert sorted(labels.tolist()) == sorted(list(range(10)) * 2)  # two of each class
    pixels = as_uint8(images)
    for i, (cls, name) in enumerate(FIRST_FOUR):
        image = subset_image(cls, name)
        want = torch.tensor(list(image.tobytes()), dtype=torch.uint8).reshape(32, 32, 3)
        assert torch.equal(pixels[i], want.permute(2, 0, 1)), (cls, name)
    assert float(images.min()) >= -1.0 and float(images.max()) <= 1.0
    assert float(images.std()) > 0.2  # real pictures, not a constant


def test_the_sample_is_what_the_tutorials_transform_gives():
    transforms = pytest.importorskip("torchvision.transforms")
    transform = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
    )
    images, _ = cifar_sample.cifar10_sample(4)
    for i, (cls, name) in enumerate(FIRST_FOUR):
        assert torch.allclose(images[i], transform(subset_image(cls, name)), atol=1e-6)


def test_the_tutorial_preset_runs_on_the_real_batch():
    preset = PRESETS_BY_KEY["tutorial_net"]
    assert "gradviz_cifar10_sample(4)" in preset.source and "randn(4, 3" not in preset.source
    trace = run_program(preset.source, RunOptions(classic=False, backward="loss"))
    assert trace.error is None, trace.error
    assert trace.stdout == ["cat   ship  ship  plane"]  # the tutorial's GroundTruth line
    shown = trace.tensor("images")
    assert shown.shape == [4, 3, 32, 32] and not shown.requires_grad
    assert trace.tensor("labels").value == [3, 8, 8, 0]
    want, _ = cifar_sample.cifar10_sample(4)
    first = ", ".join(f"{v:.4f}" for v in want.reshape(-1)[:6].tolist())
    assert shown.preview.startswith(f"[{first}, …")  # the real pixels, as the page shows them
    assert trace.tensor("net.fc1.weight").grad_preview is not None


@pytest.mark.parametrize(
    "call",
    [
        "gradviz_cifar10_sample(0)",
        "gradviz_cifar10_sample(21)",
        "gradviz_cifar10_sample('4')",
        "gradviz_cifar10_sample(True)",
    ],
)
def test_a_wrong_count_is_refused_at_its_line(call):
    trace = run_program(f"x = 1\nimages, labels = {call}\n", RunOptions(classic=False))
    err = trace.error
    assert err is not None and err.kind == "type"
    assert (err.line, err.col) == (2, 18)
    assert "from 1 to 20" in err.message
