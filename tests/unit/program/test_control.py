"""The language's functions, control flow, containers and strings: Python's semantics where
a program can see them, and each cap on the language's own work refused at its line and
column, naming the cap, how far the program got and the limit."""

from __future__ import annotations

from gradviz.program.interpreter.run import run_program
from gradviz.program.recording.state import NAMED_LOOP_PASSES
from gradviz.program.results.limits import DEFAULT_LIMITS, PUBLIC_PROGRAM_LIMITS, Limits
from gradviz.program.results.trace import RunOptions, Trace


def run(source: str, **options) -> Trace:
    options.setdefault("simulate_cuda", False)
    return run_program(source, RunOptions(**options))


def printed(source: str, **options) -> list[str]:
    trace = run(source, **options)
    assert trace.error is None, trace.error
    return trace.stdout


def refused(source: str, kind: str, line: int, col: int, *words: str, **options):
    err = run(source, **options).error
    assert err is not None, "expected an error"
    assert (err.kind, err.line, err.col) == (kind, line, col), err
    for w in words:
        assert w in err.message, err.message
    return err


# ---------------------------------------------------------------- caps


def test_public_limits_are_lower_for_the_language_too():
    for cap in (
        "max_steps",
        "max_loop_iterations",
        "max_call_depth",
        "max_container_length",
        "max_total_items",
        "max_string_length",
        "max_total_string_chars",
        "max_seconds",
    ):
        assert getattr(PUBLIC_PROGRAM_LIMITS, cap) < getattr(DEFAULT_LIMITS, cap), cap


def test_step_cap():
    err = refused(
        "total = 0\nfor i in range(50):\n    total = total + i * i\n",
        "limit",
        3,
        13,
        "more than 100 steps",
        "limit of steps",
        limits=Limits(max_steps=100),
    )
    assert "statements, expressions, calls and loop passes" in err.message


def test_loop_cap_counts_every_loop_and_refuses_a_known_length_first():
    refused(
        "for i in range(11):\n    pass\n",
        "limit",
        1,
        10,
        "`range(11)` would run 11 loop passes",
        "limit is 10 loop iterations",
        limits=Limits(max_loop_iterations=10),
    )
    refused(
        "i = 0\nwhile i >= 0:\n    i += 1\n",
        "limit",
        2,
        1,
        "loops ran 11 passes",
        "limit is 10 loop iterations",
        limits=Limits(max_loop_iterations=10),
    )
    refused(
        "for i in range(6):\n    pass\nx = [i for i in range(6)]\n",
        "limit",
        3,
        17,
        "after the 6 passes already run",
        limits=Limits(max_loop_iterations=10),
    )
    refused("s = sum(range(10**10))\n", "limit", 1, 5, "sum() would run 10,000,000,000")


def test_call_depth_cap():
    err = refused(
        "def down(n):\n    return down(n - 1)\nx = down(3)\n",
        "limit",
        2,
        12,
        "calls of `down` are nested 6 deep",
        "the limit is 5 (call depth)",
        limits=Limits(max_call_depth=5),
    )
    assert "recursion" in err.message
    assert printed("def f(n):\n    return 0 if n == 0 else f(n - 1)\nprint(f(5))\n",
                   limits=Limits(max_call_depth=6)) == ["0"]  # fmt: skip


def test_recursion_to_the_default_depth_does_not_exhaust_python():
    deep = "-" * 80 + "n"
    source = (
        "def f(n):\n    if n > 0:\n        for i in [1]:\n            while True:\n"
        f"                return f(n - 1)\n    return {deep}\nprint(f(49))\n"
    )
    assert printed(source) == ["0"]


def test_container_caps():
    small = Limits(max_container_length=100, max_total_items=1_000)
    refused("l = [0] * 101\n", "limit", 1, 5, "list of 101 items", "100 items per", limits=small)
    refused("t = (1,) * 1000\n", "limit", 1, 5, "tuple of 1,000 items", limits=small)
    refused("l = list(range(101))\n", "limit", 1, 5, "list of 101 items", limits=small)
    refused(
        "l = []\nfor i in range(200):\n    l.append(i)\n",
        "limit",
        3,
        5,
        "list of 101 items",
        limits=small,
    )
    refused(
        "d = {}\nfor i in range(200):\n    d[i] = i\n", "limit", 3, 5, "dict of 101", limits=small
    )
    refused(
        "ls = [[0] * 90 for i in range(20)]\n",
        "limit",
        1,
        7,
        "more than 1,000 list, tuple and dict items in all",
        limits=small,
    )


def test_string_caps():
    small = Limits(max_string_length=50, max_total_string_chars=200)
    refused("s = 'ab' * 26\n", "limit", 1, 5, "string of 52 characters", "50", limits=small)
    refused("s = 'a' * 30\nt = s + s\n", "limit", 2, 5, "string of 60", limits=small)
    refused("n = 7\ns = f'{n:60}'\n", "limit", 2, 5, "format width of 60", limits=small)
    refused("s = '%.99f' % 1.5\n", "limit", 1, 5, "format precision of 99", limits=small)
    refused("s = '-'.join(['abcdefghij'] * 6)\n", "limit", 1, 5, "string of 65", limits=small)
    refused(
        "for i in range(10):\n    s = 'x' * 30\n",
        "limit",
        2,
        9,
        "more than 200 characters of strings in all",
        limits=small,
    )


def test_wall_time_cap():
    """The cap stops the loop where the clock passed it: the `while` line (2, 1) or the
    statement inside it (3, 5), whichever was checking at that moment; never an earlier line.
    The tensors are small: a loop of 100x100 products now reaches the 400 MB of allocations
    in all before 0.2 s (a cap of its own, at the product's column)."""
    source = "x = torch.rand(10, 10)\nwhile True:\n    y = x @ x\n"
    err = run(source, limits=Limits(max_seconds=0.2)).error
    assert err is not None and err.kind == "limit", err
    assert (err.line, err.col) in ((2, 1), (3, 5)), err
    assert "ran for more than 0.2 seconds" in err.message and "limit of wall time" in err.message


# ---------------------------------------------------------------- functions


def test_arguments_bind_as_in_python():
    source = (
        "def f(a, b=2, *, c=3):\n    return [a, b, c]\n"
        "print(f(1), f(1, 5), f(b=7, a=0), f(1, c=9))\n"
    )
    assert printed(source) == ["[1, 2, 3] [1, 5, 3] [0, 7, 3] [1, 2, 9]"]
    refused(source + "f()\n", "type", 4, 1, "f() missing 1 required positional argument: 'a'")
    refused(source + "f(1, 2, 3)\n", "type", 4, 1, "takes from 1 to 2 positional arguments but 3")
    refused(source + "f(1, a=2)\n", "type", 4, 1, "multiple values for argument 'a'")
    refused(source + "f(1, d=2)\n", "type", 4, 1, "unexpected keyword argument 'd'")


def test_defaults_are_computed_once_when_defined():
    source = "k = 1\ndef f(x=k):\n    return x\nk = 2\nprint(f())\n"
    assert printed(source) == ["1"]


def test_closures_read_late_and_locals_are_local():
    source = (
        "k = 1\ndef get():\n    return k\nk = 5\nprint(get())\n"
        "def outer():\n    n = 3\n    def inner():\n        return n * 2\n    return inner\n"
        "print(outer()())\n"
    )
    assert printed(source) == ["5", "6"]
    err = refused(
        "k = 1\ndef f():\n    y = k\n    k = 2\n    return y\nf()\n",
        "name",
        3,
        9,
        "`k` is used in `f` before it is assigned",
    )
    assert err.hint


def test_comprehension_variables_do_not_leak():
    assert printed("i = 'kept'\nsq = [i * i for i in range(3)]\nprint(i, sq)\n") == [
        "kept [0, 1, 4]"
    ]


def test_functions_are_values_but_builtins_and_modules_are_not():
    assert printed("def f(x):\n    return x + 1\ng = f\nfs = [f, g]\nprint(fs[1](1), f)\n") == [
        "2 <function f>"
    ]
    refused("p = print\n", "type", 1, 1, "cannot hold")


# ---------------------------------------------------------------- control flow and the graph


def test_break_continue_and_else():
    source = (
        "out = []\nfor i in range(10):\n    if i % 2:\n        continue\n    if i > 6:\n"
        "        break\n    out.append(i)\nelse:\n    out.append('no break')\n"
        "n = 0\nwhile n < 3:\n    n += 1\nelse:\n    out.append(n)\nprint(out)\n"
    )
    assert printed(source) == ["[0, 2, 4, 6, 3]"]


def test_truth_of_a_tensor_with_many_values_is_pytorchs_error():
    err = refused("x = torch.ones(3)\nif x > 0:\n    pass\n", "runtime", 2, 4)
    assert "more than one value is ambiguous" in err.message


def test_a_loops_tensors_are_named_with_their_pass():
    source = "x = torch.ones(2, requires_grad=True)\nfor i in range(30):\n    x = x * 1.01\n"
    labels = [t.label for t in run(source).tensors if t.name == "x"]
    passes = [f"x[{i}]" for i in range(NAMED_LOOP_PASSES)]
    assert labels == ["x·L1", *passes, "x[29]"]  # the first passes, then the latest only


def test_nested_loops_name_every_level():
    source = "for i in range(2):\n    for j in range(2):\n        t = torch.ones(1) * (i + j)\n"
    labels = [t.label for t in run(source).tensors]
    assert labels == ["t[0,0]", "t[0,1]", "t[1,0]", "t[1,1]"]


def test_gradient_check_refuses_leaves_made_in_a_loop():
    from gradviz.program.gradcheck import check_gradients

    source = "for i in range(2):\n    w = torch.ones(2, requires_grad=True)\ny = (w * 2).sum()\n"
    result = check_gradients(source, "y", {})
    assert not result.ok and "more than once on the same line" in result.message


# ---------------------------------------------------------------- imports


def test_imports_bind_what_is_there():
    source = (
        "import torch.nn as nn\nimport torch.nn.functional as F\nimport torch.optim as optim\n"
        "from torch import nn as layers\nimport math\n"
        "y = nn.functional.relu(torch.tensor([-1.0, 2.0]))\n"
        "print(y, math.pi > 3, layers, optim)\n"
    )
    assert printed(source) == ["tensor([0., 2.]) True <module torch.nn> <module torch.optim>"]
    # torch.optim is filled now (gradviz.program.objects.optimizers): PyTorch's own error for no
    # parameters, and a refusal, at its line and column, for an optimizer not in the table
    refused("import torch.optim as optim\nopt = optim.Adam([])\n", "runtime", 2, 7, "empty")
    refused("import torch.optim as optim\nopt = optim.LBFGS([])\n", "name", 2, 7, "not available")


# ---------------------------------------------------------------- strings


def test_format_specs_and_percent_match_python():
    cases = {
        "f'{3.14159:8.3f}|{42:>5d}|{7:08b}|{1234567:,}|{0.25:.1%}'": None,
        "'%5s|%-5s|%05.1f|%x|%c|%%' % ('a', 'b', 2.5, 255, 65)": None,
        "'%(name)s=%(v).2e' % {'name': 'lr', 'v': 0.001}": None,
        "f'{\"x\"!r} {1 + 1 = }'": None,
    }
    for expr in cases:
        assert printed(f"print({expr})\n") == [eval(expr)], expr  # trusted test text
    refused("s = '%d %d' % (1,)\n", "runtime", 1, 5, "not enough arguments")
    refused("s = '%d' % (1, 2)\n", "runtime", 1, 5, "not all arguments converted")
    refused("s = f'{[1]:>4}'\n", "type", 1, 5, "applies to numbers")


def test_tensors_format_as_python_formats_them():
    # CPython with torch 2.14.1 prints "2.50 2.5 2.5": Tensor.__format__ formats a one-value
    # tensor as its number, with or without a spec (print(t) is "tensor(2.5000)")
    assert printed("t = torch.tensor(2.5)\nprint(f'{t:.2f} {t}', '%.1f' % t, t)\n") == [
        "2.50 2.5 2.5 tensor(2.5000)"
    ]


# ------------------------------------------- objects made and comparisons done for a program


def test_tensors_in_lists_compare_as_in_python_under_the_caps():
    out = printed(
        "t = torch.ones(2)\nu = torch.tensor(1.0)\nv = torch.tensor(3.0)\n"
        "print([t] == [t], t in [t], [u, v].count(v), [u, v].index(v), (u,) != (v,))\n"
        "print(max([u, v]).item(), min([[v], [u]])[0].item(), max([3, 1, 2]), min((1, 2), (0, 5)))\n"
        "l = [u, v]\nl.remove(u)\nprint(len(l), u in range(3))\n"
    )
    assert out == ["True True 1 1 True", "3.0 1.0 3 (0, 5)", "1 True"]


def test_a_comparison_inside_lists_is_sized_first():
    crossed = "a = torch.zeros(30000, 1)\nb = torch.zeros(1, 30000)\n"
    refused(crossed + "s = [a] == [b]", "limit", 3, 5, "would allocate", "30000x30000")
    refused(crossed + "f = a in [b]", "limit", 3, 5, "would allocate")
    refused(crossed + "m = max([a, b])", "limit", 3, 5, "would allocate")
    refused(crossed + "s = sorted([[a], [b]])", "type", 3, 5, "sorting compares")
    # a tensor looked for in a tensor: Tensor.__contains__ broadcasts (a == b).any()
    refused(crossed + "f = a in b", "limit", 3, 5, "would allocate", "30000x30000")
    assert printed(
        "x = torch.tensor([1., 2.])\nprint(2.0 in x, 5.0 in x, torch.tensor(1.) in x)\n"
    ) == ["True False True"]


def test_pieces_and_lists_of_a_tensor_count_as_items():
    src = "x = torch.arange(24.0).reshape(2, 3, 4)\n"
    src += "print(len(x.unbind(1)), len(x.split([1, 2], dim=1)), len(torch.chunk(x, 10)))\n"
    assert printed(src + "print(len(x.tolist()), len(x.numpy()[0]))") == ["3 2 2", "2 3"]
    empty = "x = torch.zeros(10**7, 0)\n"
    refused(empty + "p = x.unbind()", "limit", 2, 5, "tuple (.unbind()) of 10,000,000 items")
    refused(empty + "p = x.chunk(10**6)", "limit", 2, 5, "1,000,000 items")
    refused(empty + "p = x.tolist()", "limit", 2, 5, "list of lists")
    # sizes by keyword or as tensors are read as torch reads them
    refused(empty + "p = x.split(split_size=1)", "limit", 2, 5, "10,000,000 items")
    refused(empty + "p = x.chunk(torch.tensor(10**7))", "limit", 2, 5, "10,000,000 items")
    few = PUBLIC_PROGRAM_LIMITS
    refused("x = torch.zeros(20000, 0)\np = x.unbind()", "limit", 2, 5, "10,000 items", limits=few)
