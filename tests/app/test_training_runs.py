"""The training page's runs: however a script run ends, the worker's run is stopped or adopted
visibly, a Train click always starts a new run, and this session's runs are kept side by side."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from gradviz.services.following import Followed

SCRIPT = str(Path(__file__).resolve().parent / "training_page_script.py")


def _app(folder: Path, epochs: int = 1, time_limit: float = 0.0) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    at.run()
    at.text_input(key="training_folder").set_value(str(folder))
    at.selectbox(key="training_device").set_value("cpu")
    at.number_input(key="training_epochs_fast").set_value(epochs)
    at.number_input(key="training_time_limit").set_value(time_limit)
    at.run()
    return at


def _old_run(folder: Path, time_limit: float):
    """A run started by an earlier script run of this session, as the page keeps it."""
    from gradviz.training.settings import training_limits
    from gradviz.workers import jobs

    settings = {
        "source": "folder",
        "folder": "",
        "cache_dir": "",
        "device_choice": "cpu",
        "preset": "fast",
        "epochs": 200,
        "batch_size": 8,
        "lr": 0.1,
        "time_limit": time_limit,
    }
    job = jobs.start(
        "train", ({"kind": "folder", "path": str(folder)}, settings), training_limits(120.0, 2)
    )
    return job, settings


def test_train_after_an_old_run_starts_a_new_one(tiny_folder):
    """The lecturer's case: the old run went on to its time limit unseen; the next Train
    click showed that run's result (time limit reached) instead of training again."""
    old, settings = _old_run(tiny_folder, time_limit=1.0)
    assert old.wait(60) and old.status == "done"
    at = _app(tiny_folder, epochs=1)
    at.session_state["training_run"] = {"job": Followed(old), "settings": settings}
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    result = at.session_state["training_result"]
    assert not result.stopped  # one whole epoch, not the old run's time limit
    assert result.epochs_done == pytest.approx(1.0)
    assert not any("time limit" in w.value for w in at.warning), [w.value for w in at.warning]


def test_train_while_an_old_run_lives_stops_it_and_starts_anew(tiny_folder):
    old, settings = _old_run(tiny_folder, time_limit=100.0)
    while not any(e.kind == "epoch" for e in old.events):
        old.next_events(len(old.events), 1.0)
        assert not old.finished, old.describe_failure()
    at = _app(tiny_folder, epochs=1)
    at.session_state["training_run"] = {"job": Followed(old), "settings": settings}
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    assert old.stop_requested and old.finished
    result = at.session_state["training_result"]
    assert not result.stopped and result.epochs_done == pytest.approx(1.0)
    assert "training_run" not in at.session_state


def test_streamlit_stop_stops_the_run_and_the_next_run_says_so(tiny_folder, monkeypatch):
    """Streamlit's own Stop raises StopException at the page's next element, and the script
    can draw nothing more: the worker's run is asked to stop then (it keeps what it learned),
    and the page's next run shows that result, saying why it ended."""
    from gradviz.ui.training import live

    real = live._status_text
    pressed = {"n": 0}

    def stop_pressed(ev):
        pressed["n"] += 1
        if pressed["n"] == 2:  # during the run, as the lecturer did
            raise StopException()
        return real(ev)

    monkeypatch.setattr(live, "_status_text", stop_pressed)
    # A short wait for the next script run: on a quiet host the tiny run ends within the page's
    # 3 s, and a finished run has nothing left to stop.
    monkeypatch.setattr(live, "ADOPT_S", 0.3)
    at = _app(tiny_folder, epochs=200, time_limit=100.0)
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    run = at.session_state["training_run"]
    job = run["job"].job
    assert run["following"] is False  # the stopped script run no longer follows it
    # No next script run follows it (as after Streamlit's Stop): stopped ADOPT_S later.
    deadline = time.monotonic() + live.ADOPT_S + 10
    while not job.stop_requested and time.monotonic() < deadline:
        time.sleep(0.1)
    assert job.stop_requested, (job.status, job.message)  # not left running unseen
    # What makes the page's timer (a fragment the browser runs every second, even after
    # Streamlit's Stop) run the page again, without a click, to show how the run ended.
    assert live.unseen_end(run)
    assert job.wait(60) and job.status == "done"
    at.run()  # the next interaction adopts the run and shows how it ended
    assert not at.exception, at.exception
    assert "training_run" not in at.session_state
    assert any("page was stopped" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.session_state["training_result"].epochs_done < 200


def test_a_click_during_a_run_adopts_it(tiny_folder, monkeypatch):
    """A widget clicked during a run stops the script the same way (StopException); the next
    script run follows the run on, so it is not stopped, and it ends on its own."""
    from gradviz.ui.training import live

    real = live._status_text
    pressed = {"n": 0}

    def clicked(ev):
        pressed["n"] += 1
        if pressed["n"] == 2:
            raise StopException()
        return real(ev)

    monkeypatch.setattr(live, "_status_text", clicked)
    at = _app(tiny_folder, epochs=3)
    at.button(key="training_start").click()
    at.run()
    job = at.session_state["training_run"]["job"].job
    at.run()  # the click's script run, at once: follows the run to its end
    assert not at.exception, at.exception
    time.sleep(live.ADOPT_S + 0.5)
    assert not job.stop_requested and job.status == "done"
    result = at.session_state["training_result"]
    assert not result.stopped and result.epochs_done == pytest.approx(3.0)


def test_runs_of_this_session_are_compared_side_by_side(tiny_folder):
    """Each run replaces the last one's results; the tutorial and fast presets can still be
    compared: a table of this session's runs and their curves on shared axes."""
    at = _app(tiny_folder, epochs=1)
    at.button(key="training_start").click()
    at.run()
    assert "This session's runs" not in [s.value for s in at.subheader]  # one run: nothing yet
    at.selectbox(key="training_preset").set_value("tutorial")
    at.run()
    at.number_input(key="training_epochs_tutorial").set_value(1)
    at.run()
    at.button(key="training_start").click()
    at.run()
    assert not at.exception, at.exception
    assert "This session's runs" in [s.value for s in at.subheader]
    tables = [m.value for m in at.markdown if "| preset |" in m.value]
    assert tables, [m.value for m in at.markdown]
    lines = tables[0].splitlines()
    assert len(lines) == 4  # header, rule, two runs
    assert "| fast |" in lines[2] and "| tutorial |" in lines[3]
    for column in ("seconds", "images\\/s", "test accuracy", "device"):
        assert column in lines[0]
    charts = at.get("vega_lite_chart")
    overlaid = [c for c in charts if '"run"' in c.proto.spec]
    assert len(overlaid) == 2  # loss and test accuracy, one line per run
    assert all("run 1: fast on cpu" in c.proto.spec for c in overlaid)
    assert all("run 2: tutorial on cpu" in c.proto.spec for c in overlaid)


def test_per_class_accuracy_is_not_clipped(tiny_folder):
    """The tutorial's report lines are longer than the narrow column they sat in: they wrap."""
    at = _app(tiny_folder, epochs=1)
    at.button(key="training_start").click()
    at.run()
    report = at.code[0]
    assert "Accuracy for class: plane" in report.value
    assert report.proto.wrap_lines


def test_curves_are_thinned_keeping_both_ends():
    from gradviz.ui.training.runs import thin

    rows = [{"i": i} for i in range(1000)]
    kept = thin(rows, 120)
    assert len(kept) == 120 and kept[0] == rows[0] and kept[-1] == rows[-1]
    assert [r["i"] for r in kept] == sorted({r["i"] for r in kept})
    assert thin(rows[:5], 120) == rows[:5]
