"""A generator's body runs from a plan of its statements (runs of statements with no
`yield` in one call, the statements that hold one resumed in turn): the program's output,
its caps and its errors are those of a statement-by-statement walk, and no plan outlives
its run."""

from __future__ import annotations

import contextlib
import dataclasses
import io

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS
from gradviz.program.results.trace import RunOptions, Trace


def run(source: str, **caps) -> Trace:
    limits = dataclasses.replace(DEFAULT_LIMITS, **caps)
    return run_program(source, RunOptions(simulate_cuda=False, limits=limits))


def python_prints(source: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, {})  # the test's own program text, never a user's
    return out.getvalue().splitlines()


MIXED = """\
def gen(n):
    a = 1
    b = a + 1
    yield a
    c = b * 2
    for i in range(n):
        d = i + c
        print('made', d)
        yield d
        e = d
    yield -1
    print('end')
for x in gen(3):
    print('got', x)
    if x == 5:
        break
print('after')
"""


def test_a_body_of_plain_and_yielding_statements_runs_as_python_runs_it():
    trace = run(MIXED)
    assert trace.error is None, trace.error
    assert trace.stdout == python_prints(MIXED)
    assert "end" not in trace.stdout  # `break` left the producer where it was


def test_the_statement_cap_stops_the_same_statement_of_a_generator_body():
    # the def, the loop and its first pass; then the body's plain runs counted one by one
    caps = []
    for limit in range(3, 14):
        err = run(MIXED, max_statements=limit).error
        assert err is not None and err.kind == "limit"
        caps.append((err.line, err.col))
    assert caps == [
        (3, 5),
        (4, 5),
        (14, 5),
        (15, 5),
        (5, 5),
        (6, 5),
        (7, 9),
        (8, 9),
        (9, 9),
        (14, 5),
        (15, 5),
    ]


def test_an_error_in_a_generator_body_is_the_programs_at_its_line():
    source = """\
def gen():
    x = 1
    y = [1][x]
    yield y
for v in gen():
    print(v)
"""
    err = run(source).error
    assert err is not None and (err.kind, err.line, err.col) == ("runtime", 3, 9), err
    assert err.details.exception == "IndexError"
    caught = """\
def gen():
    yield 1
    raise ValueError('stop here')
try:
    for v in gen():
        print(v)
except ValueError as e:
    print('caught', e)
"""
    trace = run(caught)
    assert trace.error is None, trace.error
    assert trace.stdout == python_prints(caught)


def test_plans_are_the_runs_own():
    # Two programs run one after the other, in one process: the second's bodies (a yield
    # where the first had a plain statement) are planned afresh, never read from the first
    first = "def g():\n    x = 1\n    yield x\n    x = 2\nprint(list(g()))\n"
    second = "def g():\n    yield 3\n    x = 4\n    yield x\nprint(list(g()))\n"
    for source, shown in ((first, "[1]"), (second, "[3, 4]"), (first, "[1]")):
        trace = run(source)
        assert trace.error is None and trace.stdout == [shown], trace.error


RESUMED = """\
def g(n):
    for i in range(n):
        yield i
s = sum(x * 2 for x in g(3))
t = ''.join(str(c) for c in range(3))
print(s, t)
"""


def test_each_resumption_counts_its_step_where_it_did():
    # the step cap swept over a program of generators resumed by sum() and str.join
    stops = []
    for limit in range(10, 60, 3):
        err = run(RESUMED, max_steps=limit).error
        stops.append(err and (err.kind, err.line, err.col))
    assert stops == [
        ("limit", *where)
        for where in [
            (4, 24),
            (2, 20),
            (3, 9),
            (4, 9),
            (4, 5),
            (2, 5),
            (4, 8),
            (4, 13),
            (4, 24),
            (3, 15),
            (4, 9),
            (4, 5),
            (5, 5),
            (5, 35),
            (5, 5),
            (5, 17),
            (5, 5),
        ]
    ]
    assert run(RESUMED).stdout == ["6 012"]


def test_generators_delegating_to_themselves_stop_at_the_call_depth_cap():
    source = (
        "def g(k):\n    yield k\n    if k > 0:\n        yield from g(k - 1)\nprint(list(g(10)))\n"
    )
    err = run(source, max_call_depth=6).error
    assert err is not None and (err.kind, err.line, err.col) == ("limit", 4, 20), err
    assert "calls of `g` are nested 7 deep; the limit is 6" in err.message
    assert run(source, max_call_depth=12).stdout == [str(list(range(10, -1, -1)))]
