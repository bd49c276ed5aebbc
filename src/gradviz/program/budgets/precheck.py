"""The caps a program runs under (gradviz.program.results.limits.Limits), checked before work runs.

`Budget` counts what a run has done (statements, operations, bytes, values, FLOPs of matrix
work) and refuses, with a "limit" error, the step that would pass a cap, before that step
allocates anything:

- statements: `count_statement`, before each statement runs;
- tensor operations: `before_call` checks each call by its table entry (gradviz.program.allowlists.tables):
  "meta" calls run first on shape-only tensors on the meta device under torch's FLOP counter
  (`precheck`), "broadcast" calls are sized from their inputs' broadcast shape
  (`precheck_broadcast`), "bounded" calls make nothing bigger than their inputs but still
  count the values they read (`count_work`) and, afterwards, the bytes they made
  (`after_call`); "read" calls (a tensor's own attributes: t.grad, t.data, t.shape) make
  no values and do no work: counted as an operation only;
- layers and optimizers (gradviz.program.objects.layers, .optimizers): `count_parameters` holds the
  parameters of one model and of the whole run to their budgets, `reserve` counts memory an
  object will hold (an optimizer's state) against the bytes in all; a layer's forward is a
  `Metered` call, whose matrix work and pooling windows the FLOP counter measures as one;
- Python integers: `check_number_op` and `check_round` refuse a huge result before it is
  computed.

What each call is charged, and the caps in all, are `Totals`' (gradviz.program.budgets.totals).
"""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_flatten, tree_map

from gradviz.program.allowlists import tables
from gradviz.program.budgets import factory_sizes
from gradviz.program.budgets.call_sites import Charge, Sites, broadcast_signature, signature
from gradviz.program.budgets.object_sizes import size_number
from gradviz.program.budgets.precheck_memo import Verdict, Verdicts, call_key
from gradviz.program.budgets.totals import Totals
from gradviz.program.recording.state import RunState

aten = torch.ops.aten

# Functions that make tensors from numbers: the pre-check must ask for device="meta".
FACTORIES = frozenset(
    tables.TORCH_FUNCTIONS[name].target
    for name in tables.CONSTRUCTORS
    if name in tables.TORCH_FUNCTIONS
)


class Metered:
    """A call whose whole work the FLOP counter measures: a layer's forward (a Sequential's
    is one call), its pooling windows included (`WINDOW_WORK`). Subclasses are callable."""

    def cache_key(self):
        """What, besides its arguments, decides the call's pre-check verdict (hashable), or
        None: measured on every call (gradviz.program.budgets.precheck_memo)."""
        return None

    def known(self, args: tuple, kwargs: dict):
        """The call's verdict worked out without measuring it (it follows from the call's
        key alone, gradviz.program.budgets.layer_verdicts), or None: measure it."""
        return None


# Leaf types of `plain_data`: what a program's lists of numbers hold.
_PLAIN_LEAVES = frozenset({int, float, bool})


def plain_data(value) -> bool:
    """Whether `value` is a list or tuple of numbers, or of such lists (torch.tensor(X) of a
    dataset's rows): it has nothing the meta device needs changed, so it is passed as it is
    rather than rebuilt leaf by leaf by tree_map (a Python walk that cost about 1 s for 180k
    rows, against milliseconds here). Anything else, a tensor inside included, is not."""
    if type(value) is not list and type(value) is not tuple:
        return False
    stack = [value]
    while stack:
        for item in stack.pop():
            kind = type(item)
            if kind in _PLAIN_LEAVES:
                continue
            if kind is list or kind is tuple:
                stack.append(item)
                continue
            return False
    return True


def _flop_counter(mapping: dict | None = None):
    """The FLOP count of one meta call (gradviz.program.budgets.flops.FlopCount), imported on first
    use: programs without matrix work never load it. Unlike torch's FlopCounterMode, it
    never imports torch._dynamo (about 0.6 s and 90 MB on its first dispatch)."""
    from gradviz.program.budgets.flops import FlopCount

    return FlopCount(mapping)


def _window_work(*args, out_shape=None, **kwargs) -> int:
    """A 2-d pooling op reads a window of its input for each value it makes."""
    kernel = kwargs.get("kernel_size", args[1] if len(args) > 1 else 1)
    kernel = [kernel] if isinstance(kernel, int) else list(kernel)
    out = out_shape if isinstance(out_shape, torch.Size) else out_shape[0]
    return math.prod(out) * math.prod(kernel * 2 if len(kernel) == 1 else kernel)


WINDOW_WORK = {
    aten.max_pool2d_with_indices: _window_work,
    aten.avg_pool2d: _window_work,
}


class Budget(Totals):
    """What one run has used of its limits; refuses the step that would pass one."""

    def __init__(self, state: RunState):
        super().__init__(state)
        self.statements = 0
        self.ops = 0
        self.parameters = 0  # of every layer made
        self.verdicts = Verdicts()  # the pre-check's, by call key
        # an element-wise call's output by its tensors' (shape, dtype), in order
        self.broadcasts = Verdicts()
        # each call site's last verdict (gradviz.program.budgets.call_sites)
        self.sites = Sites()
        self.broadcast_sites = Sites()

    # -- steps

    def count_statement(self, stmt) -> None:
        self.statements += 1
        if self.statements > self.limits.max_statements:
            raise self.state.error(
                "limit", f"more than {self.limits.max_statements:,} statements ran", stmt
            )

    def before_call(self, label: str, fn, args: tuple, kwargs: dict, node, check: str) -> None:
        """Count one tensor operation and refuse it if its output or work would pass a cap."""
        self.ops += 1
        if check == "meta":
            self.precheck(label, fn, args, kwargs, node)
        elif check == "broadcast":
            self.precheck_broadcast(label, args, kwargs, node)
        elif check == "bounded":  # no bigger than the inputs, but the work still counts
            self.count_work(args, node)
        # "read": what a tensor already holds (t.grad, t.data, t.shape): no values, no work

    # -- tensor sizes and work

    def precheck(self, label: str, fn, args, kwargs, node) -> None:
        """Run the operation on shape-only tensors and refuse it if a cap would be passed.
        A call measured before with the same signature at the same site
        (gradviz.program.budgets.call_sites) or the same key (gradviz.program.budgets.precheck_memo)
        is not measured again; it is charged and checked as any other."""
        sig = None
        if fn is F.one_hot:
            args, kwargs = _one_hot_classes(args, kwargs)
        elif not isinstance(fn, Metered):  # a layer's forward: keyed by its layers
            sig = signature(args, kwargs)
            charge = self.sites.get(node, fn, sig)
            if charge is not None:
                self.charge(label, charge, node)
                return
        key = call_key(fn, args, kwargs)
        verdict = self.verdicts.get(key)
        if verdict is None:
            measured = self.measure(fn, args, kwargs)
            if measured is None:
                # Invalid arguments: the real call raises torch's own message, with real
                # devices, before it allocates anything. tests/unit/program/test_tables.py checks
                # every table entry has a meta kernel, so this is only taken for bad input.
                return
            verdict, keyed = measured
            if keyed:
                self.verdicts.put(key, verdict)
        else:
            keyed = True
        if keyed and key is not None and sig is not None:  # the site keeps it too
            self.sites.put(node, fn, sig, Charge(*verdict, self.limits))
        outputs, work = verdict
        self.account(label, outputs, work, node)

    def measure(self, fn, args, kwargs) -> tuple[Verdict, bool] | None:
        """(the call's outputs and work, whether they follow from its key alone), or None
        when it cannot run on shape-only tensors."""

        def to_meta(v):
            if isinstance(v, torch.Tensor):
                return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
            if isinstance(v, torch.Generator):
                return None
            return v

        if isinstance(fn, Metered):
            verdict = fn.known(args, kwargs)
            if verdict is not None:
                return verdict, True
        known = factory_sizes.output(fn, args, kwargs)
        if known is not None:  # a factory with plain numbers: no meta call (its imports)
            shape, dtype = known
            return ([(shape, math.prod(shape), dtype.itemsize, dtype)], 0.0), True
        meta_args = tuple(a if plain_data(a) else tree_map(to_meta, a) for a in args)
        meta_kwargs = {
            k: to_meta(v) for k, v in kwargs.items() if k not in ("generator", "pin_memory")
        }
        out = self._meta_call(fn, meta_args, meta_kwargs)
        keyed = out is not None
        if out is None:
            # A size given as a tensor (torch.zeros(torch.tensor(n)), steps=torch.tensor(n))
            # has no value on the meta device: read it as the number it holds, as the real
            # call will, and try again (a verdict that depends on values: not kept). A
            # method's own tensor (args[0]) stays a tensor.
            keep = 0 if fn in FACTORIES else 1
            sized = (*args[:keep], *tree_map(size_number, args[keep:]))
            meta_args = tree_map(to_meta, sized)
            meta_kwargs = {
                k: to_meta(size_number(v))
                for k, v in kwargs.items()
                if k not in ("generator", "pin_memory")
            }
            out = self._meta_call(fn, meta_args, meta_kwargs)
            if out is None:
                return None
        counter, out = out
        flat, _ = tree_flatten(out)
        outputs = [
            (t.shape, t.numel(), t.element_size(), t.dtype)
            for t in flat
            if isinstance(t, torch.Tensor)
        ]
        work = float(counter.total) if counter else 0.0
        if fn in tables.POOLING and outputs:
            work += outputs[0][1] * _window(fn, args, kwargs)
        return (outputs, work), keyed

    def _meta_call(self, fn, meta_args, meta_kwargs):
        """(FLOP counter or None, output) of the call on shape-only tensors; None if it
        raised."""
        if "device" in meta_kwargs or fn in FACTORIES:
            # Factories (torch.ones(...)) have no tensor input to take the meta device from.
            meta_kwargs = {**meta_kwargs, "device": "meta"}
        if fn is torch.Tensor.to:
            meta_args = tuple("meta" if isinstance(a, str | torch.device) else a for a in meta_args)
            meta_kwargs = {k: v for k, v in meta_kwargs.items() if k != "device"}
        counter = None
        if fn in tables.MATRIX_WORK or isinstance(fn, Metered):
            counter = _flop_counter(WINDOW_WORK if isinstance(fn, Metered) else None)
        try:
            with torch.no_grad(), counter or contextlib.nullcontext():
                return counter, fn(*meta_args, **meta_kwargs)
        except (ImportError, OSError, MemoryError):
            # torch could not load a part of itself (a worker's limits, a broken install, no
            # memory left for it): the call is not measured, so it must not run; the program
            # stops here
            raise
        except Exception:
            return None

    def precheck_broadcast(self, label: str, args, kwargs, node) -> None:
        """Element-wise operations: the output has the broadcast shape of the inputs. The
        output follows from the tensors' shapes and dtypes alone: kept by them at the call's
        site and in all (a loop's `a + b` computes it once), and charged and checked on
        every call."""
        sig = broadcast_signature(args, kwargs)
        if not sig:
            return
        charge = self.broadcast_sites.get(node, None, sig)
        if charge is not None:
            self.charge(label, charge, node)
            return
        key = tuple(zip(sig[::2], sig[1::2], strict=True))
        found = self.broadcasts.get(key)
        if found is None:
            tensors = [v for v in args if isinstance(v, torch.Tensor)]
            if kwargs:
                tensors += [v for v in kwargs.values() if isinstance(v, torch.Tensor)]
            found = _broadcast_output(tensors)
            if found is None:
                return  # shapes do not broadcast: the real call raises torch's own message
            self.broadcasts.put(key, found)
        self.broadcast_sites.put(node, None, sig, Charge(*found, self.limits))
        self.account(label, found[0], 0.0, node)

    def precheck_comparison(self, left, right, node, label: str) -> None:
        """Each pair of `compared_pairs(left, right)` sized as `a == b` on tensors is."""
        for a, b in compared_pairs(left, right):
            self.precheck_broadcast(label, (a, b), {}, node)

    # -- layers and optimizers

    def count_parameters(self, what: str, in_model: int, new: int, node) -> None:
        """A model of `in_model` parameters, `new` of them made now: refused over the budget
        for one model or, with every layer made before, over the budget for all of them."""
        limits = self.limits
        hint = "Use smaller layers: the ideas are the same with 10 features as with 10,000."
        if in_model > limits.max_model_parameters:
            raise self.state.error(
                "limit",
                f"`{what}` would have {in_model:,} parameters; the budget of parameters per "
                f"model is {limits.max_model_parameters:,}",
                node,
                hint,
            )
        if self.parameters + new > limits.max_total_parameters:
            raise self.state.error(
                "limit",
                f"`{what}` would bring this program's layers to {self.parameters + new:,} "
                f"parameters; the budget of parameters in all is "
                f"{limits.max_total_parameters:,}",
                node,
                hint,
            )
        self.parameters += new

    # -- Python integers

    def check_number_op(self, symbol: str, left, right, node) -> None:
        """Refuse integer arithmetic whose result would be huge, before computing it."""
        if not (isinstance(left, int) and isinstance(right, int)):
            return
        bits_l, bits_r = abs(left).bit_length(), abs(right).bit_length()
        if symbol == "**":
            estimate = bits_l * right if right > 0 else 0
        elif symbol == "*":
            estimate = bits_l + bits_r
        else:
            estimate = max(bits_l, bits_r) + 1
        if estimate > self.limits.max_int_bits:
            raise self.state.error(
                "limit",
                f"`{symbol}` would make an integer of about {estimate:,} bits; the limit is "
                f"{self.limits.max_int_bits:,} bits",
                node,
            )

    def check_round(self, args, node) -> None:
        """round(int, -n) computes 10**n: refuse n beyond the integer-size cap first."""
        if len(args) != 2 or not isinstance(args[0], int) or not isinstance(args[1], int):
            return
        digits = -args[1]
        estimate = math.ceil(digits * math.log2(10)) if digits > 0 else 0
        if estimate > self.limits.max_int_bits:
            raise self.state.error(
                "limit",
                f"round(..., {args[1]:,}) would make an integer of about {estimate:,} bits; "
                f"the limit is {self.limits.max_int_bits:,} bits",
                node,
            )


def _broadcast_output(tensors: list[torch.Tensor]) -> Verdict | None:
    """The verdict of an element-wise call of `tensors`: its one output, of their broadcast
    shape and their widest dtype; None when the shapes do not broadcast."""
    shape = factory_sizes.broadcast_shape(*(t.shape for t in tensors))
    if shape is None:
        return None
    size = max(max(t.element_size() for t in tensors), 4)
    dtype = max(tensors, key=lambda t: t.element_size()).dtype
    return [(shape, math.prod(shape), size, dtype)], 0.0


def compared_pairs(left, right):
    """Python compares two lists, tuples or dicts item by item in C (`[a] == [b]`,
    `a in [b]`, `.count()`, `.index()`, `.remove()`, min() and max()), calling `==` or `<` on
    the tensors it meets: the pairs it may so compare that hold a tensor. Pairs that are one
    object Python does not compare; pairs past the shorter side it may not, given all the
    same."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            yield a, b
        elif type(a) is type(b) and isinstance(a, list | tuple):
            stack.extend(zip(a, b, strict=False))
        elif isinstance(a, dict) and isinstance(b, dict):
            stack.extend((v, b[k]) for k, v in a.items() if k in b)


def _one_hot_classes(args, kwargs):
    """F.one_hot without num_classes makes max+1 classes: count them from the values, so the
    precheck sees the real width."""
    given = kwargs.get("num_classes", args[1] if len(args) > 1 else -1)
    given = size_number(given)
    t = args[0] if args else kwargs.get("tensor")
    if given == -1 and isinstance(t, torch.Tensor) and t.device.type != "meta" and t.numel():
        with contextlib.suppress(RuntimeError, TypeError, ValueError):
            given = int(t.max().item()) + 1
    rest = {k: v for k, v in kwargs.items() if k not in ("num_classes", "tensor")}
    return (t,), {**rest, "num_classes": given}


def _window(fn, args, kwargs) -> int:
    """Values a pooling window covers (kernel_size, the argument after the input)."""
    size = kwargs.get("kernel_size", args[1] if len(args) > 1 else 1)
    if isinstance(size, int):
        size = (size, size) if fn in (F.max_pool2d, F.avg_pool2d) else (size,)
    try:
        return max(1, math.prod(int(k) for k in size))
    except (TypeError, ValueError):
        return 1
