"""factory_sizes.output must give exactly the shape and dtype torch's meta call gives (the
budget's size checks rely on it), and None where it cannot tell (the meta call decides)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gradviz.program.budgets import factory_sizes
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

CALLS = [
    (torch.arange, (5,), {}),
    (torch.arange, (1, 4), {}),
    (torch.arange, (1, 4), {"dtype": torch.float32}),
    (torch.arange, (0.0, 1.0, 0.3), {}),
    (torch.arange, (10, 0, -3), {}),
    (torch.arange, (1, 2.5), {}),
    (torch.arange, (), {"start": 2, "end": 9, "step": 2}),
    (torch.arange, (0, 1, 1e-3), {"dtype": torch.float64}),
    (torch.arange, (5, 5), {}),
    (torch.linspace, (0, 1, 5), {}),
    (torch.linspace, (0, 1), {"steps": 0}),
    (torch.logspace, (0, 2, 3), {"base": 2.0}),
    (torch.logspace, (0, 2, 7), {"dtype": torch.float64}),
    (torch.eye, (3,), {}),
    (torch.eye, (2, 5), {"dtype": torch.int32}),
    (torch.rand, (2, 3), {}),
    (torch.rand, ((4, 0, 2),), {}),
    (torch.randn, (7,), {"requires_grad": True}),
    (torch.randn, ([2, 2],), {"dtype": torch.float16}),
    (torch.randn, (), {"size": (3, 1)}),
    (torch.randint, (10, (3, 4)), {}),
    (torch.randint, (2, 9, (5,)), {"dtype": torch.int32}),
    (torch.randint, (5,), {"size": (2, 2)}),
]


@pytest.mark.parametrize(("fn", "args", "kwargs"), CALLS)
def test_output_matches_the_meta_call(fn, args, kwargs):
    known = factory_sizes.output(fn, args, kwargs)
    assert known is not None
    meta = fn(*args, **{**kwargs, "device": "meta"})
    assert known == (meta.shape, meta.dtype)


UNKNOWN = [
    (torch.arange, (torch.tensor(3),), {}),  # a size as a tensor
    (torch.arange, (0, 5, 0), {}),  # torch refuses a zero step
    (torch.arange, (5, 0, 1), {}),  # and a step of the wrong sign
    (torch.arange, (0, float("inf")), {}),
    (torch.arange, (3,), {"step": 1}),  # no signature of torch's
    (torch.randn, (2, -1), {}),
    (torch.randn, (2, 3), {"out": None}),
    (torch.linspace, (0, 1, 2.5), {}),
    (torch.eye, (True,), {}),
    (torch.ones, (3,), {}),  # not one of its factories: the meta call is cheap there
    (torch.randint, (1, 2, 3, (4,)), {}),
]


@pytest.mark.parametrize(("fn", "args", "kwargs"), UNKNOWN)
def test_output_leaves_the_rest_to_the_meta_call(fn, args, kwargs):
    assert factory_sizes.output(fn, args, kwargs) is None


def test_a_huge_arange_is_still_refused_before_it_allocates():
    trace = run_program("x = torch.arange(0, 10**12)\n", RunOptions(classic=False))
    assert trace.error is not None and trace.error.kind == "limit"
    assert "would allocate" in trace.error.message


def test_the_lesson_runs_without_importing_sympy_or_dynamo():
    """The point of the module: the lesson's run (torch.arange) stays off torch's Python
    reference path, whose imports cost about 1.7 s in the CLI."""
    code = (
        "import sys\n"
        "from gradviz.program.interpreter.run import run_program\n"
        "from gradviz.program.results.trace import RunOptions\n"
        "from gradviz.program.presets import PRESETS_BY_KEY\n"
        "t = run_program(PRESETS_BY_KEY['lesson'].source, RunOptions(backward='y'))\n"
        "assert t.error is None, t.error\n"
        "print(sorted(m for m in ('sympy', 'torch._dynamo') if m in sys.modules))\n"
    )
    src = Path(__file__).resolve().parents[3] / "src"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "shapes",
    [
        [(3,), (3,)],
        [(2, 1), (3,)],
        [(), (4, 5)],
        [(1, 0), (7, 1)],
        [(5, 1, 4), (3, 1), (1,)],
        [(2, 3), (3, 2)],
        [(0,), (2,)],
        [(1,), (0,)],
    ],
)
def test_broadcast_shape_matches_torch(shapes):
    try:
        expected = torch.broadcast_shapes(*shapes)
    except RuntimeError:
        expected = None
    assert factory_sizes.broadcast_shape(*shapes) == expected
