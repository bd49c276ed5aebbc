"""AppTest of the Speed page's GPU estimate on this host, which has no GPU: a GPU picked from
the table of spec-sheet figures, its labelled estimate beside the CPU, the assumptions, the
crossover, and, with the test fixture's reference file, estimate and measurement side by side
with their ratio."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.speed import estimate, gpus, measured, timing, timing_reference, workloads
from gradviz.ui.speed import estimate as estimate_section
from gradviz.ui.speed import running
from gradviz.util.format import fmt_seconds
from tests import markdown_tables

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "gpu_speed_reference.TEST_FIXTURE.json"


def _script() -> None:
    from gradviz.ui.speed import page

    page.page()


@pytest.fixture
def no_reference(tmp_path, monkeypatch):
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", tmp_path / "absent.json")


def _reference(tmp_path, monkeypatch, device: str | None = None) -> None:
    path = tmp_path / "ref.json"
    shutil.copy(FIXTURE, path)
    if device is not None:
        data = json.loads(FIXTURE.read_text())
        data["device"] = device
        path.write_text(json.dumps(data))
    monkeypatch.setattr(timing_reference, "REFERENCE_PATH", path)


def _app(**state) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception
    return at


def _text(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def _table(at: AppTest, column: str) -> list[dict]:
    return markdown_tables.find((m.value for m in at.markdown), column)


def _expander(at: AppTest):
    return next(e for e in at.expander if e.label.startswith("Assumptions behind the estimate"))


def test_a_host_without_a_gpu_gets_a_labelled_estimate(no_reference):
    at = _app()
    assert "3. How fast on a GPU? An estimate from spec sheets" in _text(at.subheader)
    assert at.selectbox(key=estimate_section.PICK_KEY).value == "T4"
    assert "Until then, section 3 estimates" in _text(at.info)
    rows = _table(at, "how it is known")
    assert [r["what"] for r in rows] == [
        "CPU, this host",
        "NVIDIA T4, data already on the GPU",
        "NVIDIA T4, copy from the CPU first",
    ]
    assert rows[0]["how it is known"] == estimate_section.SCALED  # the quick run, scaled
    assert {r["how it is known"] for r in rows[1:]} == {"estimate from spec sheet"}
    assert all(r["against the CPU"].endswith(("faster", "slower")) for r in rows[1:])
    # The T4's figures and their source, on the page.
    figures = _text(at.caption)
    assert "**NVIDIA T4**: memory 300 GB/s, float32 matmul 8.1 TFLOP/s (dense)" in figures
    assert gpus.BY_KEY["T4"].source in figures
    # A crossover, with and without the copy, said either way.
    outcome = _text(at.success) + _text(at.info)
    assert "Estimated crossover for the NVIDIA T4 (estimate from spec sheet)" in outcome
    assert "counting the copy from the CPU" in outcome
    assert not at.error


def test_the_cifar_tutorial_step_is_estimated_too(no_reference):
    at = _app()
    rows = _table(at, "images/s with the copy")
    assert [r["batch"] for r in rows] == ["4", "512"]
    assert rows[0]["bound by"] == "launch overhead"
    assert "36 kernels" in _text(at.caption)
    at.selectbox(key=estimate_section.PICK_KEY).set_value("M4-Max").run()
    assert "publishes no FP32 peak" in _text(at.caption)
    assert not at.exception


def test_the_assumptions_are_one_click_away(no_reference):
    at = _app()
    expander = _expander(at)
    text = "\n".join(str(m.value) for m in expander.markdown)
    for assumption in estimate.ASSUMPTIONS:
        assert f"**{assumption.name}**" in text
    assert "5 µs per eager op" in text and "PCIe at 80%" in text
    assert "**Bytes per element**: float32 4, bfloat16 2, float16 2" in text
    assert gpus.BY_KEY["T4"].source in text
    figures = markdown_tables.find((m.value for m in expander.markdown), "figure")
    assert {"figure": "memory_gbps", "value": "300"} in figures
    assert {"figure": "tf32_tflops", "value": "no TF32: the FP32 rate"} in figures


def test_picking_a_gpu_changes_the_estimate(no_reference):
    at = _app()
    t4 = _table(at, "how it is known")[1]["time per call"]
    at.selectbox(key=estimate_section.PICK_KEY).set_value("H100-SXM").run()
    assert not at.exception
    assert "**NVIDIA H100 SXM**: memory 3,350 GB/s" in _text(at.caption)
    rows = _table(at, "how it is known")
    assert rows[1]["what"] == "NVIDIA H100 SXM, data already on the GPU"
    assert rows[1]["time per call"] != t4
    sizes = _table(at, "GPU, data on it (estimate from spec sheet)")
    assert [int(r["size"]) for r in sizes] == list(workloads.WORKLOADS["elementwise"].sweep_sizes)


def test_a_gpu_whose_maker_gives_no_figure_says_so(no_reference):
    at = _app()
    at.selectbox(key=estimate_section.PICK_KEY).set_value("M1").run()
    assert not at.exception
    assert "publishes no memory bandwidth" in _text(at.info)
    assert not _table(at, "how it is known")
    at.selectbox(key=estimate_section.PICK_KEY).set_value("M4-Max").run()
    assert _table(at, "how it is known")  # the loop: memory-bound, Apple gives the bandwidth
    at.radio(key="speed_workload").set_value("matmul").run()
    assert "no float32 matrix-product peak" in _text(at.info)
    assert _expander(at)  # the assumptions still say where the figures come from
    assert not at.exception and not at.error


def test_a_stale_pick_falls_back_to_the_default(no_reference):
    at = _app(**{estimate_section.PICK_KEY: "<img src=x> no such GPU"})
    assert at.selectbox(key=estimate_section.PICK_KEY).value == "T4"


def test_the_measured_comparison_stands_beside_the_estimate(no_reference):
    at = _app()
    at.number_input(key="speed_cmp_size_elementwise").set_value(10_000)
    next(b for b in at.button if b.label == "Time it both ways").click().run()
    assert not at.exception and not at.error
    rows = _table(at, "how it is known")
    state = at.session_state[running.COMPARE_KEY]
    if measured.comparison_flags(state["results"], state.get("expected")):
        # A busy host: the measurement is flagged, shown as such, and in no ratio.
        assert rows[0]["how it is known"] == measured.SCALED
        assert measured.LEFT_OUT in _text(at.caption)
        return
    assert rows[0]["how it is known"] == "measured in section 1"
    median = state["results"][0].timing.median_s
    assert rows[0]["time per call"] == fmt_seconds(median)


def _sweep_state(points: list[timing.Point]) -> dict:
    return {
        "config": {"workload": "matmul", "dtype": "float32"},
        "points": [asdict(p) for p in points],
        "skipped": [],
        "total": len(points),
        "done": True,
        "error": None,
    }


def test_measured_sweep_points_give_the_crossover(no_reference):
    """CPU at 2 us, 16 us, 128 us, 1 ms for n = 64..512. An H100's estimate: 5 us launches at
    these sizes, plus about 10-30 us for the copy, so it wins from 128 with the data on it and
    from 256 with the copy (tests/unit/speed/test_estimate.py checks the arithmetic)."""
    cpu = [
        timing.Point("matmul", "cpu", "float32", n, 1, 2e-6 * (n / 64) ** 3, 0.0, 3)
        for n in (64, 128, 256, 512)
    ]
    at = _app(**{running.SWEEP_KEY: _sweep_state(cpu), estimate_section.PICK_KEY: "H100-SXM"})
    at.radio(key="speed_workload").set_value("matmul").run()
    assert not at.exception
    rows = _table(at, "CPU, this host")
    assert [int(r["size"]) for r in rows] == [64, 128, 256, 512]
    assert {r["how it is known"] for r in rows} == {"measured in the sweep (section 2)"}
    success = _text(at.success)
    assert "faster than this CPU from **128** (128x128 @ 128x128) upwards" in success
    assert "from **256** (256x256 @ 256x256) upwards counting the copy" in success


def test_the_reference_file_is_set_beside_the_estimate_with_the_ratio(tmp_path, monkeypatch):
    _reference(tmp_path, monkeypatch)
    at = _app()
    rows = _table(at, "measured / estimate")
    assert rows, "no estimate-against-measurement table"
    assert set(rows[0]) == {
        "job",
        "measured on FAKE GPU (test fixture)",
        "NVIDIA T4 (estimate from spec sheet)",
        "measured / estimate",
    }
    ratio = next(r for r in rows if r["job"] == "1x1000x1000, 10 it.")["measured / estimate"]
    t4 = estimate.estimate(
        gpus.BY_KEY["T4"], workloads.TimingJob("elementwise", 10**6, "cpu", "float32", 10)
    )
    assert ratio == f"{0.001 / t4.run_s:.2f}x"  # the fixture's 1.000 ms against the estimate
    assert "two different GPUs" in _text(at.warning)


def test_a_reference_of_a_known_gpu_is_compared_with_its_own_model(tmp_path, monkeypatch):
    _reference(tmp_path, monkeypatch, device="NVIDIA H100 80GB HBM3 (test fixture)")
    at = _app()
    assert at.selectbox(key=estimate_section.PICK_KEY).value == "H100-SXM"
    assert _table(at, "measured / estimate")
    assert "Same GPU model" in _text(at.caption)
    assert "two different GPUs" not in _text(at.warning)


def test_default_gpu_prefers_this_host_then_the_reference():
    ref = timing_reference.Reference("NVIDIA A100-SXM4-80GB", "t", "c", "2000-01-01", "x", ())
    assert estimate_section.default_gpu("NVIDIA L4", ref) == "L4"
    assert estimate_section.default_gpu(None, ref) == "A100-80GB-SXM"
    assert estimate_section.default_gpu("Some new GPU", None) == estimate_section.DEFAULT_GPU
