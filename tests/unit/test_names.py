"""`del`, `global` and `nonlocal`: what CPython prints for the same program, and its errors
in Python's words at their line and column."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions


def python_printed(source: str) -> list[str]:
    """What CPython prints for the same program (trusted test text)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<test>", "exec"), {"torch": torch})
    return out.getvalue().splitlines()


def python_error(source: str) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - any of Python's errors
        python_printed(source)
    return str(info.value)


def printed(source: str) -> list[str]:
    trace = run_program(source, RunOptions(simulate_cuda=False))
    assert trace.error is None, trace.error
    return "\n".join(trace.stdout).splitlines()


def refused(source: str, kind: str, line: int, col: int, *words: str):
    err = run_program(source, RunOptions(simulate_cuda=False)).error
    assert err is not None, "expected an error"
    assert (err.kind, err.line, err.col) == (kind, line, col), err
    for w in words:
        assert w in err.message, err.message
    return err


DELETIONS = [
    "xs = [1, 2, 3, 4, 5]\ndel xs[0]\ndel xs[-1], xs[::2]\nprint(xs)\n",
    "d = {'a': 1, 'b': 2, 3: 4}\ndel d['a']\ndel d[3]\nprint(d, len(d))\n",
    "grid = [[1, 2], [3, 4]]\ndel grid[0][1]\ndel grid[1][:]\nprint(grid)\n",
    "x = 1\ny = 2\ndel x, y\nx = 3\nprint(x)\n",
    "sum = 3\ndel sum\nprint(sum([1, 2]))\n",
    "def f(items):\n    first = items[0]\n    del items[0]\n    del first\n    return items\n"
    "print(f([1, 2, 3]))\n",
    "import math\ndel math\nimport math\nprint(math.pi > 3)\n",
    "x = torch.ones(2)\nkeep = [x, x * 2]\ndel keep[0]\nprint(keep)\n",
]


@pytest.mark.parametrize("source", DELETIONS)
def test_del_does_what_python_does(source):
    assert printed(source) == python_printed(source)


DELETION_ERRORS = [
    ("x = 1\ndel x\nprint(x)\n", "name", 3, 7, "`x` is not defined"),
    ("d = {}\ndel d['k']\n", "runtime", 2, 5, "KeyError: 'k'"),
    ("xs = []\ndel xs[0]\n", "runtime", 2, 5, "IndexError: " + python_error("xs = []\ndel xs[0]")),
    (
        "def f():\n    del x\nx = 1\nf()\n",
        "name",
        2,
        9,
        python_error("def f():\n    del x\nx = 1\nf()"),
    ),
    ("del y\n", "name", 1, 5, python_error("del y")),
    ("t = (1, 2)\ndel t[0]\n", "type", 2, 5, "doesn't support item deletion"),
    ("x = torch.ones(3)\ndel x[0]\n", "type", 2, 5, "doesn't support item deletion"),
    ("s = 'ab'\ndel s[0]\n", "type", 2, 5, "doesn't support item deletion"),
]


@pytest.mark.parametrize(("source", "kind", "line", "col", "words"), DELETION_ERRORS)
def test_del_errors(source, kind, line, col, words):
    refused(source, kind, line, col, words)
