"""The training page in Streamlit's AppTest: a tiny run end to end, errors, a stopped run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from gradviz.training import CLASSES
from gradviz.training.models import build_model

SCRIPT = str(Path(__file__).resolve().parent / "training_page_script.py")


@pytest.fixture
def tiny_folder(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    for split, n in (("train", 4), ("test", 2)):
        for k, c in enumerate(CLASSES):
            d = tmp_path / split / c
            d.mkdir(parents=True)
            for i in range(n):
                arr = rng.integers(0, 30, (32, 32, 3), dtype=np.uint8) + np.uint8(k * 20)
                Image.fromarray(arr).save(d / f"{i}.png")
    return tmp_path


def _app(folder: Path) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    at.run()
    at.text_input(key="training_folder").set_value(str(folder))
    at.run()
    return at


@pytest.mark.parametrize("preset", ["fast", "tutorial"])
def test_tiny_run_shows_results(tiny_folder, preset):
    at = _app(tiny_folder)
    assert not at.exception
    assert "40 training and 20 test images" in at.caption[0].value + " ".join(
        c.value for c in at.caption
    )
    at.selectbox(key="training_device").set_value("cpu")
    at.selectbox(key="training_preset").set_value(preset)
    at.run()
    at.number_input(key=f"training_epochs_{preset}").set_value(1)
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    labels = [m.label for m in at.metric]
    assert labels == ["Test accuracy", "Training time", "Images/s", "Device"]
    assert at.metric[3].value == "cpu"
    report = at.code[0].value
    assert "Accuracy of the network on the 20 test images" in report
    assert "Accuracy for class: plane" in report
    assert at.get("download_button")
    assert len(at.get("image")) >= 2  # confusion matrix and prediction grid
    # A rerun keeps the results; a second device would add the comparison table.
    at.run()
    assert [m.label for m in at.metric][0] == "Test accuracy"


def test_missing_folder_is_a_clear_message(tmp_path):
    at = _app(tmp_path / "missing")
    assert not at.exception
    assert "does not exist" in at.error[0].value
    assert at.button(key="training_start").disabled


def test_interrupted_run_keeps_what_was_learned(tiny_folder):
    """A Stop click reruns the page mid-loop; the next run evaluates the live model it left."""
    at = _app(tiny_folder)
    at.session_state["training_run"] = {
        "preset": "fast",
        "device_choice": "cpu",
        "device": "cpu",
        "arch": "fast-cpu",
        "model": build_model("fast-cpu").eval(),
        "history": [
            {
                "images_seen": 16,
                "elapsed_s": 0.5,
                "loss": 2.3,
                "accuracy": 0.1,
                "test_accuracy": None,
            }
        ],
    }
    at.session_state["training_stop"] = True
    at.run()
    assert not at.exception
    assert "stopped by you" in at.warning[0].value
    assert at.metric[0].label == "Test accuracy"
    assert "training_run" not in at.session_state


def test_cifar10_without_network_says_what_to_do(tmp_path, monkeypatch):
    import urllib.error

    from gradviz.training import data as data_mod

    def offline(*a, **k):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(data_mod.urllib.request, "urlopen", offline)
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.run()
    at.radio(key="training_source").set_value(at.radio(key="training_source").options[1])
    at.run()
    at.text_input(key="training_cache").set_value(str(tmp_path))
    at.run()
    assert not at.exception
    message = at.error[0].value
    assert "Could not download CIFAR-10" in message and "local folder" in message
    assert at.button(key="training_start").disabled


def test_curves_keep_test_accuracy_from_epoch_rows():
    from gradviz.ui.training import _curves

    history = [
        {
            "kind": "progress",
            "images_seen": 10,
            "loss": 2.0,
            "accuracy": 0.1,
            "test_accuracy": None,
        },
        {"kind": "epoch", "images_seen": 20, "loss": None, "accuracy": None, "test_accuracy": 0.3},
        {
            "kind": "progress",
            "images_seen": 30,
            "loss": 1.5,
            "accuracy": 0.4,
            "test_accuracy": None,
        },
        {"kind": "epoch", "images_seen": 40, "loss": None, "accuracy": None, "test_accuracy": 0.5},
    ]
    loss, acc = _curves(history)
    assert loss["loss"].tolist() == [2.0, 1.5]
    assert acc["test accuracy"].dropna().tolist() == [0.3, 0.4, 0.5]
    assert acc["train accuracy"].iloc[1] == 0.25  # joined up between the two readings


def test_without_torchvision_the_page_says_what_works(tiny_folder, monkeypatch):
    """As in the CPU-only set-up without torchvision: a note, then plain messages, no traceback."""
    import sys

    monkeypatch.setitem(sys.modules, "torchvision", None)
    at = _app(tiny_folder)
    assert not at.exception
    assert "torchvision is not installed" in at.warning[0].value
    assert not at.error  # the fast preset on a folder still loads
    at.selectbox(key="training_device").set_value("cpu")
    at.selectbox(key="training_preset").set_value("tutorial")
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.exception
    assert "tutorial preset converts images with torchvision" in at.error[0].value
    at.radio(key="training_source").set_value(at.radio(key="training_source").options[1])
    at.run()
    assert not at.exception
    assert "torchvision is not installed" in at.error[0].value
    assert at.button(key="training_start").disabled
