"""The worker pool: programs run outside this process, and a worker's death is contained."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from gradviz.program.worker_hooks import state as torch_state
from gradviz.services.programs import check_isolated, describe, run_isolated
from gradviz.workers.pool import Outcome, Pool, SandboxLimits
from gradviz.workers.table import PROGRAM_JOBS

LESSON = "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = ((x + 2) ** 2 + 3).mean()\n"


def _grad(trace, name="x"):
    return trace.tensor(name).grad


def test_runs_in_another_process_and_matches_in_process(pool):
    isolated = run_isolated(LESSON, RunOptions(backward="y"), pool=pool)
    local = run_program(LESSON, RunOptions(backward="y"))
    assert isolated.error is None
    assert _grad(isolated) == pytest.approx(_grad(local))
    assert isolated.graph is not None and isolated.classic_dot
    assert os.getpid() not in pool.pids()
    assert all(pid != os.getpid() for pid in pool.pids())


def test_worker_is_limited(pool):
    # The test-only "state" job runs in the worker: torch threads as configured.
    out = pool.call("state", (), 10)
    assert out.status == "ok"
    assert out.value[2] == pool.limits.threads
    pid = pool.call("pid", (), 10).value
    with open(f"/proc/{pid}/limits") as f:
        limits = f.read()
    fsize = next(line for line in limits.splitlines() if line.startswith("Max file size"))
    core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
    files = next(line for line in limits.splitlines() if line.startswith("Max open files"))
    data = next(line for line in limits.splitlines() if line.startswith("Max data size"))
    assert fsize.split()[3] == "0" and core.split()[4] == "0"
    assert int(files.split()[3]) <= pool.limits.open_files
    assert data.split()[3] != "unlimited"


def test_segfault_ends_the_worker_only(pool):
    out = pool.call("crash", (), 10)
    assert out.status == "died" and out.message == "SIGSEGV"
    err = describe(out, 10, pool.limits.memory_bytes)
    assert "killed by SIGSEGV" in err.message and "nothing else was affected" in err.message
    after = run_isolated(LESSON, RunOptions(backward="y"), pool=pool)
    assert after.error is None and _grad(after) == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)


def test_sigkill_from_outside_mid_run(pool):
    """Another process (the OOM killer, an operator) kills the worker while it runs."""
    result: list[Outcome] = []
    t = threading.Thread(target=lambda: result.append(pool.call("hang", (30.0,), 20)))
    t.start()
    victim = None
    for _ in range(400):
        time.sleep(0.05)
        busy = pool.busy_pids()
        if busy:
            victim = busy[0]
            break
    assert victim is not None
    os.kill(victim, signal.SIGKILL)
    t.join(30)
    assert result and result[0].status == "died" and result[0].message == "SIGKILL"
    after = run_isolated("a = torch.ones(2) * 7\n", pool=pool)
    assert after.error is None and after.tensor("a").value == [7.0, 7.0]


def test_hang_is_stopped_by_the_wall_clock(pool):
    started = time.monotonic()
    out = pool.call("hang", (3600.0,), 1.5)
    assert out.status == "timeout"
    assert time.monotonic() - started < 15  # generous: shared CI cores
    err = describe(out, 1.5, pool.limits.memory_bytes)
    assert err.kind == "limit" and "the limit per run" in err.message
    after = run_isolated("a = torch.ones(2) * 3\n", pool=pool)
    assert after.tensor("a").value == [3.0, 3.0]


def test_cpu_limit_kills_a_spinning_worker():
    """RLIMIT_CPU is re-armed per job: a busy loop past it is killed by SIGXCPU."""
    with Pool(SandboxLimits(workers=1), testing=True) as p:
        out = p.call("hang", (60.0, True), 1.0)  # wall limit 1 s, CPU limit 1+2 s
        # Whichever fires first (wall clock here), the worker is stopped and replaced.
        assert out.status in ("timeout", "died")
        assert p.call("pid", (), 10).status == "ok"


def test_private_memory_bomb_meets_rlimit_data(pool):
    out = pool.call("allocate", (2_000_000_000, False), 20)
    assert out.status in ("error", "memory")
    assert "MemoryError" in out.message or out.status == "memory"


def test_shared_memory_bomb_meets_the_watchdog(pool):
    out = pool.call("allocate", (2_000_000_000, True), 20)
    assert out.status == "memory"
    err = describe(out, 10, pool.limits.memory_bytes)
    assert "needs more memory than one run may use (900 MB" in err.message
    assert run_isolated("a = torch.zeros(3)\n", pool=pool).error is None


def test_changed_global_state_retires_the_worker(pool):
    out = pool.call("dirty", (), 10)
    assert out.status == "ok" and out.value[0] == "torch.float64"
    # Every worker now answers with the state they started with.
    for _ in range(pool.limits.workers + 1):
        assert pool.call("state", (), 10).value[0] == "torch.float32"


def test_workers_are_recycled_after_max_jobs():
    with Pool(SandboxLimits(workers=1, max_jobs=3), testing=True) as p:
        pids = [p.call("pid", (), 10).value for _ in range(7)]
        assert len(set(pids)) == 3  # 3 + 3 + 1 jobs
        assert p.stats["replaced"] == 2


def test_test_jobs_are_not_reachable_without_testing():
    assert set(PROGRAM_JOBS) == {"run", "check"}
    p = Pool.__new__(Pool)
    p.testing, p.closed = False, False
    with pytest.raises(ValueError):
        p.call("crash", (), 1)


def test_concurrent_sessions_each_get_their_own_values(pool):
    results: dict[int, object] = {}

    def one(k: int) -> None:
        results[k] = run_isolated(f"v = torch.full((3,), {k}.0)\nw = v * 2\n", pool=pool)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(results) == list(range(12))
    for k, trace in results.items():
        assert trace.error is None
        assert trace.tensor("w").value == [2.0 * k] * 3


def test_gradient_check_runs_isolated(pool):
    shown = {"x": [2.0, 2.6667, 3.3333]}
    result = check_isolated(
        LESSON, "y", {"x": _grad(run_program(LESSON, RunOptions(backward="y")))}, pool=pool
    )
    assert result.ok, result.message
    wrong = check_isolated(LESSON, "y", {"x": [0.0, 0.0, 0.0]}, pool=pool)
    assert not wrong.ok
    assert shown


def test_wrong_input_types_never_reach_a_worker(pool):
    jobs = pool.stats["jobs"]
    for bad in (None, b"x = 1", 42, ["x = 1"], "x" * 60_000):
        trace = run_isolated(bad, pool=pool)
        assert trace.error is not None and trace.error.kind in ("type", "limit")
    assert pool.stats["jobs"] == jobs


def test_parent_torch_state_untouched(pool):
    before = torch_state()
    run_isolated("torch.manual_seed(5)\nr = torch.rand(3)\n", pool=pool)
    assert torch_state() == before


def test_sandbox_off_runs_in_process(monkeypatch):
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")
    trace = run_isolated(LESSON, RunOptions(backward="y"))
    assert trace.error is None and trace.stats.worker is None
    assert torch.get_default_dtype() == torch.float32


def test_allocator_failure_reads_as_the_memory_cap():
    """Below the interpreter's caps but past the worker's memory: a clear limit error."""
    with Pool(SandboxLimits(workers=1, memory_bytes=150_000_000)) as p:
        trace = run_isolated(
            "a = torch.ones(25000000)\nb = torch.ones(25000000)\nc = a + b\n", pool=p
        )
        err = trace.error
        assert err.kind == "limit" and err.line in (1, 2, 3), err
        assert "150 MB" in err.message and "nothing else was affected" in err.message
        assert run_isolated("a = torch.ones(2)\n", pool=p).error is None


def test_canary_is_refused_by_the_flop_cap():
    """Each worker runs CANARY under its limits and serves nothing unless it is refused."""
    from gradviz.program.worker_hooks import CANARY

    err = run_program(CANARY).error
    assert err and "floating-point operations" in err.message


def test_worker_enforces_the_flop_cap_under_its_limits(pool):
    """FSIZE=0 once broke torch's lazy FLOP-counter import, silently skipping the cap."""
    trace = run_isolated("a = torch.ones(4000, 4000)\nb = a @ a\n", pool=pool)
    assert trace.error and "floating-point operations" in trace.error.message


WARN_ONCE = [
    ("transpose-3d", "x = torch.ones(2, 2, 2)\ny = x.T\n", "x.T"),
    (
        "create-graph",
        "x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward(create_graph=True)\n",
        "create_graph=True",
    ),
]


@pytest.mark.parametrize(
    ("source", "words"), [w[1:] for w in WARN_ONCE], ids=[w[0] for w in WARN_ONCE]
)
def test_warn_once_warnings_reach_every_run(source, words, pool):
    """PyTorch's warn-once warnings are shown to every run, not only to a worker's first
    (which hid the lesson's warning from later sessions and hinted what others ran)."""
    for trace in [run_program(source), run_program(source)] + [
        run_isolated(source, pool=pool) for _ in range(pool.limits.workers + 1)
    ]:
        assert trace.error is None, trace.error
        assert any(words in w.message for w in trace.warnings), trace.warnings
    before = set(pool.pids())
    run_isolated(source, pool=pool)
    assert set(pool.pids()) == before, "the warning settings must not retire a worker"
