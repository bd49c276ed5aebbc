"""services.following: a job a page follows across script runs (the events taken, Stop kept,
a stop unless a next script run takes the job up, its end in words)."""

from __future__ import annotations

import time

import pytest

from gradviz.services import jobs as service
from gradviz.services.following import Followed
from gradviz.workers import jobs
from gradviz.workers.jobs import JobLimits

LIMITS = JobLimits(seconds=30.0, memory_bytes=256 * 1024 * 1024)


@pytest.fixture(autouse=True)
def fresh_slots(monkeypatch):
    monkeypatch.setattr(jobs, "_slots", {})
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)


def _start(kind: str, args: tuple) -> Followed:
    return Followed(service.start_in_line(kind, args, LIMITS, "following", 5.0, testing=True))


def test_events_come_one_at_a_time_with_a_tick_after_each_poll_and_are_counted():
    followed = _start("count", (5, 0.05))
    got = list(followed.events(0.2))
    assert [e for e in got if e is not None] == list(range(5))
    assert got[-1] is None and None in got[:-1]  # ticks while it ran, and after the last batch
    assert followed.seen == 5 and followed.unread() == []
    assert followed.failure("the count") is None and followed.job.result == 5


def test_a_next_script_run_takes_up_what_the_last_one_did_not_take():
    followed = _start("count", (4,))
    followed.job.wait(20)
    first = followed.events(0.1)
    assert next(first) == 0 and next(first) == 1
    first.close()  # the script stopped here
    assert followed.unread() == [2, 3]
    assert [e for e in followed.events(0.1) if e is not None] == [2, 3]
    assert [e for e in followed.events(0.1, since=0) if e is not None] == [0, 1, 2, 3]


def test_a_job_nobody_takes_up_is_stopped_by_the_page():
    followed = _start("count", (1000, 0.05))
    assert next(e for e in followed.events(0.2) if e is not None) == 0
    followed.stop_unless_read_within(0.3)
    deadline = time.monotonic() + 10
    while not followed.job.stop_requested and time.monotonic() < deadline:
        time.sleep(0.05)
    assert followed.page_stopped and followed.job.stop_requested
    followed.retire()
    assert followed.job.finished


def test_a_job_a_next_run_takes_up_goes_on():
    followed = _start("count", (40, 0.05))
    assert next(e for e in followed.events(0.2) if e is not None) == 0
    followed.stop_unless_read_within(0.5)
    assert [e for e in followed.events(0.1) if e is not None][-1] == 39  # read meanwhile
    time.sleep(0.7)
    assert not followed.page_stopped and not followed.job.stop_requested


def test_a_failure_in_words_and_the_job_s_own_message_for_plain_errors():
    followed = _start("fail", ("too big",))
    followed.job.wait(20)
    assert followed.failure("the count") == "The count failed: ValueError: too big"
    assert followed.failure("the count", plain=("value",)) == "too big"  # its kind
    # a class name is not a kind: the job's error is worded as any other
    assert followed.failure("the count", plain=("ValueError",)).startswith("The count failed")
