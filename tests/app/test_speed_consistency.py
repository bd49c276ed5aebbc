"""AppTest of the Speed page's ratios: every one taken from one set of measurements (the same
job gives the same figure in every section), flagged points in no ratio and no crossover, a
GPU line drawn or its absence explained, and a GPU's columns only where a GPU was timed."""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.devices import info as device_info
from gradviz.speed import timing, timing_reference, workloads
from gradviz.speed.timing import Comparison, NaiveTiming, Timing
from gradviz.ui.speed import estimate as estimate_section
from gradviz.ui.speed import running
from gradviz.util.format import fmt_seconds
from tests import markdown_tables

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "gpu_speed_reference.TEST_FIXTURE.json"
WITH_COPY = "GPU with the copy against the CPU"


def _script() -> None:
    from gradviz.ui.speed import page

    page.page()


@pytest.fixture
def no_reference(tmp_path, monkeypatch):
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", tmp_path / "absent.json")


@pytest.fixture
def quick_run(monkeypatch):
    """The quick run's estimate, fixed (and no worker started for it)."""

    def calibration(workload, device, dtype, size):
        job = workloads.calibration_job(workload, device, dtype, size)
        seconds = 1e-9 * job.size * job.iterations * (1 if workload == "elementwise" else size**2)
        point = timing.Point(job.workload, device, dtype, job.size, job.iterations, seconds, 0, 3)
        return asdict(point)

    monkeypatch.setattr(running, "calibration", calibration)


def _text(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def _table(at: AppTest, column: str) -> list[dict]:
    return markdown_tables.find((m.value for m in at.markdown), column)


def _comparison(job: workloads.TimingJob, median_s: float) -> Comparison:
    naive = NaiveTiming(median_s * 2, median_s / 2, median_s, 0.0)
    return Comparison(job, naive, Timing(median_s, median_s / 20, (median_s,) * 3, 1, 2, False))


def _compared(*comparisons: Comparison) -> dict:
    results = list(comparisons)
    return {"total": len(results), "done": True, "error": None, "results": results}


def _swept(workload: str, points: list[timing.Point]) -> dict:
    return {
        "config": {"workload": workload, "dtype": "float32"},
        "points": [asdict(p) for p in points],
        "skipped": [],
        "total": len(points),
        "done": True,
        "error": None,
    }


def _app(**state) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception
    return at


def test_the_same_job_gives_the_same_cpu_figure_and_ratio_in_every_section(no_reference, quick_run):
    """The lecturer's page: 147 ms for 1,000,000 elements x 10 in section 1, 15.6 ms for the
    same job in the sweep; section 3 said 112x in its headline and 8.0x in its crossover table.
    Now one figure stands for the job everywhere, and the page says where it comes from."""
    job = workloads.TimingJob("elementwise", 1_000_000, "cpu", "float32", 10)
    sweep = [
        timing.Point("elementwise", "cpu", "float32", n, 10, t, t / 20, 3)
        for n, t in ((100_000, 1.6e-3), (1_000_000, 15.6e-3))
    ]
    at = _app(
        **{
            running.COMPARE_KEY: _compared(_comparison(job, 147e-3)),
            running.SWEEP_KEY: _swept("elementwise", sweep),
        }
    )
    headline = _table(at, "how it is known")
    cpu_row = headline[0]
    with_copy = next(r for r in headline if r["what"].endswith("copy from the CPU first"))
    crossover = next(r for r in _table(at, WITH_COPY) if int(r["size"]) == 1_000_000)
    assert cpu_row["time per call"] == crossover["CPU, this host"] == fmt_seconds(15.6e-3), (
        cpu_row,
        crossover,
    )
    assert with_copy["against the CPU"] == crossover[WITH_COPY]
    assert cpu_row["how it is known"] == "measured in the sweep (section 2)"
    caption = _text(at.caption)
    assert "Every ratio on this page uses the CPU figure measured in the sweep" in caption
    assert f"measured in section 1: {fmt_seconds(147e-3)}" in caption


def test_a_flagged_cpu_point_is_in_no_ratio_and_no_crossover(no_reference, quick_run):
    """A CPU point 100x slower per element than its neighbour is flagged; the estimate's
    crossover table shows it marked, without a ratio, and says it is left out."""
    sweep = [
        timing.Point("elementwise", "cpu", "float32", n, 10, t, 0.0, 3)
        for n, t in ((10_000, 0.05e-3), (100_000, 0.5e-3), (1_000_000, 500e-3))
    ]
    at = _app(**{running.SWEEP_KEY: _swept("elementwise", sweep)})
    assert "look implausible" in _text(at.warning)
    rows = {int(r["size"]): r for r in _table(at, WITH_COPY)}
    assert rows[1_000_000][WITH_COPY] == "flagged, no ratio"
    assert rows[100_000][WITH_COPY].endswith(("faster", "slower"))
    assert "1 CPU point is flagged as implausible" in _text(at.caption)
    assert "flag" in _table(at, "series")[0]
    assert any(r["flag"] for r in _table(at, "series"))


def test_the_sweeps_crossover_leaves_a_flagged_point_out(no_reference, quick_run, monkeypatch):
    """On a GPU host the GPU 'won' only at a CPU point the page flagged as implausible; that
    crossover box is gone, and the page says a point was left out."""
    from gradviz.services import host

    facts = device_info.HostFacts(
        "0.0-test",
        True,
        1,
        False,
        (
            device_info.DeviceInfo("cpu", "cpu", "CPU"),
            device_info.DeviceInfo("cuda:0", "cuda", "NVIDIA H100 80GB HBM3", False, 8e10),
        ),
    )
    monkeypatch.setattr(host, "facts", lambda: facts)
    cpu = {64: 1e-3, 128: 8e-3, 256: 64e-3 * 20}  # the last: 20x the time per FLOP
    gpu = {64: 5e-3, 128: 10e-3, 256: 20e-3}
    points = [
        timing.Point("matmul", device, "float32", n, 1, t, 0.0, 3)
        for n in (64, 128, 256)
        for device, t in (("cpu", cpu[n]), ("cuda", gpu[n]))
    ]
    at = _app(**{running.SWEEP_KEY: _swept("matmul", points)})
    at.radio(key="speed_workload").set_value("matmul").run()
    assert not at.exception
    assert "Crossover" not in _text(at.success)
    info = _text(at.info)
    assert "did not win" in info and "1 flagged point left out" in info, info


def test_a_cpu_only_comparison_has_no_gpu_columns_and_a_mixed_one_marks_them(
    tmp_path, monkeypatch, no_reference, quick_run
):
    job = workloads.TimingJob("elementwise", 1_000_000, "cpu", "float32", 10)
    at = _app(**{running.COMPARE_KEY: _compared(_comparison(job, 10e-3))})
    row = _table(at, "naive (lesson)")[0]
    assert "launch returned" not in row and "pending at sync" not in row
    assert "they mean something only on a GPU" in _text(at.markdown)
    path = tmp_path / "ref.json"
    shutil.copy(FIXTURE, path)
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", path)
    at.run()
    rows = _table(at, "naive (lesson)")
    assert rows[0]["device"] == "cpu (live)"
    assert rows[0]["launch returned"] == rows[0]["pending at sync"] == "n/a on a CPU"
    assert rows[1]["pending at sync"].endswith("s")  # the reference GPU's own figure


def test_a_cpu_only_sweep_says_why_there_is_no_gpu_line(no_reference, quick_run):
    sweep = [timing.Point("matmul", "cpu", "float32", n, 1, 1e-4 * n / 64, 0, 3) for n in (64, 128)]
    at = _app(**{running.SWEEP_KEY: _swept("matmul", sweep)})
    at.radio(key="speed_workload").set_value("matmul").run()
    info = _text(at.info)
    assert "No GPU line: this host has no CUDA GPU" in info, info
    assert "Lines drawn: CPU, this host (live)." in _text(at.caption)


def test_with_a_reference_the_chart_draws_both_devices_labelled(tmp_path, monkeypatch, quick_run):
    path = tmp_path / "ref.json"
    shutil.copy(FIXTURE, path)
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", path)
    sweep = [timing.Point("matmul", "cpu", "float32", n, 1, 1e-4 * n / 64, 0, 3) for n in (64, 128)]
    at = _app(**{running.SWEEP_KEY: _swept("matmul", sweep)})
    at.radio(key="speed_workload").set_value("matmul").run()
    series = {r["series"] for r in _table(at, "series")}
    assert "CPU, this host (live)" in series
    assert any(s.startswith("GPU FAKE GPU") for s in series)
    assert "No GPU line" not in _text(at.info)
    assert estimate_section.PICK_KEY in at.session_state


def test_without_a_sweep_the_measured_job_shows_its_figure_in_the_scaled_table(
    no_reference, quick_run
):
    """No sweep yet: the crossover table scales the quick run, except at the size section 1
    measured, where it shows section 1's figure, as the headline does."""
    job = workloads.TimingJob("elementwise", 1_000_000, "cpu", "float32", 10)
    at = _app(**{running.COMPARE_KEY: _compared(_comparison(job, 147e-3))})
    headline = _table(at, "how it is known")[0]
    row = next(r for r in _table(at, WITH_COPY) if int(r["size"]) == 1_000_000)
    assert headline["time per call"] == row["CPU, this host"] == fmt_seconds(147e-3)
    assert headline["how it is known"] == row["how it is known"] == "measured in section 1"
    others = [r for r in _table(at, WITH_COPY) if int(r["size"]) != 1_000_000]
    assert {r["how it is known"] for r in others} == {"scaled from the quick run on this host"}
