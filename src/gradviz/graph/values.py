"""A tensor's values as plain data for a result: the numbers themselves when small, a short
preview always (runs in workers: torch)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import operator
import struct

import torch

from gradviz.graph.model import MAX_STORED_ELEMENTS

_HEAD = 6  # the values a preview shows along each dimension (format_values' max_items)
_TORCH_CHECK = 256  # values from which preview_text checks them with torch


# while `remembered` is open: (kind, id, version, extra) -> (tensor, answer), and
# (kind, shape, dtype, device, extra) -> [(tensor, version, answer)] for `_same_values`
_SEEN: contextvars.ContextVar[tuple[dict, dict] | None] = contextvars.ContextVar(
    "seen_values", default=None
)
_BY_VALUES = 64  # values from which a tensor is also looked up by its values
_PER_SHAPE = 8  # tensors kept for that look-up per shape and dtype
_BITS = {
    torch.float64: torch.int64,
    torch.float32: torch.int32,
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
}


@contextlib.contextmanager
def remembered():
    """While open, tensor_values, tensor_stats and grad_size answer a tensor they answered
    already from memory: the same object at the same version (unchanged in place), or, from
    64 values, another tensor of the same shape, dtype and device with the same values bit
    for bit (a copy a backward call kept of a parameter the run's graph shows too). A run's
    graph and the graph of its backward call hold many of the same tensors, and a 16x6x5x5
    weight's values and preview cost a third of a millisecond each time. The tensors are
    held until it closes, so no other tensor can take one's id meanwhile."""
    token = _SEEN.set(({}, {}))
    try:
        yield
    finally:
        _SEEN.reset(token)


def _recall(kind: str, t: torch.Tensor, extra, compute):
    seen = _SEEN.get()
    if seen is None:
        return compute()
    by_id, by_values = seen
    try:
        version = t._version
    except RuntimeError:  # an inference tensor keeps no version
        return compute()
    key = (kind, id(t), version, extra)
    hit = by_id.get(key)
    if hit is not None and hit[0] is t:
        return hit[1]
    alike = None
    if t.numel() >= _BY_VALUES and not (t.is_meta or is_fake(t)):
        alike = by_values.setdefault((kind, t.shape, t.dtype, t.device, extra), [])
        for other, other_version, answer in alike:
            if other._version == other_version and _same_values(t, other):
                by_id[key] = (t, answer)
                return answer
    answer = compute()
    by_id[key] = (t, answer)
    if alike is not None and len(alike) < _PER_SHAPE:
        alike.append((t, version, answer))
    return answer


def recalled(kind: str, obj, compute):
    """compute(), once per object while `remembered` is open (held until it closes); for
    what does not change meanwhile, such as what an autograd node saved."""
    seen = _SEEN.get()
    if seen is None:
        return compute()
    by_id = seen[0]
    key = (kind, id(obj))
    hit = by_id.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    answer = compute()
    by_id[key] = (obj, answer)
    return answer


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same values bit for bit (-0.0 is not 0.0, a NaN is its own payload), as torch.equal
    compares them seen as integers of their width; complex tensors are never alike."""
    a, b = a.detach(), b.detach()
    bits = _BITS.get(a.dtype)
    if bits is not None:
        a, b = a.view(bits), b.view(bits)
    elif a.is_floating_point() or a.is_complex():
        return False
    return torch.equal(a, b)


def _fmt_number(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-4):
            return f"{v:.4e}"
        return f"{v:.4f}"
    return str(v)


def format_values(value, max_items: int = 6) -> str:
    """Short text for a (nested) list of numbers: [2.0000, 2.6667, 3.3333]."""
    if not isinstance(value, list):
        return _fmt_number(value)
    shown = [format_values(v, max_items) for v in value[:max_items]]
    if len(value) > max_items:
        shown.append("…")
    return "[" + ", ".join(shown) + "]"


def list_cells(shape) -> int:
    """Python lists tolist() would build: a tensor with no values can still need billions."""
    total, prod = 0, 1
    for d in list(shape)[:-1]:
        prod *= d
        total += prod
        if prod == 0:
            break
    return total


def is_fake(t: torch.Tensor) -> bool:
    """A FakeTensorMode tensor (simulated CUDA): it has a device and a shape, no numbers."""
    return getattr(t, "fake_mode", None) is not None


def storable(t: torch.Tensor) -> bool:
    """Whether tensor_values may send t's values as lists (small enough, not on meta). An
    empty tensor of two or more dimensions sends none: its value would be lists holding no
    number (a 4096x0 tensor's, 4,096 empty lists), which the value budget, counting numbers,
    could not see, and which take the server 30 times their pickled size to unpickle."""
    if t.is_meta or is_fake(t) or t.numel() > MAX_STORED_ELEMENTS:
        return False
    if t.dim() < 2:
        return True
    return t.numel() > 0 and list_cells(t.shape) <= MAX_STORED_ELEMENTS


def stored_count(t: torch.Tensor | None) -> int:
    """How many numbers tensor_values would send for t (0: only a preview, or none at all)."""
    return t.numel() if t is not None and storable(t) else 0


def tensor_stats(t: torch.Tensor | None) -> dict[str, float] | None:
    """min, max, mean and (2-)norm of a tensor's values, as plain floats: every tensor gets
    them, however many values it has (None: no values: on meta, a simulated device's fake
    tensor, empty, or complex)."""
    if t is None:
        return None
    return _recall("stats", t, None, lambda: _stats(t))


def _stats(t: torch.Tensor) -> dict[str, float] | None:
    if t is None or t.is_meta or is_fake(t) or t.numel() == 0 or t.is_complex():
        return None
    data = t.detach()
    small = _small_floats(data)
    figures = None if small is None else _plain_stats(small, data.dtype is torch.float32)
    if figures is None:
        data = data.double() if data.dtype == torch.float64 else data.float()
        figures = torch.stack([data.min(), data.max(), data.mean(), data.norm()]).cpu().tolist()
    return dict(zip(("min", "max", "mean", "norm"), figures, strict=True))


_PLAIN = 32  # values up to which stats are taken in Python from tolist() (4 torch calls and a
# stack cost about 12 µs whatever the size; a 2,003-node chain has 1,000 tensors of 4 values)
# the magnitudes for which Python's sums of the values and of their squares (in float64,
# exactly rounded) give what torch's give to float tolerance: no sum near the dtype's largest
# value (torch's float32 sums overflow sooner), no square below its normal range (torch's
# float32 norm of three 1e-25 is 0.0)
_ORDINARY = {torch.float32: (1e-18, 1e18), torch.float64: (1e-150, 1e150)}
_FLOAT32 = struct.Struct("f")


def _small_floats(data: torch.Tensor) -> list[float] | None:
    """The values of a small float32/float64 tensor on the CPU, flat (None: any other)."""
    if data.dtype not in _ORDINARY or not data.is_cpu or data.numel() > _PLAIN:
        return None
    dims = data.dim()
    if dims == 1:
        return data.tolist()
    return [data.item()] if dims == 0 else data.reshape(-1).tolist()


def _ordinary(values: list[float], single: bool) -> bool:
    """No NaN, no infinity, every value 0 or of an ordinary magnitude (`_ORDINARY`)."""
    tiny, huge = _ORDINARY[torch.float32 if single else torch.float64]
    return all([v == 0 or tiny <= abs(v) <= huge for v in values])


def _to_float32(v: float) -> float:
    """v rounded to float32, as torch's float32 result would hold it."""
    return _FLOAT32.unpack(_FLOAT32.pack(v))[0]


def _plain_stats(values: list[float], single: bool) -> list[float] | None:
    """min, max, mean and norm of a few values in Python (None: NaN, infinities or extreme
    magnitudes are among them: torch answers those, so they come out just as torch has them):
    the exact sums rounded once, to float32 for a float32 tensor (torch sums in float32 or
    float64; they agree to float tolerance)."""
    if not _ordinary(values, single):
        return None
    mean = math.fsum(values) / len(values)
    norm = math.sqrt(math.fsum(map(operator.mul, values, values)))
    if single:
        mean, norm = _to_float32(mean), _to_float32(norm)
    return [min(values), max(values), mean, norm]


def grad_size(grad: torch.Tensor | None) -> float | None:
    """The mean |grad| of a gradient (None: none, no values, complex): what colouring by
    gradient fills a tensor by."""
    if grad is None:
        return None
    return _recall("grad size", grad, None, lambda: _grad_size(grad))


def _grad_size(grad: torch.Tensor) -> float | None:
    if grad is None or grad.is_meta or is_fake(grad) or not grad.numel():
        return None
    if grad.is_complex():
        return None
    small = _small_floats(grad.detach())
    if small is not None and _ordinary(small, True):  # float32 magnitudes: torch sums in float32
        return _to_float32(math.fsum(map(abs, small)) / len(small))  # torch: in float32
    return float(grad.detach().abs().float().mean().cpu())


def tensor_values(
    t: torch.Tensor, keep: bool = True
) -> tuple[list | float | int | bool | None, str]:
    """(value as plain data when small and `keep`, preview text) for a tensor on any device."""
    return _recall("values", t, keep, lambda: _values(t, keep))


def _values(t: torch.Tensor, keep: bool) -> tuple[list | float | int | bool | None, str]:
    if t.is_meta:
        return None, "(no data: meta)"
    if is_fake(t):
        return None, "(no data: simulated device)"
    data = t.detach()
    if data.dtype in (torch.bfloat16, torch.float16):
        data = data.float()
    numel = data.numel()
    if keep and storable(data):
        return data.cpu().tolist(), preview_text(data)
    if numel == 0:
        return None, f"[] (no values, shape {tuple(data.shape)})"
    if numel <= _HEAD:  # every value fits in the preview: written as a kept tensor's is
        return None, preview_text(data)
    # the first 6 values as format_values writes them ("[a, b, c]"), then how many there are
    if data.dim() != 1:
        data = data.reshape(-1)
    first = preview_text(data if numel <= _HEAD else data[:_HEAD])
    return None, first[:-1] + f", … ({numel:,} values)]"


def preview_part(
    t: torch.Tensor, whole: bool = False
) -> tuple[torch.Tensor, tuple[int, ...]] | str:
    """What tensor_values(t)'s preview shows of t, copied now so it can be written later by
    `part_preview` (t may change in place meanwhile): the first values along each dimension
    (at most 6 each), or all of them when `whole` (for a small tensor, one plain copy is
    cheaper), with t's shape; or the preview itself when t has no stored values."""
    if not storable(t):
        return tensor_values(t)[1]
    shape = tuple(t.shape)
    data = t.detach()
    if not whole:
        data = data.as_strided([min(n, _HEAD) for n in shape], data.stride(), data.storage_offset())
    if data.dtype in (torch.bfloat16, torch.float16):
        return data.float(), shape  # a copy already
    return data.clone(), shape


def part_preview(part: tuple[torch.Tensor, tuple[int, ...]] | str) -> str:
    """The preview text of a `preview_part`: tensor_values' own, to the character."""
    if isinstance(part, str):
        return part
    head, shape = part
    return preview_text(head, shape)


def preview_text(data: torch.Tensor, shape: tuple[int, ...] | None = None) -> str:
    """format_values(t.tolist()), to the character, from t's first values only: `data` holds
    at least the first 6 values along each dimension of a tensor of `shape` (t itself when
    None). Only those are read, and all of them are written by one %-format of a template
    for the shape (`_template`), not number by number into nested lists: the preview of a
    4x3x32x32 batch reads 432 values, not 12,288."""
    if shape is None:
        shape = tuple(data.shape)
    cut = _CUTS.get(shape)
    if cut is None:
        cut = tuple(min(n, _HEAD) for n in shape), tuple(n > _HEAD for n in shape)
        if len(_CUTS) < _TEMPLATES:
            _CUTS[shape] = cut
    head, more = cut
    if data.shape != head:
        data = data[tuple(slice(0, n) for n in head)]
    if 0 in head:
        flat = []
    elif data.dim() == 1 and data.is_cpu:  # most are: no reshape, no copy
        flat = data.tolist()
    else:
        flat = data.reshape(-1).cpu().tolist()
    if not data.is_floating_point():  # integers, booleans, complex: str(), as _fmt_number
        return _template(head, more, "%s") % tuple(flat)
    odd = _odd_floats(data, flat) if flat else []
    if not odd:
        return _template(head, more, "%.4f") % tuple(flat)
    # NaN and infinities are odd too: "%.4e" writes them as str() does
    if len(odd) == len(flat):
        return _template(head, more, "%.4e") % tuple(flat)
    specs = ["%.4f"] * len(flat)  # this tensor's own template: its spec at each place,
    for i in odd:  # written into the shape's template by one %-format, then filled by one
        specs[i] = "%.4e"
    return (_template(head, more, "%s") % tuple(specs)) % tuple(flat)


def _odd_floats(data: torch.Tensor, flat: list[float]) -> list[int]:
    """The positions in `flat` of the values _fmt_number writes in exponent form (non-zero,
    outside [1e-4, 1e5)) or as str() (NaN, infinities), compared as Python compares the
    floats tolist() gave: in Python for a few, in float64 by torch for many (its fixed cost
    is that of a few hundred Python comparisons)."""
    if len(flat) < _TORCH_CHECK:
        return [i for i, v in enumerate(flat) if not (1e-4 <= abs(v) < 1e5 or v == 0)]
    size = data.detach().double().abs().reshape(-1)
    odd = ((size < 1e-4) & (size != 0)) | ~(size < 1e5)
    return odd.nonzero().reshape(-1).tolist() if bool(odd.any()) else []


_TEMPLATES = 256  # shapes whose cut and templates are kept
_CUTS: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[bool, ...]]] = {}  # shape -> head, more


@functools.lru_cache(maxsize=_TEMPLATES)
def _template(head: tuple[int, ...], more: tuple[bool, ...], spec: str) -> str:
    """The preview of a tensor whose first values along each dimension are `head` (`more`:
    the dimensions with values past them), with `spec` in place of each number."""
    text = spec
    for n, cut in zip(reversed(head), reversed(more), strict=True):
        text = "[" + ", ".join([text] * n) + (", …]" if cut else "]")
    return text
