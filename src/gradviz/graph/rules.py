"""Autograd's local rules, as a table: RULES maps a backward function's name to its local
derivative in words (what it does with the gradient flowing in)."""

from __future__ import annotations

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
