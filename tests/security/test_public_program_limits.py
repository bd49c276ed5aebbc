"""A public host's programs get smaller caps, whatever the page asks: 200 MB of tensors in
all and 300 MB of worker memory beyond a warm worker, so the whole app (server, forkserver,
warm worker: about 340 MB) stays under Community Cloud's 690 MB."""

from __future__ import annotations

import pytest

from gradviz.program.presets import PRESETS
from gradviz.program.results.limits import (
    DEFAULT_LIMITS,
    PUBLIC_PROGRAM_LIMITS,
    Limits,
    tightest,
)
from gradviz.program.results.trace import RunOptions
from gradviz.services import programs as sandbox
from gradviz.services.programs import check_isolated, run_isolated
from gradviz.util.settings import PUBLIC
from gradviz.workers.pool import Pool, SandboxLimits

# 4 x 60 MB: inside each tensor's cap, over the public total and under the default one.
FOUR_60MB = "\n".join(f"t{i} = torch.zeros(15_000_000)" for i in range(4)) + "\n"


@pytest.fixture(scope="module")
def public_pool():
    with Pool(SandboxLimits(workers=1)) as p:
        yield p


@pytest.fixture(autouse=True)
def _public(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")


def test_tightest_takes_each_smaller_cap():
    mixed = tightest(Limits(max_total_bytes=5, max_lines=10**6), Limits(max_lines=7))
    assert mixed.max_total_bytes == 5 and mixed.max_lines == 7
    assert tightest(DEFAULT_LIMITS, DEFAULT_LIMITS) == DEFAULT_LIMITS


def test_a_public_pool_refuses_what_a_local_one_runs(public_pool):
    refused = run_isolated(FOUR_60MB, RunOptions(), pool=public_pool)
    assert refused.error and refused.error.kind == "limit", refused.error
    assert "200" in refused.error.message
    # a caller asking for looser caps does not get them
    loose = RunOptions(limits=Limits(max_total_bytes=10**12))
    assert run_isolated(FOUR_60MB, loose, pool=public_pool).error.kind == "limit"
    check = check_isolated(FOUR_60MB + "y = t0.sum()\n", "y", {}, pool=public_pool)
    assert not check.ok and "200" in check.message


def test_every_preset_runs_as_it_does_locally(public_pool):
    for preset in PRESETS:
        trace = run_isolated(
            preset.source, RunOptions(backward=preset.backward or None), pool=public_pool
        )
        kind = trace.error.kind if trace.error else None
        assert kind in (None, "runtime"), (preset.key, trace.error)  # runtime: the mistakes


def test_the_default_pool_of_a_public_host_is_the_small_one(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PUBLIC", "1")
    monkeypatch.delenv("GRADVIZ_WORKER_MEMORY", raising=False)
    monkeypatch.setattr(sandbox, "_default", None)
    monkeypatch.setattr(sandbox, "Pool", lambda limits: type("P", (), {"limits": limits})())
    limits = sandbox.default_pool().limits
    assert sandbox.program_limits(DEFAULT_LIMITS) == PUBLIC_PROGRAM_LIMITS
    assert limits.memory_bytes == PUBLIC.worker_memory == 300_000_000
    monkeypatch.setenv("GRADVIZ_PUBLIC", "0")
    monkeypatch.setattr(sandbox, "_default", None)
    limits = sandbox.default_pool().limits
    assert sandbox.program_limits(DEFAULT_LIMITS) == DEFAULT_LIMITS
    assert limits.memory_bytes == SandboxLimits.memory_bytes
