"""gradviz.workers.process: the limits a worker sets on itself as it starts."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from gradviz.workers import process

# A worker's start, then a chain of autograd nodes each of which has had its Python object
# (as every node a run draws or reads has), freed: the free recurses once per node in C++.
CHAIN = textwrap.dedent(
    """
    import sys
    from gradviz.workers.process import limit_process
    limit_process({"open_files": 64, "memory_bytes": 2_000_000_000})
    import torch
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(int(sys.argv[1])):
        y = y * 1.0
        y.grad_fn
    del y
    print("freed")
    """
)


def test_a_worker_frees_a_long_autograd_chain():
    # 8 MB of stack (the default) ends in a segfault near 40,000 nodes
    done = subprocess.run(
        [sys.executable, "-c", CHAIN, "150000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "freed"


def test_the_stack_limit_is_raised_never_lowered(monkeypatch):
    import resource

    calls = []
    monkeypatch.setattr(process, "set_limit", lambda which, soft, hard=None: calls.append(which))
    monkeypatch.setattr(process, "proc_status", lambda: {"VmData": 0})
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY,) * 2)
    process.limit_process({"open_files": 64, "memory_bytes": 1})
    assert resource.RLIMIT_STACK not in calls  # unlimited already: left as it is
    calls.clear()
    monkeypatch.setattr(resource, "getrlimit", lambda which: (8 * 2**20, resource.RLIM_INFINITY))
    process.limit_process({"open_files": 64, "memory_bytes": 1})
    assert calls[0] == resource.RLIMIT_STACK
