"""Tiny ImageFolder trees for training tests (imported by them; no tests here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def colour_folder(root: Path, per_class: int) -> Path:
    """train/ and test/ with three classes, red, green and blue: `per_class` 32x32 noise
    images each, brightened in the class's own channel (easy to learn). Returns `root`."""
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        for k, c in enumerate(("red", "green", "blue")):
            d = root / split / c
            d.mkdir(parents=True)
            for i in range(per_class):
                arr = rng.integers(0, 40, (32, 32, 3), dtype=np.uint8)
                arr[..., k] += 200
                Image.fromarray(arr).save(d / f"{i}.png")
    return root
