"""Write src/gradviz/program/runtime/samples/cifar10_sample.bin: 20 real CIFAR-10 test images.

The programs' `gradviz_cifar10_sample(n)` (gradviz.program.runtime.cifar_sample) reads it, standing in
for the tutorial's `torchvision.datasets.CIFAR10` + DataLoader where a program cannot read
files. The images come from the project's CIFAR-10 subset (shared/data/cifar10-subset, the
JPEGs of a public mirror of Krizhevsky's data set), test split, two per class, the first
four in the order of the tutorial's first test batch (cat, ship, ship, plane).

Layout: 20 label bytes (class index, torchvision's order), then 20 images of 3x32x32 uint8
(channels first, RGB), as Pillow decodes the JPEGs. Run: python scripts/make_cifar10_sample.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SUBSET = ROOT.parent / "shared" / "data" / "cifar10-subset"
OUT = ROOT / "src" / "gradviz" / "program" / "runtime" / "samples" / "cifar10_sample.bin"
CLASSES = [
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
]  # torchvision's CIFAR10.classes order
# (class, file in test/<class>/): the tutorial's first test batch, then two of each class
FILES = [("cat", "0900"), ("ship", "0900"), ("ship", "0901"), ("airplane", "0900")] + [
    (c, f)
    for c in CLASSES
    for f in ("0900", "0901")
    if (c, f) not in {("cat", "0900"), ("ship", "0900"), ("ship", "0901"), ("airplane", "0900")}
]


def pixels(path: Path) -> bytes:
    """3x32x32 uint8, channels first, as Pillow decodes the JPEG."""
    image = Image.open(path).convert("RGB")
    assert image.size == (32, 32), path
    data = image.tobytes()  # 32x32x3, channels last
    return bytes(data[i * 3 + c] for c in range(3) for i in range(32 * 32))


def sample_bytes(subset: Path = SUBSET) -> bytes:
    labels = bytes(CLASSES.index(c) for c, _ in FILES)
    images = b"".join(pixels(subset / "test" / c / f"{f}.jpg") for c, f in FILES)
    return labels + images


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else SUBSET
    OUT.write_bytes(sample_bytes(root))
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes, {len(FILES)} images)")
