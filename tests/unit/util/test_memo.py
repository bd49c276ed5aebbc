"""gradviz.util.memo: ByteLRU (bounded by bytes, entries and age) and SingleFlight; thread-safe."""

from __future__ import annotations

import threading
import time

import pytest

from gradviz.util.memo import ByteLRU, SingleFlight


def test_bytes_bound_drops_least_recently_used():
    cache = ByteLRU(max_bytes=10)
    cache.put("a", b"1234")
    cache.put("b", b"1234")
    assert cache.get("a") == b"1234"  # a is now the most recent
    cache.put("c", b"1234")
    assert "b" not in cache and "a" in cache and "c" in cache
    assert cache.total_bytes == 8


def test_value_bigger_than_the_bound_is_not_kept():
    cache = ByteLRU(max_bytes=10)
    cache.put("small", b"12")
    assert cache.put("huge", b"x" * 11) is False
    assert "huge" not in cache and "small" in cache


def test_ttl_and_entries():
    now = [0.0]
    cache = ByteLRU(max_bytes=100, ttl=5, max_entries=2, clock=lambda: now[0])
    cache.put("a", "x")
    now[0] = 6
    assert cache.get("a") is None and len(cache) == 0
    for key in "bcd":
        cache.put(key, "x")
    assert len(cache) == 2 and "b" not in cache


def test_size_function_and_replace():
    cache = ByteLRU(max_bytes=100, size=lambda v: v["n"])
    cache.put("k", {"n": 60})
    cache.put("k", {"n": 30})
    assert cache.total_bytes == 30
    cache.pop("k")
    assert cache.total_bytes == 0 and cache.get("k", "gone") == "gone"


def test_threads_keep_the_bound():
    cache = ByteLRU(max_bytes=1000)

    def work(i: int) -> None:
        for j in range(200):
            cache.put((i, j), b"x" * 37)
            cache.get((i, j - 1))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.total_bytes <= 1000
    assert cache.total_bytes == 37 * len(cache)


def _together(n, target):
    """Start n threads on target(i): the threads, and the list their results fill in."""
    results = [None] * n
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, target(i))) for i in range(n)
    ]
    for t in threads:
        t.start()
    return threads, results


def test_single_flight_runs_equal_keys_once_and_shares_the_value():
    flights = SingleFlight()
    release, calls = threading.Event(), []

    def work():
        calls.append(1)
        release.wait(10)
        return "drawn"

    threads, results = _together(8, lambda i: flights.run("k", work))
    while not calls:
        time.sleep(0.01)
    time.sleep(0.2)  # the others are waiting on the first call now
    release.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1
    assert sorted(results) == [("drawn", False)] * 7 + [("drawn", True)]
    assert flights.running() == 0


def test_single_flight_waiters_run_themselves_when_the_value_is_not_shareable_or_raised():
    flights = SingleFlight()
    release, calls = threading.Event(), []

    def unfinished():
        calls.append(1)
        if len(calls) == 1:
            release.wait(10)
            return None  # e.g. a run its worker did not finish: not for others
        return "own"

    threads, results = _together(3, lambda i: flights.run("k", unfinished, lambda v: v))
    while not calls:
        time.sleep(0.01)
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 3 and sorted(map(str, results)) == sorted(
        map(str, [(None, True), ("own", True), ("own", True)])
    )

    def boom():
        raise RuntimeError("busy")

    with pytest.raises(RuntimeError):
        flights.run("k", boom)
    assert flights.run("k", lambda: 5) == (5, True)  # nothing left behind by the failure
    assert flights.running() == 0


def test_single_flight_different_keys_do_not_wait_for_each_other():
    flights = SingleFlight()
    release = threading.Event()
    first = threading.Thread(target=lambda: flights.run("a", lambda: release.wait(10)))
    first.start()
    while not flights.running():
        time.sleep(0.01)
    start = time.monotonic()
    assert flights.run("b", lambda: "b") == ("b", True)
    assert time.monotonic() - start < 1
    release.set()
    first.join(10)
