"""The training events and results that cross from a worker to the server: frozen, plain,
picklable, importable without torch, and checked by `plain` before they leave."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from gradviz.training.events import (
    PLAIN_CLASSES,
    DataRead,
    Evaluating,
    Progress,
    Started,
    TrainingSummary,
    WeightsEvaluation,
)
from gradviz.training.jobs import plain
from gradviz.training.loop import Event, TrainResult

ROOT = Path(__file__).resolve().parents[3]


def _progress(**changes) -> Progress:
    values = {
        "kind": "progress",
        "epoch": 1,
        "epochs": 2,
        "step": 3,
        "steps_total": 8,
        "images_seen": 24,
        "images_total": 64,
        "elapsed_s": 0.5,
        "images_per_s": 48.0,
        "eta_s": 0.8,
        "loss": 2.1,
        "accuracy": 0.25,
        "lr": 0.1,
    }
    return Progress(**{**values, **changes})


def _summary(**changes) -> TrainingSummary:
    values = {
        "preset": "fast",
        "arch": "fast-cpu",
        "device": "cpu",
        "device_type": "cpu",
        "data": "toy",
        "stopped": None,
        "seconds": 1.5,
        "images_seen": 64,
        "images_per_s": 42.7,
        "epochs_done": 2.0,
        "accuracy": 0.5,
        "flip_tta": True,
        "per_class": {"cat": 0.5, "dog": 0.5},
        "report": ("Accuracy of the network on the 4 test images: 50.0 %",),
        "confusion_png": b"\x89PNG",
        "grid_png": b"\x89PNG",
        "weights": b"weights",
        "history": (_progress(), _progress(kind="end", step=8, images_seen=64)),
    }
    return TrainingSummary(**{**values, **changes})


ALL = [
    DataRead("24 training and 9 test images"),
    Started(arch="fast-cpu", device="cpu"),
    _progress(),
    Evaluating(),
    _summary(),
    WeightsEvaluation("fast-cpu", 0.5, ("line",), b"\x89PNG", 4, "toy"),
]


def test_every_class_crossing_is_listed_and_sampled():
    assert {type(x) for x in ALL} == set(PLAIN_CLASSES)


@pytest.mark.parametrize("value", ALL, ids=lambda v: type(v).__name__)
def test_frozen_and_the_same_after_a_pipe(value):
    again = pickle.loads(pickle.dumps(value))
    assert again == value and type(again) is type(value)
    first = dataclasses.fields(value)[0].name if dataclasses.fields(value) else "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, first, None)
    assert plain(value) is value


def test_each_event_says_its_kind_without_a_kind_field():
    assert [e.kind for e in (DataRead("x"), Started("a", "cpu"), Evaluating())] == [
        "data",
        "start",
        "evaluating",
    ]
    for cls in (DataRead, Started, Evaluating):
        assert "kind" not in {f.name for f in dataclasses.fields(cls)}
    assert _progress(kind="epoch").kind == "epoch"


def test_fraction_is_counted_in_images():
    assert _progress().fraction == pytest.approx(24 / 64)
    assert _progress(images_seen=70).fraction == 1.0
    assert _progress(images_total=0).fraction == 0.0


def test_plain_refuses_torch_or_numpy_inside_an_event():
    with pytest.raises(TypeError, match="not plain data") as info:
        plain(_progress(loss=np.float64(2.0)), "the progress event")
    assert "the progress event.loss" in str(info.value)
    bad_history = _summary(history=(_progress(accuracy=torch.tensor(0.5)),))
    with pytest.raises(TypeError, match=r"result\.history\[0\]\.accuracy"):
        plain(bad_history, "result")


def test_an_event_with_its_model_never_passes_but_its_reading_does():
    model = torch.nn.Linear(2, 2)
    result = TrainResult(model, "fast-cpu", "fast", "cpu", 0.0, 0, 0.0, 0.0, None)
    fields = {f.name: getattr(_progress(), f.name) for f in dataclasses.fields(Progress)}
    event = Event(**fields, result=result)
    with pytest.raises(TypeError, match="not plain data"):
        plain(event)  # a subclass of Progress, holding a model: refused by its exact type
    reading = event.plain()
    assert type(reading) is Progress and reading == _progress()
    assert plain(reading) is reading


def test_the_events_module_imports_without_torch():
    """The server unpickles these: importing their module must not bring torch or numpy."""
    code = (
        "import sys, gradviz.training.events as e; "
        "print(sorted(m for m in ('torch', 'numpy', 'PIL') if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
