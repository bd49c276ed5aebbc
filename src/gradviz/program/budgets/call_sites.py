"""Each call site's last pre-check verdicts, found again by comparing signatures.

A loop makes the same call at the same line over and over, with tensors of the same shapes.
`Sites` keeps, for each call site (the id of the program's syntax node), the functions it
called last, the exact signatures of their arguments and what each call was charged: the bytes
and values of its outputs, its FLOPs, and whether those fit the caps of one tensor and one
operation. A call whose function and signature are those kept is not looked up again
(gradviz.program.budgets.precheck_memo) nor measured: it is charged to the run's totals, and
refused over a cap at its own line, as any other call
(gradviz.program.budgets.totals.Totals.charge).

The signature holds, in order, for each tensor argument its type, shape, strides, dtype,
device and requires_grad; for each number, string, None, dtype, device and slice its type
and its value (a float by its exact bits); a generator by its type (the pre-check never draws
from it); tuples and lists by their type and length, then their items; keywords by name and
value; and, for a measured call, torch's default dtype. Anything else (a program's object, a
signature of over 4 x `MAX_ITEMS` entries, a tensor without strides) has no signature: the call
goes the long way. An element-wise call's verdict follows from its tensors' shapes and dtypes
alone (`Budget.precheck_broadcast`): its signature holds those.
"""

from __future__ import annotations

import torch

from gradviz.program.allowlists.tables import TENSOR_TYPES

MAX_SITES = 1024  # call sites one run keeps
PER_SITE = 8  # signatures kept at one site
MAX_ITEMS = 64  # values one signature may hold

_ATOMS = frozenset({int, bool, str, type(None), type(...), torch.dtype, torch.device})


class Charge:
    """What one call costs: its outputs (shape, count, element size, dtype), their values
    and bytes in all, its FLOPs, and whether every output fits the caps of one tensor and
    the FLOPs the cap of one operation (only then may `Totals.charge` skip that check)."""

    __slots__ = ("outputs", "work", "nbytes", "values", "fits")

    def __init__(self, outputs, work: float, limits):
        self.outputs = outputs
        self.work = work
        self.nbytes = sum(numel * size for _, numel, size, _ in outputs)
        self.values = sum(numel for _, numel, _, _ in outputs)
        self.fits = work <= limits.max_flops_per_op and all(
            numel <= limits.max_tensor_elements and numel * size <= limits.max_tensor_bytes
            for _, numel, size, _ in outputs
        )


class Sites:
    """One run's call sites: id(node) -> [(function, signature, Charge)], the last
    `PER_SITE` signatures of each (a loop over a model's parameters makes one call at one
    site with each parameter's shape in turn), at most MAX_SITES sites.

    A site is known by its node's id, so that nothing here holds the program's syntax tree
    (a run lets go of it when it ends: gradviz.program.interpreter.run). The site only sorts
    the verdicts: a verdict follows from the function (held, so its identity stays its own)
    and the exact signature alone, so a node id taken again by another node can only find
    the verdict that node's call would be measured to have."""

    def __init__(self, size: int = MAX_SITES):
        self.size = size
        self.found: dict = {}

    def get(self, node, fn, sig) -> Charge | None:
        entries = self.found.get(id(node))
        if entries is None or sig is None:
            return None
        for kept_fn, kept_sig, charge in entries:
            if kept_fn is fn and kept_sig == sig:
                return charge
        return None

    def put(self, node, fn, sig, charge: Charge) -> None:
        if sig is None:
            return
        found = self.found
        site = id(node)
        entries = found.get(site)
        if entries is None:
            if len(found) >= self.size:
                del found[next(iter(found))]
            entries = found[site] = []
        elif len(entries) >= PER_SITE:
            del entries[0]
        entries.append((fn, sig, charge))


def signature(args: tuple, kwargs: dict) -> list | None:
    """The exact signature of a measured call's arguments, or None when it has none."""
    sig = [torch.get_default_dtype()]
    try:
        for a in args:
            kind = type(a)
            if kind in TENSOR_TYPES:  # _add's first case, without its call
                sig += (kind, a.shape, a.stride(), a.dtype, a.device, a.requires_grad)
            elif _add(sig, a):
                return None
        if kwargs:
            for k, v in kwargs.items():
                sig.append(k)
                if _add(sig, v):
                    return None
    except (TypeError, RuntimeError):  # a tensor without strides (sparse, mkldnn)
        return None
    return sig if len(sig) <= MAX_ITEMS * 4 else None


def broadcast_signature(args: tuple, kwargs: dict) -> list:
    """An element-wise call's tensors' shapes and dtypes, in the order
    `Budget.precheck_broadcast` takes them."""
    sig = []
    for a in args:
        if isinstance(a, torch.Tensor):
            sig += (a.shape, a.dtype)
    if kwargs:
        for v in kwargs.values():
            if isinstance(v, torch.Tensor):
                sig += (v.shape, v.dtype)
    return sig


def _add(sig: list, v) -> bool:
    """Add `v` to `sig`; True when it has no place in a signature."""
    if len(sig) > MAX_ITEMS * 4:
        return True
    kind = type(v)
    if kind in TENSOR_TYPES:
        sig += (kind, v.shape, v.stride(), v.dtype, v.device, v.requires_grad)
    elif kind in _ATOMS:
        sig += (kind, v)
    elif kind is float:
        sig += (float, v.hex())  # -0.0 and 0.0 apart, every NaN alike
    elif kind is tuple or kind is list or kind is torch.Size:
        sig += (kind, len(v))
        for x in v:
            if _add(sig, x):
                return True
    elif kind is slice:
        sig.append(slice)
        return _add(sig, v.start) or _add(sig, v.stop) or _add(sig, v.step)
    elif kind is torch.Generator:
        sig.append(kind)
    else:
        return True
    return False
