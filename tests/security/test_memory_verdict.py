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
        too_big = NEAR_CAP + "c = torch.ones(25000000)\n"
        trace = run_isolated(too_big, pool=p)
        assert trace.error.kind == "limit" and "more memory" in trace.error.message
        assert p.stats["retried"] == 0 and p.stats["jobs"] == 1
        assert p.call("keep", (KEPT,), 30).status == "ok"
        trace = run_isolated(too_big, pool=p)  # a used worker: once again in a fresh one
        assert trace.error.kind == "limit" and "more memory" in trace.error.message
        assert p.stats["retried"] == 1


@pytest.mark.parametrize("repeat", range(3))
def test_a_peak_between_two_samples_is_still_over_the_cap(repeat):
    """The parent samples a worker's memory every 20 ms; the worker's own peak (VmHWM, reset
    before each job) catches what came and went between two samples, so the verdict does not
    depend on the timing (a loaded CI host once let a program over the cap through)."""
    with Pool(SandboxLimits(workers=1, memory_bytes=100_000_000), testing=True) as p:
        outcome = p.call("spike", (250_000_000,), 30)  # a fresh worker: refused once
        assert outcome.status == "memory" and outcome.value >= 100_000_000
        assert p.stats["memory"] == 1 and p.stats["retried"] == 0
        assert p.call("spike", (40_000_000,), 30).status == "ok"  # under the cap: no verdict


def test_the_refusal_from_a_grown_worker_is_not_cached(monkeypatch):
    """The page's cache: the same program runs, a visitor leaves the worker grown, then the
    program still runs for everyone (on the code before, its refusal was kept for all)."""
    from gradviz.services import cache

    with _pool(None) as p:
        monkeypatch.setattr(
            cache, "run_isolated", lambda *a, **k: run_isolated(*a, **dict(k, pool=p))
        )
        cache.results().clear()
        try:
            p.call("keep", (KEPT,), 30)
            assert cache.run_cached(NEAR_CAP, None, False, False).error is None
            assert cache.run_cached(NEAR_CAP, None, False, False).error is None
        finally:
            cache.results().clear()


def test_the_peak_is_read_after_the_memory_is_gone():
    """reset_peak/peak_resident, which the worker reads after each job: a spike that is
    gone by the time anyone looks is still the peak, and file pages are not counted."""
    import os

    from gradviz.workers.process import peak_resident, proc_status, reset_peak
    from gradviz.workers.testing import pool_spike

    if not os.access("/proc/self/clear_refs", os.W_OK):  # the watchdog alone decides there
        pytest.skip("this kernel does not let a process reset its peak resident size")

    file_before = proc_status().get("RssFile", 0)
    assert reset_peak()
    now = proc_status()
    before = now["RssAnon"] + now.get("RssShmem", 0)
    assert peak_resident(file_before) < before + 20_000_000
    pool_spike(120_000_000)
    assert peak_resident(file_before) >= before + 110_000_000
    assert reset_peak()  # again from what is held now
    assert peak_resident(file_before) < before + 20_000_000
