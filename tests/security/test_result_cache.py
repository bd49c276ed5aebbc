"""The result cache (gradviz.services.cache) keeps successes and a program's own errors,
never a run whose worker was killed: a fresh session opening the same link must run it
again."""

from __future__ import annotations

import threading
import time

import pytest

from gradviz.program.results.reports import RunError, RunStats
from gradviz.program.results.trace import Trace
from gradviz.services import cache


@pytest.fixture
def fake_runs(monkeypatch):
    """run_isolated answers from a script of traces, counting calls."""
    script: list[Trace] = []
    calls: list[str] = []

    def fake(source, options=None, pool=None, raise_busy=False, visitor=""):
        calls.append(source)
        return script.pop(0)

    monkeypatch.setattr(cache, "run_isolated", fake)
    cache.results().clear()
    cache.session_results().clear()
    yield script, calls
    cache.results().clear()
    cache.session_results().clear()


@pytest.mark.parametrize("status", ["died", "timeout", "memory", "error"])
def test_a_killed_run_is_not_cached(fake_runs, status):
    script, calls = fake_runs
    died = Trace(source="a = 1", error=RunError("runtime", "killed"))
    died.stats = RunStats(seconds=1.0, worker=status)
    fine = Trace(source="a = 1", stats=RunStats(seconds=0.1))
    script += [died, fine]
    first = cache.run_cached("a = 1", None, False, False)
    assert first.error and first.stats.worker == status
    second = cache.run_cached("a = 1", None, False, False)
    assert second.error is None, "the failed run was served from the cache"
    assert len(calls) == 2


def test_success_and_program_errors_are_cached(fake_runs):
    script, calls = fake_runs
    script += [
        Trace(source="a = 1", stats=RunStats(seconds=0.1)),
        Trace(source="b", error=RunError("name", "no b"), stats=RunStats(seconds=0.1)),
    ]
    for _ in range(2):
        assert cache.run_cached("a = 1", None, False, False).error is None
        assert cache.run_cached("b", None, False, False).error.kind == "name"
    assert calls == ["a = 1", "b"]


def test_the_cache_is_bounded_by_bytes(fake_runs, monkeypatch):
    """Many large results keep the cache under its byte bound; the newest stays served."""
    script, calls = fake_runs
    big = [[float(i)] * 20_000 for i in range(4)]  # about 180 KB pickled each
    for i in range(40):
        script.append(Trace(source=f"a = {i}", stats=RunStats(seconds=0.1), stdout=[str(big)]))
    bound = 1_000_000
    monkeypatch.setattr(cache.results(), "max_bytes", bound)
    for i in range(40):
        cache.run_cached(f"a = {i}", None, False, False)
        assert cache.results().total_bytes <= bound
    assert cache.run_cached("a = 39", None, False, False).stdout  # served, not run again
    assert len(calls) == 40


def test_each_session_gets_its_own_copy(fake_runs):
    script, calls = fake_runs
    script.append(Trace(source="a = 1", stats=RunStats(seconds=0.1), stdout=["one"]))
    first = cache.run_cached("a = 1", None, False, False)
    first.stdout.append("changed by one session")
    assert cache.run_cached("a = 1", None, False, False).stdout == ["one"]


def test_a_session_rerun_does_not_unpickle_its_result_again(fake_runs, monkeypatch):
    """Every click reruns the page: the session's own copy is kept, not unpickled again (a
    big result cost 1.5 s of the server's CPU on every rerun of every session showing it)."""
    script, calls = fake_runs
    script.append(Trace(source="a = 1", stats=RunStats(seconds=0.1), stdout=["one"]))
    loads, real = [], cache.pickle.loads
    monkeypatch.setattr(cache.pickle, "loads", lambda data: loads.append(1) or real(data))
    mine = cache.run_cached("a = 1", None, False, False, visitor="session a")
    for _ in range(5):
        assert cache.run_cached("a = 1", None, False, False, visitor="session a") is mine
    assert loads == []
    theirs = cache.run_cached("a = 1", None, False, False, visitor="session b")
    assert theirs is not mine and theirs.stdout == ["one"] and loads == [1]
    assert cache.run_cached("a = 1", None, False, False, visitor="session b") is theirs
    assert len(calls) == 1 and loads == [1]


def test_sessions_copies_are_bounded_by_their_unpickled_bytes(fake_runs, monkeypatch):
    script, calls = fake_runs
    for i in range(30):
        stats = RunStats(seconds=0.1, decoded_bytes=100_000)
        script.append(Trace(source=f"a = {i}", stats=stats))
    monkeypatch.setattr(cache.session_results(), "max_bytes", 1_000_000)
    for i in range(30):
        cache.run_cached(f"a = {i}", None, False, False, visitor=f"session {i}")
        assert cache.session_results().total_bytes <= 1_000_000
    assert len(cache.session_results()) == 10
    # one copy per session: a new program replaces the session's last one
    script.append(Trace(source="b", stats=RunStats(seconds=0.1, decoded_bytes=100_000)))
    cache.run_cached("b", None, False, False, visitor="session 29")
    assert len(cache.session_results()) == 10


def _at_once(n, call):
    """n threads calling call() at the same moment; their results once all are done."""
    results = [None] * n
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, call())) for i in range(n)
    ]
    for t in threads:
        t.start()
    return threads, results


def test_sessions_submitting_one_program_together_share_one_run(fake_runs, monkeypatch):
    """A class pressing Run on the same program at once: one worker run, a copy each."""
    script, calls = fake_runs
    release = threading.Event()

    def slow(source, options=None, pool=None, raise_busy=False, visitor=""):
        calls.append(source)
        release.wait(10)
        return Trace(source=source, stats=RunStats(seconds=0.1), stdout=["one"])

    monkeypatch.setattr(cache, "run_isolated", slow)
    threads, results = _at_once(6, lambda: cache.run_cached("a = 1", None, False, False))
    while not calls:
        time.sleep(0.01)
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join(10)
    assert calls == ["a = 1"]
    assert all(r.stdout == ["one"] for r in results)
    assert len({id(r) for r in results}) == 6  # no two sessions hold the same object


def test_sessions_waiting_on_a_killed_run_run_it_themselves(fake_runs, monkeypatch):
    script, calls = fake_runs
    release = threading.Event()

    def first_dies(source, options=None, pool=None, raise_busy=False, visitor=""):
        calls.append(source)
        if len(calls) == 1:
            release.wait(10)
            died = Trace(source=source, error=RunError("runtime", "killed"))
            died.stats = RunStats(seconds=1.0, worker="died")
            return died
        return Trace(source=source, stats=RunStats(seconds=0.1))

    monkeypatch.setattr(cache, "run_isolated", first_dies)
    threads, results = _at_once(3, lambda: cache.run_cached("a = 1", None, False, False))
    while not calls:
        time.sleep(0.01)
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join(10)
    assert sorted(r.stats.worker or "ok" for r in results) == ["died", "ok", "ok"]
    assert len(calls) == 3


def test_one_graph_asked_by_many_sessions_at_once_is_laid_out_once(monkeypatch):
    release, layouts = threading.Event(), []

    def slow(dot, fmt, scale, visitor=""):
        layouts.append(dot)
        release.wait(10)
        return b"<svg/>"

    monkeypatch.setattr(cache, "render_bytes", slow)
    cache.drawings().clear()
    threads, results = _at_once(5, lambda: cache.cached_bytes("digraph{a}", "svg", 1.0))
    while not layouts:
        time.sleep(0.01)
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join(10)
    cache.drawings().clear()
    assert layouts == ["digraph{a}"] and results == [b"<svg/>"] * 5
