"""The interpreter's fast paths (a plain name bound as it is, `xs.append(x)`, displays and
calls without `*x`, a list's or dict's item, steps and the clock counted inline) keep
Python's semantics and every cap: the same output, the same steps counted (a cap hit at the
same step, line and column as the general paths gave) and the same refusals."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import random

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions, Trace

LOOP = """\
xs = []
ctx = [0, 0, 0]
d = {'a': 1}
for ch in 'abcab':
    xs.append(ctx)
    ctx = ctx[1:] + [d.get(ch, 2)]
    t = (ch, len(xs))
print(len(xs), ctx, t)
"""
CALLS = """\
total = 0
def add(n):
    global total
    total = total + n
    return [total, (n,)]
for i in range(4):
    r = add(i)
print(total, r)
"""


def run(source: str, **caps) -> Trace:
    limits = dataclasses.replace(DEFAULT_LIMITS, **caps)
    return run_program(source, RunOptions(simulate_cuda=False, limits=limits))


def python_prints(source: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, {})  # the test's own program text, never a user's
    return out.getvalue().splitlines()


@pytest.mark.parametrize(("source", "steps"), [(LOOP, 126), (CALLS, 76)])
def test_a_run_counts_the_steps_it_counted_before(source, steps):
    # the step counts of the general paths (each expression, statement, call and pass)
    assert run(source, max_steps=steps).error is None
    err = run(source, max_steps=steps - 1).error
    assert err is not None and err.kind == "limit"
    assert f"more than {steps - 1:,} steps" in err.message
    assert (err.line, err.col) == (8, 1)


@pytest.mark.parametrize(
    ("source", "steps", "line", "col"),
    [(LOOP, 100, 5, 15), (LOOP, 57, 5, 5), (CALLS, 50, 5, 5), (CALLS, 33, 4, 21)],
)
def test_the_step_cap_stops_a_loop_where_it_did(source, steps, line, col):
    err = run(source, max_steps=steps).error
    assert err is not None and (err.kind, err.line, err.col) == ("limit", line, col), err


@pytest.mark.parametrize("source", [LOOP, CALLS])
def test_fast_paths_print_what_python_prints(source):
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.stdout == python_prints(source)


def test_names_rebound_in_loops_and_scopes_as_python_binds_them():
    source = """\
import torch
x = 1
for i in range(3):
    x = [x]
    y = x
print(x, y is x)
x = torch.ones(2)
print(x.sum().item())
def outer():
    n = 0
    def inner():
        nonlocal n
        n = n + 1
        return n
    for _ in range(3):
        inner()
    return n
print(outer())
k = 'a'
for k in range(2):
    pass
print(k)
"""
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.stdout == ["[[[1]]] True", "2.0", "3", "1"]
    assert [b.name for b in trace.tensors if b.name == "x"], "the tensor is still named"


def test_a_name_bound_as_it_is_is_still_refused_a_module():
    err = run("import math\nm = math\n").error
    assert err is not None and (err.kind, err.line) == ("type", 2)
    assert "cannot hold a module or a function" in err.message


def test_append_is_held_and_sized_as_before():
    err = run("xs = []\nxs.append(len)\n").error
    assert err is not None and (err.kind, err.line, err.col) == ("type", 2, 1), err
    assert "a list cannot hold" in err.message
    err = run("xs = []\nfor i in range(5):\n    xs.append(i)\n", max_container_length=3).error
    assert err is not None and (err.kind, err.line, err.col) == ("limit", 3, 5), err
    assert "a list of 4 items" in err.message
    err = run("xs = [1]\nfor i in range(5):\n    xs.append(xs)\n", max_total_items=4).error
    assert err is not None and (err.kind, err.line) == ("limit", 3), err
    # a method of another name, or append with other arguments, goes the general way
    err = run("xs = []\nxs.append(1, 2)\n").error
    assert err is not None and err.kind == "runtime" and "TypeError" in err.message


def test_displays_hold_their_items_as_before():
    err = run("xs = [1, len]\n").error
    assert err is not None and (err.kind, err.line, err.col) == ("type", 1, 10), err
    trace = run("kinds = (int, float)\nprint(isinstance(1.5, kinds), [*range(3), 3], (*'ab',))\n")
    assert trace.error is None, trace.error
    assert trace.stdout == ["True [0, 1, 2, 3] ('a', 'b')"]
    err = run("xs = [1, 2, 3]\n", max_container_length=2).error
    assert err is not None and (err.kind, err.line) == ("limit", 1), err


def test_a_slice_of_a_list_is_counted_as_items():
    source = "xs = list(range(10))\nfor i in range(3):\n    ys = xs[1:]\n"
    assert run(source, max_total_items=37).error is None
    err = run(source, max_total_items=36).error
    assert err is not None and (err.kind, err.line, err.col) == ("limit", 3, 10), err


@pytest.mark.parametrize(
    ("call", "kind", "words"),
    [
        ("random.randint(5, 2)", "runtime", "empty range for randrange()"),
        ("random.choice([])", "runtime", "Cannot choose from an empty sequence"),
        ("random.shuffle((1, 2))", "runtime", "shuffles a list in place, not a tuple"),
        ("random.choice([nn.Linear(2, 2)])", "type", "takes tensors and numbers, not a"),
        ("random.choice(torch.ones(3))", "runtime", "not a Tensor"),
        ("random.randint(1, 2.5)", "runtime", "non-integer stop for randrange()"),
    ],
)
@pytest.mark.parametrize("simulate_cuda", [False, True])
def test_pythons_random_on_plain_values_is_refused_as_the_library_refused_it(
    call, kind, words, simulate_cuda
):
    source = f"import random\nimport torch\nimport torch.nn as nn\n{call}\n"
    trace = run_program(source, RunOptions(simulate_cuda=simulate_cuda))
    err = trace.error
    assert err is not None and (err.kind, err.line, err.col) == (kind, 4, 1), err
    assert words in err.message


def test_pythons_random_on_plain_values_gives_what_python_gives():
    source = """\
import random
random.seed(3)
xs = list(range(10))
random.shuffle(xs)
f = random.choice
print(random.random(), random.choice('abc'), random.randint(1, 9), random.uniform(0, 1))
print(xs, random.sample(xs, k=3), random.gauss(0, 1), f('xyz'), random.randrange(5))
"""
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.stdout == python_prints(source)


def test_a_def_run_again_makes_a_function_of_its_own_each_time():
    # what a def's body declares and assigns is read once per def, its defaults and
    # closure at each run of it
    source = """\
fs = []
for i in range(3):
    def f(x, i=i):
        y = x + i
        return y
    fs.append(f)
print([g(10) for g in fs])
def counter():
    n = 0
    def step():
        nonlocal n
        n = n + 1
        return n
    return step
a, b = counter(), counter()
print(a(), a(), b())
def gen(k):
    for j in range(k):
        yield j
print([list(gen(2)) for _ in range(2)])
"""
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.stdout == python_prints(source)


TENSOR_OPERATORS = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
w = nn.Parameter(torch.ones(2, 2))
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
ys = []
for k in range(3):
    y = w @ x + x * 2 - 1.5 / x + (k ** 2) * w + True * x
    ys.append(y)
    z = 2 ** x
loss = (y.sum() + z.sum())
loss.backward()
print(y, z)
print(x.grad, w.grad)
"""


def test_operators_on_tensors_and_numbers_give_what_python_gives():
    # tensors, parameters and numbers on either side: the fast path of an operator
    trace = run(TENSOR_OPERATORS)
    assert trace.error is None, trace.error
    assert "\n".join(trace.stdout).splitlines() == python_prints(TENSOR_OPERATORS)
    assert {"y", "z", "loss"} <= {t.name for t in trace.tensors}


@pytest.mark.parametrize(
    ("source", "col", "words"),
    [
        ("import torch\nx = torch.ones(2)\ny = x + torch.ones(3)\n", 5, "size of tensor a (2)"),
        ("import torch\nx = torch.ones(2)\ny = x + 'a'\n", 5, "works on tensors and numbers"),
        ("import torch\nx = torch.ones(2)\ny = [1] * x\n", 5, "works on tensors and numbers"),
    ],
)
def test_operators_on_tensors_are_refused_as_before(source, col, words):
    err = run(source).error
    assert err is not None and (err.line, err.col) == (3, col), err
    assert words in err.message


def test_an_operator_on_big_tensors_is_refused_before_it_runs():
    source = "import torch\nx = torch.ones(1000, 1)\ny = torch.ones(1, 1000)\nz = x * y\n"
    err = run(source, max_tensor_elements=100_000).error
    assert err is not None and (err.kind, err.line) == ("limit", 4), err


def test_a_tensor_bound_in_a_loop_is_named_at_its_line_each_pass():
    source = "import torch\nx = torch.ones(2, requires_grad=True)\nfor i in range(3):\n    y = x * i\n    x2 = y.detach()\n"
    trace = run(source)
    assert trace.error is None, trace.error
    ys = [t for t in trace.tensors if t.name == "y"]
    assert [(t.line, t.expr, t.grad_fn) for t in ys] == [(4, "x * i", "MulBackward0")] * 3
    cut = [t for t in trace.tensors if t.name == "x2"]
    assert [(t.expr, t.grad_fn) for t in cut] == [("y.detach()", None)] * 3


@pytest.mark.parametrize(
    ("call", "words"),
    [
        ("f(1)", "f() missing 1 required positional argument: 'b'"),
        ("f(1, 2, 3)", "f() takes 2 positional arguments but 3 were given"),
        ("f(1, b=2, a=3)", "f() got multiple values for argument 'a'"),
    ],
)
def test_a_call_of_a_plain_function_binds_as_python_binds(call, words):
    source = f"def f(a, b):\n    return a - b\nprint(f(5, 2), f(b=1, a=4))\nr = {call}\n"
    trace = run(source)
    assert trace.stdout == ["3 3"]
    assert trace.error is not None and words in trace.error.message, trace.error


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
def test_pythons_random_running_out_of_resources_is_a_limit_as_a_torch_call_is(monkeypatch, error):
    def exhausted(*args, **kwargs):
        raise error()

    monkeypatch.setattr(random.Random, "randint", exhausted)
    trace = run_program("import random\nx = random.randint(1, 2)\n", RunOptions())
    err = trace.error
    assert err is not None and (err.kind, err.line, err.col) == ("limit", 2, 5), err
    assert err.message == f"random.randint ran out of resources ({error.__name__})"
