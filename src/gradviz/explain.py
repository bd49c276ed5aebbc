"""PyTorch's error messages, explained in plain words, and autograd's local rules.

Both are tables (data, not if-chains): EXPLANATIONS maps a pattern in PyTorch's own
message to what it means and how to fix it; RULES maps a backward function's name
to its local derivative in words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    key: str
    title: str
    plain: str
    fix: str

    def as_details(self) -> dict:
        return {"explanation": self.key, "title": self.title, "fix": self.fix}


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
        r"Expected all tensors to be on the same device",
        Explanation(
            "device_mismatch",
            "Tensors on different devices",
            "An operation's tensor operands must live on the same device. PyTorch does not copy "
            "between devices on its own, because copies are slow and should be visible. "
            "(0-dim CPU tensors are the exception: they may be combined with GPU tensors.)",
            "Move one operand: b = b.to(a.device).",
        ),
    ),
    (
        r"Found no NVIDIA driver|Torch not compiled with CUDA enabled|no CUDA GPUs are available",
        Explanation(
            "no_cuda",
            "No CUDA GPU on this machine",
            "The program asked for a CUDA device, but this machine has none that PyTorch can use.",
            "Use device='cpu', or pick a device that exists: "
            "torch.device('cuda' if torch.cuda.is_available() else 'cpu').",
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
        r"can't convert cuda|Use Tensor.cpu\(\) to copy the tensor to host memory",
        Explanation(
            "numpy_cuda",
            ".numpy() on a GPU tensor",
            "NumPy arrays live in host memory; a GPU tensor must be copied back first.",
            "Use t.cpu().numpy() (and t.detach().cpu().numpy() if it requires grad).",
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
    for pattern, explanation in EXPLANATIONS:
        if re.search(pattern, message):
            return explanation
    return None


# Local derivative rules: how each backward function turns the gradient flowing in
# ("upstream", dL/d(output)) into gradients for its inputs.
RULES: dict[str, str] = {
    "AddBackward0": "d(a + b): passes upstream unchanged to a and to b (summed over broadcast dims)",
    "AddBackward1": "d(a + c): passes upstream unchanged to a",
    "SubBackward0": "d(a - b): upstream to a, -upstream to b",
    "SubBackward1": "d(a - c): upstream to a",
    "RsubBackward1": "d(c - a): -upstream to a",
    "MulBackward0": "d(a·b): b·upstream to a, a·upstream to b",
    "MulBackward1": "d(a·c): c·upstream to a",
    "DivBackward0": "d(a/b): upstream/b to a, -a·upstream/b² to b",
    "DivBackward1": "d(a/c): upstream/c to a",
    "PowBackward0": "d(aⁿ): n·aⁿ⁻¹·upstream to a (for a ** 2: 2·a·upstream)",
    "PowBackward1": "d(aᵇ): b·aᵇ⁻¹·upstream to a, aᵇ·ln(a)·upstream to b",
    "PowBackward2": "d(cᵃ): cᵃ·ln(c)·upstream to a",
    "NegBackward0": "d(-a): -upstream to a",
    "MeanBackward0": "d(mean(a)): upstream/N to every element of a (N elements)",
    "MeanBackward1": "d(mean(a, dim)): upstream/N spread along the reduced dim",
    "SumBackward0": "d(sum(a)): upstream copied to every element of a",
    "SumBackward1": "d(sum(a, dim)): upstream copied along the reduced dim",
    "ExpBackward0": "d(exp(a)): exp(a)·upstream to a",
    "LogBackward0": "d(log(a)): upstream/a to a",
    "SqrtBackward0": "d(√a): upstream/(2√a) to a",
    "SinBackward0": "d(sin a): cos(a)·upstream",
    "CosBackward0": "d(cos a): -sin(a)·upstream",
    "TanhBackward0": "d(tanh a): (1 - tanh²a)·upstream",
    "SigmoidBackward0": "d(σ(a)): σ(a)(1 - σ(a))·upstream",
    "ReluBackward0": "d(relu a): upstream where a > 0, 0 elsewhere",
    "MmBackward0": "d(A@B): upstream@Bᵀ to A, Aᵀ@upstream to B",
    "MvBackward0": "d(A@v): upstream⊗v to A, Aᵀ@upstream to v",
    "DotBackward0": "d(a·b): b·upstream to a, a·upstream to b",
    "BmmBackward0": "d(A@B) per batch: upstream@Bᵀ to A, Aᵀ@upstream to B",
    "AddmmBackward0": "d(bias + x@Wᵀ) (linear layer): upstream summed to bias, upstream@W to x, upstreamᵀ@x to W",
    "TBackward0": "d(Aᵀ): upstreamᵀ to A",
    "TransposeBackward0": "d(transpose): transposes upstream back",
    "PermuteBackward0": "d(permute): permutes upstream back",
    "ViewBackward0": "d(view): reshapes upstream back to the input's shape",
    "ReshapeAliasBackward0": "d(reshape): reshapes upstream back",
    "UnsqueezeBackward0": "d(unsqueeze): squeezes upstream back",
    "SqueezeBackward0": "d(squeeze): unsqueezes upstream back",
    "ExpandBackward0": "d(expand): sums upstream over the expanded dims",
    "SelectBackward0": "d(a[i]): upstream into position i, zeros elsewhere",
    "SliceBackward0": "d(a[i:j]): upstream into the slice, zeros elsewhere",
    "IndexBackward0": "d(a[idx]): upstream scattered back to the indexed positions",
    "CatBackward0": "d(cat): splits upstream back into the pieces",
    "StackBackward0": "d(stack): unbinds upstream back into the pieces",
    "CloneBackward0": "d(clone): passes upstream unchanged",
    "ToCopyBackward0": "d(.to(...)): copies upstream back to the input's device and dtype",
    "SoftmaxBackward0": "d(softmax): s·(upstream - Σ s·upstream) to the input",
    "LogSoftmaxBackward0": "d(log_softmax): upstream - softmax·Σ upstream",
    "NllLossBackward0": "d(nll_loss): -1/N at each target class (mean reduction), 0 elsewhere",
    "MseLossBackward0": "d(mean((a - b)²)): 2(a - b)/N·upstream to a",
    "MaxBackward0": "d(max): upstream to the position of the maximum",
    "MaxBackward1": "d(max(a, dim)): upstream to the positions of the maxima",
    "AbsBackward0": "d(|a|): sign(a)·upstream",
    "ClampBackward1": "d(clamp): upstream where a is inside the range, 0 outside",
    "WhereBackward0": "d(where(c, a, b)): upstream to a where c, to b elsewhere",
    "LinalgVectorNormBackward0": "d(‖a‖): a/‖a‖·upstream",
    "NormBackward1": "d(‖a‖): a/‖a‖·upstream",
    "AccumulateGrad": "adds the incoming gradient into the leaf's .grad (this is where x.grad comes from)",
}


def rule_for(fn_name: str) -> str:
    short = fn_name.split("::")[-1]
    return RULES.get(short, f"{short}: PyTorch's derivative formula for this operation")
