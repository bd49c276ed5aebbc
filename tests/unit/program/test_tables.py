"""gradviz.program.allowlists.tables: every "meta"-checked entry really runs on meta tensors.

The interpreter's size pre-check (Budget.precheck) runs each "meta" operation on
shape-only tensors first. If an entry had no meta kernel (or were listed with
arguments meta cannot take), the pre-check would quietly fall through and the real
operation would run unchecked. These tests call the real pre-check with a zero-size
cap, so a pre-check that ran must refuse; one that fell through refuses nothing.
"""

from __future__ import annotations

import ast

import pytest
import torch

from gradviz.program.allowlists import tables
from gradviz.program.interpreter.statements import Interpreter
from gradviz.program.results.limits import Limits
from gradviz.program.results.trace import RunOptions
from gradviz.program.syntax.program_error import ProgramError


def A():
    return torch.rand(3, 3)


def V():
    return torch.rand(3)


def B3():
    return torch.rand(2, 3, 3)


def IDX():
    return torch.tensor([0, 2])


def BOOL():
    return torch.tensor([[True, False, True]] * 3)


def LONG():
    return torch.tensor([[0, 1, 2]] * 3)


# Typical arguments per name; anything not listed takes one float (3, 3) tensor.
TORCH_ARGS: dict[str, tuple[tuple, dict]] = {
    "tensor": (([[1.0, 2.0], [3.0, 4.0]],), {}),
    "zeros": ((3, 4), {}),
    "ones": ((3, 4), {}),
    "full": (((3, 4), 2.0), {}),
    "arange": ((10,), {}),
    "linspace": ((0.0, 1.0, 5), {}),
    "logspace": ((0.0, 1.0, 5), {}),
    "eye": ((3,), {}),
    "full_like": ((A(), 2.0), {}),
    "atan2": ((A(), A()), {}),
    "pow": ((A(), 2), {}),
    "clamp": ((A(),), {"min": 0.1, "max": 0.5}),
    "clip": ((A(),), {"min": 0.1, "max": 0.5}),
    "maximum": ((A(), A()), {}),
    "minimum": ((A(), A()), {}),
    "where": ((BOOL(), A(), A()), {}),
    "add": ((A(), A()), {}),
    "sub": ((A(), A()), {}),
    "mul": ((A(), A()), {}),
    "div": ((A(), A()), {}),
    "true_divide": ((A(), A()), {}),
    "lerp": ((A(), A(), 0.5), {}),
    "logaddexp": ((A(), A()), {}),
    "softmax": ((A(), 1), {}),
    "log_softmax": ((A(), 1), {}),
    "dist": ((A(), A()), {}),
    "logical_and": ((BOOL(), BOOL()), {}),
    "logical_or": ((BOOL(), BOOL()), {}),
    "logical_xor": ((BOOL(), BOOL()), {}),
    "logical_not": ((BOOL(),), {}),
    "matmul": ((A(), A()), {}),
    "mm": ((A(), A()), {}),
    "bmm": ((B3(), B3()), {}),
    "mv": ((A(), V()), {}),
    "dot": ((V(), V()), {}),
    "outer": ((V(), V()), {}),
    "einsum": (("ij,jk->ik", A(), A()), {}),
    "kron": ((A(), A()), {}),
    "cross": ((A(), A()), {"dim": 1}),
    "max": ((A(), 1), {}),
    "min": ((A(), 1), {}),
    "logsumexp": ((A(), 1), {}),
    "cumsum": ((A(), 1), {}),
    "cumprod": ((A(), 1), {}),
    "cat": (([A(), A()],), {}),
    "concat": (([A(), A()],), {}),
    "stack": (([A(), A()],), {}),
    "reshape": ((A(), (9,)), {}),
    "transpose": ((A(), 0, 1), {}),
    "permute": ((A(), (1, 0)), {}),
    "chunk": ((A(), 3), {}),
    "split": ((A(), 1), {}),
    "broadcast_to": ((V(), (4, 3)), {}),
    "flip": ((A(), (0,)), {}),
    "roll": ((A(), 1), {}),
    "unsqueeze": ((A(), 0), {}),
    "gather": ((A(), 1, LONG()), {}),
    "index_select": ((A(), 0, IDX()), {}),
    "take": ((A(), IDX()), {}),
    "cartesian_prod": ((V(), V()), {}),
    "topk": ((A(), 2), {}),
    "eq": ((A(), A()), {}),
    "ne": ((A(), A()), {}),
    "lt": ((A(), A()), {}),
    "le": ((A(), A()), {}),
    "gt": ((A(), A()), {}),
    "ge": ((A(), A()), {}),
    "allclose": ((A(), A()), {}),
    "isclose": ((A(), A()), {}),
    "equal": ((A(), A()), {}),
    "rand": ((3, 4), {}),
    "randn": ((3, 4), {}),
    "randint": ((0, 10, (3, 4)), {}),
    "randperm": ((10,), {}),
    "randint_like": ((A(), 10), {}),
    "normal": ((0.0, 1.0, (3, 4)), {}),
    "multinomial": ((torch.rand(2, 4), 2), {}),
}

FUNCTIONAL_ARGS: dict[str, tuple[tuple, dict]] = {
    "softmax": ((A(), 1), {}),
    "log_softmax": ((A(), 1), {}),
    "linear": ((A(), torch.rand(2, 3), torch.rand(2)), {}),
    "bilinear": ((A(), A(), torch.rand(2, 3, 3)), {}),
    "mse_loss": ((A(), A()), {}),
    "l1_loss": ((A(), A()), {}),
    "smooth_l1_loss": ((A(), A()), {}),
    "huber_loss": ((A(), A()), {}),
    "cross_entropy": ((A(), IDX().repeat(2)[:3]), {}),
    "nll_loss": ((A(), IDX().repeat(2)[:3]), {}),
    "binary_cross_entropy": ((A(), A()), {}),
    "binary_cross_entropy_with_logits": ((A(), A()), {}),
    "kl_div": ((A(), A()), {"reduction": "batchmean"}),
    "cosine_similarity": ((A(), A()), {}),
    "one_hot": ((IDX(), 3), {}),
    "pad": ((A(), (1, 1)), {}),
    "conv1d": ((torch.rand(1, 2, 8), torch.rand(4, 2, 3)), {}),
    "conv2d": ((torch.rand(1, 2, 8, 8), torch.rand(4, 2, 3, 3)), {}),
    "max_pool1d": ((torch.rand(1, 2, 8), 2), {}),
    "max_pool2d": ((torch.rand(1, 2, 8, 8), 2), {}),
    "avg_pool1d": ((torch.rand(1, 2, 8), 2), {}),
    "avg_pool2d": ((torch.rand(1, 2, 8, 8), 2), {}),
    "layer_norm": ((A(), (3,)), {}),
    "embedding": ((IDX(), torch.rand(5, 3)), {}),
}

LINALG_ARGS: dict[str, tuple[tuple, dict]] = {}

METHOD_ARGS: dict[str, tuple] = {
    "add": (A(),),
    "sub": (A(),),
    "mul": (A(),),
    "div": (A(),),
    "pow": (2,),
    "matmul": (A(),),
    "mm": (A(),),
    "mv": (V(),),
    "clamp": (0.1, 0.5),
    "clip": (0.1, 0.5),
    "maximum": (A(),),
    "minimum": (A(),),
    "softmax": (1,),
    "log_softmax": (1,),
    "view": (9,),
    "view_as": (torch.rand(9),),
    "reshape": (9,),
    "reshape_as": (torch.rand(9),),
    "transpose": (0, 1),
    "permute": (1, 0),
    "expand": (2, 3, 3),
    "expand_as": (B3(),),
    "repeat": (2, 2),
    "chunk": (3,),
    "split": (1,),
    "flip": (0,),
    "roll": (1,),
    "gather": (1, LONG()),
    "index_select": (0, IDX()),
    "unsqueeze": (0,),
    "logsumexp": (1,),
    "cumsum": (1,),
    "masked_fill": (BOOL(), 0.0),
    "masked_fill_": (BOOL(), 0.0),
    "narrow": (0, 0, 2),
    "select": (0, 1),
    "topk": (2,),
    "eq": (A(),),
    "ne": (A(),),
    "lt": (A(),),
    "le": (A(),),
    "gt": (A(),),
    "ge": (A(),),
    "where": (BOOL(), A()),
    "type_as": (torch.zeros(1, dtype=torch.float64),),
    "to": (torch.float64,),
    "add_": (A(),),
    "sub_": (A(),),
    "mul_": (A(),),
    "div_": (A(),),
    "pow_": (2,),
    "clamp_": (0.1, 0.5),
    "fill_": (1.0,),
    "copy_": (A(),),
}
METHOD_SELF: dict[str, object] = {"mv": A, "dot": V, "outer": V}
METHOD_ARGS["dot"] = (V(),)
METHOD_ARGS["type"] = (torch.float64,)  # .type() alone names the type: no tensor made
METHOD_ARGS["outer"] = (V(),)


def interpreter() -> Interpreter:
    # A cap no output can pass: a pre-check that really ran must refuse.
    options = RunOptions(limits=Limits(max_tensor_elements=-1), classic=False)
    return Interpreter("", ast.Module(body=[], type_ignores=[]), options)


def assert_prechecked(label: str, fn, args: tuple, kwargs: dict) -> None:
    interp = interpreter()
    with pytest.raises(ProgramError) as info:
        interp.budget.precheck(label, fn, args, kwargs, None)
    assert info.value.kind == "limit", info.value
    assert "would allocate" in info.value.message


def _meta(table: dict) -> list[str]:
    return [name for name, spec in table.items() if spec.check == "meta"]


@pytest.mark.parametrize("name", _meta(tables.TORCH_FUNCTIONS))
def test_torch_function_has_meta_kernel(name):
    spec = tables.TORCH_FUNCTIONS[name]
    args, kwargs = TORCH_ARGS.get(name, ((A(),), {}))
    if spec.random:
        kwargs = {**kwargs, "generator": torch.Generator().manual_seed(0)}
    assert_prechecked(f"torch.{name}", spec.target, args, kwargs)


@pytest.mark.parametrize("name", _meta(tables.FUNCTIONAL))
def test_functional_has_meta_kernel(name):
    spec = tables.FUNCTIONAL[name]
    args, kwargs = FUNCTIONAL_ARGS.get(name, ((A(),), {}))
    assert_prechecked(f"F.{name}", spec.target, args, kwargs)


@pytest.mark.parametrize("name", _meta(tables.LINALG))
def test_linalg_has_meta_kernel(name):
    spec = tables.LINALG[name]
    args, kwargs = LINALG_ARGS.get(name, ((A(),), {}))
    assert_prechecked(f"torch.linalg.{name}", spec.target, args, kwargs)


@pytest.mark.parametrize(
    "name", [n for n, check in tables.TENSOR_METHODS.items() if check == "meta"]
)
def test_tensor_method_has_meta_kernel(name):
    self_tensor = METHOD_SELF.get(name, A)()
    args = METHOD_ARGS.get(name, ())
    assert_prechecked(f".{name}()", getattr(torch.Tensor, name), (self_tensor, *args), {})


def test_precheck_does_not_allocate_factories():
    # A 40 GB request is refused on the meta device: run fast, allocate nothing.
    interp = Interpreter("", ast.Module(body=[], type_ignores=[]), RunOptions())
    with pytest.raises(ProgramError) as info:
        interp.budget.precheck("torch.ones", torch.ones, (100_000, 100_000), {}, None)
    assert "40 GB" in info.value.message


def test_tables_name_real_callables():
    for table in (tables.TORCH_FUNCTIONS, tables.FUNCTIONAL, tables.LINALG):
        for name, spec in table.items():
            assert callable(spec.target), name
            assert spec.check in ("meta", "broadcast", "bounded"), name
    for name, check in tables.TENSOR_METHODS.items():
        assert check in ("meta", "broadcast", "bounded"), name
        assert hasattr(torch.Tensor, name), name
    for name in tables.TENSOR_ATTRIBUTES:
        assert hasattr(torch.ones(2, 2), name), name


def test_no_private_or_dangerous_entries():
    names = set(tables.TORCH_FUNCTIONS) | set(tables.FUNCTIONAL) | set(tables.TENSOR_METHODS)
    assert not any(n.startswith("_") for n in names)
    for bad in ("load", "save", "from_file", "empty", "empty_like", "set_", "storage"):
        assert bad not in names


def test_constructors_are_functions():
    assert tables.CONSTRUCTORS.issubset(tables.TORCH_FUNCTIONS)


def test_all_known_names():
    names = tables.all_known_names()
    assert {"ones", "relu", "grad", "float32", "pi", "backward"} <= names


def _broadcast(table: dict) -> list[str]:
    return [name for name, spec in table.items() if spec.check == "broadcast"]


@pytest.mark.parametrize("name", _broadcast(tables.TORCH_FUNCTIONS))
def test_broadcast_function_size_matches_real_output(name):
    # The shape-only estimate must cover what the real call allocates.
    spec = tables.TORCH_FUNCTIONS[name]
    args, kwargs = TORCH_ARGS.get(name, ((A(), A()), {}))
    real = spec.target(*args, **kwargs)
    shapes = [v.shape for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
    assert torch.broadcast_shapes(*shapes).numel() >= real.numel()
    interp = Interpreter(
        "", ast.Module(body=[], type_ignores=[]), RunOptions(limits=Limits(max_tensor_elements=-1))
    )
    with pytest.raises(ProgramError) as info:
        interp.budget.precheck_broadcast(f"torch.{name}", args, kwargs, None)
    assert info.value.kind == "limit"


def test_broadcast_bomb_refused_before_allocation():
    from gradviz.program.interpreter.run import run_program

    trace = run_program("a = torch.ones(1, 20000)\nb = torch.ones(20000, 1)\nc = a * b\n")
    assert trace.error.kind == "limit" and trace.error.line == 3
    assert "20000x20000" in trace.error.message


def test_spectral_norm_refused():
    from gradviz.program.interpreter.run import run_program

    for program in (
        "x = torch.ones(3, 3)\ny = x.norm(p='nuc')\n",
        "x = torch.ones(3, 3)\ny = torch.norm(x, 'nuc')\n",
    ):
        trace = run_program(program)
        assert trace.error.kind == "forbidden" and trace.error.line == 2
