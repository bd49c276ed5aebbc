"""The Speed and Training pages meet hostile input with a message, and keep working.

AppTest drives the real pages; timing, training and weight evaluation run in worker
processes, as on the server. Number inputs and sliders outside their range (negative,
NaN, infinite, huge) are replaced by Streamlit with the widget's default before the page
sees them; these tests check that the page then works on with a value in range.

Not covered: NaN or infinity sent for an *integer* number input. The browser sends
integers there; a hand-made websocket message could send a float, and Streamlit 1.67's
own deserializer (int(value)) then fails before the page runs, for that session only.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from streamlit.testing.v1 import AppTest

from gradviz.training import CLASSES
from gradviz.training.models import build_model
from gradviz.training.settings import MAX_CHECKPOINT_BYTES
from gradviz.util.settings import PUBLIC

ROOT = Path(__file__).resolve().parents[2]
TRAINING = str(ROOT / "tests" / "app" / "training_page_script.py")
HOSTILE_NUMBERS = [-1, 0, -(10**18), 10**18, float("nan"), float("inf"), float("-inf"), 1e308]


def _speed_script() -> None:
    from gradviz.ui.speed import page

    page.page()


def _messages(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.error, *at.warning, *at.info])


def _no_traceback(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert "Traceback" not in _messages(at)


# ---------------------------------------------------------------- Speed page


@pytest.fixture
def no_reference(tmp_path, monkeypatch):
    from gradviz.speed import timing_reference

    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", tmp_path / "absent.json")


SPEED_NUMBERS = {
    "speed_cmp_size_elementwise": (1, 10**10),
    "speed_cmp_iters": (1, 1000),
    "speed_sweep_max_step": (1.0, 600.0),
}
INTEGER_INPUTS = {
    "speed_cmp_size_elementwise",
    "speed_cmp_iters",
    "training_epochs_fast",
    "training_batch_fast",
}


def _hostile_for(key: str, value):
    """The value, or a huge finite one where Streamlit only accepts integers (see above)."""
    if key in INTEGER_INPUTS and not (isinstance(value, int) or np.isfinite(value)):
        return -(10**18) if value < 0 else 10**18
    if key in INTEGER_INPUTS:
        return int(value) if abs(value) < 1e300 else 10**18
    return value


SPEED_SLIDERS = {"speed_cmp_repeats": (3, 15), "speed_sweep_repeats": (3, 15)}


@pytest.mark.parametrize("value", HOSTILE_NUMBERS, ids=[str(v) for v in HOSTILE_NUMBERS])
def test_speed_numbers_out_of_range_leave_a_working_page(no_reference, value):
    at = AppTest.from_function(_speed_script, default_timeout=120).run()
    for key in SPEED_NUMBERS:
        at.number_input(key=key).set_value(_hostile_for(key, value))
    for key in SPEED_SLIDERS:
        at.slider(key=key).set_value(_hostile_for("speed_cmp_iters", value))
    at.run()
    _no_traceback(at)
    for key, (lo, hi) in SPEED_NUMBERS.items():
        v = at.number_input(key=key).value
        assert lo <= v <= hi, (key, v)
    for key, (lo, hi) in SPEED_SLIDERS.items():
        assert lo <= at.slider(key=key).value <= hi
    # The page still times: a small comparison runs to the end.
    at.number_input(key="speed_cmp_size_elementwise").set_value(10_000)
    at.number_input(key="speed_cmp_iters").set_value(1)
    next(b for b in at.button if b.label == "Time it both ways").click().run()
    _no_traceback(at)
    assert not at.error
    assert at.session_state["speed_compare"]["done"] is True


def test_speed_size_at_the_top_of_its_range_is_refused_with_a_message(no_reference):
    at = AppTest.from_function(_speed_script, default_timeout=120).run()
    at.number_input(key="speed_cmp_size_elementwise").set_value(10**10)
    at.number_input(key="speed_cmp_iters").set_value(1000)
    at.run()
    _no_traceback(at)
    assert "Choose a smaller size" in _messages(at)
    assert next(b for b in at.button if b.label == "Time it both ways").disabled


# ---------------------------------------------------------------- Training page


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    rng = np.random.default_rng(0)
    for split, n in (("train", 3), ("test", 2)):
        for k, c in enumerate(CLASSES):
            d = root / split / c
            d.mkdir(parents=True)
            for i in range(n):
                arr = rng.integers(0, 30, (32, 32, 3), dtype=np.uint8) + np.uint8(k * 20)
                Image.fromarray(arr).save(d / f"{i}.png")
    return root


def _training(folder: Path | str) -> AppTest:
    at = AppTest.from_file(TRAINING, default_timeout=120)
    at.run()
    at.text_input(key="training_folder").set_value(str(folder))
    at.selectbox(key="training_device").set_value("cpu")
    at.run()
    return at


def _train_briefly(at: AppTest) -> None:
    at.number_input(key="training_epochs_fast").set_value(1)
    at.number_input(key="training_batch_fast").set_value(16)
    at.run()
    at.button(key="training_start").click()
    at.run()
    _no_traceback(at)
    assert not at.error, _messages(at)
    assert at.metric[0].label == "Test accuracy"


TRAINING_NUMBERS = {
    "training_epochs_fast": (1, 200),
    "training_batch_fast": (1, 8192),
    "training_lr_fast": (1e-5, 10.0),
    "training_time_limit": (0.0, 3600.0),
}


@pytest.mark.parametrize("value", HOSTILE_NUMBERS, ids=[str(v) for v in HOSTILE_NUMBERS])
def test_training_numbers_out_of_range_leave_a_working_page(folder, value):
    at = _training(folder)
    for key in TRAINING_NUMBERS:
        at.number_input(key=key).set_value(_hostile_for(key, value))
    at.run()
    _no_traceback(at)
    for key, (lo, hi) in TRAINING_NUMBERS.items():
        v = at.number_input(key=key).value
        assert lo <= v <= hi, (key, v)
    if value == 0 or value == -1:
        _train_briefly(at)


def test_training_extreme_values_in_range_train_or_say_why(folder):
    """A learning rate of 10 and a batch larger than the data: results, or a plain message."""
    at = _training(folder)
    at.number_input(key="training_lr_fast").set_value(10.0)
    at.number_input(key="training_batch_fast").set_value(8192)
    at.number_input(key="training_epochs_fast").set_value(1)
    at.run()
    at.button(key="training_start").click()
    at.run()
    _no_traceback(at)
    assert at.metric[0].label == "Test accuracy" or at.error


HOSTILE_FOLDERS = {
    "root": ("/", "has no train or test subfolder"),
    "proc": ("/proc", "has no train or test subfolder"),
    "dotdot": ("../..", "subfolder"),
    "nul": ("/tmp/x\x00y", "control characters"),
    "newline": ("/tmp\n/etc", "control characters"),
    "10k": ("a" * 10_000, "10,000 characters"),
    "file": (__file__, "is a file, not a folder"),
    "missing": ("/no/such/folder/here", "does not exist"),
    "empty": ("   ", "Enter a folder"),
}


@pytest.mark.parametrize("text,words", list(HOSTILE_FOLDERS.values()), ids=list(HOSTILE_FOLDERS))
def test_hostile_folder_text_gives_a_message(folder, text, words):
    at = _training(text)
    _no_traceback(at)
    assert at.error and words in at.error[0].value, _messages(at)
    assert at.button(key="training_start").disabled
    # And the page keeps working: a good folder trains.
    at.text_input(key="training_folder").set_value(str(folder))
    at.run()
    _train_briefly(at)


def test_folder_without_images_or_with_broken_images(tmp_path):
    for split in ("train", "test"):
        for c in ("cat", "dog"):
            (tmp_path / "none" / split / c).mkdir(parents=True)
            d = tmp_path / "broken" / split / c
            d.mkdir(parents=True)
            (d / "0.jpg").write_bytes(os.urandom(500))
    at = _training(tmp_path / "none")
    _no_traceback(at)
    assert "class folders with images" in at.error[0].value  # empty folders are no classes
    at.text_input(key="training_folder").set_value(str(tmp_path / "broken"))
    at.run()
    at.button(key="training_start").click()
    at.run()  # the worker meets the broken image
    _no_traceback(at)
    assert "Could not read image" in at.error[0].value


def _public_training(folder: Path) -> AppTest:
    """The page on a public server whose operator offers `folder`, with it chosen."""
    at = AppTest.from_file(TRAINING, default_timeout=120)
    at.run()
    at.selectbox(key="training_public_folder").set_value(str(folder.resolve()))
    at.selectbox(key="training_device").set_value("cpu")
    at.run()
    return at


def test_public_mode_reads_only_allowed_folders(folder, monkeypatch, tmp_path):
    """No path field on a public server: a choice among the operator's folders, and the
    operator's CIFAR-10 cache shown, not asked (tests/security/test_training_public_data.py
    has the regression tests for what a typed path could do)."""
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.setenv("GRADVIZ_DATA_ROOTS", str(folder))
    monkeypatch.setenv("GRADVIZ_CACHE", str(tmp_path / "cache"))
    at = _public_training(folder)
    _no_traceback(at)
    assert not at.text_input
    assert str(folder.resolve()) in at.selectbox(key="training_public_folder").options
    assert "Public server: data comes only from" in " ".join(c.value for c in at.caption)
    at.radio(key="training_source").set_value(at.radio(key="training_source").options[1])
    at.run()
    assert not at.text_input
    assert str(tmp_path / "cache") in " ".join(m.value for m in at.markdown)
    at.radio(key="training_source").set_value(at.radio(key="training_source").options[0])
    at.run()
    _train_briefly(at)


def test_public_mode_caps_the_batch_size(folder, monkeypatch):
    """A public host keeps batches small enough for its memory: the field's maximum, the
    preset's default brought down to it, and a larger value sent anyway left at the cap."""

    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.setenv("GRADVIZ_DATA_ROOTS", str(folder))
    at = _public_training(folder)
    _no_traceback(at)
    field = at.number_input(key="training_batch_fast")
    assert field.max == PUBLIC.max_batch == 128
    assert field.value == 128  # the fast preset's 512, brought down
    assert "public server" in field.help
    field.set_value(4096)
    at.run()
    _no_traceback(at)
    assert at.number_input(key="training_batch_fast").value <= 128
    _train_briefly(at)


# ---------------------------------------------------------------- uploaded weights


def _saved(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


class _RunsCode:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


RANDOM = np.random.default_rng(0).bytes(4096)
RANDOM_SEEDS = [np.random.default_rng(seed).bytes(2048) for seed in range(20)]


def test_random_bytes_are_never_called_code():
    from gradviz.training.checkpoint import CheckpointError, read_state_dict

    for blob in RANDOM_SEEDS:
        with pytest.raises(CheckpointError, match="not a PyTorch weights file"):
            read_state_dict(blob)


def _uploads(tmp_path) -> dict[str, tuple[str, bytes, str]]:
    good = build_model("fast-cpu").state_dict()
    wrong_shape = dict(good)
    first = next(iter(wrong_shape))
    wrong_shape[first] = torch.zeros(7, 7)
    return {
        "empty": ("empty.pt", b"", "The file is empty"),
        "huge": ("huge.pt", b"\0" * (MAX_CHECKPOINT_BYTES + 1), "limit 32 MB"),
        "random": ("random.pt", RANDOM, "not a PyTorch weights file"),
        "random-zip": ("zip.pt", b"PK\x03\x04" + RANDOM, "not a PyTorch weights file"),
        "pickle": (
            "evil.pt",
            _saved({"w": _RunsCode(str(tmp_path / "ran"))}),
            "a pickle that could run code",
        ),
        "wrong-arch": (
            "linear.pt",
            _saved(torch.nn.Linear(3, 4).state_dict()),
            "fit none of the networks",
        ),
        "wrong-shape": ("shape.pt", _saved(wrong_shape), "wrong shape for"),
        "not-a-dict": ("list.pt", _saved([torch.ones(2)]), "not a state_dict"),
    }


UPLOAD_IDS = [
    "empty",
    "huge",
    "random",
    "random-zip",
    "pickle",
    "wrong-arch",
    "wrong-shape",
    "not-a-dict",
]


@pytest.mark.parametrize("which", UPLOAD_IDS)
def test_hostile_uploads_are_refused_with_a_message(folder, tmp_path, which):
    name, blob, words = _uploads(tmp_path)[which]
    at = _training(folder)
    at.file_uploader[0].set_value((name, blob, "application/octet-stream"))
    at.run()
    _no_traceback(at)
    assert at.error, _messages(at)
    assert "Weights refused" in at.error[0].value and words in at.error[0].value, at.error[0].value
    assert not (tmp_path / "ran").exists()
    # The page keeps working: good weights are evaluated next.
    good = _saved(build_model("fast-cpu").state_dict())
    at.file_uploader[0].set_value(("good.pt", good, "application/octet-stream"))
    at.run()
    _no_traceback(at)
    assert "fast-cpu weights:" in at.success[0].value


ODD_NAMES = ["ẅëïğħţ 🤖.pt", "\u202egnp.pt", "../../etc/passwd.pt", "con.pt", "a" * 300 + ".pt"]


@pytest.mark.parametrize("name", ODD_NAMES, ids=range(len(ODD_NAMES)))
def test_odd_file_names_are_only_names(folder, name):
    good = _saved(build_model("fast-cpu").state_dict())
    at = _training(folder)
    at.file_uploader[0].set_value((name, good, "application/octet-stream"))
    at.run()
    _no_traceback(at)
    assert "fast-cpu weights:" in at.success[0].value
