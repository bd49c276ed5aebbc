"""The Training page's data: the folder or the CIFAR-10 cache chosen, checked without reading
images (the worker reads them), and downloaded once with a progress bar.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from gradviz.training.sources import (
    CIFAR10_FOLDER,
    DataError,
    default_cache_dir,
    download_cifar10,
    resolve_folder,
    scan_image_folder,
    torchvision_missing,
)
from gradviz.ui.common import show_unexpected
from gradviz.util.format import fmt_in
from gradviz.util.mdtext import message
from gradviz.util.settings import public_host

FOLDER = "Local folder (ImageFolder layout: train/<class>, test/<class>)"
CIFAR = "CIFAR-10, downloaded once into a cache folder"
NO_PUBLIC_FOLDER = (
    "This public server offers no image folder (its operator lists them in "
    "GRADVIZ_DATA_ROOTS); choose CIFAR-10."
)


class Source:
    """Checked data choice: what the worker reads, and the caption for the page."""

    def __init__(self, kind: str, path: Path, caption: str):
        self.kind, self.path, self.caption = kind, path, caption

    def spec(self) -> dict:
        return {"kind": self.kind, "path": str(self.path)}


@st.cache_data(show_spinner=False, ttl=30, max_entries=32)
def _scan(path: str) -> str:
    return scan_image_folder(path).describe()


def load_source(source: str, folder: str, cache_dir: str) -> Source:
    """Check the chosen data without reading images (that happens in the worker).

    On a public server the cache folder is the operator's (GRADVIZ_CACHE): cache_dir is
    ignored, and nothing a visitor sends decides where anything is created or written."""
    public = public_host()
    if source == FOLDER:
        if public and not folder:
            raise DataError(NO_PUBLIC_FOLDER)
        path = resolve_folder(folder)
        return Source("folder", path, _scan(str(path)))
    if missing := torchvision_missing():  # before a 170 MB download it could not read
        raise DataError(missing)
    if public:
        root = default_cache_dir().expanduser().resolve()
    else:
        root = resolve_folder(cache_dir.strip() or str(default_cache_dir()))
    if not (root / CIFAR10_FOLDER / "batches.meta").is_file():
        bar = st.progress(0.0, text="Checking the CIFAR-10 cache...")

        def progress(done: int, total: int | None) -> None:
            if total:
                bar.progress(
                    min(done / total, 1.0),
                    text=f"Downloading CIFAR-10: {fmt_in(done, 'MB')} of {fmt_in(total, 'MB')}",
                )

        try:
            download_cifar10(root, progress=progress)
        finally:
            bar.empty()
    return Source("cifar", root, f"CIFAR-10 in {root}: 50,000 training and 10,000 test images")


def checked_source(settings: dict) -> Source | None:
    """The chosen data, checked (its caption shown), or None with the reason shown."""
    source = None
    try:
        source = load_source(settings["source"], settings["folder"], settings["cache_dir"])
        st.caption(message(source.caption))
    except DataError as exc:
        st.error(message(exc))
    except Exception as exc:  # last resort: keep the page up
        show_unexpected(exc, "checking the data")
    return source
