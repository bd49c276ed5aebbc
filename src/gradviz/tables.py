"""Allow-lists of the program language, kept as data.

Each callable a program can reach is named here, with how its cost is checked
before it runs:

- "meta": run first on shape-only ("meta") tensors to learn the output's size and
  the matrix work, then refuse if a cap would be passed;
- "bounded": the output is no larger than the inputs (or is not a tensor), so
  no pre-check is needed.

Random functions get the run's own torch.Generator, so a program's values are
reproducible (share links, gradient checks) and no global RNG is touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class FnSpec:
    target: object
    check: str = "meta"  # meta | bounded
    random: bool = False


def _specs(names: str, namespace, **kw) -> dict[str, FnSpec]:
    return {name: FnSpec(getattr(namespace, name), **kw) for name in names.split()}


# torch.* functions. `empty`/`empty_like` are left out on purpose: uninitialised
# memory can show bytes another computation left behind.
TORCH_FUNCTIONS: dict[str, FnSpec] = {
    **_specs(
        "tensor zeros ones full arange linspace logspace eye zeros_like ones_like full_like "
        # math
        "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan atan2 sinh cosh "
        "tanh sigmoid relu abs neg sign pow square clamp clip floor ceil round trunc frac "
        "reciprocal maximum minimum where add sub mul div true_divide lerp erf logaddexp "
        "softmax log_softmax dist logical_and logical_or logical_xor logical_not "
        # linear algebra
        "matmul mm bmm mv dot outer einsum kron cross "
        # reductions
        "sum mean prod max min amax amin argmax argmin std var norm logsumexp cumsum cumprod "
        "all any median "
        # shape
        "cat concat stack reshape flatten squeeze unsqueeze transpose permute t chunk split "
        "unbind broadcast_to tril triu diag diagonal trace flip roll gather index_select take "
        "cartesian_prod sort argsort topk "
        # comparisons
        "eq ne lt le gt ge isclose isnan isinf isfinite",
        torch,
    ),
    **_specs(
        "rand randn randint randperm rand_like randn_like randint_like normal", torch, random=True
    ),
    **_specs("bernoulli multinomial", torch, random=True),
    **_specs(
        # allclose/equal give one Python bool and have no meta kernel (they read the data)
        "masked_select nonzero unique numel is_tensor is_floating_point is_grad_enabled "
        "allclose equal",
        torch,
        check="bounded",
    ),
}

FUNCTIONAL: dict[str, FnSpec] = _specs(
    "relu relu6 leaky_relu gelu silu elu selu softplus softsign mish hardtanh logsigmoid "
    "sigmoid tanh softmax log_softmax linear bilinear mse_loss l1_loss smooth_l1_loss huber_loss "
    "cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div "
    "cosine_similarity normalize one_hot pad conv1d conv2d max_pool1d max_pool2d avg_pool1d "
    "avg_pool2d layer_norm embedding",
    F,
)

LINALG: dict[str, FnSpec] = _specs("norm vector_norm matrix_norm inv det", torch.linalg)

# Tensor methods, by how their cost is checked.
TENSOR_METHODS: dict[str, str] = {
    **dict.fromkeys(
        [
            "add",
            "sub",
            "mul",
            "div",
            "pow",
            "matmul",
            "mm",
            "mv",
            "dot",
            "neg",
            "abs",
            "exp",
            "log",
            "log2",
            "sqrt",
            "rsqrt",
            "sin",
            "cos",
            "tanh",
            "sigmoid",
            "relu",
            "clamp",
            "clip",
            "square",
            "reciprocal",
            "floor",
            "ceil",
            "round",
            "sign",
            "maximum",
            "minimum",
            "softmax",
            "log_softmax",
            "sum",
            "mean",
            "prod",
            "max",
            "min",
            "amax",
            "amin",
            "argmax",
            "argmin",
            "std",
            "var",
            "norm",
            "logsumexp",
            "cumsum",
            "all",
            "any",
            "view",
            "view_as",
            "reshape",
            "reshape_as",
            "flatten",
            "squeeze",
            "unsqueeze",
            "transpose",
            "permute",
            "t",
            "expand",
            "expand_as",
            "repeat",
            "contiguous",
            "chunk",
            "split",
            "unbind",
            "flip",
            "roll",
            "gather",
            "index_select",
            "masked_fill",
            "narrow",
            "select",
            "tril",
            "triu",
            "diag",
            "diagonal",
            "sort",
            "argsort",
            "topk",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "where",
            "float",
            "double",
            "half",
            "bfloat16",
            "int",
            "long",
            "bool",
            "type_as",
            "to",
            "outer",
            "add_",
            "sub_",
            "mul_",
            "div_",
            "pow_",
            "clamp_",
            "fill_",
            "exp_",
            "neg_",
            "relu_",
            "sigmoid_",
            "tanh_",
            "abs_",
            "masked_fill_",
            "copy_",
            "clone",
        ],
        "meta",
    ),
    **dict.fromkeys(
        [
            "masked_select",
            "nonzero",
            "unique",
            "item",
            "tolist",
            "numpy",
            "numel",
            "size",
            "dim",
            "is_floating_point",
            "is_contiguous",
            "element_size",
            "allclose",
            "equal",
            "isnan",
            "isinf",
            "detach",
            "detach_",
            "requires_grad_",
            "retain_grad",
            "zero_",
            "backward",
            "cuda",
            "cpu",
        ],
        "bounded",
    ),
}

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

# Methods whose real work is done by autograd or by the interpreter itself.
SPECIAL_METHODS = frozenset({"backward", "numpy", "tolist", "item"})


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
