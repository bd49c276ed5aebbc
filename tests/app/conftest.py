"""Fixtures the page tests share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gradviz.training import CLASSES


@pytest.fixture
def tiny_folder(tmp_path) -> Path:
    """A CIFAR-10-shaped ImageFolder (train/<class>, test/<class>) of tiny 32x32 images, 4 and
    2 per class, each class a little brighter than the last so a network can tell them apart."""
    rng = np.random.default_rng(0)
    for split, n in (("train", 4), ("test", 2)):
        for k, c in enumerate(CLASSES):
            d = tmp_path / split / c
            d.mkdir(parents=True)
            for i in range(n):
                arr = rng.integers(0, 30, (32, 32, 3), dtype=np.uint8) + np.uint8(k * 20)
                Image.fromarray(arr).save(d / f"{i}.png")
    return tmp_path
