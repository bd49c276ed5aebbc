"""gradviz.util.first_page: background work waits for the first page run, and only then."""

import threading
import time

import pytest

from gradviz.services import host, landing
from gradviz.util import first_page


@pytest.fixture(autouse=True)
def no_gate(monkeypatch):
    monkeypatch.setattr(first_page, "_gate", None)
    monkeypatch.setattr(first_page, "_released_at", None)
    monkeypatch.setattr(first_page, "GRACE_S", 0.0)


def test_nothing_held_unless_asked():
    assert not first_page.held()
    started = time.monotonic()
    assert first_page.wait(5.0) is True
    assert time.monotonic() - started < 1.0
    first_page.release()  # without hold: nothing to open, no error


def test_held_work_starts_on_release_and_the_gate_stays_open():
    first_page.hold()
    assert first_page.held()
    went = threading.Event()
    waiter = threading.Thread(target=lambda: first_page.wait(30.0) and went.set())
    waiter.start()
    assert not went.wait(0.3)  # still held
    first_page.release()
    assert went.wait(5.0)
    waiter.join(5.0)
    first_page.hold()  # a later run's hold does not close it again
    assert not first_page.held()
    assert first_page.wait(0.0) is True


def test_wait_gives_up_after_its_timeout():
    first_page.hold()
    started = time.monotonic()
    assert first_page.wait(0.2) is False
    assert time.monotonic() - started < 2.0


def test_the_pool_warm_and_the_facts_ask_wait_for_the_first_run(monkeypatch):
    """The two background starts that import torch in a worker wait for release()."""
    first_page.hold()
    calls = []
    monkeypatch.setattr(landing, "default_pool", lambda: calls.append("pool"))
    monkeypatch.setattr(landing, "stored", lambda *a: None)
    monkeypatch.setattr(host, "facts", lambda: calls.append("facts"))
    threads = [threading.Thread(target=landing._warm), threading.Thread(target=host._ask_facts)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    assert calls == []
    first_page.release()
    for t in threads:
        t.join(5.0)
    assert sorted(calls) == ["facts", "pool"]


def test_held_work_waits_the_grace_after_the_release(monkeypatch):
    """The browser still draws the graph after the run: held work starts GRACE_S later."""
    monkeypatch.setattr(first_page, "GRACE_S", 0.5)
    first_page.hold()
    first_page.release()
    started = time.monotonic()
    assert first_page.wait(5.0) is True
    assert time.monotonic() - started >= 0.45
    started = time.monotonic()
    assert first_page.wait(0.1) is True  # never longer than its timeout
    assert time.monotonic() - started < 0.3
