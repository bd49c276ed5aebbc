"""How far a timing can be trusted: the range of an estimate, and the measured points whose
spread or jump says the host was busy (or something else was timed) rather than the work.

- `estimate_range(job, calibration)`: a quick measured point of the same workload scaled to
  `job` by its cost (gradviz.speed.timing.estimate_seconds), as a low / likely / high range
  that widens with the quick run's own spread and when it is extrapolated to a bigger size.
- `spread_problem(median_s, iqr_s)`: the repeats of one measurement disagree too much.
- `jump_problems(points)`: between neighbouring sizes on one device, the time per element
  (per FLOP for matmul) grows by more than caches explain, or a bigger size took less time.

Pure: plain numbers in, plain text out; no torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gradviz.speed.timing import Point, estimate_seconds
from gradviz.speed.workloads import TimingJob

# The interquartile range of the repeats over the median above which one measurement is not
# trusted (torch.utils.benchmark warns from 10%; a shared host needs some slack).
SPREAD_LIMIT = 0.25
# From one size to the next larger one, the time per unit of work may grow this much: data
# leaving a cache level, or fresh pages touched for the first time. A bigger jump is noise.
JUMP_LIMIT = 8.0
# A bigger size finishing in less than this fraction of a smaller size's time is noise too.
SHRINK_LIMIT = 0.5
# Extrapolating to a size more than EXTRAPOLATE_FROM times the quick run's: the high end of
# the estimate is widened by EXTRAPOLATION (the bigger size may fall out of a cache).
EXTRAPOLATE_FROM = 2.0
EXTRAPOLATION = 4.0
MIN_SPREAD = 0.1  # even a steady quick run says little better than +-10% about another size


@dataclass(frozen=True)
class EstimateRange:
    low_s: float
    likely_s: float
    high_s: float
    spread: float  # the quick run's IQR / median
    extrapolated: float  # job size / quick run's size (1 or less: measured at that size)

    @property
    def noisy(self) -> bool:
        return self.spread > SPREAD_LIMIT


def estimate_range(job: TimingJob, calibration: Point) -> EstimateRange:
    """The time of one call of `job`, scaled from `calibration`, as a range."""
    likely = estimate_seconds(job, calibration)
    spread = calibration.iqr_s / calibration.median_s if calibration.median_s > 0 else 1.0
    factor = 1.0 + 2.0 * max(spread, MIN_SPREAD)
    scale = job.size / calibration.size
    high = likely * factor * (EXTRAPOLATION if scale > EXTRAPOLATE_FROM else 1.0)
    return EstimateRange(likely / factor, likely, high, spread, scale)


def spread_problem(median_s: float, iqr_s: float) -> str | None:
    """Why one measurement's repeats are not to be trusted, or None."""
    if median_s <= 0:
        return "its median time is zero"
    ratio = iqr_s / median_s
    if ratio <= SPREAD_LIMIT:
        return None
    return (
        f"its repeats spread by {ratio:.0%} of the median (interquartile range), more than "
        f"{SPREAD_LIMIT:.0%}: the host was busy while it ran"
    )


def _work(point: Point) -> float:
    job = point.job
    return job.bytes_moved() if job.spec.metric == "GB/s" else job.flops()


def jump_problems(points: Iterable[Point]) -> dict[tuple[str, int], str]:
    """(device, size) -> why that point looks implausible next to its smaller neighbour."""
    by_device: dict[str, list[Point]] = {}
    for p in points:
        by_device.setdefault(p.device, []).append(p)
    problems: dict[tuple[str, int], str] = {}
    for device, series in by_device.items():
        series = sorted(series, key=lambda p: p.size)
        for small, big in zip(series, series[1:], strict=False):
            if small.median_s <= 0 or big.median_s <= 0:
                continue
            per_unit = (big.median_s / _work(big)) / (small.median_s / _work(small))
            if per_unit > JUMP_LIMIT:
                problems[(device, big.size)] = (
                    f"its time per unit of work is {per_unit:,.0f}x that at size "
                    f"{small.size:,}; moving out of a cache explains at most about "
                    f"{JUMP_LIMIT:.0f}x"
                )
            elif big.median_s < SHRINK_LIMIT * small.median_s:
                problems[(device, small.size)] = (
                    f"it took {small.median_s / big.median_s:,.1f}x as long as the bigger size "
                    f"{big.size:,}: more work cannot take less time"
                )
    return problems


def untrusted(points: Iterable[Point]) -> dict[tuple[str, int], str]:
    """(device, size) -> every reason not to trust that point (spread, then jumps)."""
    points = list(points)
    found: dict[tuple[str, int], list[str]] = {}
    for p in points:
        if why := spread_problem(p.median_s, p.iqr_s):
            found.setdefault((p.device, p.size), []).append(why)
    for key, why in jump_problems(points).items():
        found.setdefault(key, []).append(why)
    return {key: "; ".join(reasons) for key, reasons in found.items()}
