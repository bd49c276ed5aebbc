"""The FLOP count of the size pre-check (gradviz.program.budgets.precheck): torch's FlopCounterMode's
count without its report by module.

`FlopCount` counts as torch.utils.flop_counter.FlopCounterMode counts, with the same
formulas (its `flop_registry`, plus a caller's `extra` ones, as its custom_mapping) and the
same walk (an operation with no formula is decomposed when it can be, and its parts are
counted). What it leaves out is the table by module: FlopCounterMode puts a ModuleTracker's
hooks on every module call and adds each count to every module the call is inside, which the
pre-check never reads (only the total) and which cost about a third of the meta run of a
small network's forward. Imported on first use (budget._meta_call), as torch's counter was:
programs without matrix work never load it.

On shape-only (meta) tensors it also answers a few operations without their meta kernels,
which torch writes in Python and which were most of that meta run (a ReLU's 0.35 ms, a
Linear's addmm 0.45 ms, where a convolution's takes 0.03): `SHORTCUTS` makes the same
output (shape, dtype, strides; tests/unit/program/test_flops.py compares them with torch's) from
C++ kernels, and refuses what torch refuses (a RuntimeError: the pre-check gives no verdict
and the real call raises torch's own message). None of them has a formula of its own but
addmm, whose count is the same.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map
from torch.utils.flop_counter import flop_registry, get_shape, shape_wrapper

_prims = torch.ops.prim
_aten = torch.ops.aten

# What FlopCounterMode leaves to torch (NotImplemented): questions about a tensor's layout
_NOT_COUNTED = frozenset(
    [
        _aten.sym_is_contiguous.default,
        _aten.is_contiguous.default,
        _aten.is_contiguous.memory_format,
        _aten.is_strides_like_format.default,
        _aten.is_non_overlapping_and_dense.default,
        _aten.size.default,
        _aten.sym_size.default,
        _aten.stride.default,
        _aten.sym_stride.default,
        _aten.storage_offset.default,
        _aten.sym_storage_offset.default,
        _aten.numel.default,
        _aten.sym_numel.default,
        _aten.dim.default,
        _prims.layout.default,
    ]
)


def _like_input(self, *args, **kwargs):
    """An element-wise activation: an output like its input (values aside)."""
    return torch.empty_like(self)


def _dropout(self, p, train):
    """native_dropout: the output and its mask of kept values, both like the input."""
    return torch.empty_like(self), torch.empty_like(self, dtype=torch.bool)


def _addmm(bias, mat1, mat2, *, beta=1, alpha=1):
    """bias + mat1 @ mat2: mm's output (its meta kernel checks the matrices' shapes), which
    the bias must broadcast to; the three in one dtype, as the real addmm requires (torch's
    meta kernel would promote them)."""
    if not bias.dtype == mat1.dtype == mat2.dtype:
        raise RuntimeError(f"addmm: dtypes {bias.dtype}, {mat1.dtype} and {mat2.dtype}")
    out = _aten.mm.default(mat1, mat2)
    if not _broadcasts_to(bias.shape, out.shape):
        raise RuntimeError(f"addmm: a bias of shape {tuple(bias.shape)} for {tuple(out.shape)}")
    return out


def _broadcasts_to(shape, target) -> bool:
    """Whether a tensor of `shape` broadcasts to `target` (torch.broadcast_shapes is written
    in Python, 0.3 ms a call)."""
    if len(shape) > len(target):
        return False
    return all(n in (1, m) for n, m in zip(reversed(shape), reversed(target), strict=False))


SHORTCUTS = {
    **dict.fromkeys(
        [
            _aten.relu.default,
            _aten.gelu.default,
            _aten.silu.default,
            _aten.leaky_relu.default,
            _aten.hardtanh.default,
            _aten.elu.default,
            _aten.threshold.default,
        ],
        _like_input,
    ),
    _aten.native_dropout.default: _dropout,
    _aten.addmm.default: _addmm,
}


class FlopCount(TorchDispatchMode):
    """While entered, adds the FLOPs of each operation to `total` (FlopCounterMode's
    get_total_flops()). `extra`: more formulas by operation (OpOverloadPacket), given shapes
    and `out_shape` as FlopCounterMode's custom_mapping is."""

    supports_higher_order_operators = True

    def __init__(self, extra: dict | None = None):
        super().__init__()
        self.registry = {**_FORMULAS, **{k: _by_shapes(v) for k, v in (extra or {}).items()}}
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        if func in _NOT_COUNTED or isinstance(func, torch._ops.HigherOrderOperator):
            return NotImplemented
        shortcut = SHORTCUTS.get(func)
        if shortcut is not None and args and _on_meta(args, kwargs):
            out = shortcut(*args, **kwargs)  # none of them decomposes: no walk to skip
            return self._count(func, out, args, kwargs)
        # FlopCounterMode asks its registry for the overload itself, which it never holds
        # (its keys are packets): every operation is decomposed when it can be
        if func is not _prims.device.default:
            with self:
                decomposed = func.decompose(*args, **kwargs)
                if decomposed is not NotImplemented:
                    return decomposed
        return self._count(func, func(*args, **kwargs), args, kwargs)

    def _count(self, func, out, args, kwargs):
        formula = self.registry.get(func._overloadpacket)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=out)
        return out


# torch wraps every dispatch mode's __torch_dispatch__ to keep torch.compile out, and that
# wrapper imports torch._dynamo on its first call (about 0.6 s and 90 MB in a worker that
# runs one program). A program cannot compile, so the function stands for its own disabled
# form, the way torch's wrapper caches it after that import.
_dispatch = getattr(FlopCount.__dict__["__torch_dispatch__"], "__wrapped__", None)
if _dispatch is not None and not hasattr(_dispatch, "__dynamo_disable"):
    _dispatch.__dynamo_disable = _dispatch


def shapes_of(v):
    """torch's shape_wrapper's tree_map(get_shape, v) (tensors as their shapes, in the
    containers an operation takes) without pytree's walk for the plain ones."""
    if isinstance(v, torch.Tensor):
        return v.shape
    kind = type(v)
    if kind is tuple or kind is list:
        return kind(shapes_of(x) for x in v)
    if kind is dict:
        return {k: shapes_of(x) for k, x in v.items()}
    if kind in (int, float, bool, str, type(None)) or isinstance(v, torch.dtype | torch.device):
        return v
    return tree_map(get_shape, v)  # anything else (a structseq): torch's own walk


def _by_shapes(formula):
    """`formula` (given shapes and out_shape) called as flop_registry's are (given the
    arguments and out_val), as torch's shape_wrapper does."""

    def count(*args, out_val=None, **kwargs):
        return formula(*shapes_of(args), out_shape=shapes_of(out_val), **shapes_of(kwargs))

    return count


# shape_wrapper's products share one code object: those formulas, unwrapped, get _by_shapes;
# the ones registered raw (get_raw=True) are called as torch calls them
_WRAPPED = shape_wrapper(lambda: None).__code__
_FORMULAS = {
    k: _by_shapes(f.__wrapped__) if getattr(f, "__code__", None) is _WRAPPED else f
    for k, f in flop_registry.items()
}


def _on_meta(args, kwargs) -> bool:
    """Whether every tensor argument is a shape-only one (the shortcuts make no values)."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
    return bool(tensors) and all(t.device.type == "meta" for t in tensors)
