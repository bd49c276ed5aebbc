"""`*args` and `**kwargs` in a program's own functions, `*xs` and `**options` in calls and
displays, starred assignment targets: what CPython prints for the same program, its error
words, and the item caps on what a `*` unpacks."""

from __future__ import annotations

import pytest

from gradviz.program.results.limits import Limits
from tests.same_as_python import printed, python_printed, refused


def python_error(source: str) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - any of Python's errors
        python_printed(source)
    return str(info.value)


SAME_AS_PYTHON = [
    # a program's own functions
    "def f(a, *args, b=2, **kw):\n    print(a, args, b, kw)\n"
    "f(1)\nf(1, 2, 3, b=4, c=5)\nf(*[1, 2], **{'b': 3, 'z': 1})\nf(b=0, **{'a': 9})\n",
    "g = lambda *a, **k: (a, k)\nprint(g(), g(1, k=2), g(*'ab', **{'x': 1}))\n",
    "def total(*xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"
    "print(total(), total(1, 2), total(*range(5)), total(*[1], 2, *(3, 4)))\n",
    "def f(a, /, **kw):\n    return a, kw\nprint(f(1, a=2))\n",
    "def outer(*args, **kwargs):\n    return inner(*args, **kwargs)\n"
    "def inner(x, y=0, *, z=1):\n    return x + y + z\nprint(outer(1), outer(1, 2, z=3))\n",
    # built-ins, torch functions, methods and layers
    "xs = [3, 1, 2]\nprint(*xs)\nprint(*xs, **{'sep': '+'})\nprint(max(*xs), min(*xs, 0))\n",
    "shape = (2, 3)\nx = torch.ones(*shape)\nprint(x.shape, x.view(*reversed(shape)).shape)\n"
    "print(x.reshape(*x.shape[::-1]).shape, torch.zeros(**{'size': (1, 2)}).shape)\n",
    "x = torch.arange(6.0).reshape(2, 3)\nprint(x[*[0, 1]])\nr, *others = x\nprint(r, others)\n",
    "lin = torch.nn.Linear(*[3, 2], **{'bias': False})\nprint(lin.weight.shape)\n"
    "print(lin(*[torch.ones(3)]).shape)\n",
    # displays
    "a = [1, 2]\nprint([*a, *range(2)], (*a,), (*a, 3), {*a, 5}, {**{'k': 1}, 'j': 2, **{'k': 3}})\n",
    # starred targets
    "a, *rest = [1, 2, 3]\n*init, last = range(4)\nh, *m, t = 'xy'\nprint(a, rest, init, last, h, m, t)\n"
    "for first, *more in [(1, 2, 3), (4,)]:\n    print(first, more)\n"
    "print([t for h, *t in [(1, 2), (3, 4, 5)]])\n(p, *q), s = (1, 2), 3\nprint(p, q, s)\n",
]


@pytest.mark.parametrize("source", SAME_AS_PYTHON)
def test_prints_what_python_prints(source):
    assert printed(source) == python_printed(source)


ERRORS_AS_PYTHON = [
    ("def f(a, b):\n    return a\nf(1, 2, 3)\n", 3, 1),
    ("def f(a, b=1):\n    return a\nf(1, 2, 3)\n", 3, 1),
    ("def f():\n    return 1\nf(1)\n", 3, 1),
    ("def f(a):\n    return a\nf(a=1, **{'a': 2})\n", 3, 8),
    ("def f(a, **kw):\n    return a\nf(1, **{'a': 2})\n", 3, 1),
    ("def f(a):\n    return a\nf(**{'b': 2})\n", 3, 1),
    ("a, *b, c = [1]\n", 1, 1),
    ("def f(a, b, c, *, k, j):\n    return a\nf()\n", 3, 1),
    ("def f(a, b, c=1, *, k, j):\n    return a\nf(1)\n", 3, 1),
    ("def f(a, b=1, *, k, j, i=2):\n    return a\nf(1, k=0)\n", 3, 1),
    ("def f(a, b=1, *, k, j, i=2):\n    return a\nf(1)\n", 3, 1),
]


@pytest.mark.parametrize(("source", "line", "col"), ERRORS_AS_PYTHON)
def test_errors_in_python_words(source, line, col):
    refused(source, "type", line, col, python_error(source))


def test_not_iterable_and_not_a_mapping():
    refused("print(*5)\n", "type", 1, 7, "argument after * must be an iterable, not int")
    refused("print(**[1])\n", "type", 1, 7, "argument after ** must be a mapping, not list")
    refused("d = {**[1]}\n", "type", 1, 8, "'list' object is not a mapping")
    refused("print(**{1: 2})\n", "type", 1, 7, "keywords must be strings")


def test_keywords_a_double_star_brings_are_checked_as_written_ones():
    refused("f = lambda **k: k\nf(**{'__class__': 1})\n", "forbidden", 2, 3, "underscore")
    refused("print(**{'a b': 1})\n", "forbidden", 1, 7, "not a Python name")
    refused("x = torch.ones(2)\ny = torch.add(x, x, **{'out': x})\n", "forbidden", 2, 21, "out=")


def test_a_star_is_counted_against_the_item_caps_before_it_is_read():
    refused("print(*range(10**9))\n", "limit", 1, 7, "1,000,000,000 items", "limit is 100,000")
    refused("a, *b = range(10**9)\n", "limit", 1, 1, "999,999,999 items")
    refused("y = [*range(10**9)]\n", "limit", 1, 6, "1,000,000,000 items")
    refused(
        "xs = list(range(600))\ny = [*xs, *xs]\n",
        "limit",
        2,
        11,
        "1,200 items",
        limits=Limits(max_container_length=1000),
    )


def test_recursion_through_star_args_stops_at_the_call_depth_cap():
    refused(
        "def f(*a):\n    return f(*a, 1)\nf()\n", "limit", 2, 12, "nested 51 deep", "call depth"
    )


def test_raise_takes_star_arguments_as_python_does():
    source = "why = ['bad', 2]\nraise ValueError(*why)\n"
    refused(source, "runtime", 2, 1, "ValueError: " + python_error(source))
