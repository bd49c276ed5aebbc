"""How far a timing is trusted: estimate ranges, spread and jumps (gradviz.speed.trust)."""

from __future__ import annotations

import pytest

from gradviz.speed import trust
from gradviz.speed.timing import Point
from gradviz.speed.workloads import TimingJob


def _point(size: int, median_s: float, iqr_s: float = 0.0, device: str = "cpu") -> Point:
    return Point("elementwise", device, "float32", size, 10, median_s, iqr_s, 3)


def test_the_lecturers_sweep_flags_the_jump():
    """10,000 elements at 0.07 ms, then 100,000 at 182 ms: 260x the time per element."""
    points = [_point(1_000, 0.05e-3), _point(10_000, 0.07e-3), _point(100_000, 182e-3)]
    problems = trust.jump_problems(points)
    assert list(problems) == [("cpu", 100_000)]
    assert "260x that at size 10,000" in problems[("cpu", 100_000)]


def test_cache_sized_steps_and_fixed_overheads_are_not_flagged():
    # Overhead-bound small sizes (time flat), then a 5x step per element out of a cache.
    points = [_point(1_000, 0.05e-3), _point(10_000, 0.06e-3), _point(100_000, 3e-3)]
    assert trust.jump_problems(points) == {}


def test_a_bigger_size_taking_less_time_flags_the_smaller_point():
    points = [_point(10_000, 5e-3), _point(100_000, 1e-3)]
    problems = trust.jump_problems(points)
    assert list(problems) == [("cpu", 10_000)]
    assert "more work cannot take less time" in problems[("cpu", 10_000)]


def test_devices_are_compared_only_with_themselves():
    points = [_point(10_000, 1e-3, device="cpu"), _point(100_000, 1e-4, device="cuda")]
    assert trust.jump_problems(points) == {}


def test_spread_over_the_limit_is_named():
    assert trust.spread_problem(1.0, 0.2) is None
    why = trust.spread_problem(1.0, 0.6)
    assert why and "60%" in why
    assert trust.untrusted([_point(1_000, 1.0, 0.6)]) == {("cpu", 1_000): why}


def test_estimate_at_the_measured_size_is_a_narrow_range():
    cal = Point("elementwise", "cpu", "float32", 1_000_000, 1, 0.030, 0.003, 3)
    job = TimingJob("elementwise", 1_000_000, "cpu", "float32", 10)
    r = trust.estimate_range(job, cal)
    assert r.likely_s == pytest.approx(0.030 * 63 / 9)  # bytes: 3 + 6 x iterations
    assert r.low_s < r.likely_s < r.high_s < 1.5 * r.likely_s
    assert not r.noisy and r.extrapolated == 1.0


def test_an_extrapolated_or_noisy_estimate_widens():
    cal = Point("elementwise", "cpu", "float32", 2_000_000, 1, 0.030, 0.015, 3)
    job = TimingJob("elementwise", 100_000_000, "cpu", "float32", 1000)
    r = trust.estimate_range(job, cal)
    assert r.noisy and r.extrapolated == 50
    assert r.high_s / r.likely_s == pytest.approx(2.0 * trust.EXTRAPOLATION)
