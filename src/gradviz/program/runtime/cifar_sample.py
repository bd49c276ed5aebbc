"""`gradviz_cifar10_sample(n)`: real CIFAR-10 images for programs, which cannot read files.

The tutorial reads CIFAR-10 with `torchvision.datasets.CIFAR10(root='./data', ...)` and a
DataLoader; a program here cannot touch the disk, so this built-in stands in: it gives the
first `n` (1 to 20) of 20 real CIFAR-10 test images shipped with gradviz
(samples/cifar10_sample.bin, written by scripts/make_cifar10_sample.py from the project's
CIFAR-10 subset: two per class, the first four cat, ship, ship, plane as in the tutorial's
first test batch) as `(images, labels)`: images float32 of shape (n, 3, 32, 32) already
transformed as the tutorial's `transforms.Compose([ToTensor(), Normalize((0.5, 0.5, 0.5),
(0.5, 0.5, 0.5))])` does (values in [-1, 1]), labels int64 class indices in torchvision's
order (gradviz.training.CLASSES).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import torch

SAMPLE = Path(__file__).resolve().parent / "samples" / "cifar10_sample.bin"
COUNT = 20


@cache
def _raw() -> tuple[torch.Tensor, torch.Tensor]:
    data = SAMPLE.read_bytes()
    assert len(data) == COUNT * (1 + 3 * 32 * 32), "the CIFAR-10 sample file is damaged"
    labels = torch.tensor(list(data[:COUNT]), dtype=torch.int64)
    pixels = torch.frombuffer(bytearray(data[COUNT:]), dtype=torch.uint8)
    return pixels.reshape(COUNT, 3, 32, 32), labels


def cifar10_sample(n: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """The first `n` sample images, normalised as the tutorial's transform does, and labels."""
    pixels, labels = _raw()
    images = (pixels[:n].to(torch.float32) / 255.0 - 0.5) / 0.5
    return images, labels[:n].clone()


def for_program(state, library, node, n) -> tuple[torch.Tensor, torch.Tensor]:
    """The built-in as a program calls it (gradviz.program.runtime.builtins): `n` checked, the
    tensors made through the library, under the run's budget."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= COUNT:
        raise state.error(
            "type",
            f"gradviz_cifar10_sample(n) takes a number of images from 1 to {COUNT}, not {n!r}",
            node,
        )
    return library.call("gradviz_cifar10_sample", cifar10_sample, (n,), {}, node, "bounded")
