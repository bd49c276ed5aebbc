"""gradviz.util.memo.ByteLRU: bounded by bytes, entries and age; thread-safe."""

from __future__ import annotations

import threading

from gradviz.util.memo import ByteLRU


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
