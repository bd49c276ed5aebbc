"""The page's result cache keeps successes and a program's own errors, never a run whose
worker was killed: a fresh session opening the same link must run it again."""

from __future__ import annotations

import pytest

from gradviz.trace import Trace

autograd = pytest.importorskip("gradviz.ui.autograd")


@pytest.fixture
def fake_runs(monkeypatch):
    """run_isolated answers from a script of traces, counting calls."""
    script: list[Trace] = []
    calls: list[str] = []

    def fake(source, options=None, pool=None, raise_busy=False):
        calls.append(source)
        return script.pop(0)

    monkeypatch.setattr(autograd, "run_isolated", fake)
    autograd.cached_run.clear()
    yield script, calls
    autograd.cached_run.clear()


@pytest.mark.parametrize("status", ["died", "timeout", "memory", "error"])
def test_a_killed_run_is_not_cached(fake_runs, status):
    script, calls = fake_runs
    died = Trace(source="a = 1", error={"kind": "runtime", "message": "killed"})
    died.stats = {"seconds": 1.0, "worker": status}
    fine = Trace(source="a = 1", stats={"seconds": 0.1})
    script += [died, fine]
    first = autograd.run_cached("a = 1", None, False, False)
    assert first.error and first.stats["worker"] == status
    second = autograd.run_cached("a = 1", None, False, False)
    assert second.error is None, "the failed run was served from the cache"
    assert len(calls) == 2


def test_success_and_program_errors_are_cached(fake_runs):
    script, calls = fake_runs
    script += [
        Trace(source="a = 1", stats={"seconds": 0.1}),
        Trace(source="b", error={"kind": "name", "message": "no b"}, stats={"seconds": 0.1}),
    ]
    for _ in range(2):
        assert autograd.run_cached("a = 1", None, False, False).error is None
        assert autograd.run_cached("b", None, False, False).error["kind"] == "name"
    assert calls == ["a = 1", "b"]
