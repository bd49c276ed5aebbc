"""Smaller pieces of the next lessons: `raise` of Python's exceptions (the program ends with
Python's words at that line), torch.optim.RMSprop and Adagrad, and a one-value tensor in an
f-string formatted as its number, as Tensor.__format__ does."""

from __future__ import annotations

import pytest
from test_tutorials import python_run, same_as_python

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions


def run(source: str):
    return run_program(source, RunOptions(classic=False))


@pytest.mark.parametrize(
    ("source", "line", "col", "message"),
    [
        ("x = 1\nif x > 0:\n    raise ValueError('x must be negative')\n", 3, 5,
         "ValueError: x must be negative"),
        ("raise NotImplementedError\n", 1, 1, "NotImplementedError"),
        ("raise KeyError('k')\n", 1, 1, "KeyError: 'k'"),
        ("raise ValueError('a', 2)\n", 1, 1, "ValueError: ('a', 2)"),
        ("def f(x):\n    if x < 0:\n        raise ValueError(f'negative: {x}')\n    return x\n"
         "y = f(2)\nz = f(-1)\n", 3, 9, "ValueError: negative: -1"),
    ],
)  # fmt: skip
def test_raise_ends_the_program_with_pythons_words_at_its_line(source, line, col, message):
    err = run(source).error
    assert err is not None and err.kind == "runtime"
    assert (err.line, err.col, err.message) == (line, col, message)
    assert err.details.exception == message.split(":")[0]


@pytest.mark.parametrize(
    "source",
    [
        "raise print('x')\n",
        "raise ValueError('x') from None\n",
        "raise SystemExit(0)\n",
        "raise ValueError(msg='x')\n",
        "raise KeyboardInterrupt\n",
    ],
)
def test_other_raises_are_refused_with_what_may_be_raised(source):
    err = run(source).error
    assert err is not None and err.kind == "forbidden" and (err.line, err.col) == (1, 1)
    assert "raise ValueError" in err.message and "RuntimeError" in err.message


def test_a_long_raised_message_is_cut_not_a_crash():
    err = run("s = 'a' * 9000\nraise ValueError(s + s)\n").error
    assert err is not None and err.line == 2 and err.kind in ("runtime", "limit")


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad"])
def test_more_optimizers_step_as_pytorchs(name):
    same_as_python(
        "torch.manual_seed(0)\n"
        "w = torch.randn(3, requires_grad=True)\n"
        f"opt = torch.optim.{name}([w], lr=0.1)\n"
        "for i in range(3):\n"
        "    opt.zero_grad()\n"
        "    loss = (w ** 2).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "print(w)\n",
        ("w",),
    )


def test_a_one_value_tensor_in_an_f_string_is_its_number():
    same_as_python(
        "t = torch.tensor(3.107043981552124)\n"
        "i = torch.tensor(7)\n"
        "print(f'{t}', f'{i}', f'{t:.2f}', f'{t!s}', t)\n"
        "v = torch.tensor([1.5, 2.5])\n"
        "print(f'{v}')\n"
    )


def test_torch_functions_and_classes_kept_as_values_are_called_as_if_named():
    """`loss_func = F.cross_entropy` ("What is torch.nn really?"), `zeros = torch.zeros`, a
    list of activations: 10 of 29 copied tutorials kept a torch function in a variable."""
    trace = same_as_python(
        "torch.manual_seed(0)\n"
        "loss_func = F.cross_entropy\n"
        "zeros = torch.zeros\n"
        "acts = [F.relu, torch.tanh]\n"
        "x = torch.randn(2, 3)\n"
        "y = torch.tensor([0, 1])\n"
        "l = loss_func(x, y)\n"
        "z = zeros(2, 2)\n"
        "h = [a(x) for a in acts]\n"
        "print(l, z.shape, len(h), h[1].shape)\n",
        ("l",),
    )
    assert trace.tensor("l").requires_grad is False
    layer = run("make = nn.Linear\nlin = make(3, 4)\nout = lin(torch.randn(2, 3))\n")
    assert layer.error is None and layer.tensor("out").shape == [2, 4]


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        ("f = torch.zeros\ng = f.__call__", "forbidden", "underscore"),
        ("f = torch.zeros\nt = f(10**6, 10**6)", "limit", "would allocate"),
        ("f = F.relu\ng = f.target", "type", "no attribute"),
        ("f = torch.no_grad\n", "type", "is a function: call it"),
        ("f = torch.manual_seed\n", "type", "is a function: call it"),
    ],
)
def test_a_kept_function_is_only_called(source, kind, words):
    err = run(source).error
    assert err is not None and err.kind == kind and words in err.message, err


RANDOM = """import random
random.seed(42)
print(random.random(), random.randint(1, 10), random.uniform(0, 1))
xs = list(range(10))
random.shuffle(xs)
print(xs, random.choice('abc'), random.sample(range(100), 3), round(random.gauss(0, 1), 6))
"""


def test_random_seeded_prints_what_cpython_prints():
    same_as_python(RANDOM)


def test_random_unseeded_is_the_runs_own_and_repeatable():
    source = "import random\nprint(random.random())\n"
    first, again = run(source), run(source)
    assert first.error is None and first.stdout == again.stdout


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        (
            "import random\nx = random.sample(list(range(50000)), 10**6)",
            "runtime",
            "items per list",
        ),
        ("import random\nrandom.shuffle((1, 2))", "runtime", "in place"),
        ("import random\nr = random.Random(1)", "name", "random.Random"),
        ("import random\nrandom.seed([1])", "runtime", "int, a float or a str"),
        ("import random\ns = random.getstate()", "name", "getstate"),
        ("import random\ng = random._inst", "forbidden", "underscore"),
    ],
)
def test_random_keeps_to_its_table(source, kind, words):
    err = run(source).error
    assert err is not None and err.kind == kind and words in err.message, err


def test_data_updates_as_zero_to_hero_writes_them_and_in_place_bitwise():
    """`W.data += -0.1 * W.grad` (Karpathy's zero-to-hero), `p.data -= ...` over parameters,
    and `|=` on masks and sets (which once stopped the interpreter with a KeyError)."""
    same_as_python(
        "torch.manual_seed(0)\n"
        "W = torch.randn(3, requires_grad=True)\n"
        "for k in range(3):\n"
        "    loss = (W ** 2).sum()\n"
        "    W.grad = None\n"
        "    loss.backward()\n"
        "    W.data += -0.1 * W.grad\n"
        "net = torch.nn.Linear(2, 1)\n"
        "for p in net.parameters():\n"
        "    p.data -= 0.01 * torch.ones_like(p)\n"
        "m = torch.tensor([True, False])\n"
        "m |= torch.tensor([False, True])\n"
        "m &= torch.tensor([True, True])\n"
        "s = {1}\n"
        "s |= {2}\n"
        "print(W, m, s, net.weight.shape)\n",
        ("W",),
    )


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        ("x = torch.ones(2)\nx.__dict__.data += 1", "forbidden", "underscore"),
        ("x = 1\nx.data += 1", "type", "no attribute `.data`"),
        ("x = torch.ones(2)\nx.grad += 1", "type", "works on `t.data`"),
        ("x = torch.ones(2)\nx.data += torch.ones(10**5, 10**5)", "limit", "would allocate"),
    ],
)
def test_data_updates_keep_the_rules(source, kind, words):
    err = run(source).error
    assert err is not None and err.kind == kind and words in err.message, err


def test_a_state_dict_prints_as_pytorchs_ordered_dict():
    """print(net.state_dict()) showed an internal object's address."""
    source = (
        "torch.manual_seed(0)\n"
        "net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))\n"
        "print(net.state_dict())\n"
        "print(len(net.state_dict()), list(net.state_dict().keys()))\n"
    )
    trace = run_program(source, RunOptions(classic=False, simulate_cuda=False))
    assert trace.error is None, trace.error
    printed, _ = python_run(source)
    assert "\n".join(trace.stdout).splitlines() == printed  # a tensor prints on several lines
