"""Error text for a call that failed while a program ran.

When torch (or FakeTensorMode, for simulated CUDA) raises, the program gets a
`ProgramError` of kind "runtime": torch's own message without its C++ trace, the plain
explanation from gradviz.program.results.explain, and, for a device mismatch, the rule and a fix
that names the program's own tensors and their devices (`operand_names`). Errors placed at
a node without an exception come from `RunState.error` (gradviz.program.recording.state).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from gradviz.devices import simulated as devices
from gradviz.devices.errors import explain_device_error
from gradviz.program.recording.state import RunState
from gradviz.program.results.explain import explain_error
from gradviz.program.results.reports import DeviceErrorDetails, ErrorDetails
from gradviz.program.runtime.values import NAMESPACES
from gradviz.program.syntax.program_error import ProgramError
from gradviz.util.mdtext import code


def runtime_message(exc: BaseException) -> str:
    """An exception's message, without torch's C++ frames, at most about 1,500 characters."""
    text = str(exc).strip() or type(exc).__name__
    for marker in ("\nException raised from", "\nFrame", "\n\nThe above exception"):
        text = text.split(marker)[0]
    if len(text) > 1500:
        text = text[:1500] + " …"
    return text


def runtime_error(
    state: RunState,
    exc: BaseException,
    node,
    label: str,
    operands: tuple | list = (),
    rule_by_gradviz: bool = False,
) -> ProgramError:
    """The error a program sees for `exc`, raised by the operation `label` at `node`."""
    message = runtime_message(exc)
    explanation = explain_error(message)
    hint = explanation.plain if explanation else None
    culprits = []
    if explanation is not None and explanation.key == "inplace_saved":
        culprits = state.inplace.culprits(message)
        hint = inplace_hint(culprits, hint)
    err = state.error("runtime", message, node, hint)
    details = explanation.as_details() if explanation else ErrorDetails()
    details = replace(details, exception=type(exc).__name__, operation=label)
    if culprits:
        details = replace(details, also=tuple((e.line, e.col or 1) for e in culprits if e.line))
    err.details = details
    named = operand_names(state, node, operands) if operands else {}
    source = devices.message_source(state.simulated, rule_by_gradviz)
    return with_devices(err, named, source)


def call_error(state: RunState, exc: Exception, node, label: str, operands=()) -> ProgramError:
    """The program's error for what a library call (`label`: torch's, numpy's, Python's
    `random`) raised at `node`: running out of stack or memory is a limit, anything else
    the runtime error runtime_error makes of it (a ProgramError the callers re-raise as is,
    before this)."""
    if isinstance(exc, RecursionError | MemoryError):
        return state.error("limit", f"{label} ran out of resources ({type(exc).__name__})", node)
    return runtime_error(state, exc, node, label, operands)


def inplace_hint(culprits: list, hint: str | None) -> str | None:
    """The explanation, with the in-place change(s) that bumped the saved tensor's version
    (program.inplace's culprits) named by line and column: PyTorch points only at backward()."""
    if not culprits:
        return hint
    places = "; ".join(f"line {e.line}, column {e.col}: {code(e.text)}" for e in culprits)
    return f"{hint} The in-place change backward() tripped over: {places}."


def with_devices(err: ProgramError, named: dict[str, str], source: str) -> ProgramError:
    """`err` with its device mismatch explained, when it is one: the rule, the devices and
    a fix naming the operands (`named`: name or source text -> device, in the operation's
    order). `source` says where the message came from (devices.message_source)."""
    device = explain_device_error(err.message, named)
    if device is None:
        return err
    err.details = replace(
        err.details,
        title=device.title,
        fix=code(device.fix_code),
        device=DeviceErrorDetails(
            kind=device.kind,
            rule=device.rule,
            devices=tuple(device.devices),
            tensors=tuple(device.tensors.items()),
            move=device.move,
            fix_code=device.fix_code,
            source=source,
        ),
    )
    err.hint = device.rule
    return err


def operand_names(state: RunState, node, operands) -> dict[str, str]:
    """name (or source text) -> device for the tensors an operation received."""
    exprs: list = []
    if isinstance(node, ast.BinOp):
        exprs = [node.left, node.right]
    elif isinstance(node, ast.Subscript):
        exprs = [node.value] + (
            list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        )
    elif isinstance(node, ast.AugAssign):
        exprs = [node.target, node.value]
    elif isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and not _is_namespace(state, func.value):
            exprs.append(func.value)
        for a in [*node.args, *(k.value for k in node.keywords)]:
            exprs.extend(a.elts if isinstance(a, ast.List | ast.Tuple) else [a])
        if any(isinstance(e, ast.Starred) for e in exprs) or None in (k.arg for k in node.keywords):
            exprs = []  # f(*xs, **options): the operands are not one per written argument
        exprs = [e for e in exprs if not isinstance(e, ast.Constant)]  # numbers are not tensors
    out: dict[str, str] = {}
    for i, t in enumerate(operands):
        name = state.name_of(t)
        if name is None and len(exprs) == len(operands):
            name = state.segment(exprs[i], 40)
        out[name or f"tensor {i + 1}"] = state.device_of(t)
    return out


def _is_namespace(state: RunState, node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in NAMESPACES and node.id not in state.env


class NoneGrads:
    """Why a `.grad` a program read was None (not a leaf, no backward() yet, no
    requires_grad), by the node that read it: using that None (in arithmetic, or calling a
    method on it) says why, at its line, rather than naming a NoneType."""

    def __init__(self, state: RunState):
        self.state = state
        self.reasons: dict[int, str] = {}  # id(the `.grad` node) -> why it was None

    def read(self, tensor, node: ast.Attribute, grad) -> str | None:
        """Notes what reading `.grad` at `node` gave; returns why it is None, or None."""
        if grad is not None:
            self.reasons.pop(id(node), None)
            return None
        reason = self.reason(tensor, node)
        self.reasons[id(node)] = reason
        return reason

    def error(self, operand: ast.AST | None, value) -> ProgramError | None:
        """The error for using `value` (read at `operand`) where a None `.grad` cannot go."""
        reason = self.reasons.get(id(operand)) if value is None else None
        return None if reason is None else self.state.error("type", reason, operand)

    def reason(self, tensor, node: ast.Attribute) -> str:
        name = self.state.segment(node.value, 30)
        if not tensor.is_leaf:
            update = self.update_of(node.value)
            if update:
                return (
                    f"`.grad` is None because `{name}` is no longer a leaf after `{update}`: "
                    f"update it in place under `with torch.no_grad(): {name} -= lr * "
                    f"{name}.grad`"
                )
            return (
                f"`.grad` is None because `{name}` is not a leaf: autograd keeps gradients only "
                "for leaves (tensors you made with requires_grad=True). Call "
                f"`{name}.retain_grad()` before backward() to keep it"
            )
        if not tensor.requires_grad:
            return (
                f"`.grad` is None because `{name}` does not require grad: autograd keeps "
                "gradients only for tensors made with requires_grad=True (or given it by "
                f"`{name}.requires_grad_()`)"
            )
        if not self.state.backward:
            return (
                "`.grad` is None because backward() was not called yet: call `loss.backward()` "
                f"first, on a loss computed from `{name}`"
            )
        return (
            f"`.grad` of `{name}` is None: no backward() has reached it since it was made or "
            f"since zero_grad() emptied it; backward() fills `.grad` of the leaves its loss "
            "was computed from"
        )

    def update_of(self, expr: ast.AST) -> str | None:
        """`w = w - ...` where the name `w` once held a leaf that required grad and now holds
        the result of an operation on it (no longer a leaf); None otherwise."""
        if not isinstance(expr, ast.Name):
            return None
        mine = [b for b in self.state.bindings if b.name == expr.id]
        if not any(b.tensor.is_leaf and b.tensor.requires_grad for b in mine):
            return None
        text = mine[-1].expr
        if len(text) > 24:
            text = text[:23] + "…"
        return f"{expr.id} = {text}"
