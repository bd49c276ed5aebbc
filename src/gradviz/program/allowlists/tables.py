"""Allow-lists of the program language, kept as data.

Each callable a program can reach is named here, with how its cost is checked
before it runs:

- "meta": run first on shape-only ("meta") tensors to learn the output's size and
  the matrix work, then refuse if a cap would be passed;
- "broadcast": element-wise on several inputs; the output's size is the broadcast
  of theirs, computed from shapes alone (cheap, the common case);
- "bounded": the output has no more values than an input (unary element-wise
  operations, reductions) or is not a tensor, so no pre-check is needed.

Random functions get the run's own torch.Generator, so a program's values are
reproducible (share links, gradient checks) and no global RNG is touched.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class FnSpec:
    target: object
    check: str = "meta"  # meta | bounded
    random: bool = False


def cuda_synchronize(device=None) -> None:
    """torch.cuda.synchronize: waits for a real GPU; on simulated CUDA there is nothing to
    wait for (the values were computed on the CPU already)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize(device)


def _specs(names: str, namespace, **kw) -> dict[str, FnSpec]:
    return {name: FnSpec(getattr(namespace, name), **kw) for name in names.split()}


# torch.* functions. `empty`/`empty_like` are left out on purpose: uninitialised
# memory can show bytes another computation left behind. Matrix norms other than
# Frobenius (SVD-based) and linalg inverses are left out: their cost is cubic and
# torch's FLOP counter does not see it.
UNARY = (
    "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "sigmoid relu abs neg sign square floor ceil round trunc frac reciprocal erf logical_not "
    "isnan isinf isfinite softmax log_softmax cumsum cumprod"
)
REDUCTIONS = (
    "sum mean prod max min amax amin argmax argmin std var logsumexp all any median dist trace"
)
ELEMENTWISE = (
    "add sub mul div true_divide pow atan2 clamp clip maximum minimum where lerp logaddexp "
    "logical_and logical_or logical_xor eq ne lt le gt ge isclose"
)

TORCH_FUNCTIONS: dict[str, FnSpec] = {
    **_specs(
        "tensor zeros ones full arange linspace logspace eye zeros_like ones_like full_like "
        "matmul mm bmm mv dot outer einsum kron cross norm "
        "cat concat stack reshape flatten squeeze unsqueeze transpose permute t chunk split "
        "unbind broadcast_to tril triu diag diagonal flip roll gather index_select take "
        "cartesian_prod sort argsort topk",
        torch,
    ),
    **_specs(UNARY + " " + REDUCTIONS, torch, check="bounded"),
    **_specs(ELEMENTWISE, torch, check="broadcast"),
    **_specs(
        "rand randn randint randperm rand_like randn_like randint_like normal bernoulli multinomial",
        torch,
        random=True,
    ),
    **_specs(
        # allclose/equal give one Python bool and have no meta kernel (they read the data)
        "masked_select nonzero unique numel is_tensor is_floating_point is_grad_enabled "
        "allclose equal from_numpy",
        torch,
        check="bounded",
    ),
}

FUNCTIONAL: dict[str, FnSpec] = {
    **_specs(
        "linear bilinear mse_loss l1_loss smooth_l1_loss huber_loss "
        "binary_cross_entropy binary_cross_entropy_with_logits kl_div cosine_similarity one_hot "
        "pad conv1d conv2d max_pool1d max_pool2d avg_pool1d avg_pool2d layer_norm embedding",
        F,
    ),
    # Classification losses do not broadcast (the target's shape must fit the input's):
    # what they make is no bigger than the input (its log-softmax) and the output no bigger
    # than the target, so no pre-check on the meta device (1.4 ms, its kernels in Python).
    **_specs("cross_entropy nll_loss", F, check="bounded"),
    **_specs(
        "relu relu6 leaky_relu gelu silu elu selu softplus softsign mish hardtanh logsigmoid "
        "sigmoid tanh softmax log_softmax normalize",
        F,
        check="bounded",
    ),
}

LINALG: dict[str, FnSpec] = _specs("vector_norm", torch.linalg)

# Operations whose cost is matrix work: their pre-check also counts FLOPs.
# Pooling reads a window of the input for every output value: its work is the output's
# size times the window's, which the FLOP counter does not count.
POOLING = frozenset([F.max_pool1d, F.max_pool2d, F.avg_pool1d, F.avg_pool2d])

MATRIX_WORK = frozenset(
    [torch.matmul, torch.mm, torch.bmm, torch.mv, torch.dot, torch.einsum, F.linear, F.bilinear]
    + [F.conv1d, F.conv2d, operator.matmul, operator.imatmul]
    + [torch.Tensor.matmul, torch.Tensor.mm, torch.Tensor.mv, torch.Tensor.dot]
)


def _methods(names: str, check: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), check)


# Tensor methods, by how their cost is checked.
TENSOR_METHODS: dict[str, str] = {
    **_methods(
        "matmul mm mv dot outer norm view view_as reshape reshape_as flatten squeeze unsqueeze "
        "transpose permute t expand expand_as repeat contiguous chunk split unbind flip roll "
        "gather index_select narrow select tril triu diag diagonal sort argsort topk float "
        "double half bfloat16 int long bool type type_as to clone copy_",
        "meta",
    ),
    **_methods(
        "add sub mul div pow clamp clip maximum minimum eq ne lt le gt ge where masked_fill "
        "add_ sub_ mul_ div_ pow_ clamp_ masked_fill_",
        "broadcast",
    ),
    **_methods(
        "neg abs exp log log2 sqrt rsqrt sin cos tanh sigmoid relu square reciprocal floor ceil "
        "round sign softmax log_softmax sum mean prod max min amax amin argmax argmin std var "
        "logsumexp cumsum all any fill_ exp_ neg_ relu_ sigmoid_ tanh_ abs_ "
        "masked_select nonzero unique item tolist numpy numel nelement size dim is_floating_point "
        "is_contiguous element_size allclose equal isnan isinf detach detach_ requires_grad_ "
        "retain_grad zero_ backward cuda cpu",
        "bounded",
    ),
}

# The exact types of the tensors a program holds (a layer's parameters are nn.Parameter):
# what the interpreter's and the budget's short paths for tensors test with `type(v) in`.
TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})

# Attributes a program may read from a tensor (methods are in TENSOR_METHODS).
TENSOR_ATTRIBUTES = frozenset(
    [
        "shape",
        "dtype",
        "device",
        "grad",
        "requires_grad",
        "is_leaf",
        "ndim",
        "T",
        "mT",
        "data",
        "is_cuda",
        "grad_fn",
    ]
)

DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name)
    for name in [
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "half",
        "float",
        "double",
        "int8",
        "int16",
        "int32",
        "int64",
        "long",
        "int",
        "short",
        "uint8",
        "bool",
    ]
}

CONSTANTS: dict[str, float] = {"pi": torch.pi, "e": torch.e, "inf": torch.inf, "nan": torch.nan}

# Functions that make new tensors from numbers (not from other tensors).
CONSTRUCTORS = frozenset(
    [
        "tensor",
        "zeros",
        "ones",
        "full",
        "arange",
        "linspace",
        "logspace",
        "eye",
        "rand",
        "randn",
        "randint",
        "randperm",
        "normal",
    ]
)


def all_known_names() -> set[str]:
    """Every function, method and attribute name: the vocabulary for "did you mean"."""
    return (
        set(TORCH_FUNCTIONS)
        | set(FUNCTIONAL)
        | set(LINALG)
        | set(TENSOR_METHODS)
        | set(TENSOR_ATTRIBUTES)
        | set(DTYPES)
        | set(CONSTANTS)
    )


# torch.nn.init: in place on a layer's parameters (under no_grad, as PyTorch runs them), no
# bigger than the tensor they fill; the random ones take the run's own generator.
NN_INIT: dict[str, FnSpec] = {
    **_specs("zeros_ ones_ constant_ eye_ dirac_ calculate_gain", torch.nn.init, check="bounded"),
    **_specs(
        "normal_ uniform_ trunc_normal_ xavier_uniform_ xavier_normal_ kaiming_uniform_ "
        "kaiming_normal_",
        torch.nn.init,
        check="bounded",
        random=True,
    ),
}
