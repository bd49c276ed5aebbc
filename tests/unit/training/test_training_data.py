"""Data loading: ImageFolder folders, CIFAR-10 python batches via torchvision, the download path."""

from __future__ import annotations

import hashlib
import pickle
import sys
import tarfile
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from gradviz.training import data as data_mod
from gradviz.training import settings, sources
from gradviz.training.data import load_cifar10, load_dataset, load_image_folder
from gradviz.training.sources import DataError, display_classes, download_cifar10, shared_subset_dir
from gradviz.util.settings import LOCAL, PUBLIC

SUBSET = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "cifar10-subset"


def _write_folder(root: Path, classes=("cat", "dog"), per_class=3, size=32) -> None:
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        for c in classes:
            d = root / split / c
            d.mkdir(parents=True)
            for i in range(per_class):
                arr = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
                Image.fromarray(arr).save(d / f"{i}.png")


def test_image_folder_reads_uint8_tensors(tmp_path):
    _write_folder(tmp_path)
    (tmp_path / "train" / "cat" / "notes.txt").write_text("not an image")
    ds = load_image_folder(tmp_path)
    assert ds.classes == ("cat", "dog")
    assert ds.train.images.shape == (6, 3, 32, 32)
    assert ds.train.images.dtype == torch.uint8
    assert ds.train.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert len(ds.test) == 6
    # PNG is lossless: pixels match the file exactly, in CHW order.
    first = np.array(Image.open(tmp_path / "train" / "cat" / "0.png"))
    assert torch.equal(ds.train.images[0], torch.from_numpy(first).permute(2, 0, 1))


def test_image_folder_resizes_other_sizes(tmp_path):
    _write_folder(tmp_path, size=40)
    assert load_image_folder(tmp_path).train.images.shape[-2:] == (32, 32)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda root: None, "does not exist"),
        (lambda root: (root / "train").mkdir(parents=True), "no test subfolder"),
        (
            lambda root: [(root / s / "a").mkdir(parents=True) for s in ("train", "test")],
            "at least two class folders",
        ),
    ],
)
def test_image_folder_errors_say_what_to_do(tmp_path, setup, message):
    root = tmp_path / "data"
    setup(root)
    with pytest.raises(DataError, match=message):
        load_image_folder(root)


def test_image_folder_rejects_broken_image(tmp_path):
    _write_folder(tmp_path)
    (tmp_path / "train" / "dog" / "bad.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(DataError, match="Could not read image"):
        load_image_folder(tmp_path)


def test_image_folder_with_empty_test_split(tmp_path):
    _write_folder(tmp_path)
    for f in (tmp_path / "test").rglob("*.png"):
        f.unlink()
    with pytest.raises(DataError, match="No images found"):
        load_image_folder(tmp_path)


# ----------------------------------------------------------------------------- CIFAR-10 format


def _cifar_batches(folder: Path, per_batch: int = 4) -> None:
    """Write a tiny cifar-10-batches-py folder in the real format (pickled dicts, 3072-byte rows)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for k, name in enumerate(names):
        entry = {
            "batch_label": name,
            "labels": [(k + i) % 10 for i in range(per_batch)],
            "data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8),
            "filenames": [f"{name}_{i}.png" for i in range(per_batch)],
        }
        (folder / name).write_bytes(pickle.dumps(entry))
    meta = {
        "label_names": [
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
        ]
    }
    (folder / "batches.meta").write_bytes(pickle.dumps(meta))


@pytest.fixture
def no_md5(monkeypatch):
    # torchvision checks each batch against the real archive's md5; our stand-in batches differ.
    import torchvision.datasets.cifar as cifar

    monkeypatch.setattr(cifar, "check_integrity", lambda *a, **k: True)


def test_cifar10_python_batches_read_via_torchvision(tmp_path, no_md5):
    _cifar_batches(tmp_path / "cifar-10-batches-py")
    ds = load_cifar10(tmp_path, download=False)
    assert ds.train.images.shape == (20, 3, 32, 32)
    assert ds.test.images.shape == (4, 3, 32, 32)
    assert ds.train.images.dtype == torch.uint8
    assert ds.classes[:2] == ("plane", "car")
    # Row layout: 1024 red, 1024 green, 1024 blue values per image.
    raw = pickle.loads((tmp_path / "cifar-10-batches-py" / "data_batch_1").read_bytes())["data"]
    assert torch.equal(ds.train.images[0].reshape(-1), torch.from_numpy(raw[0]))
    assert ds.train.labels[:4].tolist() == [0, 1, 2, 3]


def test_cifar10_missing_says_what_to_do(tmp_path):
    with pytest.raises(DataError, match="not in .* or is damaged"):
        load_cifar10(tmp_path, download=False)


def _fake_archive(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "src"
    _cifar_batches(src / "cifar-10-batches-py")
    archive = tmp_path / "fake-cifar.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    return archive, hashlib.md5(archive.read_bytes()).hexdigest()


def test_download_stand_in_archive_with_progress_then_read(tmp_path, no_md5):
    archive, md5 = _fake_archive(tmp_path)
    cache = tmp_path / "cache"
    seen = []
    folder = download_cifar10(
        cache,
        progress=lambda done, total: seen.append((done, total)),
        url=archive.as_uri(),
        md5=md5,
    )
    assert folder == cache / "cifar-10-batches-py"
    assert seen[0][0] == 0 and seen[-1][0] == archive.stat().st_size
    assert all(b >= a for (a, _), (b, _) in zip(seen, seen[1:], strict=False))
    # Second call: already there, no download (a broken URL would fail otherwise).
    assert download_cifar10(cache, url="http://127.0.0.1:9/none", md5=md5) == folder
    assert len(load_cifar10(cache, download=False).train) == 20


def test_downloads_at_once_share_nothing_half_written(tmp_path, no_md5):
    """Two visitors choosing CIFAR-10 together: one downloads, the other then finds it."""
    import threading

    archive, md5 = _fake_archive(tmp_path)
    cache = tmp_path / "cache"
    results, errors = [], []

    def fetch():
        try:
            results.append(download_cifar10(cache, url=archive.as_uri(), md5=md5))
        except Exception as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and results == [cache / "cifar-10-batches-py"] * 4
    assert not list(cache.glob("*.part"))
    assert len(load_cifar10(cache, download=False).train) == 20


def test_download_checksum_mismatch(tmp_path):
    archive, _ = _fake_archive(tmp_path)
    with pytest.raises(DataError, match="damaged"):
        download_cifar10(tmp_path / "cache", url=archive.as_uri(), md5="0" * 32)
    assert not list((tmp_path / "cache").glob("*.part"))


def test_no_network_gives_clear_message(tmp_path, monkeypatch):
    def offline(*a, **k):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    with pytest.raises(DataError) as info:
        load_dataset("cifar10", cache_dir=tmp_path)
    text = str(info.value)
    assert "Could not download CIFAR-10" in text
    assert "no network" in text
    assert "local folder" in text


def test_load_dataset_folder(tmp_path):
    _write_folder(tmp_path)
    assert load_dataset(str(tmp_path)).classes == ("cat", "dog")


def test_display_classes():
    assert display_classes(("airplane", "automobile", "bird")) == ("plane", "car", "bird")


def test_real_subset_layout():
    if not SUBSET.is_dir():
        pytest.skip(f"shared cifar10-subset not found at {SUBSET}")
    assert shared_subset_dir() is not None
    ds = load_image_folder(SUBSET)
    assert len(ds.train) == 5000 and len(ds.test) == 1000
    assert len(ds.classes) == 10


def test_torchvision_missing_is_none_when_installed():
    pytest.importorskip("torchvision")
    assert data_mod.torchvision_missing() is None


def test_cifar10_without_torchvision_is_a_clear_data_error(tmp_path, monkeypatch):
    """The CPU-only set-up may lack torchvision: a message, and no download it could not read."""
    monkeypatch.setitem(sys.modules, "torchvision", None)
    fetched = []
    monkeypatch.setattr(data_mod, "download_cifar10", lambda *a, **k: fetched.append(a))
    reason = data_mod.torchvision_missing()
    assert reason and "torchvision is not installed" in reason and "fast preset" in reason
    with pytest.raises(DataError, match="torchvision is not installed"):
        load_cifar10(tmp_path, download=True)
    with pytest.raises(DataError, match="torchvision is not installed"):
        load_dataset("cifar10", tmp_path)
    assert fetched == []


# ----------------------------------------------------------------------------- visitor paths


def test_resolve_folder_refuses_text_that_is_not_a_plain_path():
    from gradviz.training.sources import resolve_folder

    for text, words in (
        ("", "Enter a folder"),
        ("   ", "Enter a folder"),
        ("/tmp/a\x00b", "control characters"),
        ("/tmp/a\nb", "control characters"),
        ("a" * 10_000, "10,000 characters"),
        (None, "as text"),
    ):
        with pytest.raises(DataError, match=words):
            resolve_folder(text, public=False)


def test_public_mode_reads_only_the_allowed_roots(tmp_path, monkeypatch):
    from gradviz.training.sources import allowed_data_roots, resolve_folder
    from gradviz.util.settings import public_host

    allowed = tmp_path / "allowed"
    (allowed / "set").mkdir(parents=True)
    monkeypatch.setenv("GRADVIZ_DATA_ROOTS", str(allowed))
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    assert public_host()
    assert allowed.resolve() in allowed_data_roots()
    assert resolve_folder(str(allowed / "set")) == (allowed / "set").resolve()
    outside = tmp_path / "outside"
    outside.mkdir()
    (allowed / "link").symlink_to(outside)
    for text in ("/", "/proc", "/etc", str(allowed / ".." / "outside"), str(allowed / "link"), "~"):
        with pytest.raises(DataError, match="public server: only the data folders its operator"):
            resolve_folder(text)
    monkeypatch.setenv("GRADVIZ_PUBLIC", "0")
    assert resolve_folder("/proc") == Path("/proc")


def test_scan_counts_images_without_reading_them(tmp_path):
    from gradviz.training.sources import scan_image_folder

    _write_folder(tmp_path, per_class=3)
    (tmp_path / "train" / "cat" / "notes.txt").write_text("not an image")
    summary = scan_image_folder(tmp_path)
    assert (summary.train_images, summary.test_images) == (6, 6)
    assert summary.classes == ("cat", "dog")
    assert "6 training and 6 test images, 2 classes" in summary.describe()
    with pytest.raises(DataError, match="more than 10 images"):
        scan_image_folder(tmp_path, max_images=10)


def test_scan_gives_a_message_for_each_wrong_folder(tmp_path):
    from gradviz.training.sources import scan_image_folder

    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    empty = tmp_path / "empty"
    for split in ("train", "test"):
        for c in ("cat", "dog"):
            (empty / split / c).mkdir(parents=True)
    for root, words in (
        (Path("/"), "has no train or test subfolder"),
        (Path("/proc"), "has no train or test subfolder"),
        (a_file, "is a file, not a folder"),
        (tmp_path / "missing", "does not exist"),
        (empty, "at least two class folders with images"),  # empty folders are no classes
    ):
        with pytest.raises(DataError, match=words):
            scan_image_folder(root)


def test_public_host_caps_batch_and_training_memory(monkeypatch):
    from gradviz.training import jobs as training_jobs

    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)
    monkeypatch.delenv("GRADVIZ_TRAINING_MEMORY", raising=False)
    assert settings.max_batch_size() == LOCAL.max_batch == 8192
    assert settings.training_memory() == LOCAL.training_memory == 1_500_000_000
    training_jobs.check_batch_size(512)
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    assert settings.max_batch_size() == 128
    assert settings.training_memory() == PUBLIC.training_memory == 400_000_000
    with pytest.raises(ValueError, match="above this server's limit of 128"):
        training_jobs.check_batch_size(512)
    with pytest.raises(ValueError, match="limit of 128"):  # the worker refuses it too
        next(training_jobs.train_job({}, {"batch_size": 512}, should_stop=lambda: False))
    monkeypatch.setenv("GRADVIZ_PUBLIC_MAX_BATCH", "64")
    monkeypatch.setenv("GRADVIZ_TRAINING_MEMORY", "300000000")
    assert settings.max_batch_size() == 64
    assert settings.training_memory() == 300_000_000
