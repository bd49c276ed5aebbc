"""services.jobs: what the pages call to run a job (wait in line, start, follow, end)."""

from __future__ import annotations

import threading
import time

import pytest

from gradviz.services import jobs as service
from gradviz.services.jobs import JobFailed
from gradviz.util.busy import Busy
from gradviz.workers import jobs
from gradviz.workers.jobs import JobLimits

LIMITS = JobLimits(seconds=30.0, memory_bytes=256 * 1024 * 1024)


@pytest.fixture(autouse=True)
def fresh_slots(monkeypatch):
    monkeypatch.setattr(jobs, "_slots", {})
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)


def test_run_now_gives_the_result_or_a_plain_failure_and_frees_the_slot():
    assert service.run_now("count", (3,), LIMITS, "now", "the count", "busy", testing=True) == 3
    with pytest.raises(JobFailed, match="^The job failed: ValueError: boom$"):
        service.run_now("fail", ("boom",), LIMITS, "now", "the job", "busy", testing=True)
    slot = jobs.slots("now")
    assert slot.try_acquire()  # both runs gave their slot back
    try:
        with pytest.raises(Busy, match="someone else"):
            service.run_now("count", (1,), LIMITS, "now", "the count", "someone else", testing=True)
    finally:
        slot.release()


def test_follow_reads_every_event_in_batches_and_the_slot_goes_back_at_the_end():
    job = service.start_in_line("count", (6, 0.05), LIMITS, "line", 5.0, testing=True)
    seen = []
    batches = 0
    for batch in service.follow(job, 0, 0.2):
        seen.extend(batch)
        batches += 1
    assert seen == list(range(6))
    assert job.status == "done" and job.result == 6
    assert batches >= 2  # streamed while it ran, not all at the end
    job.wait(10)
    slot = jobs.slots("line")
    assert slot.try_acquire(), "the job's slot was not given back"
    slot.release()


def test_follow_from_the_middle_skips_what_was_read():
    job = service.start_in_line("count", (4,), LIMITS, "line", 5.0, testing=True)
    job.wait(20)
    assert [e for batch in service.follow(job, 2, 0.1) for e in batch] == [2, 3]


def test_a_page_that_has_gone_ends_its_job():
    job = service.start_in_line("hang", (), LIMITS, "line", 5.0, testing=True)
    try:
        assert list(service.follow(job, 0, 0.2, connected=lambda: False)) == []
        assert job.stop_requested
        assert job.wait(15), "a job whose page has gone kept running"
        assert job.status == "killed"
    finally:
        job.kill()
        job.wait(10)


def test_waiting_in_line_tells_who_is_ahead_then_starts_or_gives_up():
    first = service.start_in_line("hang", (), LIMITS, "line", 5.0, testing=True)
    told = []
    try:
        with pytest.raises(Busy):
            service.start_in_line(
                "count", (1,), LIMITS, "line", 0.6, lambda *a: told.append(a), testing=True
            )
        assert told and told[-1] == (1, 0, 1)  # (running, waiting ahead of you, slots in all)
        threading.Timer(0.5, service.end, (first,)).start()
        started = time.monotonic()
        second = service.start_in_line("count", (2,), LIMITS, "line", 20.0, testing=True)
        assert time.monotonic() - started < 15
        assert second.wait(20) and second.result == 2
    finally:
        first.kill()
        first.wait(10)


def test_end_leaves_a_finished_job_alone_and_stops_a_running_one():
    done = service.start_in_line("count", (1,), LIMITS, "a", 5.0, testing=True)
    assert done.wait(20)
    service.end(done)
    assert done.status == "done" and not done.stop_requested
    running = service.start_in_line("hang", (), LIMITS, "b", 5.0, testing=True)
    try:
        service.end(running)
        assert running.wait(15) and running.status == "killed"
    finally:
        running.kill()
        running.wait(10)
