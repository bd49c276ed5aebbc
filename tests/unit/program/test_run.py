"""gradviz.program.interpreter.run: gradients match torch's own, errors are placed and explained, caps hold."""

from __future__ import annotations

import ast

import pytest
import torch
import torch.nn.functional as F

from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS, PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.program.runtime.cifar_sample import cifar10_sample

LESSON = PRESETS_BY_KEY["lesson"].source


def run(source: str, **options) -> Trace:
    return run_program(source, RunOptions(**options))


def ok(source: str, **options) -> Trace:
    trace = run(source, **options)
    assert trace.error is None, trace.error
    return trace


def refused(source: str, kind: str, **options) -> dict:
    trace = run(source, **options)
    assert trace.error is not None, "expected an error"
    assert trace.error.kind == kind, trace.error
    return trace.error


def reference(source: str, backward: str | None) -> tuple[dict, int | None, Exception | None]:
    """Run a preset as plain Python with torch (trusted test code, never the product).

    Returns the namespace, the 1-based line of the statement that raised (if any) and
    the exception. Statements run one at a time so the failing line is known.
    """
    # the built-in that stands in for the tutorial's CIFAR-10 loader, as plain Python
    env: dict = {"torch": torch, "F": F, "gradviz_cifar10_sample": cifar10_sample}
    tree = ast.parse(source)
    with torch.random.fork_rng():
        for stmt in tree.body:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), "<preset>", "exec")
            try:
                exec(code, env)
            except RuntimeError as exc:
                return env, stmt.lineno, exc
        if backward:
            env[backward].backward()
    return env, None, None


@pytest.mark.parametrize("preset", PRESETS, ids=[p.key for p in PRESETS])
def test_preset_gradients_match_torch(preset):
    trace = run(preset.source, backward=preset.backward)
    env, err_line, exc = reference(preset.source, preset.backward)
    if preset.mistake:
        assert exc is not None, "the reference run should fail too"
        assert trace.error is not None
        assert trace.error.kind == "runtime"
        assert trace.error.line == err_line
        assert trace.error.col == 1
        assert trace.error.details.explanation == preset.mistake
        assert trace.error.hint
        assert trace.error.details.fix
    else:
        assert trace.error is None, trace.error
        assert exc is None
    checked = 0
    for info in trace.tensors:
        expected = env.get(info.name)
        if not isinstance(expected, torch.Tensor) or info.label != info.name:
            continue
        assert info.shape == list(expected.shape), info.name
        if info.value is not None:
            got_value = torch.tensor(info.value, dtype=expected.dtype)
            assert torch.allclose(got_value, expected.detach()), info.name
        if expected.is_leaf and expected.requires_grad:
            if expected.grad is None:
                assert info.grad is None, info.name
            else:
                assert info.grad is not None, info.name
                got = torch.tensor(info.grad, dtype=expected.grad.dtype)
                assert torch.allclose(got, expected.grad, atol=1e-6), info.name
                checked += 1
    if preset.backward:
        assert checked >= 1, "a preset with a backward output must have a leaf gradient"


def test_lesson_gradient():
    trace = ok(LESSON, backward="y")
    x = trace.tensor("x")
    assert x.grad == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)
    assert x.grad_preview == "[2.0000, 2.6667, 3.3333]"
    assert trace.tensor("y").value == pytest.approx(19.6667, abs=1e-4)
    assert trace.backward[-1].target == "y"
    assert trace.backward[-1].origin == "request"
    assert trace.backward[-1].gradient == "implicit"


def test_lesson_program_backward():
    trace = ok(LESSON + "y.backward()\n")
    assert trace.tensor("x").grad == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)
    assert trace.backward[-1].origin == "program"
    assert trace.backward[-1].line == 7


# ---------------------------------------------------------------- caps, before allocating


def test_huge_constructor_refused_with_size():
    err = refused("x = torch.ones(100000, 100000)\n", "limit")
    assert "40 GB" in err.message
    assert "limit is" in err.message
    assert "25,000,000" in err.message
    assert (err.line, err.col) == (1, 5)


def test_medium_constructor_refused_not_allocated():
    # 400 MB: the pre-check refuses it on the meta device, it is never allocated.
    err = refused("x = torch.zeros(100000, 1000)\n", "limit")
    assert "400 MB" in err.message


@pytest.mark.parametrize(
    "source",
    [
        "x = torch.rand(100000, 100000)\n",
        "x = torch.full((100000, 100000), 1.0)\n",
        "x = torch.arange(10000000000)\n",
        "x = torch.eye(100000)\n",
        "x = torch.randn(100000, 100000, dtype=torch.float64)\n",
        "x = torch.linspace(0, 1, 10000000000)\n",
    ],
)
def test_factories_refused(source):
    refused(source, "limit")


def test_huge_matmul_refused_by_flops():
    err = refused("a = torch.ones(3000, 3000)\nb = a @ a\n", "limit")
    assert "floating-point operations" in err.message
    assert err.line == 2


@pytest.mark.parametrize(
    "source",
    [
        "x = torch.ones(1)\ny = x.expand(100000, 100000)\n",
        "x = torch.ones(10)\ny = x.repeat(100000, 1000)\n",
        "y = torch.ones(1, 20000) + torch.ones(20000, 1)\n",
        "x = torch.arange(1000.0)\ny = torch.cartesian_prod(x, x, x)\n",
        "x = torch.ones(6000)\ny = torch.outer(x, x)\n",
    ],
)
def test_size_bombs_refused(source):
    err = refused(source, "limit")
    assert "would allocate" in err.message
    assert err.hint


def test_total_allocation_cap():
    lines = "".join(f"x{i} = torch.ones(5000, 5000)\n" for i in range(6))
    err = refused(lines, "limit")
    assert "in all" in err.message


def test_int_bomb_refused():
    err = refused("x = 2 ** 10 ** 8\n", "limit")
    assert "bits" in err.message
    err = refused("x = 10 ** 4000\n", "limit")


def test_statement_cap():
    from gradviz.program.results.limits import Limits

    err = refused("x = 1\n" * 10, "limit", limits=Limits(max_statements=5))
    assert "statements" in err.message


# ---------------------------------------------------------------- names and hints


def test_did_you_mean_torch_function():
    err = refused("x = torch.onse(3)\n", "name")
    assert "`ones`" in err.hint
    assert (err.line, err.col) == (1, 5)


def test_did_you_mean_variable():
    err = refused("x = torch.ones(3)\ny = xx + 1\n", "name")
    assert err.hint == "Did you mean `x`?"
    assert (err.line, err.col) == (2, 5)


def test_did_you_mean_method():
    err = refused("x = torch.ones(3)\ny = x.sumn()\n", "name")
    assert "`sum`" in err.hint


def test_bare_function_name_hints_torch():
    err = refused("y = ones(3)\n", "name")
    assert "torch.ones" in err.hint


# ---------------------------------------------------------------- backward options


def test_non_scalar_backward_message_and_ones():
    source = "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x * 2\n"
    err = refused(source, "runtime", backward="y")
    assert "scalar" in err.message
    assert err.details.explanation == "implicit_scalar"
    assert err.line == 2
    trace = ok(source, backward="y", backward_ones=True)
    assert trace.tensor("x").grad == [2.0, 2.0, 2.0]
    assert trace.backward[-1].gradient == "ones"


def test_backward_unknown_name():
    err = refused(LESSON, "name", backward="yy")
    assert "`y`" in err.hint


def test_retain_intermediate_gives_intermediate_grads():
    trace = ok(LESSON, backward="y", retain_intermediate=True)
    # y = mean(c): dy/dc = 1/3; c = b + 3: dy/db = 1/3; b = a²: dy/da = 2a/3 with a = [3, 4, 5]
    assert trace.tensor("c").grad == pytest.approx([1 / 3] * 3)
    assert trace.tensor("b").grad == pytest.approx([1 / 3] * 3)
    assert trace.tensor("a").grad == pytest.approx([2 * 3 / 3, 2 * 4 / 3, 2 * 5 / 3])
    assert trace.tensor("y").grad == pytest.approx(1.0)
    assert trace.tensor("a").retains_grad is True
    without = ok(LESSON, backward="y")
    assert without.tensor("a").grad is None


def test_backward_steps_recorded():
    trace = ok(LESSON, backward="y")
    steps = trace.backward[-1].steps
    assert [s.fn.split("::")[-1] for s in steps] == [
        "MeanBackward0",
        "AddBackward0",
        "PowBackward0",
        "AddBackward0",
        "AccumulateGrad",
    ]
    assert steps[0].upstream == ["1.0000"]


# ---------------------------------------------------------------- language features


def test_print_output_captured():
    trace = ok("x = torch.ones(3)\nprint(x, 1, 'a')\nprint(x.sum())\n")
    assert trace.stdout == ["tensor([1., 1., 1.]) 1 a", "tensor(3.)"]


def test_warning_captured_with_line():
    trace = ok("x = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y.grad\n")
    assert len(trace.warnings) == 1
    w = trace.warnings[0]
    assert w.line == 3
    assert "not a leaf" in w.message
    assert w.category == "UserWarning"


def test_manual_seed_reproducible_and_private():
    source = "torch.manual_seed(1)\nx = torch.rand(3)\ny = torch.randn(2, 2)\n"
    torch.manual_seed(1234)
    seed_before = torch.initial_seed()
    state_before = torch.get_rng_state().clone()
    first = ok(source)
    second = ok(source)
    assert torch.initial_seed() == seed_before
    assert torch.equal(torch.get_rng_state(), state_before)
    assert first.tensor("x").value == second.tensor("x").value
    assert first.tensor("y").value == second.tensor("y").value
    expected = torch.rand(3, generator=torch.Generator().manual_seed(1))
    assert first.tensor("x").value == pytest.approx(expected.tolist())
    other = ok("torch.manual_seed(2)\nx = torch.rand(3)\n")
    assert other.tensor("x").value != first.tensor("x").value


def test_random_without_seed_uses_the_run_seed():
    a = ok("x = torch.randn(3)\n").tensor("x").value
    b = ok("x = torch.randn(3)\n").tensor("x").value
    c = ok("x = torch.randn(3)\n", seed=5).tensor("x").value
    assert a == b
    assert a != c


def test_numpy_gives_an_array_printed_as_numpy_prints_it():
    trace = ok("x = torch.tensor([1.0, 2.0])\nn = x.numpy()\nprint(n)\n")
    assert trace.stdout == ["[1. 2.]"]


def test_numpy_on_requires_grad_is_explained():
    err = refused("x = torch.ones(2, requires_grad=True)\nn = x.numpy()\n", "runtime")
    assert err.details.explanation == "numpy_requires_grad"
    assert err.line == 2


def test_grad_fn_prints_as_pytorch_does():
    trace = ok("x = torch.ones(3, requires_grad=True)\ny = x * 2\nprint(y.grad_fn)\n")
    assert trace.stdout == ["<MulBackward0 object at 0x7f0000000040>"]
    trace = ok("x = torch.ones(3)\nprint(x.grad_fn)\n")
    assert trace.stdout == ["None"]


def test_grad_fn_cannot_be_reached_through():
    err = refused(
        "x = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y.grad_fn.metadata\n",
        "type",
    )
    assert err.line == 3


def test_tuple_unpacking_of_max():
    trace = ok("x = torch.tensor([[1.0, 5.0], [7.0, 2.0]])\nv, i = torch.max(x, 1)\n")
    assert trace.tensor("v").value == [5.0, 7.0]
    assert trace.tensor("i").value == [1, 0]
    assert trace.tensor("i").dtype == "int64"


def test_unpacking_count_mismatch():
    err = refused("x = torch.ones(3)\na, b, c = torch.max(torch.ones(2, 2), 1)\n", "type")
    assert "3 names" in err.message


def test_no_grad_block():
    trace = ok(
        "x = torch.ones(3, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    y = x * 2\n"
        "z = x * 3\n"
        "print(y.requires_grad, z.requires_grad, torch.is_grad_enabled())\n"
    )
    assert trace.stdout == ["False True True"]
    assert trace.tensor("y").requires_grad is False
    assert "no_grad" in trace.tensor("y").note
    assert trace.tensor("z").grad_fn == "MulBackward0"
    assert torch.is_grad_enabled()


def test_no_grad_inplace_on_leaf_is_allowed():
    trace = ok(
        "w = torch.ones(3, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    w += 1\n"
        "loss = (w * 2).sum()\n",
        backward="loss",
    )
    assert trace.tensor("w").grad == [2.0, 2.0, 2.0]


def test_runtime_error_is_explained_and_placed():
    err = refused(
        "a = torch.ones(2, 3)\nb = torch.ones(2, 3)\nc = a @ b\n",
        "runtime",
    )
    assert err.line == 3
    assert err.details.explanation == "matmul_shapes"
    assert "Traceback" not in err.message


def test_int_requires_grad_explained():
    err = refused("x = torch.tensor([1, 2], requires_grad=True)\n", "runtime")
    assert err.details.explanation == "int_requires_grad"


def test_partial_results_before_error():
    trace = run("x = torch.ones(3)\ny = x + 1\nz = torch.onse(2)\nw = y * 2\n")
    assert [t.name for t in trace.tensors] == ["x", "y"]
    assert trace.error.line == 3


def test_rebinding_gets_line_labels():
    trace = ok("x = torch.ones(2)\nx = x + 1\n")
    assert [t.label for t in trace.tensors] == ["x·L1", "x·L2"]
    assert trace.tensor("x").value == [2.0, 2.0]


def test_non_str_source_is_an_error_not_a_crash():
    trace = run_program(None)
    assert trace.error.kind == "type"


def test_to_json_shape():
    data = ok(LESSON, backward="y").to_json()
    assert set(data) >= {"tensors", "error", "backward"}
    assert data["backward"]["output"] == "y"
    assert data["tensors"][0]["grad"] == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)
    import json

    json.dumps(data)  # plain data


def test_pooling_window_work_is_capped_before_running():
    trace = run_program("a = torch.rand(1, 3000, 3000)\nb = F.max_pool2d(a, 1500, stride=1)\n")
    assert trace.error.kind == "limit" and trace.error.line == 2
    assert "limit is 5e+09" in trace.error.message
    ok = run_program(
        "a = torch.rand(1, 1, 8, 8)\nb = F.max_pool2d(a, 2)\nc = F.avg_pool1d(torch.rand(1, 2, 8), 4)\n"
    )
    assert ok.error is None
    assert [t.shape for t in ok.tensors] == [[1, 1, 8, 8], [1, 1, 4, 4], [1, 2, 2]]


def test_an_empty_tensor_keeps_its_empty_value():
    """A one-dimensional empty tensor carries [] as its value (the value budget counts it as
    0 numbers); an empty tensor of more dimensions carries none, only its preview: its value
    would be lists of no numbers (4,096 of them for a 4096x0 tensor) that nothing counts."""
    from gradviz.graph.values import stored_count, tensor_values

    assert tensor_values(torch.zeros(0)) == ([], "[]")
    assert tensor_values(torch.zeros(2, 0)) == (None, "[] (no values, shape (2, 0))")
    assert tensor_values(torch.zeros(4096, 0))[0] is None
    assert stored_count(torch.zeros(2, 0)) == 0
    assert tensor_values(torch.zeros(10_000, 0))[0] is None
    assert tensor_values(torch.zeros(3), keep=False)[0] is None
