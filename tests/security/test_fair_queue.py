"""One visitor cannot hog the warm workers (issue item 9): visitors take turns, one program
in flight each, and a public host gives each visitor a budget of worker time per minute."""

from __future__ import annotations

import queue
import threading
import time

import pytest

from gradviz.util.busy import Busy
from gradviz.workers.pool import Pool, SandboxLimits
from gradviz.workers.turns import WAITING, Turns

JOB_S = 1.5  # each of visitor A's programs: the testing pool's hang job, ended after this


@pytest.fixture(scope="module")
def one_worker():
    with Pool(SandboxLimits(workers=1, run_seconds=10, queue_seconds=30), testing=True) as p:
        assert p.call("pid", (), 60).status == "ok"  # started and warm
        yield p


def _submit(pool: Pool, visitor: str, seconds: float, done: list, errors: list):
    def one() -> None:
        try:
            outcome = pool.call("hang", (seconds,), 10, visitor=visitor)
            assert outcome.status == "ok", outcome
            done.append((visitor, time.monotonic()))
        except Exception as exc:  # noqa: BLE001 - checked by the test
            errors.append(exc)

    t = threading.Thread(target=one)
    t.start()
    return t


def test_another_visitor_runs_after_at_most_one_program_of_a_busy_one(one_worker):
    done: list = []
    errors: list = []
    threads = []
    for _ in range(3):  # three tabs of visitor A, each a ~1.5 s program
        threads.append(_submit(one_worker, "A", JOB_S, done, errors))
        time.sleep(0.05)
    time.sleep(0.3)  # A's first is running, two more wait
    asked = time.monotonic()
    threads.append(_submit(one_worker, "B", 0.0, done, errors))
    for t in threads:
        t.join(60)
    assert not errors
    order = [v for v, _ in done]
    assert order.index("B") <= 1, order  # after at most one of A's programs
    waited = dict((v, at) for v, at in done)["B"] - asked
    assert waited < JOB_S + 1.0, f"B waited {waited:.1f} s"


def test_one_visitor_runs_one_program_at_a_time_even_with_free_workers():
    with Pool(SandboxLimits(workers=2, run_seconds=10, queue_seconds=30), testing=True) as p:
        assert p.call("pid", (), 60).status == "ok"
        done: list = []
        errors: list = []
        started = time.monotonic()
        threads = [_submit(p, "A", 1.0, done, errors) for _ in range(2)]
        for t in threads:
            t.join(60)
        assert not errors
        assert done[-1][1] - started >= 2.0  # one after the other, not side by side


def test_a_visitor_waiting_on_their_own_program_is_told_so():
    with Pool(SandboxLimits(workers=2, run_seconds=10, queue_seconds=1), testing=True) as p:
        assert p.call("pid", (), 60).status == "ok"
        done: list = []
        errors: list = []
        first = _submit(p, "A", 3.0, done, errors)
        time.sleep(0.3)
        with pytest.raises(Busy, match="program running in another tab"):
            p.call("hang", (0.0,), 10, visitor="A")
        assert p.call("hang", (0.0,), 10, visitor="B").status == "ok"  # B: the free worker
        first.join(30)


def test_a_public_budget_of_worker_seconds_per_minute():
    limits = SandboxLimits(workers=1, run_seconds=10, visitor_seconds_per_minute=1.0)
    with Pool(limits, testing=True) as p:
        assert p.call("hang", (1.2,), 10, visitor="A").status == "ok"
        with pytest.raises(Busy, match="last minute.*1 s.*again in about"):
            p.call("hang", (0.0,), 10, visitor="A")
        assert p.call("hang", (0.0,), 10, visitor="B").status == "ok"  # others unaffected


def test_a_victim_waits_behind_one_program_while_one_address_holds_many_identities():
    """Issue item 8: three identities from one address (private windows, a script dropping
    its cookie), each re-submitting at once; a visitor from elsewhere runs after at most one
    of their programs, not after one of each."""
    with Pool(SandboxLimits(workers=1, run_seconds=10, queue_seconds=30), testing=True) as p:
        assert p.call("pid", (), 60).status == "ok"
        stop = threading.Event()
        errors: list = []

        def hog(identity: str) -> None:
            try:
                while not stop.is_set():
                    outcome = p.call("hang", (JOB_S,), 10, visitor=f"198.51.100.7|{identity}")
                    assert outcome.status == "ok", outcome
            except Exception as exc:  # noqa: BLE001 - checked by the test
                errors.append(exc)

        hogs = [threading.Thread(target=hog, args=(f"tab {i}",)) for i in range(3)]
        for t in hogs:
            t.start()
            time.sleep(0.05)
        time.sleep(2 * JOB_S + 0.3)  # a few rounds: every identity has waited and run
        asked = time.monotonic()
        assert p.call("hang", (0.0,), 10, visitor="203.0.113.5|victim").status == "ok"
        waited = time.monotonic() - asked
        stop.set()
        for t in hogs:
            t.join(30)
        assert not errors
        assert waited < JOB_S + 0.8, f"the victim waited {waited:.1f} s"


def test_a_waiting_visitor_hears_their_place_and_the_wait():
    """What the page shows while a program waits: requests ahead and seconds, as they change."""
    with Pool(SandboxLimits(workers=1, run_seconds=10, queue_seconds=30), testing=True) as p:
        assert p.call("hang", (0.5,), 10).status == "ok"  # one job measured: 0.5 s
        done: list = []
        errors: list = []
        threads = [_submit(p, "10.0.0.1|a", JOB_S, done, errors)]
        time.sleep(0.3)
        threads.append(_submit(p, "10.0.0.2|b", JOB_S, done, errors))
        time.sleep(0.3)
        heard: list = []
        token = WAITING.set(lambda ahead, seconds: heard.append((ahead, seconds)))
        try:
            assert p.call("hang", (0.0,), 10, visitor="10.0.0.3|c").status == "ok"
        finally:
            WAITING.reset(token)
        for t in threads:
            t.join(30)
        assert not errors
        assert heard[0][0] == 1 and heard[0][1] > 0, heard  # b is ahead; a is running
        assert heard[-1][0] == 0, heard  # then next in line
        assert heard == sorted(heard, reverse=True), heard  # only ever shorter


def test_the_line_is_bounded_for_all_visitors_together():
    limits = SandboxLimits(workers=1, run_seconds=10, queue_seconds=30, max_waiting=2)
    with Pool(limits, testing=True) as p:
        assert p.call("pid", (), 60).status == "ok"
        done: list = []
        errors: list = []
        threads = [_submit(p, f"10.0.0.{i}|x", 1.0, done, errors) for i in range(3)]
        time.sleep(0.3)  # one runs, two wait: the line is full
        with pytest.raises(Busy, match="2 programs are waiting.*about \\d+ s"):
            p.call("hang", (0.0,), 10, visitor="10.0.0.9|late")
        for t in threads:
            t.join(30)
        assert not errors


def test_a_class_pressing_run_together_waits_in_line_rather_than_being_refused():
    """A hundred requests at once fit the line: the bound is the wait, not a count of 64."""
    idle: queue.Queue = queue.Queue()  # every worker busy
    turns = Turns(idle, workers=1, budget=None)
    turns.lines = {f"10.0.{i // 250}.{i % 250}|s": [i] for i in range(100)}
    turns.running = {"10.9.9.9|r": 1}
    count, seconds = turns.ahead("10.0.0.99|s", 99)
    assert count == 99 and seconds < 60, (count, seconds)  # first guess: a short lesson run
    idle.put("worker")
    assert turns.take("10.0.0.0|s", 60.0) == "worker"  # the first in line is served at once


def test_a_request_whose_wait_is_past_its_time_is_refused_at_once_with_the_wait():
    idle: queue.Queue = queue.Queue()
    turns = Turns(idle, workers=1, budget=None)
    turns.job_seconds = 2.0  # measured: long jobs
    turns.lines = {f"10.0.0.{i}|s": [i] for i in range(10)}
    # 11 jobs of 2 s ahead of a request that may wait 5 s: told now, not after 5 s of waiting
    with pytest.raises(Busy, match=r"10 programs are waiting.*about 22 s of work.*\(5 s\)"):
        turns.take("10.0.1.1|late", 5.0)
    assert sum(map(len, turns.lines.values())) == 10  # the refused request left no ticket
