"""PyTorch's error messages, explained in plain words.

A table (data, not an if-chain): EXPLANATIONS maps a pattern in PyTorch's own message to
what it means and how to fix it. Device errors (tensors on different devices, .numpy() on a
GPU tensor, no CUDA) are explained by gradviz.devices.errors, the one table of their words,
which a runtime error also uses with the program's own tensors. Autograd's local rules are
gradviz.graph.rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gradviz.devices.errors import explain_device_error
from gradviz.program.results.reports import ErrorDetails
from gradviz.util.mdtext import code


@dataclass(frozen=True)
class Explanation:
    key: str
    title: str
    plain: str
    fix: str

    def as_details(self) -> ErrorDetails:
        return ErrorDetails(explanation=self.key, title=self.title, fix=self.fix)


EXPLANATIONS: list[tuple[str, Explanation]] = [
    (
        r"backward through the graph a second time",
        Explanation(
            "backward_twice",
            "Backward ran twice through the same graph",
            "To save memory, autograd frees the values it saved for the backward pass (the "
            "inputs of ** , *, exp, ...) as soon as backward() has used them. A second "
            "backward() through the same operations finds them gone.",
            "Call backward(retain_graph=True) the first time if you really need two passes, or "
            "rebuild the graph (rerun the forward computation) before the second backward().",
        ),
    ),
    (
        r"(?<!view of a )leaf Variable that requires grad is being used in an in-place operation",
        Explanation(
            "inplace_leaf",
            "In-place change to a leaf that requires grad",
            "A leaf tensor with requires_grad=True is a parameter autograd must differentiate "
            "with respect to. Changing it in place (x += 1, x.add_(1), x[0] = 5) would destroy "
            "the value the gradient is taken at, so PyTorch refuses.",
            "Make a new tensor instead (x2 = x + 1), or change the value without tracking: "
            "`with torch.no_grad(): x += 1` (what optimizers do in their step).",
        ),
    ),
    (
        r"view of a leaf Variable that requires grad is being used in an in-place",
        Explanation(
            "inplace_leaf_view",
            "In-place change to a view of a leaf that requires grad",
            "Indexing or slicing a leaf gives a view that shares its memory; writing into the "
            "view would change the leaf behind autograd's back.",
            "Clone first (y = x.clone(); y[0] = 5) or write under `with torch.no_grad():`.",
        ),
    ),
    (
        r"does not require grad and does not have a grad_fn",
        Explanation(
            "no_grad_tensor",
            "Backward on a tensor that does not require grad",
            "backward() needs a graph to walk, but this tensor was computed from inputs none of "
            "which has requires_grad=True (or it was made under torch.no_grad(), or detached), "
            "so autograd recorded nothing.",
            "Create the input with requires_grad=True (e.g. torch.tensor([1.0, 2.0], "
            "requires_grad=True)) or call x.requires_grad_() before computing with it.",
        ),
    ),
    (
        r"grad can be implicitly created only for scalar outputs",
        Explanation(
            "implicit_scalar",
            "backward() on a non-scalar output",
            "backward() with no argument computes d(output)/d(inputs), which is only one "
            "number per input when the output is a single number. For a tensor output PyTorch "
            "needs to be told how to weigh its elements: the `gradient` argument (a "
            "vector-Jacobian product).",
            "Reduce first (y.sum().backward() or y.mean().backward()), or pass a gradient: "
            "y.backward(torch.ones_like(y)), which is the same as y.sum().backward().",
        ),
    ),
    (
        r"modified by an inplace operation",
        Explanation(
            "inplace_saved",
            "A value backward needs was changed in place",
            "Autograd saved a tensor during the forward pass (to use it in backward) and the "
            "program changed it in place afterwards; its version counter no longer matches.",
            "Use the out-of-place form (y = y * 2 instead of y *= 2 or y.mul_(2)) for tensors "
            "the graph still needs.",
        ),
    ),
    (
        r"[Oo]nly Tensors of floating point( and complex)? dtype can require gradients",
        Explanation(
            "int_requires_grad",
            "Integer tensors cannot require grad",
            "Gradients are about small changes; an integer tensor cannot change by a small "
            "amount, so PyTorch only lets floating-point tensors require grad.",
            "Use floats: torch.tensor([1.0, 2.0], requires_grad=True) or "
            "torch.arange(1, 4, dtype=torch.float32, requires_grad=True).",
        ),
    ),
    (
        r"mat1 and mat2 shapes cannot be multiplied|size mismatch|shapes cannot be multiplied",
        Explanation(
            "matmul_shapes",
            "Matrix shapes do not fit",
            "A matrix product (n x k) @ (k x m) needs the inner sizes k to agree.",
            "Check the shapes (print(a.shape, b.shape)); transpose one side (b.T) or reshape.",
        ),
    ),
    (
        r"must match the size of tensor|The size of tensor a",
        Explanation(
            "broadcast_shapes",
            "Shapes do not broadcast",
            "Element-wise operations line shapes up from the right; each pair of sizes must be "
            "equal or one of them 1.",
            "Add a dimension of size 1 where you want broadcasting: x.unsqueeze(0) or x[:, None].",
        ),
    ),
    (
        r"expected scalar type|Found dtype .* but expected|expected .* dtype",
        Explanation(
            "dtype_mismatch",
            "Mixed dtypes",
            "This operation needs its inputs in the same dtype (e.g. float32 and float32; "
            "class targets as int64).",
            "Convert one side: x.float(), y.long(), or .to(torch.float32).",
        ),
    ),
    (
        r"Can't call numpy\(\) on Tensor that requires grad",
        Explanation(
            "numpy_requires_grad",
            ".numpy() on a tensor autograd is tracking",
            "NumPy cannot record operations for autograd, so PyTorch refuses to hand over a "
            "tensor that requires grad.",
            "Use t.detach().numpy().",
        ),
    ),
    (
        r"a Tensor with \d+ elements cannot be converted to Scalar|only one element tensors",
        Explanation(
            "item_non_scalar",
            ".item() on a tensor with many values",
            ".item() returns one Python number, so the tensor must hold exactly one value.",
            "Reduce first (t.sum().item()) or use t.tolist().",
        ),
    ),
]


def explain_error(message: str) -> Explanation | None:
    device = explain_device_error(message, {})
    if device is not None and device.explanation is not None:
        return Explanation(device.explanation, device.title, device.rule, code(device.fix_code))
    for pattern, explanation in EXPLANATIONS:
        if re.search(pattern, message):
            return explanation
    return None
