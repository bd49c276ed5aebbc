"""gradviz.program.worker_hooks: the hooks a worker calls (the quick self-test of the command line's
one-shot worker) and the size checks' FLOP counter, which must neither pull in torch._dynamo
nor, when a part of torch cannot load, let a call run unmeasured."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gradviz.program import worker_hooks as worker
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

ROOT = Path(__file__).resolve().parents[3]


def test_quick_self_test_passes_with_the_temp_dir_named_and_the_size_cap_on():
    assert tempfile.tempdir is not None  # named when gradviz.program.worker_hooks was imported
    assert worker.quick_self_test() is None


def test_quick_self_test_fails_closed_without_a_named_temp_dir(monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert "no temporary directory" in worker.quick_self_test()


def test_quick_self_test_fails_closed_when_the_size_cap_lets_the_canary_through(monkeypatch):
    monkeypatch.setattr(worker, "SIZE_CANARY", "a = torch.ones(2, 2)\n")
    assert "self-test" in worker.quick_self_test()


@pytest.mark.parametrize("error", [ImportError("no module"), OSError("no temp dir"), MemoryError()])
def test_a_size_check_that_cannot_load_stops_the_program(monkeypatch, error):
    """A lazy import inside the measuring (sympy, under a worker's limits) fails: the call
    is not measured, so it does not run; the program stops at it."""

    class Broken:
        def __enter__(self):
            raise error

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(
        "gradviz.program.budgets.precheck._flop_counter", lambda mapping=None: Broken()
    )
    trace = run_program(worker.CANARY + "c = 1\n", RunOptions(classic=False))
    assert trace.error is not None and trace.error.line == 2
    assert "c" not in {t.label for t in trace.tensors} and "b" not in {
        t.label for t in trace.tensors
    }


def test_the_flop_count_does_not_import_torch_dynamo():
    """A dispatch mode's wrapper imports torch._dynamo (~0.6 s) on its first dispatch unless
    gradviz.program.budgets.flops hands it the mode's own function; the count is the same."""
    code = (
        "import sys\n"
        "from gradviz.program.interpreter.run import run_program\n"
        "from gradviz.program.worker_hooks import CANARY\n"
        "print(run_program(CANARY).error.message)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    message, dynamo = out.stdout.strip().splitlines()
    assert "1.28e+11 floating-point operations" in message
    assert dynamo == "False"
