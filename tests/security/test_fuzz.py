"""Property-based fuzzing: programs from the language's grammar, and random text.

Every run ends in a Trace: a result, or a ProgramError (as Trace.error) of a known kind,
within the caps; never an exception. Fixed budget and derandomized, so CI is stable.
"""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradviz.program.interpreter import run_program
from gradviz.program.language import DEFAULT_LIMITS
from gradviz.program.results import RunOptions, Trace
from gradviz.program.share import encode_program, from_params
from gradviz.program.worker import state as torch_state
from gradviz.services.programs import run_isolated

KINDS = {"syntax", "forbidden", "name", "limit", "type", "runtime"}
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = ["a", "b", "c", "x", "y"]

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
     "requires_grad_()", "retain_grad()", "backward()", "tolist()", "transpose(0, 1)"]
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


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=400))
def test_random_text_ends_in_a_trace(text):
    _ended_well(run_program(text))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["x", "=", "torch", ".", "(", ")", "[", "]", ",", "1", "2.5",
                                 "ones", "rand", "@", "+", "*", "\n", " ", "    ", "backward",
                                 "requires_grad=True", "F", "relu", "with", ":", "no_grad",
                                 "_", "'s'", "#", "**", "-"]),
                max_size=60).map("".join))  # fmt: skip
def test_token_soup_ends_in_a_trace(text):
    _ended_well(run_program(text))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.dictionaries(
        st.sampled_from(["p", "view", "dir", "theme", "backward", "ones", "saved", "retain", "zz"]),
        st.one_of(
            st.text(max_size=200),
            st.binary(max_size=200).map(encode_program_bytes := (lambda b: b.decode("latin-1"))),
        ),
        max_size=9,
    )
)
def test_share_params_never_raise(params):
    state = from_params(params)
    assert state.program is None or len(state.program) <= DEFAULT_LIMITS.max_source_chars
    assert state.view in ("values", "classic") and state.rankdir in ("TB", "LR")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(programs)
def test_grammar_programs_through_a_worker(pool, source):
    trace = run_isolated(source, RunOptions(backward="a"), pool=pool)
    _ended_well(trace)
    assert trace.stats.worker is None, trace.error  # no worker died or timed out


def test_encode_program_round_trip_sample():
    assert from_params({"p": encode_program("a = 1")}).program == "a = 1"
    assert torch.get_default_dtype() == torch.float32
