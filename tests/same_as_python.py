"""A program run two ways, for the tests that compare gradviz with CPython: what CPython
prints for the same (trusted test) text, what gradviz prints, and gradviz's refusal at its
line and column."""

from __future__ import annotations

import contextlib
import io

import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.reports import RunError
from gradviz.program.results.trace import RunOptions


def python_printed(source: str) -> list[str]:
    """What CPython prints for the same program (trusted test text)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<test>", "exec"), {"torch": torch})
    return out.getvalue().splitlines()


def printed(source: str, **options) -> list[str]:
    """What gradviz prints (on the CPU unless `simulate_cuda` is given), the run ending well."""
    options.setdefault("simulate_cuda", False)
    trace = run_program(source, RunOptions(**options))
    assert trace.error is None, trace.error
    return "\n".join(trace.stdout).splitlines()


def refused(source: str, kind: str, line: int, col: int, *words: str, **options) -> RunError:
    """gradviz's error of `kind` at (line, col), its message holding each of `words`."""
    options.setdefault("simulate_cuda", False)
    err = run_program(source, RunOptions(**options)).error
    assert err is not None, "expected an error"
    assert (err.kind, err.line, err.col) == (kind, line, col), err
    for w in words:
        assert w in err.message, err.message
    return err
