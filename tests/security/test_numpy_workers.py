"""numpy in the sandboxed workers: a program computes with it and prints what CPython
prints, and every hostile numpy program of the corpus is refused there as in process, the
workers staying alive and unchanged."""

from __future__ import annotations

from gradviz.services.programs import run_isolated
from tests.same_as_python import python_printed
from tests.security.corpus import NUMPY

PROGRAM = """import numpy as np
np.random.seed(0)
X = np.random.normal(0, 1, (5, 2))
w = np.array([2.0, -3.4])
y = X @ w + 4.2
t = torch.from_numpy(X).float()
print(X, y.round(3), t.sum().item() > -100, t.numpy().dtype)
"""


def test_numpy_runs_in_the_workers(pool):
    trace = run_isolated(PROGRAM, pool=pool)
    assert trace.error is None, trace.error
    assert "\n".join(trace.stdout).splitlines() == python_printed(PROGRAM)


def test_numpy_refusals_through_the_workers(pool):
    pids = set(pool.pids())
    for name, source, kind, words, where in NUMPY:
        err = run_isolated(source, pool=pool).error
        assert err is not None, name
        assert (err.kind, err.line, err.col) == (kind, *where), (name, err)
        assert words.lower() in err.message.lower(), (name, err.message)
    assert set(pool.pids()) == pids, "a worker died or was replaced"
