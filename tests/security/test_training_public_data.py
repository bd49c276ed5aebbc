"""Public mode: no visitor input creates, changes or deletes anything on the host, and no
folder refusal tells a visitor what a path resolved to.

Regression tests for two holes. (1) The CIFAR-10 "Cache folder" field took any path inside an
allowed root and the download created it: `<subset>/test/zzz` made every later visitor see
"test has classes not in train/: zzz" with Train disabled (surviving a restart), and
`<subset>/train/zzz` added an empty class to everyone's results. (2) Refusals named the
resolved path, so `~`, /proc/self/cwd, /proc/self/fd/N and /proc/self/exe told a visitor the
server's home, working folder, process id and open files.

The shared subset is read-only: every test works on a copy in tmp_path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gradviz.training.sources import (
    DataError,
    scan_image_folder,
)

ROOT = Path(__file__).resolve().parents[2]
SUBSET = (ROOT / ".." / "shared" / "data" / "cifar10-subset").resolve()


@pytest.fixture
def subset(tmp_path) -> Path:
    """A writable copy of the real CIFAR-10 subset (train/ and test/, ten classes)."""
    if not (SUBSET / "train").is_dir():
        pytest.skip(f"shared cifar10-subset not found at {SUBSET}")
    copy = tmp_path / "data" / "cifar10-subset"
    shutil.copytree(SUBSET, copy)
    return copy


# ---------------------------------------------------------------- item 3: left-behind folders


def test_empty_class_folders_neither_add_a_class_nor_disable_training(subset):
    """What the hole left behind on a host: empty test/zzz and train/zzz. A class is a folder
    with images, so they are ignored (and can no longer be created by visitors anyway)."""
    clean = scan_image_folder(subset)
    (subset / "test" / "zzz").mkdir()
    (subset / "train" / "zzz").mkdir()
    (subset / "train" / "yyy" / "deeper").mkdir(parents=True)  # no images directly in it
    summary = scan_image_folder(subset)
    assert summary == clean
    assert len(summary.classes) == 10 and "zzz" not in summary.classes
    # Images of a class that train/ lacks are still a real mismatch, said plainly.
    shutil.copy(next((subset / "test" / "cat").iterdir()), subset / "test" / "zzz" / "0.png")
    with pytest.raises(DataError, match="no training images in train/: zzz"):
        scan_image_folder(subset)
