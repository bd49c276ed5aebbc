"""The training page in Streamlit's AppTest: a tiny run end to end, errors, a stopped run."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_process import run_fresh
from streamlit.testing.v1 import AppTest

from gradviz.services.following import Followed

SCRIPT = str(Path(__file__).resolve().parent / "training_page_script.py")


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
    assert "40 training and 20 test images" in " ".join(c.value for c in at.caption)
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
    images = [m.value for m in at.markdown if m.value.startswith("<img ")]
    assert len(images) == 2  # confusion matrix and prediction grid, PNGs from the worker
    assert all("data:image/png;base64,iVBORw0KGgo" in i for i in images)
    # A rerun keeps the results; a second device would add the comparison table.
    at.run()
    assert [m.label for m in at.metric][0] == "Test accuracy"


def test_missing_folder_is_a_clear_message(tmp_path):
    at = _app(tmp_path / "missing")
    assert not at.exception
    assert "does not exist" in at.error[0].value
    assert at.button(key="training_start").disabled


def _settings(**changes) -> dict:
    return {
        "source": "folder",
        "folder": "",
        "cache_dir": "",
        "device_choice": "cpu",
        "preset": "fast",
        "epochs": 200,
        "batch_size": 8,
        "lr": 0.1,
        "time_limit": 120.0,
        **changes,
    }


def test_stop_ends_the_worker_and_keeps_what_was_learned(tiny_folder, monkeypatch):
    """Stop makes Streamlit rerun the page; the rerun asks the running worker to stop and
    shows the results it sends back (the weights it learned so far), and nothing ticks after."""
    from gradviz.training.settings import training_limits
    from gradviz.workers import jobs

    timers = _timers(monkeypatch)
    at = _app(tiny_folder)
    settings = _settings()
    job = jobs.start(
        "train",
        ({"kind": "folder", "path": str(tiny_folder)}, settings),
        training_limits(120.0, 2),
    )
    while not any(e.kind == "epoch" for e in job.events):
        job.next_events(len(job.events), 1.0)
        assert not job.finished, job.describe_failure()
    at.session_state["training_run"] = {"job": Followed(job), "settings": settings}
    at.session_state["training_stop"] = True
    at.run()
    assert not at.exception, at.exception
    assert "stopped by you" in at.warning[0].value
    assert at.metric[0].label == "Test accuracy"
    assert "training_run" not in at.session_state
    assert job.finished and job.status == "done"
    assert 0 < at.session_state["training_result"].epochs_done < 200
    assert timers[-1] == []


def test_training_runs_in_a_worker_not_in_the_server(tiny_folder, monkeypatch):
    """With training disabled in this process, a run still works: it happened elsewhere."""
    import torch

    from gradviz.training import checkpoint, loop
    from gradviz.training import jobs as training_jobs

    def not_here(*a, **k):
        raise AssertionError("trained in the server process")

    for module, name in ((loop, "train"), (training_jobs, "train"), (loop, "evaluate")):
        monkeypatch.setattr(module, name, not_here)
    monkeypatch.setattr(training_jobs, "evaluate", not_here)
    monkeypatch.setattr(torch, "load", not_here)
    monkeypatch.setattr(checkpoint.torch, "load", not_here)
    threads = torch.get_num_threads()
    at = _app(tiny_folder)
    at.selectbox(key="training_device").set_value("cpu")
    at.number_input(key="training_epochs_fast").set_value(1)
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.metric[0].label == "Test accuracy"
    assert torch.get_num_threads() == threads
    # Uploaded weights are loaded (torch.load) and evaluated in a worker too.
    weights = at.session_state["training_result"].weights
    at.file_uploader[0].set_value(("w.pt", weights, "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    assert "fast-cpu weights:" in at.success[0].value


SERVER_MODULES_SCRIPT = """
import json, sys

folder, script = sys.argv[1], sys.argv[2]
import streamlit  # noqa: F401

import gradviz.ui.training.page  # noqa: F401  (as the server imports the page)

at_import = sorted(m for m in ("torch", "numpy", "pandas") if m in sys.modules)
from streamlit.testing.v1 import AppTest

at = AppTest.from_file(script, default_timeout=180)
at.run()
at.text_input(key="training_folder").set_value(folder).run()
at.selectbox(key="training_device").set_value("cpu")
at.number_input(key="training_epochs_fast").set_value(1).run()
at.button(key="training_start").click().run()
trained = [m.label for m in at.metric]
result = at.session_state["training_result"] if "training_result" in at.session_state else None
if result:
    upload = ("w.pt", result.weights, "application/octet-stream")
    at.file_uploader[0].set_value(upload).run()
print(json.dumps({
    "at_import": at_import,
    "exception": [str(e.value) for e in at.exception],
    "errors": [str(e.value) for e in at.error],
    "metrics": trained,
    "evaluated": [str(s.value) for s in at.success],
    "torch": sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torchvision")),
    "heavy": sorted(m for m in ("numpy", "pandas", "pyarrow", "altair") if m in sys.modules),
    "charts": len(at.get("vega_lite_chart")),
}))
"""


def test_the_server_never_imports_torch(tiny_folder):
    """The Streamlit server must never import torch (about 190 MB of its memory, on a host
    with 690 MB): in a fresh process, the page's import pulls in neither torch nor numpy,
    and a whole run (training, results, evaluating uploaded weights) leaves torch unloaded:
    the work and the devices are asked of workers, and what comes back is plain data."""
    report = run_fresh(SERVER_MODULES_SCRIPT, tiny_folder, SCRIPT, timeout=300)
    assert report["at_import"] == []
    assert report["exception"] == [] and report["errors"] == []
    assert report["metrics"][0] == "Test accuracy"  # the run finished and its results show
    assert report["evaluated"] and "fast-cpu weights:" in report["evaluated"][0]
    assert report["torch"] == []
    assert report["charts"] == 2  # loss and accuracy curves
    assert report["heavy"] == []  # curves as Vega-Lite specs, tables as Markdown


def test_devices_come_from_a_worker_and_a_failure_leaves_the_cpu(tiny_folder, monkeypatch):
    from gradviz.services import host
    from gradviz.services.jobs import JobFailed

    def no_worker():
        raise JobFailed("The worker process running asking the worker ended unexpectedly.")

    monkeypatch.setattr(host, "facts", no_worker)
    at = _app(tiny_folder)
    assert not at.exception, at.exception
    assert at.selectbox(key="training_device").options == ["auto", "cpu"]
    assert any("Could not ask a worker which devices" in c.value for c in at.caption)
    assert not at.button(key="training_start").disabled  # the folder still checks out


def test_busy_server_says_so_and_keeps_working(tiny_folder, monkeypatch):
    from gradviz.ui.training import live
    from gradviz.workers import jobs

    monkeypatch.setattr(live, "QUEUE_S", 1.0)
    slot = jobs.slots("training")
    assert slot.try_acquire()  # another visitor's run
    try:
        at = _app(tiny_folder)
        at.button(key="training_start").click()
        at.run()
        assert not at.exception
        message = at.error[0].value
        assert "The server is busy" in message and "Try again" in message
    finally:
        slot.release()
    at.number_input(key="training_epochs_fast").set_value(1)
    at.selectbox(key="training_device").set_value("cpu")
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.error and at.metric[0].label == "Test accuracy"


def test_worker_over_its_memory_gives_a_clear_message(tiny_folder, monkeypatch):
    monkeypatch.setenv("GRADVIZ_TRAINING_MEMORY", "20000000")  # 20 MB: far too little
    at = _app(tiny_folder)
    at.selectbox(key="training_device").set_value("cpu")
    at.number_input(key="training_batch_fast").set_value(4096)
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    message = at.error[0].value
    assert "memory" in message and "Nothing else was affected" in message, message
    assert "Traceback" not in message
    assert not at.metric


def test_cifar10_without_network_says_what_to_do(tmp_path, monkeypatch):
    import urllib.error

    from gradviz.training import sources

    def offline(*a, **k):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
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


def _reading(kind, images_seen, loss, accuracy, test_accuracy):
    """A Progress reading as a worker sends it; only these fields matter to the curves."""
    from gradviz.training.events import Progress

    return Progress(
        kind=kind,
        epoch=1,
        epochs=2,
        step=images_seen // 10,
        steps_total=4,
        images_seen=images_seen,
        images_total=40,
        elapsed_s=1.0,
        images_per_s=10.0,
        eta_s=None,
        loss=loss,
        accuracy=accuracy,
        test_accuracy=test_accuracy,
    )


def test_curves_keep_test_accuracy_from_epoch_rows():
    from gradviz.ui.training.curves import curve_rows

    history = [
        _reading("progress", 10, loss=2.0, accuracy=0.1, test_accuracy=None),
        _reading("epoch", 20, loss=None, accuracy=None, test_accuracy=0.3),
        _reading("progress", 30, loss=1.5, accuracy=0.4, test_accuracy=None),
        _reading("epoch", 40, loss=None, accuracy=None, test_accuracy=0.5),
    ]
    loss, acc = curve_rows(history)
    assert [r["loss"] for r in loss] == [2.0, 1.5]
    test = [(r["images seen"], r["accuracy"]) for r in acc if r["series"] == "test accuracy"]
    train = [(r["images seen"], r["accuracy"]) for r in acc if r["series"] == "train accuracy"]
    assert test == [(20, 0.3), (40, 0.5)]  # one line through the epoch readings
    assert train == [(10, 0.1), (30, 0.4)]


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


def _timers(monkeypatch) -> list[list[float]]:
    """For each at.run(): the fragment timers (run_every, in seconds) that its last page run
    registered, which are the ones the browser keeps ticking after it (a page run that is not
    a fragment's drops the browser's earlier timers)."""
    from streamlit.testing.v1 import local_script_runner

    seen: list[list[float]] = []
    parse = local_script_runner.parse_tree_from_messages

    def recording(msgs):
        seen.append([m.auto_rerun.interval for m in msgs if m.WhichOneof("type") == "auto_rerun"])
        return parse(msgs)

    monkeypatch.setattr(local_script_runner, "parse_tree_from_messages", recording)
    return seen


def test_a_failed_run_leaves_the_page_final_with_no_timer(tiny_folder, monkeypatch):
    """The page's timer (a fragment, every second while a run is followed) kept ticking after
    a failed run, re-running the fragment on the server for nothing until the next click."""
    monkeypatch.setenv("GRADVIZ_TRAINING_MEMORY", "20000000")  # the worker fails: no memory
    timers = _timers(monkeypatch)
    at = _app(tiny_folder)
    at.selectbox(key="training_device").set_value("cpu")
    at.number_input(key="training_batch_fast").set_value(4096)
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    assert "memory" in at.error[0].value
    assert "training_run" not in at.session_state  # no run followed
    assert timers[-1] == []  # and nothing ticks
    at.run()  # any later page run draws the same failure, kept in session state
    assert "memory" in at.error[0].value and timers[-1] == []
    monkeypatch.delenv("GRADVIZ_TRAINING_MEMORY")
    at.number_input(key="training_batch_fast").set_value(8)
    at.number_input(key="training_epochs_fast").set_value(1)
    at.button(key="training_start").click()
    at.run()  # a finished run: its results, and no timer either
    assert not at.error and at.metric[0].label == "Test accuracy"
    assert "training_failed" not in at.session_state and timers[-1] == []
