"""Heavy jobs (timing, training) on a public host: memory caps, Stop within seconds, and jobs
whose page has gone are ended by the server itself (issue items 8)."""

from __future__ import annotations

import time

import pytest

from gradviz.speed import timing
from gradviz.workers import jobs
from gradviz.workers.jobs import JobLimits


def _hang(limits: JobLimits) -> jobs.Job:
    """A job that never reads stop requests, like one long timing call."""
    return jobs.start("hang", (), limits, testing=True, in_process=False)


def test_stop_ends_a_job_stuck_in_one_long_call_within_seconds():
    job = _hang(JobLimits(seconds=120, memory_bytes=400_000_000))
    try:
        assert not job.wait(3)  # started and running
        asked = time.monotonic()
        job.stop(grace=jobs.STOP_GRACE_S)
        assert job.wait(15)
        took = time.monotonic() - asked
    finally:
        job.kill()
        job.wait(10)
    assert job.status == "killed"
    assert took < 6, f"Stop took {took:.1f} s"


def test_an_abandoned_job_is_killed_not_only_asked_to_stop():
    """Nobody reads its events (a closed tab): the watchdog ends the worker by itself."""
    job = _hang(JobLimits(seconds=120, memory_bytes=400_000_000, abandon_after=1.0))
    try:
        started = time.monotonic()
        assert job.wait(15), "an abandoned job that ignores stop requests kept running"
        took = time.monotonic() - started
    finally:
        job.kill()
        job.wait(10)
    assert job.abandoned and job.status == "killed"
    assert took < 10


def test_timing_abandons_within_seconds_of_the_last_read():
    limits = timing.job_limits([timing.calibration_job("elementwise")])
    assert limits.abandon_after is not None and limits.abandon_after <= 15


def test_public_timing_gets_the_training_memory_cap(monkeypatch):
    from gradviz.training.settings import training_memory

    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.delenv("GRADVIZ_TRAINING_MEMORY", raising=False)
    big = timing.Job("elementwise", 100_000_000)  # the seed's size: 2 GB of tensors
    assert timing.job_limits([big]).memory_bytes <= training_memory() == 400_000_000
    small = timing.calibration_job("elementwise")
    assert timing.job_limits([small]).memory_bytes <= 400_000_000
    timing.check_memory(small, available=64 * 10**9)  # fits: not refused


def test_public_timing_refuses_sizes_over_the_cap_up_front(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.delenv("GRADVIZ_TRAINING_MEMORY", raising=False)
    big = timing.Job("matmul", 8192)  # 805 MB of tensors
    with pytest.raises(timing.SizeTooLarge, match="public server.*same cap as training"):
        timing.check_memory(big, available=64 * 10**9)


def test_private_host_keeps_its_memory_sizes(monkeypatch):
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)
    big = timing.Job("matmul", 8192)
    timing.check_memory(big, available=64 * 10**9)
    assert timing.job_limits([big]).memory_bytes > 400_000_000
