"""Allow-lists for torch.nn, torch.optim and torch.utils.data, kept as data.

Each class a program can make is a row: the torch class and the arguments a program may
give it (positional ones in the order torch takes them, then keyword-only ones). Anything
else is refused by name: `device=` (use `.to(device)`), callables, hooks, files. What a
program can then do with what it made is listed here too (`MODULE_METHODS`,
`MODULE_ATTRIBUTES`, ...); gradviz.program.objects.layers, .optimizers and .data answer from these
lists and refuse the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data as data


@dataclass(frozen=True)
class ObjectSpec:
    """A class a program may make: `nn.Linear`, `optim.SGD`, `DataLoader`, ..."""

    target: type
    args: tuple[str, ...] = ()  # positional, in torch's order
    keywords: tuple[str, ...] = ()  # keyword-only
    kind: str = "layer"  # layer | container | optimizer | scheduler | dataset | loader

    @property
    def name(self) -> str:
        return self.target.__name__

    def allowed(self) -> tuple[str, ...]:
        return self.args + self.keywords


def _row(target: type, args: str = "", keywords: str = "", kind: str = "layer") -> ObjectSpec:
    return ObjectSpec(target, tuple(args.split()), tuple(keywords.split()), kind)


LOSS = "reduction"
LAYERS: dict[str, ObjectSpec] = {
    "Linear": _row(nn.Linear, "in_features out_features bias", "dtype"),
    # sized at their first call (gradviz.program.objects.lazy)
    "LazyLinear": _row(nn.LazyLinear, "out_features bias", "dtype"),
    "LazyConv2d": _row(
        nn.LazyConv2d,
        "out_channels kernel_size stride padding dilation groups bias padding_mode",
        "dtype",
    ),
    "Conv2d": _row(
        nn.Conv2d,
        "in_channels out_channels kernel_size stride padding dilation groups bias padding_mode",
        "dtype",
    ),
    "MaxPool2d": _row(nn.MaxPool2d, "kernel_size stride padding dilation return_indices ceil_mode"),
    "AvgPool2d": _row(
        nn.AvgPool2d, "kernel_size stride padding ceil_mode count_include_pad divisor_override"
    ),
    "BatchNorm1d": _row(
        nn.BatchNorm1d, "num_features eps momentum affine track_running_stats", "dtype bias"
    ),
    "BatchNorm2d": _row(
        nn.BatchNorm2d, "num_features eps momentum affine track_running_stats", "dtype bias"
    ),
    "LayerNorm": _row(nn.LayerNorm, "normalized_shape eps elementwise_affine bias", "dtype"),
    "Dropout": _row(nn.Dropout, "p inplace"),
    "Embedding": _row(
        nn.Embedding,
        "num_embeddings embedding_dim padding_idx max_norm norm_type scale_grad_by_freq",
        "dtype",
    ),
    "Flatten": _row(nn.Flatten, "start_dim end_dim"),
    "Identity": _row(nn.Identity),
    "ReLU": _row(nn.ReLU, "inplace"),
    "LeakyReLU": _row(nn.LeakyReLU, "negative_slope inplace"),
    "GELU": _row(nn.GELU, "approximate"),
    "Tanh": _row(nn.Tanh),
    "Sigmoid": _row(nn.Sigmoid),
    "Softmax": _row(nn.Softmax, "dim"),
    "LogSoftmax": _row(nn.LogSoftmax, "dim"),
    "MultiheadAttention": _row(
        nn.MultiheadAttention,
        "embed_dim num_heads dropout bias add_bias_kv add_zero_attn kdim vdim batch_first",
        "dtype",
    ),
    "TransformerEncoderLayer": _row(
        nn.TransformerEncoderLayer,
        "d_model nhead dim_feedforward dropout activation layer_norm_eps batch_first norm_first "
        "bias",
        "dtype",
    ),
    "CrossEntropyLoss": _row(
        nn.CrossEntropyLoss, "weight", "ignore_index reduction label_smoothing"
    ),
    "MSELoss": _row(nn.MSELoss, "", LOSS),
    "L1Loss": _row(nn.L1Loss, "", LOSS),
    "NLLLoss": _row(nn.NLLLoss, "weight", "ignore_index reduction"),
    "BCEWithLogitsLoss": _row(nn.BCEWithLogitsLoss, "weight", "reduction pos_weight"),
    # their arguments are layers: any number, checked by gradviz.program.objects.layers
    "Sequential": _row(nn.Sequential, kind="container"),
    "ModuleList": _row(nn.ModuleList, "modules", kind="container"),
}

# Arguments that may be tensors (class weights of a loss); every other argument is a number,
# a string, a dtype, None, or a tuple of numbers.
TENSOR_ARGUMENTS = frozenset({"weight", "pos_weight"})

# What a program may do with a layer. Methods: .parameters() and the others; attributes:
# the tensors and settings below (plain values only).
MODULE_METHODS = frozenset(
    [
        "apply",
        "parameters",
        "named_parameters",
        "buffers",
        "to",
        "cpu",
        "cuda",
        "train",
        "eval",
        "zero_grad",
        "state_dict",
        "load_state_dict",
        "requires_grad_",
        "append",
        "forward",
    ]
)
MODULE_ATTRIBUTES = frozenset(
    [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
        "training",
        "in_features",
        "out_features",
        "in_channels",
        "out_channels",
        "kernel_size",
        "stride",
        "padding",
        "dilation",
        "groups",
        "num_features",
        "eps",
        "momentum",
        "normalized_shape",
        "p",
        "num_embeddings",
        "embedding_dim",
        "padding_idx",
        "embed_dim",
        "num_heads",
        "batch_first",
        "head_dim",
        "dim",
        "start_dim",
        "end_dim",
        "in_proj_weight",
        "in_proj_bias",
        "out_proj",
        "linear1",
        "linear2",
        "norm1",
        "norm2",
        "self_attn",
    ]
)
# Methods that exist on torch's modules but stay out, with why (the rest: "not available").
MODULE_REFUSALS: dict[str, str] = {
    "register_forward_hook": "hooks run code inside PyTorch; they are not part of this language",
    "register_forward_pre_hook": "hooks run code inside PyTorch; they are not part of this "
    "language",
    "register_full_backward_hook": "hooks run code inside PyTorch; they are not part of this "
    "language",
    "register_buffer": "layers are made from the table of torch.nn classes only",
    "register_parameter": "layers are made from the table of torch.nn classes only",
    "register_module": "layers are made from the table of torch.nn classes only",
    "add_module": "layers are made from the table of torch.nn classes only",
    "modules": "walk a model by indexing it: net[0], net[1], ...",
    "children": "walk a model by indexing it: net[0], net[1], ...",
    "named_modules": "walk a model by indexing it: net[0], net[1], ...",
    "double": "use .to(torch.float64)",
    "float": "use .to(torch.float32)",
    "half": "use .to(torch.float16)",
    "share_memory": "shared memory is not available here",
}

OPTIMIZERS: dict[str, ObjectSpec] = {
    "SGD": _row(
        optim.SGD, "params lr momentum dampening weight_decay nesterov", "maximize", "optimizer"
    ),
    "Adam": _row(optim.Adam, "params lr betas eps weight_decay amsgrad", "maximize", "optimizer"),
    "AdamW": _row(optim.AdamW, "params lr betas eps weight_decay amsgrad", "maximize", "optimizer"),
    "RMSprop": _row(
        optim.RMSprop,
        "params lr alpha eps weight_decay momentum centered",
        "maximize",
        "optimizer",
    ),
    "Adagrad": _row(
        optim.Adagrad,
        "params lr lr_decay weight_decay initial_accumulator_value eps",
        "maximize",
        "optimizer",
    ),
}

SCHEDULERS: dict[str, ObjectSpec] = {
    "StepLR": _row(optim.lr_scheduler.StepLR, "optimizer step_size gamma", "", "scheduler"),
    "CosineAnnealingLR": _row(
        optim.lr_scheduler.CosineAnnealingLR, "optimizer T_max eta_min", "", "scheduler"
    ),
    "ExponentialLR": _row(optim.lr_scheduler.ExponentialLR, "optimizer gamma", "", "scheduler"),
}
SCHEDULER_METHODS = frozenset(["step", "get_last_lr"])

DATA: dict[str, ObjectSpec] = {
    # any number of tensors, each indexed along its first dimension
    "TensorDataset": _row(data.TensorDataset, kind="dataset"),
    # num_workers=N is taken and read in the run's own process (gradviz.program.objects.data)
    "DataLoader": _row(
        data.DataLoader, "dataset batch_size shuffle", "drop_last num_workers", "loader"
    ),
}
DATA_REFUSALS: dict[str, str] = {
    "collate_fn": "`collate_fn` runs a function on each batch; batches are stacked for you",
    "sampler": "a sampler is not available here: use shuffle=True or shuffle=False",
    "batch_sampler": "a batch sampler is not available here: use batch_size and shuffle",
    "worker_init_fn": "`worker_init_fn` runs a function in each of the workers; there are no "
    "workers here: the data is read in the program's own process",
    "pin_memory": "pinned memory is not available here",
    "generator": "shuffling uses the run's own random generator: seed it with torch.manual_seed",
}

# The plain values a class's arguments may be (besides tuples of them, tensors and layers).
PLAIN = (bool, int, float, str, type(None), torch.dtype)
