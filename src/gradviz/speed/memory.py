"""What a timing may use: a size is refused before anything is allocated (`check_memory`:
a share of the free memory, and on a public host the cap of one heavy job), and the limits
of the worker that times (`job_limits`, gradviz.workers.jobs): the page never times in the
server. The jobs themselves (point_job, compare_job, sweep_job) are in gradviz.speed.measure.

Never imports torch: the Streamlit server checks sizes with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from gradviz.speed.workloads import TimingJob
from gradviz.util import settings
from gradviz.util.format import fmt_bytes
from gradviz.util.resources import available_cpus, cpu_memory_available
from gradviz.workers.jobs import JobLimits
from gradviz.workers.protocol import ErrorKind

# ---------------------------------------------------------------------------------------------
# Memory: a size is refused before anything is allocated.
# ---------------------------------------------------------------------------------------------


def available_memory(device: str) -> int | None:
    """Bytes free for new tensors on `device`, as far as the server knows without torch: the
    host's RAM for the CPU, None for a GPU (gradviz.speed.measure asks torch there)."""
    if device.startswith("cuda"):
        return None
    return cpu_memory_available()


MEMORY_FRACTION = 0.5  # use at most this share of what is free: the server and others need room


class SizeTooLarge(ValueError):
    """A size whose tensors would not fit in the memory this host has free."""

    error_kind = ErrorKind.SIZE


def check_memory(job: TimingJob, available: int | None = None) -> None:
    """Refuse a job whose peak memory is over MEMORY_FRACTION of what `job.device` has free,
    or, on a public host, whose worker would outgrow the cap of one heavy job (check_public_cap).
    """
    check_public_cap(job)
    if available is None:
        available = available_memory(job.device)
    if available is None:
        return
    need = job.memory_needed()
    limit = int(available * MEMORY_FRACTION)
    if need > limit:
        where = "GPU memory" if job.device.startswith("cuda") else "RAM"
        raise SizeTooLarge(
            f"{job.spec.describe_size(job.size)} {job.dtype} needs about {fmt_bytes(need)} of "
            f"{where} at once, over the limit of {fmt_bytes(limit)} "
            f"({MEMORY_FRACTION:.0%} of the {fmt_bytes(available)} free on {job.device}). "
            "Choose a smaller size."
        )


# ---------------------------------------------------------------------------------------------
# Limits of the worker that times.
# ---------------------------------------------------------------------------------------------

JOB_HEADROOM = 256 * 1024 * 1024  # memory beyond the tensors: allocator, temporaries, benchmark


def job_seconds() -> float:
    """Wall clock of one timing job in a worker (GRADVIZ_SPEED_SECONDS)."""
    return settings.number("GRADVIZ_SPEED_SECONDS")


# Host memory the first CUDA call adds to a worker (its CUDA context; see services.host.FACTS_MEMORY).
CUDA_CONTEXT_MEMORY = 1024 * 1024 * 1024
ABANDON_AFTER_S = 10.0  # the page reads a running timing every 0.5 s while its tab is open


def worker_memory(job: TimingJob) -> int:
    """What a worker timing `job` may grow by: its tensors plus a quarter, plus headroom."""
    return int(job.memory_needed() * 1.25) + JOB_HEADROOM


# A public host's timing worker (GRADVIZ_PUBLIC=1). Measured with bench/timing_memory.py
# (docs/BENCHMARKS.md): glibc keeps the heap of freed tensors for reuse rather than unmapping it
# (as in the lesson's own script), so a CPU timing's worker grows by up to 3.04x its tensors'
# peak (elementwise at 5,262,581 elements; 1.6-2.5x at most sizes), plus the timer's imports.
TIMING_GROWTH_FACTOR = 3.2
TIMER_OWN_MEMORY = 24 * 1024 * 1024
# With the server, the forkserver and a warm worker (about 350 MB) and the timing worker's own
# share of torch (about 110 MB), 200 MB of growth (util.settings.PUBLIC.timing_memory) keeps a
# 690 MB host under its limit.


def expected_growth(job: TimingJob) -> int:
    """How much a CPU worker timing `job` grows at its peak (tensors, heap kept, timer)."""
    return int(job.memory_needed() * TIMING_GROWTH_FACTOR) + TIMER_OWN_MEMORY


def public_memory_cap() -> int | None:
    """On a public host, what one timing worker may grow by: GRADVIZ_PUBLIC_TIMING_MEMORY
    (bytes). None elsewhere (MEMORY_FRACTION of free RAM rules)."""
    if not settings.public_host():
        return None
    return settings.integer("GRADVIZ_PUBLIC_TIMING_MEMORY")


def check_public_cap(job: TimingJob) -> None:
    """Refuse, before anything runs, a CPU job whose worker would outgrow the public cap."""
    cap = public_memory_cap()
    if cap is None or job.device != "cpu":
        return
    need = expected_growth(job)
    if need > cap:
        raise SizeTooLarge(
            f"{job.spec.describe_size(job.size)} {job.dtype} needs about {fmt_bytes(need)} of "
            f"RAM with the timer's own, over the {fmt_bytes(cap)} one timing may use on this "
            "public server (it shares a small host with every visitor). Choose a smaller size."
        )


def job_limits(jobs: Iterable[TimingJob], seconds: float | None = None):
    """Limits for a worker timing `jobs`: every CPU, memory for the biggest job plus headroom
    (on a public host at most public_memory_cap(), plus a CUDA context when a job uses a GPU);
    stopped, then killed, when nobody has read its progress for ABANDON_AFTER_S (the page was
    left)."""
    jobs = list(jobs)
    memory = max((worker_memory(j) for j in jobs), default=JOB_HEADROOM)
    cap = public_memory_cap()
    if cap is not None:
        gpu = any(j.device != "cpu" for j in jobs)
        memory = min(memory, cap) + (CUDA_CONTEXT_MEMORY if gpu else 0)
    return JobLimits(
        seconds=job_seconds() if seconds is None else seconds,
        memory_bytes=memory,
        threads=available_cpus(),
        abandon_after=ABANDON_AFTER_S,
    )
