"""The Speed page's one set of measurements (gradviz.speed.measured): one figure per job,
flagged points in no ratio and no crossover."""

from __future__ import annotations

from gradviz.speed import measured, timing, trust
from gradviz.speed.timing import Comparison, NaiveTiming, Point, Timing
from gradviz.speed.workloads import TimingJob


def _point(size: int, median_s: float, iqr_s: float = 0.0, device: str = "cpu") -> Point:
    return Point("elementwise", device, "float32", size, 10, median_s, iqr_s, 3)


def _comparison(size: int, median_s: float, iqr_s: float = 0.0) -> Comparison:
    job = TimingJob("elementwise", size, "cpu", "float32", 10)
    naive = NaiveTiming(median_s * 3, median_s, median_s, 0.0)
    return Comparison(job, naive, Timing(median_s, iqr_s, (median_s,) * 3, 1, 2, False))


def test_one_figure_per_job_whichever_section_measured_it():
    """The lecturer's page: 147 ms in section 1 and 15.6 ms in the sweep for 1,000,000
    elements, 10 iterations. The set gives one figure for the job, and says the other."""
    sweep = [_point(100_000, 1.5e-3), _point(1_000_000, 15.6e-3)]
    basis = measured.MeasurementSet.build(sweep, [_comparison(1_000_000, 147e-3)])
    job = TimingJob("elementwise", 1_000_000, "cpu", "float32", 10)
    used = basis.time_for(job)
    assert used.seconds == 15.6e-3 and used.source == measured.SWEEP
    assert [f.seconds for f in basis.others[job]] == [147e-3]
    assert [f.point.median_s for f in basis.series("elementwise", "cpu", "float32", 10)] == [
        1.5e-3,
        15.6e-3,
    ]


def test_a_flagged_sweep_point_gives_way_to_a_trusted_measurement_of_the_same_job():
    # 10,000 at 0.07 ms, then 100,000 at 182 ms: the sweep's 100,000 is flagged (a jump).
    sweep = [_point(10_000, 0.07e-3), _point(100_000, 182e-3)]
    basis = measured.MeasurementSet.build(sweep, [_comparison(100_000, 0.8e-3)])
    job = TimingJob("elementwise", 100_000, "cpu", "float32", 10)
    assert basis.time_for(job).source == measured.COMPARISON
    assert [f.source for f in basis.flagged()] == [measured.SWEEP]


def test_a_flagged_point_is_never_used_for_a_ratio():
    sweep = [_point(10_000, 0.07e-3), _point(100_000, 182e-3)]
    basis = measured.MeasurementSet.build(sweep)
    job = TimingJob("elementwise", 100_000, "cpu", "float32", 10)
    assert not basis.figure(job).trusted
    assert basis.time_for(job) is None  # no quick run to scale from: no figure at all
    cal = _point(10_000, 0.07e-3)
    scaled = measured.MeasurementSet.build(sweep, calibration=cal).time_for(job)
    assert scaled.source == measured.SCALED and scaled.seconds < 182e-3
    trusted = basis.series("elementwise", "cpu", "float32", 10)
    assert [f.point.size for f in trusted] == [10_000]


def test_the_crossover_leaves_a_flagged_point_out():
    """A CPU point 850x too slow made the GPU 'win' at its size; left out, it does not."""
    cpu = [_point(10_000, 0.05e-3), _point(100_000, 0.4e-3), _point(1_000_000, 400e-3)]
    gpu = [_point(s, 1e-3, device="cuda") for s in (10_000, 100_000, 1_000_000)]
    assert timing.crossover(cpu + gpu) == 1_000_000  # what the page said before
    basis = measured.MeasurementSet.build(cpu + gpu)
    assert not basis.figure(TimingJob("elementwise", 1_000_000, "cpu", "float32", 10)).trusted
    cpu_figures = basis.series("elementwise", "cpu", "float32", 10, trusted_only=False)
    gpu_figures = basis.series("elementwise", "cuda", "float32", 10)
    assert measured.crossover_of(cpu_figures, gpu_figures) == (None, True)


def test_section_one_flags_spread_and_a_median_off_its_estimate():
    expected = trust.EstimateRange(1e-3, 2e-3, 4e-3, 0.1, 1.0)
    flags = measured.comparison_flags(
        [_comparison(1_000, 3e-3), _comparison(2_000, 190e-3), _comparison(3_000, 3e-3, 2e-3)],
        expected,
    )
    assert set(flags) == {
        TimingJob("elementwise", 2_000, "cpu", "float32", 10),
        TimingJob("elementwise", 3_000, "cpu", "float32", 10),
    }
    assert "95x the estimate" in flags[TimingJob("elementwise", 2_000, "cpu", "float32", 10)]
