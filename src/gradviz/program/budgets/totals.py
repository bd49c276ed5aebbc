"""What a run has used of its caps in all, charged call by call.

`Totals` holds the bytes, values and FLOPs a run has allocated, read and done; `account`
(and `charge`, for a verdict kept at its call site: gradviz.program.budgets.call_sites)
adds one call's outputs and work and refuses, with a "limit" error at the call's line, the
one that passes a cap of one tensor, one operation or the run in all. `count_work` charges
the values a call reads, `count_new_bytes` the bytes it made, `reserve` the memory an object
will hold. gradviz.program.budgets.precheck.Budget, which sizes each call before it runs, is
a `Totals`.
"""

from __future__ import annotations

import torch

from gradviz.graph.values import list_cells
from gradviz.program.budgets.call_sites import Charge
from gradviz.program.budgets.object_sizes import leaves
from gradviz.program.recording.state import RunState
from gradviz.util.format import fmt_bytes


class Totals:
    """One run's bytes, values and FLOPs in all; refuses the call that would pass a cap."""

    def __init__(self, state: RunState):
        self.state = state
        self.limits = state.limits
        self.total_bytes = 0
        self.total_elements = 0
        self.total_flops = 0.0

    def account(self, label: str, outputs, flops: float, node) -> None:
        """Refuse outputs or work over the caps; otherwise add them to the program's totals."""
        limits = self.limits
        for shape, numel, size, dtype in outputs:
            nbytes = numel * size
            if numel > limits.max_tensor_elements or nbytes > limits.max_tensor_bytes:
                what = self.state.segment(node, 50) or label
                dims = "x".join(str(s) for s in shape) or "scalar"
                raise self.state.error(
                    "limit",
                    f"`{what}` would allocate {fmt_bytes(nbytes)} ({numel:,} {str(dtype).replace('torch.', '')} "
                    f"values, shape {dims}); the limit is {fmt_bytes(self.limits.max_tensor_bytes)} "
                    f"and {self.limits.max_tensor_elements:,} values per tensor",
                    node,
                    "Use smaller sizes: the ideas are the same at 3x3 as at 3000x3000.",
                )
            self.total_bytes += nbytes
            self.total_elements += numel
        self._check_totals(node)
        if flops:
            if flops > self.limits.max_flops_per_op:
                what = self.state.segment(node, 50) or label
                raise self.state.error(
                    "limit",
                    f"`{what}` is {flops:.3g} floating-point operations of "
                    f"matrix work; the limit is {self.limits.max_flops_per_op:.3g} per operation",
                    node,
                )
            self.total_flops += flops
        if self.total_flops > self.limits.max_total_flops:
            self._refuse_total_flops(node)

    def charge(self, label: str, charge: Charge, node) -> None:
        """`account` for a verdict kept at the call's site: the caps of one tensor and one
        operation were checked when it was kept (`Charge.fits`); the totals on every call."""
        if not charge.fits:
            self.account(label, charge.outputs, charge.work, node)
            return
        self.total_bytes += charge.nbytes
        self.total_elements += charge.values
        if self.total_bytes > self.limits.max_total_bytes:
            self._refuse_total_bytes(node)
        if self.total_elements > self.limits.max_total_elements:
            self._refuse_total_elements(node)
        self.total_flops += charge.work
        if self.total_flops > self.limits.max_total_flops:
            self._refuse_total_flops(node)

    def _refuse_total_flops(self, node):
        raise self.state.error(
            "limit",
            f"this program would do more than {self.limits.max_total_flops:.3g} floating-point "
            "operations of matrix work in all (the limit) by this line",
            node,
        )

    def _check_totals(self, node) -> None:
        if self.total_bytes > self.limits.max_total_bytes:
            self._refuse_total_bytes(node)
        if self.total_elements > self.limits.max_total_elements:
            self._refuse_total_elements(node)

    def _refuse_total_bytes(self, node):
        raise self.state.error(
            "limit",
            f"this program would allocate more than {fmt_bytes(self.limits.max_total_bytes)} "
            "in all (the limit) by this line",
            node,
        )

    def _refuse_total_elements(self, node):
        raise self.state.error(
            "limit",
            f"this program would compute more than {self.limits.max_total_elements:,} values "
            "in all (the limit) by this line",
            node,
        )

    def count_work(self, args: tuple, node) -> None:
        """Reductions and unary ops allocate little but still read every input value."""
        read = 0
        for a in args:
            # a tensor's values, or its rows' lists where those are more (2 dims on)
            if isinstance(a, torch.Tensor):
                dims = a.dim()
                if dims < 2:
                    read += a.numel()
                elif dims == 2:  # list_cells of (rows, columns): its rows, more only
                    read += a.numel() or a.size(0)  # when there are no columns
                else:
                    read += max(a.numel(), list_cells(a.shape))
        self.total_elements += read
        if self.total_elements > self.limits.max_total_elements:
            self._refuse_total_elements(node)

    def count_new_bytes(self, result, args: tuple, node) -> None:
        """A bounded op's output is no bigger than its input; it still adds to the total."""
        self.total_bytes += _new_bytes(result, args)
        if self.total_bytes > self.limits.max_total_bytes:
            self._refuse_total_bytes(node)

    def reserve(self, what: str, nbytes: int, node, held: str = "of state") -> None:
        """Memory an object will hold (an optimizer's state, a call's Python objects:
        gradviz.program.budgets.object_sizes), counted against the bytes in all before it
        is allocated."""
        if self.total_bytes + nbytes > self.limits.max_total_bytes:
            raise self.state.error(
                "limit",
                f"`{what}` needs {fmt_bytes(nbytes)} {held}; with the "
                f"{fmt_bytes(self.total_bytes)} this program holds, that passes the budget of "
                f"{fmt_bytes(self.limits.max_total_bytes)} in all",
                node,
            )
        self.total_bytes += nbytes


def _new_bytes(result, args: tuple) -> int:
    """The bytes of the tensors in `result` that hold storage of their own (not an input's)."""
    if type(result) is torch.Tensor:  # the most common result
        if result.is_meta:
            return 0
        storage = result.untyped_storage()
        ptr = storage.data_ptr()
        for a in args:
            if isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() == ptr:
                return 0
        return storage.nbytes()
    if result is None or type(result) in _NO_TENSOR:
        return 0
    if isinstance(result, torch.Tensor):
        made = (result,)
    elif isinstance(result, list | tuple | dict):
        made = leaves(result)
    else:  # a number, a string, None: no tensor
        return 0
    inputs, nbytes = None, 0
    for t in made:
        if isinstance(t, torch.Tensor) and t.device.type != "meta":
            if inputs is None:
                inputs = {
                    a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)
                }
            storage = t.untyped_storage()
            if storage.data_ptr() not in inputs:
                nbytes += storage.nbytes()
    return nbytes


_NO_TENSOR = frozenset({bool, int, float, str, torch.Size, torch.dtype})
