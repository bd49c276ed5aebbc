"""`del`, `global` and `nonlocal`: what CPython prints for the same program, and its errors
in Python's words at their line and column."""

from __future__ import annotations

import pytest

from tests.same_as_python import printed, python_printed, refused


def python_error(source: str) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - any of Python's errors
        python_printed(source)
    return str(info.value)


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


DECLARATIONS = [
    "count = 0\ndef bump():\n    global count\n    count += 1\nbump()\nbump()\nprint(count)\n",
    "def make():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n        return n\n"
    "    return inc\nc = make()\nc()\nprint(c(), c())\nd = make()\nprint(d(), c())\n",
    "def f():\n    global made\n    made = 5\nf()\nprint(made)\n",
    "x = 1\ndef f():\n    x = 2\n    def g():\n        global x\n        x = 3\n    g()\n    return x\n"
    "print(f(), x)\n",
    "def outer():\n    x = 1\n    def mid():\n        nonlocal x\n        def inner():\n"
    "            nonlocal x\n            x = x * 10\n        inner()\n        x += 1\n"
    "    mid()\n    return x\nprint(outer())\n",
    "def f():\n    global total\n    total = [t * 2 for t in range(3)]\n    return sum(total)\n"
    "print(f(), total)\n",
    "items = []\ndef add(v):\n    global items\n    items = items + [v]\nadd(1)\nadd(2)\nprint(items)\n",
    "x = 1\ndef f():\n    global x\n    del x\nf()\nx = 2\nprint(x)\n",
    "import torch\nw = torch.ones(2)\ndef step():\n    global w\n    w = w * 2\nstep()\nprint(w)\n",
]


@pytest.mark.parametrize("source", DECLARATIONS)
def test_global_and_nonlocal_do_what_python_does(source):
    assert printed(source) == python_printed(source)


COMPILER_REFUSALS = [
    ("nonlocal x\n", 1, 1),
    ("def f():\n    nonlocal x\n", 2, 5),
    ("x = 1\ndef f():\n    global x\n    def g():\n        nonlocal x\n", 5, 9),
    ("def f():\n    x = 1\n    global x\n", 3, 5),
    ("def f():\n    print(x)\n    global x\n", 3, 5),
    ("def f(x):\n    global x\n", 2, 5),
    ("def f():\n    x = 1\n    def g():\n        global x\n        nonlocal x\n", 5, 9),
]


@pytest.mark.parametrize(("source", "line", "col"), COMPILER_REFUSALS)
def test_what_pythons_compiler_refuses_is_refused_in_its_words(source, line, col):
    with pytest.raises(SyntaxError) as info:
        compile(source, "<test>", "exec")
    refused(source, "syntax", line, col, info.value.msg)


def test_a_global_never_read_before_it_is_bound_says_so():
    refused("def f():\n    global late\n    return late\nf()\n", "name", 3, 12, "`late`")
