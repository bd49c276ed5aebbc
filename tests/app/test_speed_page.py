"""AppTest of the Speed page on its own (app.py also imports pages still being written)."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from fresh_process import run_fresh
from streamlit.testing.v1 import AppTest

from gradviz.devices import info as device_info
from gradviz.services.following import Followed
from gradviz.speed import memory, timing, timing_reference, workloads
from gradviz.ui import charts
from gradviz.ui.speed import running
from gradviz.util import resources
from tests import markdown_tables

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "gpu_speed_reference.TEST_FIXTURE.json"


def _script() -> None:
    from gradviz.ui.speed import page

    page.page()


@pytest.fixture
def no_reference(tmp_path, monkeypatch):
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", tmp_path / "absent.json")


@pytest.fixture
def fixture_reference(tmp_path, monkeypatch):
    path = tmp_path / "ref.json"
    shutil.copy(FIXTURE, path)
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", path)


def _app() -> AppTest:
    at = AppTest.from_function(_script, default_timeout=120)
    at.run()
    assert not at.exception
    return at


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def _text(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def _charts(at: AppTest):
    return at.get("vega_lite_chart")


def _spec(chart) -> dict:
    return json.loads(chart.proto.spec)


def _table(at: AppTest, column: str) -> list[dict]:
    return markdown_tables.find((m.value for m in at.markdown), column)


def test_page_renders_on_cpu_and_says_no_gpu_reference(no_reference):
    at = _app()
    assert at.title[0].value == "CPU vs GPU speed"
    captions = _text(at.caption)
    assert f"CPU threads: **{resources.available_cpus()}**" in captions
    assert "Estimated on this CPU" in captions
    info = _text(at.info)
    assert "No GPU reference has been recorded yet" in info
    assert timing_reference.REFERENCE_COMMAND in info
    assert not at.error


def test_comparison_shows_naive_and_correct_side_by_side(no_reference):
    at = _app()
    at.number_input(key="speed_cmp_size_elementwise").set_value(10_000)
    _button(at, "Time it both ways").click().run()
    assert not at.exception and not at.error
    table = _table(at, "naive (lesson)")
    assert [r["device"] for r in table] == ["cpu (live)"]
    for column in ("naive (lesson)", "correct median", "IQR"):
        assert column in table[0]
    for column in ("launch returned", "pending at sync"):  # a GPU's, not shown on a CPU
        assert column not in table[0]
    assert "Why the two figures differ" in _text(at.markdown)
    assert at.session_state[running.COMPARE_KEY]["done"] is True


def test_oversized_request_is_refused_with_a_message(no_reference):
    at = _app()
    at.number_input(key="speed_cmp_size_elementwise").set_value(10**10).run()
    warning = _text(at.warning)
    assert "10000x1000x1000" in warning
    assert "Choose a smaller size" in warning
    assert _button(at, "Time it both ways").disabled
    assert not at.exception


def test_sweep_draws_charts_and_table(no_reference):
    at = _app()
    at.radio(key="speed_workload").set_value("matmul").run()
    at.multiselect(key="speed_sweep_sizes_matmul").set_value([64, 128]).run()
    _button(at, "Run sweep").click().run()
    assert not at.exception and not at.error
    state = at.session_state[running.SWEEP_KEY]
    assert state["done"] is True
    assert [p["size"] for p in state["points"]] == [64, 128]
    assert len(_charts(at)) == 2
    rows = _table(at, "series")
    assert {r["series"] for r in rows} == {"CPU, this host (live)"}
    assert "GFLOP/s" in rows[0]
    time_chart, rate_chart = (charts.layer_values(_spec(c)) for c in _charts(at))
    assert [p["size"] for p in time_chart[0]] == [64, 128]
    assert all(p["median_ms"] > 0 for p in time_chart[0])
    # matmul has its own size input: no leftover elementwise size. (A busy host may still
    # get its points flagged, or its quick estimate run: that is the page doing its job.)
    busy = ("look implausible", "this host is busy")
    assert not [w.value for w in at.warning if not any(b in w.value for b in busy)]


def test_stopped_sweep_keeps_what_was_measured(no_reference):
    """Stop makes Streamlit rerun mid-sweep; the rerun finds the unfinished state."""
    at = AppTest.from_function(_script, default_timeout=120)
    point = timing.Point("elementwise", "cpu", "float32", 1000, 10, 1e-4, 1e-5, 3)
    at.session_state[running.SWEEP_KEY] = {
        "config": {"workload": "elementwise", "dtype": "float32"},
        "points": [asdict(point)],
        "skipped": [],
        "total": 4,
        "done": False,
        "error": None,
    }
    at.run()
    assert not at.exception
    assert "Stopped after 1 of 4 steps" in _text(at.warning)
    assert len(_charts(at)) == 2


def test_reference_file_is_shown_with_device_date_and_command(fixture_reference):
    at = _app()
    info = _text(at.info)
    assert "FAKE GPU (test fixture)" in info
    assert "2000-01-01" in info
    assert "TEST FIXTURE, not produced by any command" in info
    # The lesson's comparison recorded on the GPU is listed beside the live CPU (none run yet).
    at.radio(key="speed_workload").set_value("elementwise").run()
    table = _table(at, "naive (lesson)")
    assert [r["device"] for r in table] == ["cuda (reference: FAKE GPU (test fixture))"]
    # Reference GPU points draw without a live sweep.
    at.radio(key="speed_workload").set_value("matmul").run()
    assert len(_charts(at)) == 2
    assert "GPU FAKE GPU (test fixture) (reference, 2000-01-01)" in {
        r["series"] for r in _table(at, "series")
    }


def test_sweep_against_reference_reports_crossover(fixture_reference):
    at = _app()
    at.radio(key="speed_workload").set_value("matmul").run()
    at.multiselect(key="speed_sweep_sizes_matmul").set_value([64, 128, 256]).run()
    _button(at, "Run sweep").click().run()
    assert not at.exception
    # Whichever way the live CPU figures fall, the page states a crossover outcome (none when
    # a busy host got the points flagged: they are in no crossover).
    outcome = _text(at.success) + _text(at.info)
    assert any(s in outcome for s in ("Crossover", "did not win", "no crossover is given"))


def test_invalid_reference_file_is_reported_not_raised(tmp_path, monkeypatch):
    bad = tmp_path / "ref.json"
    bad.write_text('{"schema": "gradviz.gpu_speed_reference/1", "device": "X"}')
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", bad)
    at = _app()
    error = _text(at.error)
    assert "not valid" in error and "missing field 'torch'" in error
    assert timing_reference.REFERENCE_COMMAND in error


def test_tf32_on_cpu_is_explained(no_reference):
    at = _app()
    at.selectbox(key="speed_dtype").set_value("tf32").run()
    assert "the CPU runs strict float32" in _text(at.caption)


def test_lesson_full_size_is_offered_with_an_estimate_and_a_warning(no_reference):
    at = _app()
    at.button(key="speed_lesson_size").click().run()
    assert at.number_input(key="speed_cmp_size_elementwise").value == workloads.LESSON_ELEMENTS
    assert at.number_input(key="speed_cmp_iters").value == workloads.LESSON_ITERATIONS
    assert "Estimated on this CPU" in _text(at.caption)
    warning = _text(at.warning)
    if "Choose a smaller size" not in warning:  # a host with under 4 GB free refuses instead
        assert "Stop ends it within a few seconds" in warning
    assert running.COMPARE_KEY not in at.session_state  # choosing the size runs nothing


def _instead(monkeypatch, kind: str, *args) -> None:
    """Make the page's next worker job the test-only `kind` (same limits and slot)."""
    from gradviz.workers import jobs

    real = jobs.start

    def start(_kind, _args, limits, slot=None, **kw):
        return real(kind, args, limits, slot, testing=True)

    monkeypatch.setattr(jobs, "start", start)


def test_failed_comparison_says_why_and_not_stopped(no_reference, monkeypatch):
    _instead(monkeypatch, "fail", "too big for this test")
    at = _app()
    _button(at, "Time it both ways").click().run()
    assert not at.exception
    assert "too big for this test" in _text(at.error)
    assert "Stopped" not in _text(at.warning)
    at.run()  # the message stays on later reruns
    assert "too big for this test" in _text(at.error)


def test_worker_crash_is_a_clear_message_and_the_page_keeps_working(no_reference, monkeypatch):
    at = _app()
    with monkeypatch.context() as m:
        _instead(m, "crash")
        _button(at, "Time it both ways").click().run()
    assert not at.exception
    error = _text(at.error)
    assert "ended unexpectedly (SIGSEGV)" in error and "Traceback" not in error
    at.number_input(key="speed_cmp_size_elementwise").set_value(10_000)
    _button(at, "Time it both ways").click().run()
    assert not at.error and at.session_state[running.COMPARE_KEY]["done"] is True


def test_worker_past_its_wall_clock_is_stopped_with_a_message(no_reference, monkeypatch):
    monkeypatch.setenv("GRADVIZ_SPEED_SECONDS", "2")
    _instead(monkeypatch, "hang")
    at = _app()
    at.multiselect(key="speed_sweep_sizes_elementwise").set_value([1000]).run()
    _button(at, "Run sweep").click().run()
    assert not at.exception
    assert "ran for more than 2 s, the limit" in _text(at.error)


def test_timing_runs_in_a_worker_and_leaves_the_server_alone(no_reference):
    """The server's torch threads and memory are the same during and after a timing run."""
    import threading

    import torch

    torch.set_num_threads(1)
    at = _app()
    size = 16_000_000  # 5 tensors of 64 MB at once if it ran here
    at.number_input(key="speed_cmp_size_elementwise").set_value(size).run()
    at.number_input(key="speed_cmp_iters").set_value(1).run()

    def rss() -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))

    peak = {"rss": rss()}
    before = peak["rss"]
    sampling = True

    def sample() -> None:
        while sampling:
            peak["rss"] = max(peak["rss"], rss())
            threading.Event().wait(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        _button(at, "Time it both ways").click().run()
    finally:
        sampling = False
        sampler.join()
    assert not at.exception and not at.error
    result = at.session_state[running.COMPARE_KEY]["results"][0]
    assert result.timing.threads == resources.available_cpus()  # what the worker used
    assert torch.get_num_threads() == 1  # the server's own, unchanged
    assert peak["rss"] - before < 100_000_000, (before, peak["rss"])


def test_a_rerun_stops_the_running_timing_and_keeps_its_points(no_reference):
    from gradviz.workers import jobs

    # far more steps than the sweep can finish before the page reruns (CI finished 400 first)
    steps = workloads.sweep_jobs("elementwise", [1_000, 10_000] * 20_000, ["cpu"])
    job = jobs.start("speed_sweep", (steps, 3, 1, None), memory.job_limits(steps))
    while not any(isinstance(e, timing.Point) for e in job.events):
        job.next_events(len(job.events), 1.0)
    at = AppTest.from_function(_script, default_timeout=120)
    at.session_state[running.SWEEP_KEY] = {
        "config": {"workload": "elementwise", "dtype": "float32"},
        "points": [],
        "skipped": [],
        "total": len(steps),
        "done": False,
        "error": None,
    }
    at.session_state[running.JOB_KEY] = {"job": Followed(job), "state": running.SWEEP_KEY}
    at.run()
    assert not at.exception
    assert job.stop_requested
    assert job.wait(60) and job.status == "done" and job.result == "stopped"
    assert "Stopped after" in _text(at.warning)
    assert at.session_state[running.SWEEP_KEY]["points"]  # folded in from the worker's events
    assert running.JOB_KEY not in at.session_state


def test_fraction_of_peak_for_a_known_gpu(tmp_path, monkeypatch):
    data = json.loads(FIXTURE.read_text())
    data["device"] = "NVIDIA H100 80GB HBM3 (test fixture)"  # a name the peak table knows
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", path)
    at = _app()
    at.radio(key="speed_workload").set_value("matmul").run()
    assert "Peak for NVIDIA H100 SXM: 3,350 GB/s memory, 67 TFLOP/s for float32" in _text(
        at.caption
    )
    rows = _table(at, "series")
    gpu_rows = [r for r in rows if r["series"].startswith("GPU")]
    assert len(gpu_rows) == 3
    assert all(r["of peak"].endswith("%") for r in gpu_rows)
    rules = charts.layer_values(_spec(_charts(at)[1]))[1]  # the peak line on the rate chart
    assert rules and rules[0]["label"].startswith("NVIDIA H100 SXM")
    assert len(_charts(at)) == 2


def test_a_gpu_host_is_known_from_host_facts(no_reference, monkeypatch):
    """The server learns of the GPU from host.facts() (a worker's answer), not from torch: its
    name, its memory for the size check, and its peak figures for live points."""
    from gradviz.services import host

    gpu = "NVIDIA H100 80GB HBM3"
    facts = device_info.HostFacts(
        "0.0-test",
        True,
        1,
        False,
        (
            device_info.DeviceInfo("cpu", "cpu", "CPU"),
            device_info.DeviceInfo("cuda:0", "cuda", gpu, False, 8e10),
        ),
    )
    monkeypatch.setattr(host, "facts", lambda: facts)
    at = AppTest.from_function(_script, default_timeout=120)
    points = [
        timing.Point("matmul", device, "float32", n, 1, t, t / 10, 3)
        for n in (64, 128)
        for device, t in (("cpu", 1e-4 * n / 64), ("cuda", 2e-5))
    ]
    at.session_state[running.SWEEP_KEY] = {
        "config": {"workload": "matmul", "dtype": "float32"},
        "points": [asdict(p) for p in points],
        "skipped": [],
        "total": 4,
        "done": True,
        "error": None,
    }
    at.run()
    assert not at.exception
    assert f"GPU: **{gpu}**" in _text(at.caption)
    assert "timed live on this host" in _text(at.success)
    at.radio(key="speed_workload").set_value("matmul").run()
    rows = _table(at, "series")
    assert f"GPU {gpu} (live)" in {r["series"] for r in rows}
    assert "Peak for NVIDIA H100 SXM" in _text(at.caption)
    assert "Crossover" in _text(at.success)
    # 4000x4000 float32 matrices, three at once: 192 MB, well within half of 80 GB.
    at.number_input(key="speed_cmp_size_matmul").set_value(4000).run()
    assert "GPU memory" not in _text(at.warning)
    # 100000x100000: 120 GB, over half the GPU's 80 GB (and over half of this host's RAM).
    at.number_input(key="speed_cmp_size_matmul").set_value(100_000).run()
    assert "of GPU memory at once" in _text(at.warning)
    assert _button(at, "Time it both ways").disabled
    assert not at.exception


SERVER_MODULES_SCRIPT = """
import json, sys
from pathlib import Path
from streamlit.testing.v1 import AppTest

from gradviz.speed import timing_reference

timing_reference.REFERENCE_PATH = Path(sys.argv[1])
page = "from gradviz.ui.speed import page\\npage.page()\\n"
at = AppTest.from_string(page, default_timeout=240).run()
report = {"exception": [str(e.value) for e in at.exception]}
captions = "\\n".join(str(c.value) for c in at.caption)
report["estimate"] = "Estimated on this CPU" in captions
at.number_input(key="speed_cmp_size_elementwise").set_value(10**10).run()
report["refused"] = any("Choose a smaller size" in str(w.value) for w in at.warning)
at.number_input(key="speed_cmp_size_elementwise").set_value(10_000).run()
at.number_input(key="speed_cmp_iters").set_value(1).run()
next(b for b in at.button if b.label == "Time it both ways").click().run()
report["compared"] = at.session_state["speed_compare"]["done"]
at.selectbox(key="speed_dtype").set_value("tf32").run()
at.selectbox(key="speed_dtype").set_value("float32").run()
at.radio(key="speed_workload").set_value("matmul").run()
at.multiselect(key="speed_sweep_sizes_matmul").set_value([64, 128]).run()
next(b for b in at.button if b.label == "Run sweep").click().run()
report["swept"] = at.session_state["speed_sweep"]["done"]
report["charts"] = len(at.get("vega_lite_chart"))
report["errors"] = [str(e.value) for e in at.error]
report["exception"] += [str(e.value) for e in at.exception]
report["torch"] = "torch" in sys.modules
report["pandas"] = sorted(m for m in ("pandas", "pyarrow", "altair", "numpy") if m in sys.modules)
report["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] == "torch")[:5]
print(json.dumps(report))
"""


def test_the_page_never_imports_torch_in_the_server():
    """The server never imports torch (about 190 MB of its proportional set size): the
    estimate, a comparison and a sweep run in job workers, and what comes back is plain data.
    A fresh process, since this test process has torch loaded already."""
    report = run_fresh(SERVER_MODULES_SCRIPT, FIXTURE)
    assert report["exception"] == []
    assert report["errors"] == []
    assert report["estimate"] and report["refused"]
    assert report["compared"] is True and report["swept"] is True
    assert report["charts"] == 2
    assert report["torch"] is False, report["loaded"]
    assert report["loaded"] == []
    assert report["pandas"] == []  # tables as Markdown, charts as Vega-Lite specs


def test_a_closed_tab_ends_its_timing_within_seconds(no_reference, monkeypatch):
    """The page's loop notices that its session is gone while one long call runs (a job
    that never reads stop requests here) and ends the job: nobody else would."""
    from gradviz.workers import jobs

    started = []
    real = jobs.start

    def start(_kind, _args, limits, slot=None, **kw):
        started.append(real("hang", (), limits, slot, testing=True))
        return started[-1]

    monkeypatch.setattr(jobs, "start", start)
    at = AppTest.from_function(_script, default_timeout=60)
    at.run()
    monkeypatch.setattr(running, "tab_open", lambda: False)
    _button(at, "Time it both ways").click().run()
    assert started, "no timing started"
    assert started[0].wait(10), "the job outlived its closed tab"
    assert started[0].status == "killed"


def _sweep_state(points: list[timing.Point]) -> dict:
    return {
        "total": len(points),
        "done": True,
        "error": None,
        "config": {"workload": "elementwise", "dtype": "float32"},
        "points": [asdict(p) for p in points],
        "skipped": [],
    }


def test_implausible_sweep_points_are_flagged_and_can_be_rerun(no_reference):
    """The lecturer's sweep: 10,000 elements at 0.07 ms, then 100,000 at 182 ms."""
    at = _app()
    at.multiselect(key="speed_sweep_sizes_elementwise").set_value([1_000, 10_000]).run()
    at.session_state[running.SWEEP_KEY] = _sweep_state(
        [
            timing.Point("elementwise", "cpu", "float32", 10_000, 10, 0.07e-3, 0.0, 3),
            timing.Point("elementwise", "cpu", "float32", 100_000, 10, 182e-3, 1e-3, 3),
        ]
    )
    at.run()
    assert not at.exception
    warning = _text(at.warning)
    assert "100,000" in warning and "260x that at size 10,000" in warning, warning
    _button(at, "Re-run the sweep").click().run()
    assert not at.exception and not at.error
    state = at.session_state[running.SWEEP_KEY]
    assert state["done"] and sorted(p["size"] for p in state["points"]) == [1_000, 10_000]


def test_the_estimate_is_a_range_from_a_quick_run_at_the_chosen_size(no_reference):
    at = _app()
    at.number_input(key="speed_cmp_size_elementwise").set_value(100_000).run()
    caption = _text(at.caption)
    quick = workloads.TimingJob("elementwise", 100_000).describe()
    assert f"quick run of {quick}" in caption, caption
    assert "likely between" in caption


def test_a_run_over_the_time_limit_cannot_be_started(no_reference, monkeypatch):
    """'Use the lesson's full size' on a host with the memory for it: the estimate is over
    the limit one timing may run, so the page says so and the button is off."""
    monkeypatch.setattr(running, "_free_memory", lambda device: 10**12)

    def slow_host(workload, device, dtype, size):
        # The quick run as a slow host measures it (its real value depends on this host's
        # speed and load: on a quiet 2-core host the low end fell just under the limit).
        job = workloads.calibration_job(workload, device, dtype, size)
        point = timing.Point(
            job.workload, job.device, job.dtype, job.size, job.iterations, 10.0, 0.1, 3
        )
        return asdict(point)

    monkeypatch.setattr(running, "calibration", slow_host)
    at = _app()
    at.button(key="speed_lesson_size").click().run()
    assert not at.exception
    assert "one timing may run on this server" in _text(at.warning)
    assert _button(at, "Time it both ways").disabled


def test_a_run_far_from_its_estimate_says_the_host_was_not_steady(no_reference, monkeypatch):
    """The lecturer's case: 'about 2.5 ms per call' before a run whose median was 189 ms.
    The page now says when a measured median falls outside the estimate made before it."""
    slow = timing.Point("elementwise", "cpu", "float32", 10_000, 2, 5.0, 0.1, 3)
    monkeypatch.setattr(running, "calibration", lambda *a: asdict(slow))
    at = _app()
    at.number_input(key="speed_cmp_size_elementwise").set_value(10_000).run()
    _button(at, "Time it both ways").click().run()
    assert not at.exception and not at.error
    warning = _text(at.warning)
    assert "outside the estimate made just before it" in warning, warning
