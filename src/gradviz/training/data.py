"""Datasets as uint8 tensors held in memory: ImageFolder folders and CIFAR-10 via torchvision.

Everything is loaded once into `Split(images uint8 [N,3,H,W], labels int64 [N])`, so the fast
training path can move the whole set onto the training device in one copy. This runs in a
worker process (or the CLI); what the server needs without torch (folder checks, counting
files, the CIFAR-10 download, DataError) is in gradviz.training.sources, re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from gradviz.training import CLASSES
from gradviz.training.sources import (
    IMAGE_SUFFIXES,
    DataError,
    DownloadProgress,
    default_cache_dir,
    download_cifar10,
    folder_layout,
    torchvision_missing,
)


@dataclass
class Split:
    images: torch.Tensor  # uint8 [N, 3, H, W]
    labels: torch.Tensor  # int64 [N]

    def __len__(self) -> int:
        return int(self.labels.shape[0])


@dataclass
class Dataset:
    train: Split
    test: Split
    classes: tuple[str, ...]
    source: str

    def describe(self) -> str:
        h, w = self.train.images.shape[-2:]
        return (
            f"{self.source}: {len(self.train):,} training and {len(self.test):,} test images, "
            f"{len(self.classes)} classes, {h}x{w}"
        )


# ----------------------------------------------------------------------------- ImageFolder


def _read_split(split_dir: Path, classes: list[str], size: int) -> Split:
    from PIL import Image, UnidentifiedImageError

    images: list[np.ndarray] = []
    labels: list[int] = []
    for index, name in enumerate(classes):
        folder = split_dir / name
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            try:
                with Image.open(path) as im:
                    im = im.convert("RGB")
                    if im.size != (size, size):
                        im = im.resize((size, size), Image.BILINEAR)
                    images.append(np.asarray(im, dtype=np.uint8))
            except (UnidentifiedImageError, OSError) as exc:
                raise DataError(f"Could not read image {path}: {exc}") from exc
            labels.append(index)
    if not images:
        raise DataError(f"No images found under {split_dir} (expected {split_dir}/<class>/*.jpg).")
    array = np.stack(images).transpose(0, 3, 1, 2).copy()
    return Split(torch.from_numpy(array), torch.tensor(labels, dtype=torch.int64))


def load_image_folder(root: str | Path, size: int = 32) -> Dataset:
    """Read root/train/<class>/* and root/test/<class>/* into uint8 tensors (resized to size)."""
    root = Path(root).expanduser()
    train_dir, test_dir, classes = folder_layout(root)
    return Dataset(
        train=_read_split(train_dir, classes, size),
        test=_read_split(test_dir, classes, size),
        classes=tuple(classes),
        source=f"folder {root}",
    )


# ----------------------------------------------------------------------------- CIFAR-10


def _split_from_torchvision(ds) -> Split:
    images = torch.from_numpy(np.ascontiguousarray(ds.data.transpose(0, 3, 1, 2)))
    return Split(images, torch.tensor(ds.targets, dtype=torch.int64))


def load_cifar10(
    root: str | Path | None = None,
    download: bool = True,
    progress: DownloadProgress | None = None,
) -> Dataset:
    """CIFAR-10 (50,000 train / 10,000 test) via torchvision.datasets.CIFAR10 from a cache folder.

    With download=True the archive is fetched once (with progress) into root; later calls read
    the extracted batches.
    """
    if missing := torchvision_missing():
        raise DataError(missing)
    from torchvision.datasets import CIFAR10

    root = Path(root).expanduser() if root else default_cache_dir()
    if download:
        download_cifar10(root, progress=progress)
    try:
        train = CIFAR10(str(root), train=True, download=False)
        test = CIFAR10(str(root), train=False, download=False)
    except RuntimeError as exc:  # torchvision: "Dataset not found or corrupted."
        raise DataError(
            f"CIFAR-10 is not in {root} or is damaged ({exc}). Choose download, or a local "
            "folder with train/<class>/*.jpg and test/<class>/*.jpg."
        ) from exc
    return Dataset(
        train=_split_from_torchvision(train),
        test=_split_from_torchvision(test),
        classes=CLASSES,
        source=f"CIFAR-10 in {root}",
    )


def load_dataset(spec: str, cache_dir: str | Path | None = None, progress=None) -> Dataset:
    """'cifar10' downloads/reads CIFAR-10 from the cache; anything else is a folder path."""
    if spec.strip().lower() in {"cifar10", "cifar-10"}:
        return load_cifar10(cache_dir, download=True, progress=progress)
    return load_image_folder(spec)


def load_source(source: dict) -> Dataset:
    """{"kind": "folder" | "cifar", "path": ...}: read the data in a worker or a training rank
    (CIFAR-10 from its cache folder, never downloading)."""
    if source["kind"] == "folder":
        return load_image_folder(Path(source["path"]))
    return load_cifar10(source["path"], download=False)
