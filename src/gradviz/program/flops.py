"""The FLOP count of the size pre-check (gradviz.program.budget): torch's FlopCounterMode's
count without its report by module.

`FlopCount` counts as torch.utils.flop_counter.FlopCounterMode counts, with the same
formulas (its `flop_registry`, plus a caller's `extra` ones, as its custom_mapping) and the
same walk (an operation with no formula is decomposed when it can be, and its parts are
counted). What it leaves out is the table by module: FlopCounterMode puts a ModuleTracker's
hooks on every module call and adds each count to every module the call is inside, which the
pre-check never reads (only the total) and which cost about a third of the meta run of a
small network's forward. Imported on first use (budget._meta_call), as torch's counter was:
programs without matrix work never load it.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry, shape_wrapper

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


class FlopCount(TorchDispatchMode):
    """While entered, adds the FLOPs of each operation to `total` (FlopCounterMode's
    get_total_flops()). `extra`: more formulas by operation (OpOverloadPacket), given shapes
    and `out_shape` as FlopCounterMode's custom_mapping is."""

    supports_higher_order_operators = True

    def __init__(self, extra: dict | None = None):
        super().__init__()
        self.registry = {**flop_registry, **{k: shape_wrapper(v) for k, v in (extra or {}).items()}}
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        if func in _NOT_COUNTED or isinstance(func, torch._ops.HigherOrderOperator):
            return NotImplemented
        # FlopCounterMode asks its registry for the overload itself, which it never holds
        # (its keys are packets): every operation is decomposed when it can be
        if func is not _prims.device.default:
            with self:
                decomposed = func.decompose(*args, **kwargs)
                if decomposed is not NotImplemented:
                    return decomposed
        out = func(*args, **kwargs)
        formula = self.registry.get(func._overloadpacket)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=out)
        return out
