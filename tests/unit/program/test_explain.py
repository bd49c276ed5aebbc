"""gradviz.program.results.explain: each explanation matches PyTorch's real message for its mistake."""

from __future__ import annotations

import pytest
import torch

from gradviz.devices.errors import DEVICE_ERRORS
from gradviz.graph.rules import RULES, rule_for
from gradviz.program.results.explain import EXPLANATIONS, explain_error


def backward_twice():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x**2).sum()
    y.backward()
    y.backward()


def inplace_leaf():
    w = torch.ones(3, requires_grad=True)
    w += 1


def inplace_leaf_view():
    x = torch.ones(3, requires_grad=True)
    x[0] = 5


def no_grad_tensor():
    (torch.tensor([1.0, 2.0]) * 2).sum().backward()


def implicit_scalar():
    (torch.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def inplace_saved():
    x = torch.ones(3, requires_grad=True)
    a = x * 2
    b = a**2  # saves a
    a.add_(1)
    b.sum().backward()


def int_requires_grad():
    torch.tensor([1, 2], requires_grad=True)


def int_requires_grad_method():
    torch.tensor([1, 2]).requires_grad_()


def no_cuda():
    torch.ones(1, device="cuda")


def matmul_shapes():
    torch.ones(2, 3) @ torch.ones(2, 3)


def broadcast_shapes():
    torch.ones(2) + torch.ones(3)


def dtype_mismatch():
    torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)


def dtype_target():
    torch.nn.functional.cross_entropy(torch.ones(2, 3), torch.tensor([0.0, 1.0]))


def numpy_requires_grad():
    torch.ones(2, requires_grad=True).numpy()


def item_non_scalar():
    torch.ones(3).item()


def float_non_scalar():
    float(torch.ones(3))


def device_mismatch():
    torch.ones(2, device="cuda") + torch.ones(2)


def numpy_cuda():
    torch.ones(2, device="cuda").numpy()


CPU_CASES = [
    (backward_twice, "backward_twice"),
    (inplace_leaf, "inplace_leaf"),
    (inplace_leaf_view, "inplace_leaf_view"),
    (no_grad_tensor, "no_grad_tensor"),
    (implicit_scalar, "implicit_scalar"),
    (inplace_saved, "inplace_saved"),
    (int_requires_grad, "int_requires_grad"),
    (int_requires_grad_method, "int_requires_grad"),
    (matmul_shapes, "matmul_shapes"),
    (broadcast_shapes, "broadcast_shapes"),
    (dtype_mismatch, "dtype_mismatch"),
    (dtype_target, "dtype_mismatch"),
    (numpy_requires_grad, "numpy_requires_grad"),
    (item_non_scalar, "item_non_scalar"),
    (float_non_scalar, "item_non_scalar"),
]

# Messages that need a GPU to produce for real; on CPU they are checked against the text
# PyTorch prints (torch 2.x).
GPU_CASES = [
    (
        device_mismatch,
        "device_mismatch",
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cpu!",
    ),
    (
        numpy_cuda,
        "numpy_cuda",
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
        "tensor to host memory first.",
    ),
]


def message_of(fn) -> str:
    with pytest.raises((RuntimeError, ValueError, TypeError)) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize(("fn", "key"), CPU_CASES, ids=[f.__name__ for f, _ in CPU_CASES])
def test_real_message_is_explained(fn, key):
    explanation = explain_error(message_of(fn))
    assert explanation is not None
    assert explanation.key == key


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available: see the GPU test")
def test_no_cuda_is_explained():
    explanation = explain_error(message_of(no_cuda))
    assert explanation is not None and explanation.key == "no_cuda"


@pytest.mark.parametrize(("fn", "key", "text"), GPU_CASES, ids=[k for _, k, _ in GPU_CASES])
def test_gpu_messages(fn, key, text):
    if torch.cuda.is_available():
        text = message_of(fn)
    explanation = explain_error(text)
    assert explanation is not None and explanation.key == key


def test_every_explanation_is_covered():
    covered = {k for _, k in CPU_CASES} | {k for _, k, _ in GPU_CASES} | {"no_cuda"}
    device_keys = {t.explanation for t in DEVICE_ERRORS.values()} - {None}
    assert {e.key for _, e in EXPLANATIONS} | device_keys == covered


def test_explanations_are_complete():
    keys = [e.key for _, e in EXPLANATIONS]
    assert len(keys) == len(set(keys))
    for _, e in EXPLANATIONS:
        assert e.title and e.plain and e.fix
        assert set(e.as_details().to_dict()) == {"explanation", "title", "fix"}


def test_unknown_message():
    assert explain_error("something nobody has seen") is None
    assert explain_error("") is None


def test_rule_for_known_and_unknown():
    assert rule_for("PowBackward0") == RULES["PowBackward0"]
    assert "2·a" in rule_for("PowBackward0")
    assert rule_for("torch::autograd::AccumulateGrad") == RULES["AccumulateGrad"]
    unknown = rule_for("FancyBackward7")
    assert unknown.startswith("FancyBackward7")
    assert "derivative" in unknown
