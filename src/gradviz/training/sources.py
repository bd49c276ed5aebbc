"""Where training data comes from, checked without torch, numpy or Pillow.

The Streamlit server imports this module (never torch): it checks a folder a visitor typed
(resolve_folder: plain text, inside the allowed roots on a public host, refused there without
naming any path), lists the folders a public host offers instead of a typed path
(public_folder_choices), counts images from file names alone (scan_image_folder), downloads
the CIFAR-10 archive into its cache (download_cifar10: on a public host only into the
operator's GRADVIZ_CACHE) and says whether torchvision is installed without importing it
(torchvision_missing). Reading the images into tensors is gradviz.training.data's work, in a
worker process; that module re-exports every name here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import tarfile
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gradviz.util import settings
from gradviz.workers.protocol import ErrorKind

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".ppm", ".tif", ".tiff"}

CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR10_FOLDER = "cifar-10-batches-py"

_DOWNLOAD_LOCK = threading.Lock()

#: Progress callback for downloads: (bytes done, bytes total or None).
DownloadProgress = Callable[[int, int | None], None]


class DataError(Exception):
    """A dataset could not be found, downloaded or read; the message says what to do."""

    error_kind = ErrorKind.DATA


def torchvision_missing() -> str | None:
    """None when torchvision can be imported; else what needs it and what still works.

    torchvision is optional: the CPU-only set-up (`scripts/setup.sh --cpu`) may lack a wheel
    of it for the installed torch. Only CIFAR-10 (read with torchvision.datasets.CIFAR10) and
    the tutorial preset (its ToTensor + Normalize transform) need it.
    """
    if importlib.util.find_spec("torchvision") is not None:
        return None
    return (
        "torchvision is not installed in this Python environment, so CIFAR-10 and the tutorial "
        "preset are unavailable; the fast preset on a local image folder still works. Install "
        "the torchvision build that matches torch (see README) to use them."
    )


def default_cache_dir() -> Path:
    """Where CIFAR-10 is downloaded to: $GRADVIZ_CACHE or ~/.cache/gradviz."""
    base = settings.text("GRADVIZ_CACHE") or Path.home() / ".cache" / "gradviz"
    return Path(base) / "cifar10"


def shared_subset_dir(repo_root: Path | None = None) -> Path | None:
    """The cifar10-subset folder beside the repository (../shared/data/cifar10-subset), if any."""
    root = repo_root or Path(__file__).resolve().parents[3]
    candidate = (root / ".." / "shared" / "data" / "cifar10-subset").resolve()
    return candidate if (candidate / "train").is_dir() and (candidate / "test").is_dir() else None


# ----------------------------------------------------------------------------- which folders

MAX_PATH_CHARS = 4096
MAX_FOLDER_IMAGES = 200_000  # a folder with more is refused before anything is read


def allowed_data_roots() -> list[Path]:
    """Folders a visitor may read in public mode: the CIFAR-10 cache, the shared subset, and
    any listed in GRADVIZ_DATA_ROOTS (separated by the OS path separator)."""
    roots = [default_cache_dir()]
    subset = shared_subset_dir()
    if subset is not None:
        roots.append(subset)
    roots += [Path(p) for p in settings.items("GRADVIZ_DATA_ROOTS")]
    out = []
    for root in roots:
        with contextlib.suppress(OSError, RuntimeError, ValueError):
            out.append(root.expanduser().resolve())
    return out


# Names no path: what "~", /proc/self/cwd or /proc/self/fd/N resolved to would tell a visitor
# the server's home, working folder, process id or open files.
PUBLIC_FOLDER_REFUSAL = (
    "This is a public server: only the data folders its operator allows can be read, and "
    "that path is not one of them. Choose a folder from the list on this page, or CIFAR-10."
)


def _inside_any(path: Path, roots: list[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def public_folder_choices(max_entries: int = 1000) -> list[Path]:
    """The image folders a visitor may choose on a public server: each allowed root with
    train/ and test/ subfolders, and each such folder directly inside a root (at most
    max_entries looked at per root). Symbolic links leading outside the roots are left out."""
    roots = allowed_data_roots()
    found: list[Path] = []
    for root in roots:
        inside: list[Path] = []
        with contextlib.suppress(OSError), os.scandir(root) as entries:
            for i, entry in enumerate(entries):
                if i >= max_entries:
                    break
                if not entry.name.startswith("."):
                    inside.append(root / entry.name)
        for candidate in [root, *sorted(inside)]:
            with contextlib.suppress(OSError, RuntimeError, ValueError):
                real = candidate.resolve()
                if (
                    _inside_any(real, [root])
                    and (real / "train").is_dir()
                    and (real / "test").is_dir()
                    and real not in found
                ):
                    found.append(real)
    return found


def resolve_folder(text: object, public: bool | None = None) -> Path:
    """A folder path typed by a visitor, checked and resolved, or DataError saying what is wrong.

    Refuses text that is not a plain path (too long, control characters such as NUL) and,
    in public mode, any folder outside allowed_data_roots() (after resolving "..", "~" and
    symbolic links), with a message that names no path (PUBLIC_FOLDER_REFUSAL). Whether the
    folder exists is checked by whoever reads it.
    """
    if not isinstance(text, str):
        raise DataError("The folder must be given as text.")
    text = text.strip()
    if not text:
        raise DataError(
            "Enter a folder with train/<class>/*.jpg and test/<class>/*.jpg, or choose CIFAR-10."
        )
    if len(text) > MAX_PATH_CHARS:
        raise DataError(
            f"That path is {len(text):,} characters long; a folder path here is at most "
            f"{MAX_PATH_CHARS:,}."
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise DataError(
            "The path contains control characters (such as a NUL byte or a line break); "
            "type a plain folder path."
        )
    public = settings.public_host() if public is None else public
    try:
        path = Path(text).expanduser().resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        if public:  # the error may name what the path resolved to
            raise DataError(PUBLIC_FOLDER_REFUSAL) from None
        raise DataError(f"Cannot use the path {text[:200]!r}: {exc}.") from None
    if public and not _inside_any(path, allowed_data_roots()):
        raise DataError(PUBLIC_FOLDER_REFUSAL)
    return path


@dataclass(frozen=True)
class FolderSummary:
    """What a folder holds, from file names only (nothing is decoded)."""

    root: Path
    classes: tuple[str, ...]
    train_images: int
    test_images: int

    def describe(self) -> str:
        return (
            f"folder {self.root}: {self.train_images:,} training and {self.test_images:,} test "
            f"images, {len(self.classes)} classes (read and resized to 32x32 when training starts)"
        )


def _count_images(folder: Path, budget: int) -> int:
    count = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            if Path(entry.name).suffix.lower() in IMAGE_SUFFIXES:
                count += 1
                if count > budget:
                    break
    return count


def scan_image_folder(root: str | Path, max_images: int = MAX_FOLDER_IMAGES) -> FolderSummary:
    """Check the ImageFolder layout and count images, without reading any (cheap, for the page)."""
    root = Path(root)
    try:
        train_dir, test_dir, classes = folder_layout(root)
        counts = {"train": 0, "test": 0}
        for split, split_dir in (("train", train_dir), ("test", test_dir)):
            for name in classes:
                folder = split_dir / name
                if folder.is_dir():
                    left = max_images - counts["train"] - counts["test"]
                    counts[split] += _count_images(folder, left)
                if counts["train"] + counts["test"] > max_images:
                    raise DataError(
                        f"{root} holds more than {max_images:,} images; this page trains on "
                        "at most that many. Choose a smaller folder."
                    )
    except OSError as exc:
        raise DataError(f"Cannot read {root}: {exc.strerror or exc}.") from None
    for split, split_dir in (("train", train_dir), ("test", test_dir)):
        if not counts[split]:
            raise DataError(
                f"No images found under {split_dir} (expected {split_dir}/<class>/*.jpg)."
            )
    return FolderSummary(root, tuple(classes), counts["train"], counts["test"])


# ----------------------------------------------------------------------------- ImageFolder layout


def _class_dirs(split_dir: Path) -> list[Path]:
    return sorted(p for p in split_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def _has_image(folder: Path) -> bool:
    return _count_images(folder, 0) > 0  # stops at the first image


def folder_layout(root: Path) -> tuple[Path, Path, list[str]]:
    """train/ and test/ folders and the class names (train/'s folders that hold images),
    or DataError naming what is missing."""
    if root.exists() and not root.is_dir():
        raise DataError(
            f"{root} is a file, not a folder. Give a folder with train/<class>/*.jpg and "
            "test/<class>/*.jpg."
        )
    if not root.is_dir():
        raise DataError(
            f"Folder {root} does not exist. Give a folder with train/<class>/*.jpg and "
            "test/<class>/*.jpg, or choose CIFAR-10 to download it."
        )
    train_dir, test_dir = root / "train", root / "test"
    missing = [d.name for d in (train_dir, test_dir) if not d.is_dir()]
    if missing:
        raise DataError(
            f"Folder {root} has no {' or '.join(missing)} subfolder. Expected the ImageFolder "
            "layout: train/<class>/*.jpg and test/<class>/*.jpg."
        )
    # A class is a folder with at least one image: an empty folder (left behind by anyone,
    # anywhere in the tree) neither adds a class nor makes test/ disagree with train/.
    classes = [p.name for p in _class_dirs(train_dir) if _has_image(p)]
    if len(classes) < 2:
        raise DataError(
            f"{train_dir} needs at least two class folders with images in them, "
            f"found {len(classes)}."
        )
    test_classes = {p.name for p in _class_dirs(test_dir) if _has_image(p)}
    extra = sorted(test_classes - set(classes))
    if extra:
        raise DataError(
            f"{test_dir} has images of classes with no training images in train/: "
            f"{', '.join(extra)}. Add training images for them or remove them from test/."
        )
    return train_dir, test_dir, classes


# ----------------------------------------------------------------------------- CIFAR-10


def _is_operator_cache(root: Path) -> bool:
    try:
        return root.resolve() == default_cache_dir().expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_cifar10(
    root: str | Path,
    progress: DownloadProgress | None = None,
    url: str = CIFAR10_URL,
    md5: str = CIFAR10_MD5,
    timeout: float = 30.0,
    public: bool | None = None,
) -> Path:
    """Download and extract the CIFAR-10 python archive into root (once), reporting progress.

    On a public server (public=None: GRADVIZ_PUBLIC) root must be the operator's cache folder
    (default_cache_dir()): no other folder is created or written, whoever asks.

    Returns the extracted cifar-10-batches-py folder. Raises DataError with what to do when
    there is no network, the download is broken, or the archive does not match its checksum.
    """
    root = Path(root).expanduser()
    if (settings.public_host() if public is None else public) and not _is_operator_cache(root):
        raise DataError(
            "This is a public server (GRADVIZ_PUBLIC=1): CIFAR-10 is downloaded only into the "
            "cache folder its operator set (GRADVIZ_CACHE), never into another folder."
        )
    with _DOWNLOAD_LOCK:  # one download at a time in this process; the others then find it
        return _download_and_unpack(root, progress, url, md5, timeout)


def _download_and_unpack(
    root: Path, progress: DownloadProgress | None, url: str, md5: str, timeout: float
) -> Path:
    folder = root / CIFAR10_FOLDER
    if (folder / "batches.meta").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    archive = root / "cifar-10-python.tar.gz"
    if not (archive.is_file() and _md5(archive) == md5):
        # A name of its own: a download by another process (the CLI) never shares it.
        partial = None
        try:
            handle, name = tempfile.mkstemp(dir=root, prefix="cifar-10-python.", suffix=".part")
            partial = Path(name)
            with (
                open(handle, "wb") as out,
                urllib.request.urlopen(url, timeout=timeout) as response,
            ):
                total = (
                    response.headers.get("Content-Length") if hasattr(response, "headers") else None
                )
                total_bytes = int(total) if total else None
                done = 0
                if progress:
                    progress(0, total_bytes)
                while chunk := response.read(1 << 18):
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total_bytes)
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            if partial is not None:
                partial.unlink(missing_ok=True)
            reason = getattr(exc, "reason", exc)
            raise DataError(
                f"Could not download CIFAR-10 from {url} ({reason}). This host may have no "
                "network. Either download cifar-10-python.tar.gz elsewhere and put it in "
                f"{root}, or choose a local folder with train/<class>/*.jpg and "
                "test/<class>/*.jpg."
            ) from exc
        if _md5(partial) != md5:
            partial.unlink(missing_ok=True)
            raise DataError(
                f"The CIFAR-10 download from {url} is damaged (checksum mismatch); try again."
            )
        partial.replace(archive)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(root, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise DataError(f"Could not unpack {archive}: {exc}. Delete it and try again.") from exc
    if not (folder / "batches.meta").is_file():
        raise DataError(f"{archive} did not contain {CIFAR10_FOLDER}/batches.meta.")
    return folder


def display_classes(classes: tuple[str, ...]) -> tuple[str, ...]:
    """Short tutorial names (plane, car) for the folder names torchvision uses."""
    rename = {"airplane": "plane", "automobile": "car"}
    return tuple(rename.get(c, c) for c in classes)
