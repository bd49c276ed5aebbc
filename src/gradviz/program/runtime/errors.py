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
    device = devices.explain_device_error(err.message, named)
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
