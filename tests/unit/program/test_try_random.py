"""Random programs of `try` / `except` / `else` / `finally` with `raise`, bare `raise`,
`break`, `continue` and `return` at random places, nested in loops, `if`s and each other:
the interpreter prints what CPython prints for each, and both end (or not) with an error."""

from __future__ import annotations

import contextlib
import io
import random

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import Limits
from gradviz.program.results.trace import RunOptions

EXCEPTIONS = ["ValueError", "TypeError", "KeyError", "IndexError", "ZeroDivisionError",
              "RuntimeError", "NotImplementedError"]  # fmt: skip
CLAUSES = ["", " ValueError", " (TypeError, KeyError)", " Exception", " RuntimeError",
           " ZeroDivisionError", " IndexError"]  # fmt: skip


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _simple(r: random.Random, where: dict) -> list[str]:
    choices = [f"print('s{r.randint(0, 99)}')", f"raise {r.choice(EXCEPTIONS)}('m{r.randint(0, 9)}')",
               "x = 1 // 0", "x = [1][2]", "x = {}['k']", "n += 1", "print(n)"]  # fmt: skip
    if where["handler"]:
        choices.append("raise")
    if where["loop"]:
        choices += ["break", "continue"]
    choices += ["return n", "return 'r'"]
    return [r.choice(choices)]


def _block(r: random.Random, depth: int, where: dict) -> list[str]:
    out: list[str] = []
    for _ in range(r.randint(1, 3)):
        kind = r.randint(0, 5 if depth < 3 else 0)
        if kind <= 2:
            out += _simple(r, where)
        elif kind == 3:
            out += _try(r, depth, where)
        elif kind == 4:
            inner = _block(r, depth + 1, {**where, "loop": True})
            out += [f"for i{depth} in range(3):", *_indent(inner)]
        else:
            out += ["if n % 2 == 0:", *_indent(_block(r, depth + 1, where))]
    return out


def _try(r: random.Random, depth: int, where: dict) -> list[str]:
    out = ["try:", *_indent(_block(r, depth + 1, where))]
    handlers = r.randint(0, 2) or (1 if r.random() < 0.5 else 0)
    for _ in range(handlers):
        clause = r.choice(CLAUSES)
        name = r.choice(["", " as e"]) if clause else ""
        body = _block(r, depth + 1, {**where, "handler": True})
        if name:
            body = ["print('caught', repr(e), e)", *body]
        out += [f"except{clause}{name}:", *_indent(body)]
        if not clause:
            break
    if handlers and r.random() < 0.3:
        out += ["else:", *_indent(_block(r, depth + 1, where))]
    if not handlers or r.random() < 0.4:
        out += ["finally:", *_indent(_block(r, depth + 1, where))]
    return out


def program(seed: int) -> str:
    r = random.Random(seed)
    body = _block(r, 1, {"handler": False, "loop": False})
    tail = ["    return n", "n = 0", "for k in range(3):", "    try:", "        print('f', f(k))",
            "    except Exception as e:", "        print('out', repr(e))"]  # fmt: skip
    return "\n".join(["def f(n):", *_indent(body), *tail]) + "\n"


def python_prints(source: str) -> tuple[list[str], str | None]:
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, "<program>", "exec"), {})  # the test's own generated text
        except Exception as exc:
            error = repr(exc)
    return out.getvalue().splitlines(), error


@pytest.mark.parametrize("seed", range(150))
def test_random_try_programs_print_what_python_prints(seed):
    source = program(seed)
    printed, error = python_prints(source)
    trace = run_program(source, RunOptions(classic=False, limits=Limits(max_loop_iterations=5000)))
    assert trace.stdout == printed, source
    assert (trace.error is None) == (error is None), (source, trace.error, error)
