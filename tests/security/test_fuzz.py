"""Property-based fuzzing: programs from the language's grammar, and random text.

Every run ends in a Trace: a result, or a ProgramError (as Trace.error) of a known kind,
within the caps; never an exception. Fixed budget and derandomized, so CI is stable.
"""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import DEFAULT_LIMITS, Limits
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.program.share import encode_program, from_params
from gradviz.program.worker_hooks import state as torch_state
from gradviz.services.programs import run_isolated

KINDS = {"syntax", "forbidden", "name", "limit", "type", "runtime"}
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = ["a", "b", "c", "x", "y", "_a", "_tmp"]  # `_` names are the program's own

dims = st.one_of(st.integers(0, 4), st.sampled_from([1, 2, 3, 10, 100, 10**5, 10**9, -1]))
shapes = st.lists(dims, min_size=0, max_size=4).map(lambda s: ", ".join(map(str, s)))
numbers = st.one_of(
    st.integers(-5, 5).map(str),
    st.floats(-10, 10, allow_nan=False, width=32).map(lambda f: repr(float(f))),
    st.sampled_from(["0.0", "1e30", "-1e-30", "float('inf')", "float('nan')", "2**62"]),
)
name = st.sampled_from(NAMES)
constructor = st.one_of(
    st.builds(
        lambda s, g: f"torch.ones({s}{', requires_grad=True' if g else ''})", shapes, st.booleans()
    ),
    st.builds(lambda s: f"torch.rand({s})", shapes),
    st.builds(lambda s: f"torch.zeros({s})", shapes),
    st.builds(lambda n: f"torch.arange({n})", st.integers(-3, 10**8)),
    st.builds(
        lambda xs, g: f"torch.tensor([{', '.join(xs)}]{', requires_grad=True' if g else ''})",
        st.lists(numbers, min_size=0, max_size=5),
        st.booleans(),
    ),
)
method = st.sampled_from(
    ["exp()", "relu()", "sum()", "mean()", "t()", "abs()", "sigmoid()", "detach()",
     "reshape(-1)", "flatten()", "unsqueeze(0)", "squeeze()", "float()", "double()", "cumsum(0)",
     "softmax(0)", "max()", "clone()", "norm()", "pow(2)", "sqrt()", "log()", "item()",
     "expand(3, -1)", "repeat(2, 2)", "view(-1)", "sort()", "topk(1)", "numpy()",
     "requires_grad_()", "retain_grad()", "backward()", "tolist()", "transpose(0, 1)",
     "_foo()", "_version", "_modules", "_base", "__class__", "grad_fn._saved_self"]
)  # fmt: skip
binop = st.sampled_from(["+", "-", "*", "/", "@", "**", "//", "%", "<", "=="])
function = st.sampled_from(
    ["F.relu", "F.softmax", "torch.exp", "torch.sum", "torch.tanh", "torch.matmul", "torch.cat",
     "torch.stack", "torch.outer", "torch.where", "F.mse_loss", "torch.einsum", "F.linear"]
)  # fmt: skip


@st.composite
def expression(draw, depth: int = 0):
    choice = draw(st.integers(0, 5 if depth < 2 else 1))
    if choice == 0:
        return draw(constructor)
    if choice == 1:
        return draw(st.one_of(name, numbers))
    if choice == 2:
        return f"{draw(expression(depth + 1))}.{draw(method)}"
    if choice == 3:
        return f"({draw(expression(depth + 1))} {draw(binop)} {draw(expression(depth + 1))})"
    if choice == 4:
        args = draw(st.lists(expression(depth + 1), min_size=1, max_size=3))
        return f"{draw(function)}({', '.join(args)})"
    return f"{draw(name)}[{draw(st.sampled_from(['0', '-1', '1:', ':, 0', '..., 0', 'None']))}]"


@st.composite
def statement(draw):
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return f"{draw(name)}.backward()"
    if kind == 1:
        return f"with torch.no_grad():\n    {draw(name)} = {draw(expression())}"
    if kind == 2:
        return f"{draw(name)} {draw(st.sampled_from(['+=', '*=', '-=']))} {draw(expression())}"
    return f"{draw(name)} = {draw(expression())}"


programs = st.lists(statement(), min_size=1, max_size=8).map("\n".join)

# -- the grammar the language grew: functions, lambdas, control flow (`try` too),
# comprehensions, containers, strings, imports (with sizes at and far past the caps)

sizes = st.sampled_from(["0", "1", "3", "10", "-1", "10**6", "10**12", "2**62"])
iterable = st.one_of(
    st.builds(lambda n: f"range({n})", sizes),
    st.sampled_from(["[1, 2, 3]", "(0.5, 'a')", "'ab'", "{'k': 1}", "torch.ones(3, 2)",
                     "torch.tensor(1.0)", "enumerate([4, 5])", "zip([1], 'xy')", "None",
                     "reversed([1, 2])", "a", "x"]),
)  # fmt: skip
spec = st.sampled_from(["", ":>8", ":.3f", ":d", ":,", ":10000000", ":.999999999f", "!r",
                        ":{a}", ":x<5", ":%", ":{'{0.__class__}'}"])  # fmt: skip
builtin = st.sampled_from(["len", "sum", "sorted", "list", "tuple", "min", "max", "abs", "str",
                           "int", "float", "bool", "any", "all", "reversed", "enumerate", "zip",
                           "repr", "dict", "isinstance", "range", "print", "next", "getattr",
                           "type", "vars"])  # fmt: skip


@st.composite
def grown_expression(draw, depth: int = 0):
    simple = st.one_of(name, numbers, st.sampled_from(["'s'", "None", "True", "[]", "{}"]))
    if depth > 2:
        return draw(simple)
    inner = grown_expression(depth + 1)
    choice = draw(st.integers(0, 15))
    if choice == 0:
        return draw(expression(depth))
    if choice == 1:
        return f"[{draw(inner)} for {draw(name)} in {draw(iterable)} if {draw(inner)}]"
    if choice == 2:
        return f"{draw(builtin)}({draw(inner)} for {draw(name)} in {draw(iterable)})"
    if choice == 3:
        return f"{{{draw(inner)}: {draw(inner)} for {draw(name)} in {draw(iterable)}}}"
    if choice == 4:
        return f"(lambda {draw(name)}, k=1: {draw(inner)})({draw(inner)})"
    if choice == 5:
        return f'f"{{{draw(expression(depth))}{draw(spec)}}} {{{draw(name)}}}"'
    if choice == 6:
        return f"'%d %5.2f %s %r %%' % ({draw(inner)}, {draw(inner)}, {draw(inner)}, x)"
    if choice == 7:
        return f"({draw(inner)} if {draw(inner)} else {draw(inner)})"
    if choice == 8:
        op = draw(st.sampled_from(["and", "or", "<", "in", "not in", "is", "is not", "=="]))
        return f"({draw(inner)} {op} {draw(inner)} < {draw(inner)})"
    if choice == 9:
        args = draw(st.lists(inner, min_size=0, max_size=3))
        return f"{draw(builtin)}({', '.join(args)})"
    if choice == 10:
        return f"({draw(inner)} {draw(st.sampled_from(['*', '+', '%']))} {draw(sizes)})"
    if choice == 11:
        return f"[{', '.join(draw(st.lists(inner, max_size=3)))}]"
    if choice == 12:  # * and ** in calls and displays
        mapping = draw(st.sampled_from(["b", "{}", "{'k': 1}", "{'_k': 1}", "{'out': x}",
                                        "{1: 2}", "a", "{'sep': '-'}"]))  # fmt: skip
        func = draw(st.one_of(builtin, st.sampled_from(["torch.ones", "x.view", "max"])))
        return f"{func}(*{draw(iterable)}, {draw(inner)}, **{mapping})"
    if choice == 13:
        return f"[*{draw(iterable)}, {draw(inner)}, *{draw(iterable)}] + list({{**b, 'j': {draw(inner)}}})"
    if choice == 14:  # str.format with the fields and specs f-strings take, and worse
        field = draw(st.sampled_from(["", "0", "k", "0[0]", "k[k]", "0.grad", "0.__class__",
                                      "1", "", "0[9]", "k.real"]))  # fmt: skip
        return f"'{{{field}{draw(spec)}}} {{{{}}}}'.format({draw(inner)}, k={draw(inner)}, a=2)"
    return draw(simple)


@st.composite
def grown_block(draw, depth: int = 0, only: int | None = None):
    """One statement, possibly with an indented body (returned as a list of lines); `only`:
    one of its kinds."""
    kind = draw(st.integers(0, 16 if depth < 2 else 3)) if only is None else only

    def body() -> list[str]:
        blocks = draw(st.lists(grown_block(depth + 1), min_size=1, max_size=3))
        return ["    " + line for b in blocks for line in b]

    if kind == 0:
        return [f"{draw(name)} = {draw(grown_expression())}"]
    if kind == 1:
        return [f"{draw(name)}, {draw(name)} = {draw(grown_expression())}"]
    if kind == 2:
        return [f"{draw(name)} {draw(st.sampled_from(['+=', '*=']))} {draw(grown_expression())}"]
    if kind == 3:
        return [draw(st.sampled_from(["pass", "break", "continue", "return x", "assert a",
                                      "import math", "import os", "from torch import nn",
                                      "import torch.nn.functional as F", "a.append(b)",
                                      "c[0] = 1", "x.backward()", "del a[0]", "del b['k']",
                                      "del y", "del a[:]", "del x", "a, *y = a",
                                      "*c, y = range(3)", "raise",
                                      "raise ValueError(a)", "print(e)", "yield x",
                                      "yield from a", "y = yield", "yield",
                                      "yield from g()"]))]  # fmt: skip
    if kind == 4:
        return [f"if {draw(grown_expression())}:", *body(), "else:", *body()]
    if kind == 5:
        return [f"for {draw(name)} in {draw(iterable)}:", *body()]
    if kind == 6:
        return [f"while {draw(grown_expression())}:", *body()]
    if kind == 7:
        params = draw(st.sampled_from(["", "a", "a, b=2", "a, *, k=1", "a, b", "a=print",
                                       "*a", "a, *b, k=1, **c", "**b"]))  # fmt: skip
        return [f"def {draw(name)}({params}):", *body(), f"    return {draw(grown_expression())}"]
    if kind == 8:
        return [f"{draw(name)} = {draw(name)}({draw(grown_expression())})"]
    if kind == 9:
        return ["with torch.no_grad():", *body()]
    if kind == 10:
        return ["def f(n):", "    return f(n + 1) if n < 1000 else n", "r = f(0)"]
    if kind == 11:
        handler = draw(st.sampled_from(["except:", "except Exception as e:", "except ValueError:",
                                        "except (TypeError, KeyError) as e:",
                                        "except ZeroDivisionError as e:", "except* Exception:",
                                        "except BaseException:"]))  # fmt: skip
        lines = ["try:", *body(), handler, *body()]
        tail = draw(st.sampled_from(["", "else:", "finally:"]))
        return [*lines, tail, *body()] if tail else lines
    if kind == 12:  # global: the program's names changed and deleted from inside a call
        return ["def g():", f"    global {draw(name)}", *body(), "g()"]
    if kind == 13:  # nonlocal
        return ["def h():", "    y = 0", "    def k():", "        nonlocal y",
                *["    " + line for line in body()], "    k()", "    return y", "r = h()"]  # fmt: skip
    if kind == 14:  # recursion through *args
        return ["def s(*v, **o):", "    return s(*v, *v, **o) if len(v) < 9 else v", "r = s(1)"]
    if kind == 16:  # a generator, its body drawn like any other, read by a consumer
        consumer = draw(st.sampled_from(["list({})", "next({})", "next({}, 0)", "sum({})",
                                         "sorted({})", "max({})", "list(zip({0}, {0}))",
                                         "[*{}]", "dict(enumerate({}))", "any({})"]))  # fmt: skip
        params = draw(st.sampled_from(["", "n=3", "*v"]))
        lines = [f"def g({params}):", *body(), f"    yield {draw(grown_expression())}"]
        use = ["for v in g():", "    if v:", "        break"]
        return [*lines, *use] if draw(st.booleans()) else [*lines, f"r = {consumer.format('g()')}"]
    return [f"print({draw(grown_expression())}, {draw(grown_expression())})"]


PRELUDE = "a = [1, 2]\nb = {'k': 1}\nc = [0]\nx = torch.ones(2, requires_grad=True)\ny = 3\n"
grown_programs = st.lists(grown_block(), min_size=1, max_size=6).map(
    lambda blocks: PRELUDE + "\n".join(line for b in blocks for line in b)
)
gen_value = st.sampled_from(["n", "a", "i * 2", "x.sum()", "[i, n]", "", "torch.ones(2) * n",
                             "g()", "next(h(), 0)", "v"])  # fmt: skip
gen_iterable = st.sampled_from(["range(n)", "range(3)", "a", "g(n - 1)", "h()", "x",
                                "range(10**9)", "enumerate(g(1))", "zip(a, g())", "it"])  # fmt: skip
gen_test = st.sampled_from(["True", "n > 0", "i < 3", "v is None", "a"])


@st.composite
def generator_body(draw, depth: int = 0) -> list[str]:
    """A generator function's statements: yields inside loops, ifs and tries, returns,
    breaks, recursion into itself and into its sibling."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 8 if depth < 2 else 2))

        def inner() -> list[str]:
            return ["    " + line for line in draw(generator_body(depth + 1))]

        if kind == 0:
            lines.append(f"yield {draw(gen_value)}".rstrip())
        elif kind == 1:
            lines.append(f"yield from {draw(gen_iterable)}")
        elif kind == 2:
            lines.append(f"v = yield {draw(gen_value)}".rstrip())
        elif kind == 3:
            lines += [f"for i in {draw(gen_iterable)}:", *inner()]
        elif kind == 4:
            lines += ["i = 0", f"while {draw(gen_test)}:", *inner(), "    i += 1"]
        elif kind == 5:
            lines += [f"if {draw(gen_test)}:", *inner(), "else:", *inner()]
        elif kind == 6:
            tail = draw(st.sampled_from([[], ["else:", "    n = 0"], ["finally:", "    n = 0"]]))
            lines += ["try:", *inner(), "except ValueError:", "    n = 1", *tail]
        elif kind == 7:
            lines.append(draw(st.sampled_from(["n -= 1", "return", "return n", "a.append(n)",
                                               "raise ValueError(n)", "i = next(it, 0)",
                                               "with torch.no_grad():\n    yield n",
                                               "print(i)"])))  # fmt: skip
        else:
            lines += ["for i in range(2):", *inner(), "    if i:", "        break"]
    return [piece for line in lines for piece in line.split("\n")]


@st.composite
def generator_program(draw) -> str:
    use = draw(st.sampled_from(["for v in g():\n    print(v)", "r = list(g())",
                                "r = next(g(), 0)", "r = sum(g(2), [])", "r = sorted(h())",
                                "for v in h():\n    break", "r = [*zip(g(), h())]",
                                "r = any(g())", "f, *r = g()", "r = max(g(), default=0)",
                                "for v in it:\n    print(v)", "r = dict(enumerate(h()))"]))  # fmt: skip
    params = draw(st.sampled_from(["n=3", "n=1", "n=20"]))
    body = ["    " + line for line in draw(generator_body())]
    sibling = ["    " + line for line in draw(generator_body(1))]
    return "\n".join(
        [PRELUDE.rstrip("\n"), f"def g({params}):", *body, "def h(n=2):", *sibling, "it = g()", use]
    )


# Small caps, so a generated loop or recursion reaches them quickly.
SMALL = Limits(max_loop_iterations=2_000, max_steps=50_000, max_seconds=5.0, max_call_depth=20)


def _ended_well(trace: object) -> None:
    assert isinstance(trace, Trace)
    if trace.error is not None:
        assert trace.error.kind in KINDS, trace.error
        assert trace.error.message
    stats = trace.stats
    assert stats.bytes <= DEFAULT_LIMITS.max_total_bytes
    assert stats.flops <= DEFAULT_LIMITS.max_total_flops


@FUZZ
@given(programs, st.sampled_from([None, "a", "b", "x", "y"]), st.booleans())
def test_grammar_programs_end_in_a_trace(source, backward, ones):
    state = torch_state()
    trace = run_program(source, RunOptions(backward=backward, backward_ones=ones))
    _ended_well(trace)
    assert torch_state() == state


@FUZZ
@given(grown_programs, st.sampled_from([None, "a", "x"]))
def test_grown_grammar_programs_end_in_a_trace(source, backward):
    state = torch_state()
    trace = run_program(source, RunOptions(backward=backward, limits=SMALL))
    _ended_well(trace)
    if trace.error is not None:
        assert trace.error.kind != "internal", (source, trace.error)
        assert trace.error.line is not None or backward is not None, (source, trace.error)
    assert trace.stats.seconds < 30
    assert torch_state() == state


@FUZZ
@given(generator_program())
def test_generator_programs_end_in_a_trace(source):
    """Generators (`yield` drawn anywhere a statement may be, generator functions read by
    loops and built-ins): a result or a refusal at a line, the run's state as it was."""
    state, grad = torch_state(), torch.is_grad_enabled()
    trace = run_program(source, RunOptions(limits=SMALL))
    _ended_well(trace)
    if trace.error is not None:
        assert trace.error.line is not None, (source, trace.error)
    assert torch_state() == state and torch.is_grad_enabled() == grad


@settings(max_examples=25, deadline=None, derandomize=True)
@given(grown_programs)
def test_grown_grammar_programs_through_a_worker(pool, source):
    trace = run_isolated(source, RunOptions(backward="a"), pool=pool)
    _ended_well(trace)
    assert trace.stats.worker is None, trace.error  # no worker died or timed out


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=400))
def test_random_text_ends_in_a_trace(text):
    _ended_well(run_program(text))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["x", "=", "torch", ".", "(", ")", "[", "]", ",", "1", "2.5",
                                 "ones", "rand", "@", "+", "*", "\n", " ", "    ", "backward",
                                 "requires_grad=True", "F", "relu", "with", ":", "no_grad",
                                 "_", "'s'", "#", "**", "-", "def", "for", "in", "if", "else",
                                 "while", "lambda", "return", "f'{", "}'", "%", "{", "}",
                                 "range", "import", "and", "not"]),
                max_size=60).map("".join))  # fmt: skip
def test_token_soup_ends_in_a_trace(text):
    _ended_well(run_program(text))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.dictionaries(
        st.sampled_from(
            ["p", "view", "dir", "theme", "backward", "ones", "saved", "retain", "zz"]
            + ["move", "to", "step", "quiz"]
        ),
        st.one_of(
            st.text(max_size=200),
            st.binary(max_size=200).map(encode_program_bytes := (lambda b: b.decode("latin-1"))),
            st.sampled_from(["*", "x", "cpu", "cuda:0", "cuda:7", "mps", "0", "1"]),
        ),
        max_size=9,
    ),
    st.sampled_from([None, ["cpu"], ["cpu", "cuda:0", "cuda:1"], ["cpu", "mps"]]),
)
def test_share_params_never_raise(params, devices):
    state = from_params(params, devices)
    assert devices is None or state.move_to is None or state.move_to in devices
    assert state.program is None or len(state.program) <= DEFAULT_LIMITS.max_source_chars
    assert state.drawing.view in ("values", "classic") and state.drawing.rankdir in ("TB", "LR")
    assert 0 <= state.step <= 100_000 and len(state.moves) <= 64
    assert all(n == "*" or n.replace(".", "_").isidentifier() for n in state.moves)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(programs)
def test_grammar_programs_through_a_worker(pool, source):
    trace = run_isolated(source, RunOptions(backward="a"), pool=pool)
    _ended_well(trace)
    assert trace.stats.worker is None, trace.error  # no worker died or timed out


def test_encode_program_round_trip_sample():
    assert from_params({"p": encode_program("a = 1")}).program == "a = 1"
    assert torch.get_default_dtype() == torch.float32
