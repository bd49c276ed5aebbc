"""A program's memory verdict is its own, not what earlier visitors left in the warm worker
(issue item 7): a program that fits a fresh worker is never refused, and that refusal never
cached, because a worker it ran in had grown."""

from __future__ import annotations

import pytest

from gradviz.services.programs import run_isolated
from gradviz.workers.pool import Pool, SandboxLimits

# 200 MB of tensors: fits a fresh worker under a 300 MB cap, not one holding 150 MB more.
NEAR_CAP = "a = torch.ones(25000000)\nb = torch.ones(25000000)\n"
KEPT = 150_000_000


def _pool(regrow_bytes):
    limits = SandboxLimits(workers=1, memory_bytes=300_000_000, regrow_bytes=regrow_bytes)
    return Pool(limits, testing=True)


@pytest.mark.parametrize("regrow_bytes", [None, 64_000_000])
def test_a_program_that_fits_a_fresh_worker_fits_after_others(regrow_bytes):
    """Retried in a fresh worker (regrow off), or run in one (the grown worker replaced)."""
    with _pool(regrow_bytes) as p:
        assert run_isolated(NEAR_CAP, pool=p).error is None  # fits a fresh worker
        assert p.call("keep", (KEPT,), 30).status == "ok"  # an earlier visitor's leftovers
        trace = run_isolated(NEAR_CAP, pool=p)
        assert trace.error is None, trace.error
        assert trace.stats.worker is None
        assert p.stats["retried"] == (1 if regrow_bytes is None else 0)


def test_a_grown_worker_is_replaced_before_its_next_job():
    with _pool(64_000_000) as p:
        first = p.call("pid", (), 60).value
        assert p.call("pid", (), 60).value == first  # small jobs keep the warm worker
        assert p.call("keep", (KEPT,), 30).status == "ok"
        again = p.call("pid", (), 60)
        assert again.status == "ok" and again.value != first and again.fresh


def test_a_program_too_big_for_a_fresh_worker_is_refused_once():
    """The refusal in a fresh worker is the program's own: not run again."""
    with _pool(None) as p:
        # held for a while (100 sums): the pool samples a worker's memory every 20 ms, and a
        # loaded host once let the three allocations come and go between two samples
        too_big = NEAR_CAP + "c = torch.ones(25000000)\nfor i in range(100):\n    s = c.sum()\n"
        trace = run_isolated(too_big, pool=p)
        assert trace.error.kind == "limit" and "more memory" in trace.error.message
        assert p.stats["retried"] == 0 and p.stats["jobs"] == 1
        assert p.call("keep", (KEPT,), 30).status == "ok"
        trace = run_isolated(too_big, pool=p)  # a used worker: once again in a fresh one
        assert trace.error.kind == "limit" and "more memory" in trace.error.message
        assert p.stats["retried"] == 1


def test_the_refusal_from_a_grown_worker_is_not_cached(monkeypatch):
    """The page's cache: the same program runs, a visitor leaves the worker grown, then the
    program still runs for everyone (on the code before, its refusal was kept for all)."""
    autograd = pytest.importorskip("gradviz.ui.autograd")
    with _pool(None) as p:
        monkeypatch.setattr(
            autograd, "run_isolated", lambda *a, **k: run_isolated(*a, **dict(k, pool=p))
        )
        autograd.results().clear()
        try:
            p.call("keep", (KEPT,), 30)
            assert autograd.run_cached(NEAR_CAP, None, False, False).error is None
            assert autograd.run_cached(NEAR_CAP, None, False, False).error is None
        finally:
            autograd.results().clear()
