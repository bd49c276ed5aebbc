"""torch.autograd.functional: `jacobian(f, x)`, `hessian(f, x)`, `vjp(f, x, v)` and
`jvp(f, x, v)` of a program's own function (a def or a lambda) or one of torch's.
With create_graph=True the nodes the call's backward passes build for its result are marked
as its own (gradviz.program.recording.higher_order.note_functional), so the drawing shows
them as a gradient's own graph.

torch never gets the program's function. It gets a Python closure (`AutogradFunctional.
wrapped`) that calls the function through the interpreter (gradviz.program.interpreter.
expressions' call_value), under the run's caps, as a tensor hook's is
(gradviz.program.objects.hooks). Before any work the inputs are size-checked
(MAX_INPUT_VALUES, MAX_HESSIAN_VALUES); once the function has run, the backward passes torch
is about to make (one for each value of the output, one more round for each input value of
a hessian) are charged to the run's budget at three times the work the function did, and
the result's size is checked against the budget's per-tensor cap, before torch makes them.
`vectorize=True` (and strategy="forward-mode", which needs it) is refused: it runs the
function under torch's vmap, which the interpreter's checks do not see. Inside the function
`.backward()` and torch.autograd.grad are refused, as in a hook.

`torch.autograd.set_detect_anomaly(True)` and `with torch.autograd.detect_anomaly():` are
accepted and change nothing but a note: anomaly detection makes a backward pass that produces
NaN name the forward operation that made it; here every backward is recorded step by step
already, and the walk-through shows where a NaN first appears.
"""

from __future__ import annotations

import torch

from gradviz.program.budgets.precheck import Budget
from gradviz.program.recording import higher_order
from gradviz.program.recording.state import RunState
from gradviz.program.results.reports import RunWarning
from gradviz.program.runtime.functions import UserFunction
from gradviz.program.runtime.values import (
    DETECT_ANOMALY,
    SET_DETECT_ANOMALY,
    FunctionRef,
    Marker,
    ProgramObject,
    type_name,
)

MAX_INPUT_VALUES = 1_024  # values of all inputs of a jacobian, vjp or jvp together
MAX_HESSIAN_VALUES = 256  # values of all inputs of a hessian together
MAX_OUTPUT_VALUES = 1_024  # values of the function's output (one backward pass each)
PASS_COST = 3  # a backward pass's work, in units of the function's forward work
MAX_PASS_STEPS = 500_000  # the function's operations times the backward passes run over them

# name -> (its arguments in order, with their defaults; None: required)
SIGNATURES: dict[str, tuple[tuple[str, object], ...]] = {
    "jacobian": (
        ("func", None),
        ("inputs", None),
        ("create_graph", False),
        ("strict", False),
        ("vectorize", False),
        ("strategy", "reverse-mode"),
    ),
    "hessian": (
        ("func", None),
        ("inputs", None),
        ("create_graph", False),
        ("strict", False),
        ("vectorize", False),
        ("outer_jacobian_strategy", "reverse-mode"),
    ),
    "vjp": (
        ("func", None),
        ("inputs", None),
        ("v", None),
        ("create_graph", False),
        ("strict", False),
    ),
    "jvp": (
        ("func", None),
        ("inputs", None),
        ("v", None),
        ("create_graph", False),
        ("strict", False),
    ),
}
ANOMALY_NOTE = (
    "torch.autograd anomaly detection makes a backward pass that produces NaN name the "
    "forward operation that made it. Here every backward pass is recorded step by step "
    "already: the walk-through shows the first step whose gradient holds a NaN, so the "
    "program runs as it would without it."
)


class AutogradFunctional:
    """Runs torch.autograd.functional's calls with a program's function inside them."""

    def __init__(self, state: RunState, budget: Budget, library, call_value):
        self.state = state
        self.budget = budget
        self.library = library  # gradviz.program.runtime.torch_calls.Library
        self.call_value = call_value  # (callee, args, kwargs, node) -> the call's value
        self.running = 0  # functional calls running now (a function's own inside another)

    def call_marker(self, member: Marker, args: tuple, kwargs: dict, node):
        """A call of one of AUTOGRAD_MARKERS."""
        if member is DETECT_ANOMALY:
            raise self.state.error(
                "type",
                "torch.autograd.detect_anomaly() is used as `with "
                "torch.autograd.detect_anomaly():` followed by an indented block",
                node,
            )
        if member is SET_DETECT_ANOMALY:
            return self.anomaly(args, kwargs, node)
        return self.call(member.name, args, kwargs, node)

    def anomaly(self, args: tuple, kwargs: dict, node) -> None:
        """torch.autograd.set_detect_anomaly(mode): nothing to do; noted once."""
        if len(args) + len(kwargs) != 1 or not isinstance(
            (args or tuple(kwargs.values()))[0], bool
        ):
            raise self.state.error(
                "type", "torch.autograd.set_detect_anomaly takes True or False", node
            )
        self.note_anomaly(node)

    def note_anomaly(self, node) -> None:
        """The note, once a run, at the first line that asks for anomaly detection."""
        if not any(w.message == ANOMALY_NOTE for w in self.state.warnings):
            line = getattr(node, "lineno", 0)
            self.state.warnings.append(RunWarning(line, ANOMALY_NOTE, "Note"))

    def call(self, name: str, args: tuple, kwargs: dict, node):
        state = self.state
        label = f"torch.autograd.functional.{name}"
        given = self.arguments(label, SIGNATURES[name], args, kwargs, node)
        func = given["func"]
        if not isinstance(func, UserFunction | FunctionRef | ProgramObject):
            raise state.error(
                "type",
                f"{label} takes a function of the program's (a def or a lambda), a model or "
                f"layer, or one of torch's functions, not a {type_name(func)}",
                node,
            )
        if given.get("vectorize", False):
            raise state.error(
                "forbidden",
                f"{label}(vectorize=True) runs the function under torch's vmap, which is not "
                "part of this language: leave vectorize out",
                node,
            )
        strategy = given.get("strategy", given.get("outer_jacobian_strategy"))
        if strategy not in (None, "reverse-mode"):
            raise state.error(
                "forbidden",
                f'{label}: strategy="forward-mode" needs vectorize=True, which is not part of '
                "this language",
                node,
            )
        for flag in ("create_graph", "strict"):
            if not isinstance(given[flag], bool):
                raise state.error("type", f"{label}: `{flag}` is True or False", node)
        inputs = self.tensors(label, given["inputs"], "inputs", node)
        size = sum(t.numel() for t in inputs)
        cap = MAX_HESSIAN_VALUES if name == "hessian" else MAX_INPUT_VALUES
        if size > cap:
            raise state.error(
                "limit",
                f"{label} of inputs with {size:,} values; the limit is {cap:,} here (it runs "
                "a backward pass for each value of the output"
                + (", and one more round for each input value)" if name == "hessian" else ")"),
                node,
                "Use a few values: the ideas are the same at 3 as at 3,000.",
            )
        options = {k: given[k] for k in ("create_graph", "strict")}
        if name in ("vjp", "jvp") and given["v"] is not None:
            self.tensors(label, given["v"], "v", node)
            options["v"] = given["v"]
        rounds = size if name == "hessian" else 1
        # what the function made, held till the result's nodes are marked (create_graph)
        forward: dict[int, object] | None = {} if given["create_graph"] else None
        stop = {id(t.grad_fn) for t in inputs if t.grad_fn is not None}
        wrapped = self.wrapped(label, func, rounds, size, name, node, (forward, stop))
        target = getattr(torch.autograd.functional, name)
        if self.running:
            raise state.error("forbidden", f"{label} cannot run inside another one", node)
        self.library.not_in_a_hook(label, node)  # a hook runs inside a backward pass
        self.running += 1
        try:
            result = self.library.call(
                label,
                lambda *_: target(wrapped, given["inputs"], **options),
                tuple(inputs),
                {},
                node,
                "bounded",
            )
        finally:
            self.running -= 1
        if forward is not None and not state.quiet:
            built = f"{name}'s backward passes at line {getattr(node, 'lineno', 0)}"
            higher_order.note_functional(
                state.calls.built, state.registry, built, result, forward, stop
            )
        return result

    def arguments(self, label: str, signature, args: tuple, kwargs: dict, node) -> dict:
        names = [n for n, _ in signature]
        if len(args) > len(names):
            raise self.state.error(
                "type", f"{label} takes at most {len(names)} arguments ({len(args)} given)", node
            )
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names:
                raise self.state.error(
                    "type",
                    f"{label} got an unexpected keyword argument '{key}' (it takes "
                    f"{', '.join(names)})",
                    node,
                )
            if key in given:
                raise self.state.error(
                    "type", f"{label} got multiple values for argument '{key}'", node
                )
            given[key] = value
        for key, default in signature:
            if key not in given:
                if default is None and key != "v":
                    raise self.state.error(
                        "type", f"{label} missing required argument '{key}'", node
                    )
                given[key] = default
        return given

    def tensors(self, label: str, value, what: str, node) -> list[torch.Tensor]:
        items = list(value) if isinstance(value, tuple) else [value]
        if not items or not all(isinstance(t, torch.Tensor) for t in items):
            raise self.state.error(
                "type", f"{label}: `{what}` is a tensor or a tuple of tensors", node
            )
        if len(items) > 16:
            raise self.state.error(
                "limit", f"{label}: `{what}` holds {len(items)} tensors; the limit is 16", node
            )
        return items

    def wrapped(self, label: str, func, rounds: int, in_size: int, name: str, node, seen):
        """The closure torch calls: the program's function run by the interpreter, its
        answer checked, and the passes torch will make after it charged to the budget.
        `seen`: (forward, stop): with create_graph, `forward` gets the nodes the function
        made (higher_order.reached, up to the inputs' own nodes in `stop`)."""
        state, budget = self.state, self.budget

        def run(*inputs):
            elements, flops, ops = budget.total_elements, budget.total_flops, budget.ops
            where = state.node
            state.in_backward = True  # no backward pass and no hook of its own inside
            try:
                out = self.call_value(func, inputs, {}, node)
            finally:
                state.in_backward = False  # not_in_a_hook: it was False before the call
                state.node = where
            outs = out if isinstance(out, tuple) else (out,)
            if not outs or not all(isinstance(t, torch.Tensor) for t in outs):
                raise state.error(
                    "type",
                    f"the function given to {label} returned a {type_name(out)}: it returns "
                    "a tensor or a tuple of tensors",
                    node,
                )
            out_size = sum(t.numel() for t in outs)
            if out_size > MAX_OUTPUT_VALUES:
                raise state.error(
                    "limit",
                    f"the function given to {label} returned {out_size:,} values; the limit "
                    f"is {MAX_OUTPUT_VALUES:,} (a backward pass for each)",
                    node,
                )
            if name in ("jacobian", "hessian") and out_size * in_size > (
                state.limits.max_tensor_elements
            ):
                raise state.error(
                    "limit",
                    f"{label} would make {out_size * in_size:,} values; the limit is "
                    f"{state.limits.max_tensor_elements:,} per tensor",
                    node,
                )
            passes = (out_size if name in ("jacobian", "hessian") else 2) * rounds
            steps = passes * max(1, budget.ops - ops)
            if steps > MAX_PASS_STEPS:
                raise state.error(
                    "limit",
                    f"{label} would run {passes:,} backward passes over the "
                    f"{budget.ops - ops:,} operations of its function ({steps:,} steps); the "
                    f"limit is {MAX_PASS_STEPS:,}",
                    node,
                    "Use fewer values, or a function of fewer operations.",
                )
            work = PASS_COST * passes
            budget.total_elements += work * max(1, budget.total_elements - elements)
            budget.total_flops += work * (budget.total_flops - flops)
            budget.account(label, [], 0.0, node)  # refuses totals over the caps
            if seen[0] is not None:
                higher_order.reached(outs, *seen)
            return out

        return run
