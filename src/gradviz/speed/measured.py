"""The Speed page's one set of this host's measurements, from which every ratio is taken.

Section 1 (the comparison's correct medians) and section 2 (the sweep) may both time the same
job, and a busy host can make the two differ several times over. So that the same job gives
the same figure wherever the page shows one, every ratio (a GPU against this CPU, the
crossovers, the fraction of peak) takes its time from one `MeasurementSet`:

- one `Figure` per job: its time, where it was measured, and why it is flagged, if it is;
- a point the page flags as implausible (its repeats spread too much, it jumps against its
  neighbouring size, it fell outside the estimate made just before it) stays in the set to be
  shown, marked, but is in no ratio and no crossover;
- when both sections measured a job, the sweep's figure stands for it (it was checked against
  its neighbouring sizes) unless it is flagged and section 1's is not; the other measurement
  is kept in `others`, to be shown beside it.

Pure: plain numbers in, plain data out; no torch, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gradviz.speed import trust
from gradviz.speed.timing import Comparison, Point, crossover, estimate_seconds
from gradviz.speed.workloads import TimingJob

SWEEP = "the sweep (section 2)"
COMPARISON = "section 1"
SCALED = "scaled from the quick run on this host"
LEFT_OUT = "flagged as implausible: left out of every ratio and crossover"


@dataclass(frozen=True)
class Figure:
    """One measured (or scaled) time of a job, where it comes from, and its flag, if any."""

    point: Point
    source: str
    flag: str | None = None  # why the page does not trust it; a flagged figure is in no ratio

    @property
    def seconds(self) -> float:
        return self.point.median_s

    @property
    def trusted(self) -> bool:
        return self.flag is None


def comparison_point(c: Comparison) -> Point:
    """Section 1's correct figure as a Point."""
    j, t = c.job, c.timing
    return Point(
        j.workload, j.device, j.dtype, j.size, j.iterations, t.median_s, t.iqr_s, t.repeats
    )


def comparison_flags(
    comparisons: Iterable[Comparison], expected: trust.EstimateRange | None = None
) -> dict[TimingJob, str]:
    """Section 1's flags: repeats that spread too much, and a CPU median outside the estimate
    made just before the run (the host's load changed between the two)."""
    flags: dict[TimingJob, list[str]] = {}
    for c in comparisons:
        median = c.timing.median_s
        if why := trust.spread_problem(median, c.timing.iqr_s):
            flags.setdefault(c.job, []).append(why)
        if expected is None or c.job.device != "cpu":
            continue
        if not expected.low_s <= median <= expected.high_s:
            flags.setdefault(c.job, []).append(
                f"it is {median / expected.likely_s:,.2g}x the estimate made just before it: "
                "the host's load changed between the two"
            )
    return {job: "; ".join(reasons) for job, reasons in flags.items()}


@dataclass(frozen=True)
class MeasurementSet:
    """One figure per job (see the module's docstring), and the quick run to scale from."""

    figures: dict[TimingJob, Figure] = field(default_factory=dict)
    others: dict[TimingJob, tuple[Figure, ...]] = field(default_factory=dict)
    calibration: Point | None = None

    @classmethod
    def build(
        cls,
        sweep: Iterable[Point] = (),
        comparisons: Iterable[Comparison] = (),
        expected: trust.EstimateRange | None = None,
        calibration: Point | None = None,
    ) -> MeasurementSet:
        sweep, comparisons = list(sweep), list(comparisons)
        sweep_flags = trust.untrusted(sweep)
        comparison_flagged = comparison_flags(comparisons, expected)
        candidates: dict[TimingJob, list[Figure]] = {}
        for p in sweep:
            flag = sweep_flags.get((p.device, p.size))
            candidates.setdefault(p.job, []).append(Figure(p, SWEEP, flag))
        for c in comparisons:
            figure = Figure(comparison_point(c), COMPARISON, comparison_flagged.get(c.job))
            candidates.setdefault(c.job, []).append(figure)
        figures, others = {}, {}
        for job, found in candidates.items():
            # Trusted before flagged; among equals, the sweep's (listed first) before section 1's.
            ordered = sorted(found, key=lambda f: not f.trusted)
            figures[job] = ordered[0]
            if ordered[1:]:
                others[job] = tuple(ordered[1:])
        return cls(figures, others, calibration)

    def figure(self, job: TimingJob) -> Figure | None:
        """The measured figure that stands for `job` (trusted or flagged), None if unmeasured."""
        return self.figures.get(job)

    def time_for(self, job: TimingJob) -> Figure | None:
        """The time every ratio for `job` uses: its trusted measured figure, else the quick
        run scaled to it (CPU only), else None. Never a flagged figure."""
        found = self.figures.get(job)
        if found is not None and found.trusted:
            return found
        cal = self.calibration
        if cal is None or (cal.workload, cal.device, cal.dtype) != (
            job.workload,
            job.device,
            job.dtype,
        ):
            return None
        seconds = estimate_seconds(job, cal)
        point = Point(
            job.workload, job.device, job.dtype, job.size, job.iterations, seconds, 0.0, 0
        )
        return Figure(point, SCALED)

    def series(
        self, workload: str, device: str, dtype: str, iterations: int, *, trusted_only: bool = True
    ) -> list[Figure]:
        """The figures of one workload, device kind ("cpu", "cuda"), dtype and iterations, by
        size: trusted ones only, unless `trusted_only` is False."""
        found = [
            f
            for job, f in self.figures.items()
            if (job.workload, job.dtype, job.iterations) == (workload, dtype, iterations)
            and job.device.split(":")[0] == device
            and (f.trusted or not trusted_only)
        ]
        return sorted(found, key=lambda f: f.point.size)

    def flagged(self) -> list[Figure]:
        """Every flagged measurement, the ones another figure stands for too."""
        everything = list(self.figures.values())
        for more in self.others.values():
            everything.extend(more)
        return [f for f in everything if not f.trusted]


def crossover_of(cpu: Iterable[Figure], gpu: Iterable[Point | Figure]) -> tuple[int | None, bool]:
    """(smallest size from which the GPU beats the CPU at every larger size measured on both,
    whether there is any common size), from trusted CPU figures and GPU points only."""
    cpu_points = [f.point for f in cpu if f.trusted]
    gpu_points = [
        g.point if isinstance(g, Figure) else g
        for g in gpu
        if not (isinstance(g, Figure) and not g.trusted)
    ]
    common = {p.size for p in cpu_points} & {p.size for p in gpu_points}
    return crossover(cpu_points + gpu_points), bool(common)
