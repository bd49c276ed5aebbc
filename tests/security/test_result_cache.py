"""The page's result cache keeps successes and a program's own errors, never a run whose
worker was killed: a fresh session opening the same link must run it again."""

from __future__ import annotations

import pytest

from gradviz.program.reports import RunError, RunStats
from gradviz.program.results import Trace

autograd = pytest.importorskip("gradviz.ui.autograd")


@pytest.fixture
def fake_runs(monkeypatch):
    """run_isolated answers from a script of traces, counting calls."""
    script: list[Trace] = []
    calls: list[str] = []

    def fake(source, options=None, pool=None, raise_busy=False, visitor=""):
        calls.append(source)
        return script.pop(0)

    monkeypatch.setattr(autograd, "run_isolated", fake)
    autograd.results().clear()
    yield script, calls
    autograd.results().clear()


@pytest.mark.parametrize("status", ["died", "timeout", "memory", "error"])
def test_a_killed_run_is_not_cached(fake_runs, status):
    script, calls = fake_runs
    died = Trace(source="a = 1", error=RunError("runtime", "killed"))
    died.stats = RunStats(seconds=1.0, worker=status)
    fine = Trace(source="a = 1", stats=RunStats(seconds=0.1))
    script += [died, fine]
    first = autograd.run_cached("a = 1", None, False, False)
    assert first.error and first.stats.worker == status
    second = autograd.run_cached("a = 1", None, False, False)
    assert second.error is None, "the failed run was served from the cache"
    assert len(calls) == 2


def test_success_and_program_errors_are_cached(fake_runs):
    script, calls = fake_runs
    script += [
        Trace(source="a = 1", stats=RunStats(seconds=0.1)),
        Trace(source="b", error=RunError("name", "no b"), stats=RunStats(seconds=0.1)),
    ]
    for _ in range(2):
        assert autograd.run_cached("a = 1", None, False, False).error is None
        assert autograd.run_cached("b", None, False, False).error.kind == "name"
    assert calls == ["a = 1", "b"]


def test_the_cache_is_bounded_by_bytes(fake_runs, monkeypatch):
    """Many large results keep the cache under its byte bound; the newest stays served."""
    script, calls = fake_runs
    big = [[float(i)] * 20_000 for i in range(4)]  # about 180 KB pickled each
    for i in range(40):
        script.append(Trace(source=f"a = {i}", stats=RunStats(seconds=0.1), stdout=[str(big)]))
    bound = 1_000_000
    monkeypatch.setattr(autograd.results(), "max_bytes", bound)
    for i in range(40):
        autograd.run_cached(f"a = {i}", None, False, False)
        assert autograd.results().total_bytes <= bound
    assert autograd.run_cached("a = 39", None, False, False).stdout  # served, not run again
    assert len(calls) == 40


def test_each_session_gets_its_own_copy(fake_runs):
    script, calls = fake_runs
    script.append(Trace(source="a = 1", stats=RunStats(seconds=0.1), stdout=["one"]))
    first = autograd.run_cached("a = 1", None, False, False)
    first.stdout.append("changed by one session")
    assert autograd.run_cached("a = 1", None, False, False).stdout == ["one"]
