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

import contextlib
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.services import host
from gradviz.training.sources import (
    DataError,
    download_cifar10,
    resolve_folder,
    scan_image_folder,
)

ROOT = Path(__file__).resolve().parents[2]
TRAINING = str(ROOT / "tests" / "app" / "training_page_script.py")
SUBSET = (ROOT / ".." / "shared" / "data" / "cifar10-subset").resolve()


@pytest.fixture
def subset(tmp_path) -> Path:
    """A writable copy of the real CIFAR-10 subset (train/ and test/, ten classes)."""
    if not (SUBSET / "train").is_dir():
        pytest.skip(f"shared cifar10-subset not found at {SUBSET}")
    copy = tmp_path / "data" / "cifar10-subset"
    shutil.copytree(SUBSET, copy)
    return copy


@pytest.fixture
def public(tmp_path, subset, monkeypatch) -> Path:
    """Public mode with the operator's cache in tmp_path and the subset copy as data root;
    no network (a download attempt fails at once). Returns the operator's cache folder."""
    cache = tmp_path / "operator-cache"
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.setenv("GRADVIZ_CACHE", str(cache))
    monkeypatch.setenv("GRADVIZ_DATA_ROOTS", str(subset.parent))

    def offline(*a, **k):
        raise urllib.error.URLError("no network in this test")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    # No worker is started here: one started in public mode would keep GRADVIZ_PUBLIC=1 for
    # the rest of the session (the page then says "CPU only", which these tests do not need).
    monkeypatch.setattr(host, "facts", _no_worker)
    return cache / "cifar10"


def _no_worker():
    raise RuntimeError("no worker in these tests")


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


# ---------------------------------------------------------------- item 3: nothing created


def test_public_download_creates_no_folder_but_the_operators_cache(public, subset):
    before = _tree(subset)
    for target in (subset / "test" / "zzz", subset / "train" / "zzz", subset.parent / "new"):
        with pytest.raises(DataError, match="only into the cache folder its operator set"):
            download_cifar10(target)
        assert not target.exists(), target
    assert _tree(subset) == before
    # The operator's own cache is still where CIFAR-10 goes (here: no network, a message).
    with pytest.raises(DataError, match="Could not download CIFAR-10"):
        download_cifar10(public)
    assert public.is_dir()


def test_public_page_has_no_cache_field_and_a_sent_value_creates_nothing(public, subset):
    before = _tree(subset)
    at = AppTest.from_file(TRAINING, default_timeout=120)
    at.run()
    at.radio(key="training_source").set_value(at.radio(key="training_source").options[1])
    at.run()
    assert not at.exception, at.exception
    assert "training_cache" not in [t.key for t in at.text_input]
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert str(public.parent) in shown and "GRADVIZ_CACHE" in shown
    # A value sent for the old field anyway (a hand-made message) is ignored.
    for target in (subset / "test" / "zzz", subset / "train" / "zzz"):
        at.session_state["training_cache"] = str(target)
        at.run()
        assert not at.exception, at.exception
        assert not target.exists(), target
    assert _tree(subset) == before
    # Everyone's folder still scans: ten classes, Train enabled.
    at.radio(key="training_source").set_value(at.radio(key="training_source").options[0])
    at.run()
    at.selectbox(key="training_public_folder").set_value(str(subset.resolve()))
    at.run()
    assert not at.error, [e.value for e in at.error]
    assert "10 classes" in " ".join(c.value for c in at.caption)
    assert not at.button(key="training_start").disabled


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


# ---------------------------------------------------------------- item 13: nothing echoed


def _secrets() -> list[str]:
    found = [os.getcwd(), str(Path.home()), f"/proc/{os.getpid()}", str(os.getpid())]
    for link in ("/proc/self/exe", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2"):
        with contextlib.suppress(OSError):
            found.append(os.readlink(link))
    return [s for s in found if len(s) > 1]


def test_public_refusals_name_no_resolved_path(public, tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    typed = [
        "~",
        "~/.ssh",
        "/proc/self/cwd",
        "/proc/self/fd/0",
        "/proc/self/fd/1",
        "/proc/self/fd/3",
        "/proc/self/exe",
        "/proc/self",
        "/proc/self/root/etc",
        "..",
        str(loop),
    ]
    for text in typed:
        with pytest.raises(DataError) as caught:
            resolve_folder(text)
        message = str(caught.value)
        assert "public server" in message, (text, message)
        for secret in _secrets():
            assert secret not in message, (text, secret, message)


def test_public_page_offers_only_the_operators_folders(public, subset):
    """No free-text folder field on a public server: a choice among the operator's folders."""
    from gradviz.training.sources import public_folder_choices

    offered = public_folder_choices()
    assert subset.resolve() in offered
    # Besides the copy: only the shared subset beside the checkout, when there is one.
    assert set(offered) <= {subset.resolve(), SUBSET.resolve()}
    at = AppTest.from_file(TRAINING, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert "training_folder" not in [t.key for t in at.text_input]
    assert at.selectbox(key="training_public_folder").options == [str(p) for p in offered]
    page = " ".join(str(e.value) for e in [*at.caption, *at.markdown, *at.error, *at.info])
    for secret in (os.getcwd(), str(Path.home())):
        assert secret not in page, secret
