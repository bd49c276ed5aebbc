"""The caps the interpreter's hottest paths count inline (statements per run, loop passes,
items of lists grown by append, `+`, slices and displays, an integer's bits on `+` and `-`)
still stop a program at the same statement, with the same message, as the caps' own
methods do, and at the same count: one item or pass fewer than a program needs refuses it."""

from __future__ import annotations

import dataclasses

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions, Trace


def run(source: str, **caps) -> Trace:
    limits = dataclasses.replace(DEFAULT_LIMITS, **caps)
    return run_program(source, RunOptions(simulate_cuda=False, limits=limits))


def refused(source: str, **caps):
    err = run(source, **caps).error
    assert err is not None and err.kind == "limit", err
    return err


STATEMENTS = """\
n = 0
for i in range(5):
    n = n + i
    m = n
print(n)
"""


def test_the_statement_cap_stops_the_statement_past_it():
    # 1 + 1 (the loop) + 5 * 2 + 1 (print) statements
    assert run(STATEMENTS, max_statements=13).error is None
    err = refused(STATEMENTS, max_statements=12)
    assert (err.line, err.col) == (5, 1)
    assert "more than 12 statements ran" in err.message
    err = refused(STATEMENTS, max_statements=5)  # the first `m = n`'s second pass
    assert (err.line, err.col) == (4, 5)
    assert "more than 5 statements ran" in err.message


LOOPS = """\
total = 0
for i in range(3):
    for j in range(3):
        total = total + j
k = 0
while k < 4:
    k = k + 1
print(total, k)
"""


def test_the_loop_cap_stops_the_pass_past_it_in_for_and_while():
    # 3 + 9 passes of the two `for` loops, then 4 of the `while`
    assert run(LOOPS, max_loop_iterations=16).error is None
    err = refused(LOOPS, max_loop_iterations=15)
    assert (err.line, err.col) == (6, 1)
    assert "loops ran 16 passes in all by this line; the limit is 15" in err.message
    source = """\
def forever():
    while True:
        yield 1
n = 0
for x in forever():
    n = n + x
"""
    # passes of unknown number: the loop's and the generator's own `while`, one each in turn
    err = refused(source, max_loop_iterations=7)
    assert (err.line, err.col) == (5, 1)
    assert "loops ran 8 passes in all by this line; the limit is 7" in err.message


def test_a_loop_pass_counts_one_step_as_before():
    source = "for i in range(4):\n    pass\n"
    # the loop statement, its iterable's call and two steps of it, then 4 * (pass + statement)
    steps = 1 + 3 + 4 * 2
    assert run(source, max_steps=steps).error is None
    err = refused(source, max_steps=steps - 1)
    assert (err.line, err.col) == (2, 5)  # the last pass's statement


@pytest.mark.parametrize(
    ("source", "needed", "line", "col", "words"),
    [
        # xs.append: 5 items of the list, one at a time (1 of the display)
        ("xs = [0]\nfor i in range(4):\n    xs.append(i)\n", 5, 3, 5, "list"),
        # a[1:] + [b]: 3 of the display, then 2 + 1 + 3 per line
        ("c = [0, 0, 0]\nc = c[1:] + [1]\nc = c[1:] + [2]\n", 15, 3, 5, "list"),
        # a slice: 2 of the display, then 1 per slice
        ("c = [1, 2]\nfor i in range(3):\n    d = c[1:]\n", 5, 3, 9, "list"),
        # a tuple display
        ("for i in range(3):\n    t = (i, i)\n", 6, 2, 9, "tuple"),
    ],
)
def test_the_total_items_cap_stops_the_item_past_it(source, needed, line, col, words):
    assert run(source, max_total_items=needed).error is None
    err = refused(source, max_total_items=needed - 1)
    assert (err.line, err.col) == (line, col), err
    assert f"more than {needed - 1:,} list, tuple and dict items in all" in err.message


@pytest.mark.parametrize(
    ("source", "length", "line", "col", "what"),
    [
        ("xs = []\nfor i in range(5):\n    xs.append(i)\n", 4, 3, 5, "list"),
        ("c = [0, 0]\nc = c + [1]\nc = c + c\n", 6, 3, 5, "list"),
        ("c = [1, 2, 3, 4, 5]\nd = c[1:]\n", 5, 1, 5, "list"),
        ("t = (1,)\nt = (1, 2)\n", 2, 2, 5, "tuple"),
    ],
)
def test_the_length_cap_stops_the_container_past_it(source, length, line, col, what):
    err = refused(source, max_container_length=length - 1)
    assert (err.line, err.col) == (line, col), err
    assert f"this would make a {what} of {length:,} items" in err.message
    assert f"the limit is {length - 1:,} items per list" in err.message


def test_a_sum_of_ints_is_still_refused_past_the_bits_cap():
    source = "x = 4611686018427387904\ny = x + x\nz = y - (-y)\nprint(z)\n"  # 2**62
    err = refused(source, max_int_bits=64)
    assert (err.line, err.col) == (3, 5)
    assert "`-` would make an integer of about 65 bits; the limit is 64 bits" in err.message
    assert run(source, max_int_bits=65).stdout == [str(2**64)]
    # small ints, floats and bools go as Python takes them
    trace = run("print(3 + 4, 2.5 - 1, True + True, 10**3 - 1, 1.5 + 2)\n", max_int_bits=16)
    assert trace.error is None and trace.stdout == ["7 1.5 2 999 3.5"], trace.error
    err = refused("x = True ** 100\n", max_int_bits=16)  # as check_number_op refused it
    assert (err.line, err.col) == (1, 5)


def test_a_dict_item_read_the_short_way_is_read_as_before():
    source = """\
d = {'a': 1, 2: 'b', None: 3, (1, 2): 4, 1.5: 5, True: 6}
print(d['a'], d[2], d[None], d[(1, 2)], d[1.5], d[1])
try:
    d['z']
except KeyError as e:
    print('missing', e)
"""
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.stdout == ["1 b 3 4 5 6", "missing 'z'"]
    err = run("d = {}\nx = d['k']\n").error
    assert err is not None and (err.kind, err.line, err.col) == ("runtime", 2, 5), err
    assert err.message == "KeyError: 'k'"


def test_float_and_small_int_operators_give_what_python_gives():
    source = "a = 2.0 ** 0.5\nb = (-8.0) ** (1 / 3)\nc = 7 - 10 + 2.5 * 2 - 3 // 2\nprint(a, b, c, 1e308 * 10)\n"
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.stdout == [f"{2.0**0.5} {(-8.0) ** (1 / 3)} {7 - 10 + 2.5 * 2 - 3 // 2} inf"]
    err = run("x = 1.5\ny = x / 0.0\n").error
    assert err is not None and (err.kind, err.line, err.col) == ("runtime", 2, 5), err
    assert err.message == "ZeroDivisionError: float division by zero"
    err = run("x = 10.0\ny = x ** 1000.0\n").error
    assert err is not None and (err.kind, err.line, err.col) == ("runtime", 2, 5), err
    assert err.message.startswith("OverflowError: ")
