"""Checked program -> Trace. gradviz's own interpreter for the program language.

The interpreter walks the checked AST and performs each step itself against the
tables in gradviz.program.tables: there is no eval, exec or compile of user text. Before a
tensor operation runs for real it runs on "meta" tensors (shapes only, no data) under
torch's FLOP counter, so sizes and matrix work are checked before anything is
allocated. The result of a run is a Trace: plain data, safe to cache, pickle or send
across a process boundary.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
import math
import operator
import time
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_flatten, tree_map
from torch.utils.flop_counter import FlopCounterMode

from gradviz.devices import simulated as devices
from gradviz.devices.info import SIMULATED_CUDA_COUNT
from gradviz.graph.build import build_graph
from gradviz.graph.classic import classic_dot
from gradviz.graph.model import BackwardRecord, BackwardStep
from gradviz.graph.record import Binding, NodeRegistry, RunRecord, walk_graph
from gradviz.graph.values import list_cells, tensor_values
from gradviz.program import tables
from gradviz.program.explain import explain_error
from gradviz.program.language import ProgramError, char_col, did_you_mean, parse, source_segment
from gradviz.program.results import RunOptions, Trace
from gradviz.util.format import fmt_bytes

# ---------------------------------------------------------------- values programs hold


@dataclass(frozen=True)
class Namespace:
    path: str
    members: dict

    def __repr__(self) -> str:
        return f"<module {self.path}>"


@dataclass(frozen=True)
class Builtin:
    name: str
    fn: object

    def __repr__(self) -> str:
        return f"<built-in {self.name}>"


@dataclass(frozen=True)
class GradFnRef:
    """What `t.grad_fn` gives a program: a name to print, nothing to reach through."""

    name: str

    def __repr__(self) -> str:
        return f"<{self.name}>"


class _Marker:
    def __init__(self, name: str):
        self.name = name


NO_GRAD = _Marker("no_grad")
ENABLE_GRAD = _Marker("enable_grad")
MANUAL_SEED = _Marker("manual_seed")
DEVICE = _Marker("device")


def _namespaces() -> dict[str, Namespace]:
    functional = Namespace("torch.nn.functional", dict(tables.FUNCTIONAL))
    nn = Namespace("torch.nn", {"functional": functional})
    cuda = Namespace(
        "torch.cuda",
        {
            "is_available": tables.FnSpec(torch.cuda.is_available, check="bounded"),
            "device_count": tables.FnSpec(torch.cuda.device_count, check="bounded"),
        },
    )
    linalg = Namespace("torch.linalg", dict(tables.LINALG))
    members: dict = {
        **tables.TORCH_FUNCTIONS,
        **tables.DTYPES,
        **tables.CONSTANTS,
        "nn": nn,
        "cuda": cuda,
        "linalg": linalg,
        "no_grad": NO_GRAD,
        "enable_grad": ENABLE_GRAD,
        "manual_seed": MANUAL_SEED,
        "device": DEVICE,
    }
    return {"torch": Namespace("torch", members), "F": functional}


NAMESPACES = _namespaces()

# Functions that make tensors from numbers: the pre-check must ask for device="meta".
FACTORIES = frozenset(
    tables.TORCH_FUNCTIONS[name].target
    for name in tables.CONSTRUCTORS
    if name in tables.TORCH_FUNCTIONS
)

SAFE_VALUE_TYPES = (
    torch.Tensor,
    bool,
    int,
    float,
    str,
    type(None),
    torch.dtype,
    torch.device,
    torch.Size,
    GradFnRef,
    slice,
    type(Ellipsis),
)

BINOPS = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
    ast.MatMult: ("@", operator.matmul),
}
UNARYOPS = {
    ast.USub: ("-", operator.neg),
    ast.UAdd: ("+", operator.pos),
    ast.Invert: ("~", operator.invert),
    ast.Not: ("not", operator.not_),
}
CMPOPS = {
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
}
INPLACE = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
    ast.Pow: operator.ipow,
    ast.MatMult: operator.imatmul,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
}

# ---------------------------------------------------------------- the interpreter


def _runtime_message(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    for marker in ("\nException raised from", "\nFrame", "\n\nThe above exception"):
        text = text.split(marker)[0]
    if len(text) > 1500:
        text = text[:1500] + " …"
    return text


class Interpreter:
    """Runs a checked program statement by statement."""

    def __init__(
        self,
        source: str,
        tree: ast.Module,
        options: RunOptions,
        leaf_overrides: dict[tuple[str, int], torch.Tensor] | None = None,
    ):
        self.source = source
        self.lines = source.splitlines()
        self.tree = tree
        self.options = options
        self.limits = options.limits
        self.env: dict[str, object] = {}
        self.bindings: list[Binding] = []
        self.stdout: list[str] = []
        self.warnings: list[dict] = []
        self.backward: list[BackwardRecord] = []
        self.registry = NodeRegistry()
        self.generator = torch.Generator().manual_seed(options.seed)
        self.leaf_overrides = leaf_overrides or {}
        self.no_grad_depth = 0
        self.skip_backward = False  # gradient checks re-run programs without their backward()
        self.total_bytes = 0
        self.total_elements = 0
        self.total_flops = 0.0
        self.statements = 0
        self.ops = 0
        self.node: ast.AST | None = None
        simulate = options.simulate_cuda
        self.simulated = devices.simulation_needed() if simulate is None else bool(simulate)
        self.shadow = devices.FakeShadow() if self.simulated else None
        self.device_overrides = dict(options.device_overrides or {})
        self.moves: list[dict] = []
        self.device_notes: list[str] = []
        self.fn_devices: dict[int, tuple[object, str]] = {}  # id(autograd node) -> (node, device)
        self.builtins = {
            "print": Builtin("print", self._print),
            "len": Builtin("len", len),
            "abs": Builtin("abs", abs),
            "min": Builtin("min", min),
            "max": Builtin("max", max),
            "round": Builtin("round", round),
            "float": Builtin("float", float),
            "int": Builtin("int", int),
        }

    # -- errors

    def error(self, kind: str, message: str, node: ast.AST | None = None, hint: str | None = None):
        node = node or self.node
        line = getattr(node, "lineno", None)
        col = char_col(self.lines, line, getattr(node, "col_offset", None))
        return ProgramError(kind, message, line, col, hint)

    def segment(self, node: ast.AST, max_len: int = 60) -> str:
        return source_segment(self.lines, node, max_len)

    # -- statements

    def run(self) -> None:
        # Every run sees every warning: Python's "once" registries are bypassed by "always",
        # and PyTorch's warn-once warnings (TORCH_WARN_ONCE: backward(create_graph=True),
        # .T on 3-D tensors) by set_warn_always, so a warning shown to the first program a
        # worker ran is shown to the next one too, and does not tell it what ran before.
        was_always = torch.is_warn_always_enabled()
        torch.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.resetwarnings()
                warnings.simplefilter("always")
                self._run_block(self.tree.body, caught)
        finally:
            torch.set_warn_always(was_always)

    def _run_block(self, body: list[ast.stmt], caught: list) -> None:
        for stmt in body:
            self.statements += 1
            if self.statements > self.limits.max_statements:
                raise self.error(
                    "limit", f"more than {self.limits.max_statements:,} statements ran", stmt
                )
            self.node = stmt
            before = len(caught)
            try:
                self._exec(stmt, caught)
            finally:
                for w in caught[before:]:
                    self.warnings.append(
                        {
                            "line": stmt.lineno,
                            "message": str(w.message).split("\n")[0],
                            "category": w.category.__name__,
                        }
                    )
                del caught[before:]

    def _exec(self, stmt: ast.stmt, caught: list) -> None:
        if isinstance(stmt, ast.Expr):
            self.eval(stmt.value)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value)
            for target in stmt.targets:
                self.assign(target, value, stmt)
        elif isinstance(stmt, ast.AugAssign):
            self.aug_assign(stmt)
        elif isinstance(stmt, ast.With):
            self.with_block(stmt, caught)
        elif isinstance(stmt, ast.Pass):
            return
        else:  # the checker refuses everything else; this is a second line of defence
            raise self.error(
                "forbidden", f"`{type(stmt).__name__}` is not part of this language", stmt
            )

    def with_block(self, stmt: ast.With, caught: list) -> None:
        managers = []
        for item in stmt.items:
            func = item.context_expr.func  # checked: torch.no_grad() / torch.enable_grad()
            managers.append(torch.no_grad() if func.attr == "no_grad" else torch.enable_grad())
        for m in managers:
            m.__enter__()
        depth_change = sum(1 if isinstance(m, torch.no_grad) else 0 for m in managers)
        self.no_grad_depth += depth_change
        try:
            self._run_block(stmt.body, caught)
        finally:
            self.no_grad_depth -= depth_change
            for m in reversed(managers):
                m.__exit__(None, None, None)

    def assign(self, target: ast.AST, value, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, stmt)
        elif isinstance(target, ast.Tuple | ast.List):
            if not isinstance(value, tuple | list):
                raise self.error(
                    "type", f"cannot unpack a {self.type_name(value)} into names", target
                )
            if len(value) != len(target.elts):
                raise self.error(
                    "type",
                    f"{len(target.elts)} names on the left but {len(value)} values on the right",
                    target,
                )
            for elt, v in zip(target.elts, value, strict=True):
                self.bind(elt.id, v, stmt)
        elif isinstance(target, ast.Subscript):
            obj = self.lookup(target.value)
            if not isinstance(obj, torch.Tensor):
                raise self.error("type", "item assignment works on tensors only", target)
            index = self.eval_index(target.slice)
            self.call(
                "item assignment", operator.setitem, (obj, index, value), {}, target, "bounded"
            )
        elif isinstance(target, ast.Attribute):
            obj = self.lookup(target.value)
            if not isinstance(obj, torch.Tensor):
                raise self.error("type", f"`.{target.attr}` can be set on tensors only", target)
            if target.attr == "grad" and not (value is None or isinstance(value, torch.Tensor)):
                raise self.error("type", "`t.grad` can be set to None or a tensor", target)
            if target.attr == "requires_grad" and not isinstance(value, bool):
                raise self.error("type", "`t.requires_grad` can be set to True or False", target)
            self.call(
                f"setting .{target.attr}", setattr, (obj, target.attr, value), {}, target, "bounded"
            )

    def bind(self, name: str, value, stmt: ast.stmt) -> None:
        if isinstance(value, Namespace | Builtin | _Marker):
            raise self.error(
                "type", f"`{name}` cannot hold a module or a function; call it instead", stmt
            )
        if isinstance(value, torch.Tensor):
            key = (name, stmt.lineno)
            if key in self.leaf_overrides and value.is_leaf:
                value = self.leaf_overrides[key]
            elif self.leaf_overrides and value.is_leaf and value.is_floating_point():
                value = value.to(torch.float64)  # gradient checks run every constant in float64
            target = self.device_overrides.get(name, self.device_overrides.get("*"))
            if target and value.is_leaf:  # "*": every leaf
                value = self.move_leaf(name, value, target, stmt)
            if self.options.retain_intermediate and value.requires_grad and not value.is_leaf:
                value.retain_grad()
            op = ""
            if isinstance(stmt, ast.Assign):
                op = self.op_name(stmt.value)
            self.bindings.append(
                Binding(
                    name,
                    value,
                    stmt.lineno,
                    self.segment(
                        stmt.value if isinstance(stmt, ast.Assign | ast.AugAssign) else stmt
                    ),
                    self.no_grad_depth > 0,
                    op,
                    op in tables.CONSTRUCTORS or op in ("Constant", "List"),
                )
            )
        self.env[name] = value

    def record(self) -> RunRecord:
        """What the graph is built from (gradviz.graph.build)."""
        return RunRecord(
            self.bindings,
            self.registry,
            self.device_of,
            self.fn_devices,
            self.backward,
            bool(self.simulated),
        )

    def device_of(self, t: torch.Tensor) -> str:
        """Where a tensor lives: its real device, or the simulated one PyTorch's rules gave it."""
        return str(self.shadow.device_of(t) if self.shadow is not None else t.device)

    def move_leaf(self, name: str, value: torch.Tensor, device: str, stmt) -> torch.Tensor:
        """device_overrides: the leaf is made on `device`, as if the program had said so."""
        before = self.device_of(value)
        if before == str(torch.device(device)) or (device == "cuda" and before == "cuda:0"):
            return value
        requires_grad = value.requires_grad
        if self.shadow is not None and torch.device(device).type == "cuda":
            moved = value.detach().clone().requires_grad_(requires_grad)
            self.shadow.place(moved, device)
        elif self.shadow is not None:  # back to the CPU from a simulated device
            moved = value.detach().clone().requires_grad_(requires_grad)
        else:
            try:
                moved = value.detach().to(device).requires_grad_(requires_grad)
            except Exception as exc:
                raise self.runtime_error(exc, stmt, f"moving {name} to {device}") from None
        self.moves.append(
            {"name": name, "line": stmt.lineno, "from": before, "to": self.device_of(moved)}
        )
        return moved

    def op_name(self, node: ast.AST) -> str:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return node.func.attr
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id
        return type(node).__name__

    def aug_assign(self, stmt: ast.AugAssign) -> None:
        value = self.eval(stmt.value)
        if isinstance(stmt.target, ast.Name):
            current = self.lookup(stmt.target)
            if isinstance(current, torch.Tensor):
                symbol = BINOPS[type(stmt.op)][0]
                check = "meta" if symbol == "@" else "broadcast"
                result = self.call(
                    f"{symbol}=", INPLACE[type(stmt.op)], (current, value), {}, stmt, check
                )
                self.bind(stmt.target.id, result, stmt)
            else:
                self.bind(stmt.target.id, self.binop(stmt.op, current, value, stmt), stmt)
        else:  # t[i] += v: read, add, write back, as Python does
            obj = self.lookup(stmt.target.value)
            if not isinstance(obj, torch.Tensor):
                raise self.error("type", "item assignment works on tensors only", stmt.target)
            index = self.eval_index(stmt.target.slice)
            current = self.call("indexing", operator.getitem, (obj, index), {}, stmt.target, "meta")
            updated = self.call(
                "+=", INPLACE[type(stmt.op)], (current, value), {}, stmt, "broadcast"
            )
            self.call(
                "item assignment", operator.setitem, (obj, index, updated), {}, stmt, "bounded"
            )

    # -- expressions

    def eval(self, node: ast.AST):
        self.node = node
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node)
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.eval(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.BinOp):
            left = self.eval(node.left)
            right = self.eval(node.right)
            return self.binop(node.op, left, right, node)
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            symbol, fn = UNARYOPS[type(node.op)]
            if isinstance(operand, torch.Tensor):
                return self.call(f"unary {symbol}", fn, (operand,), {}, node, "bounded")
            if isinstance(operand, bool | int | float):
                return fn(operand)
            raise self.error(
                "type", f"`{symbol}` does not apply to a {self.type_name(operand)}", node
            )
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            right = self.eval(node.comparators[0])
            symbol, fn = CMPOPS[type(node.ops[0])]
            self.require_operands(symbol, left, right, node, allow_str=True)
            if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
                return self.call(symbol, fn, (left, right), {}, node, "broadcast")
            return fn(left, right)
        if isinstance(node, ast.Subscript):
            obj = self.eval(node.value)
            index = self.eval_index(node.slice)
            if isinstance(obj, torch.Tensor):
                return self.call("indexing", operator.getitem, (obj, index), {}, node, "meta")
            if isinstance(obj, tuple | list | torch.Size):
                try:
                    return obj[index]
                except (IndexError, TypeError) as exc:
                    raise self.error("runtime", str(exc), node) from None
            raise self.error("type", f"a {self.type_name(obj)} cannot be indexed", node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return self.call_node(node)
        if isinstance(node, ast.Slice):
            return self.eval_index(node)
        raise self.error("forbidden", f"`{type(node).__name__}` is not part of this language", node)

    def eval_index(self, node: ast.AST):
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)
            ]
            for p in parts:
                if p is not None and not isinstance(p, int | torch.Tensor):
                    raise self.error("type", "slice bounds must be integers", node)
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self.eval_index(e) for e in node.elts)
        value = self.eval(node)
        if isinstance(value, list):  # x[[0, 2]] is advanced indexing with a list
            return value
        if not isinstance(value, int | torch.Tensor | type(None) | type(Ellipsis) | slice):
            raise self.error(
                "type",
                f"an index must be an integer, slice or tensor, not a {self.type_name(value)}",
                node,
            )
        return value

    def lookup(self, node: ast.Name):
        name = node.id
        if name in self.env:
            return self.env[name]
        if name in NAMESPACES:
            return NAMESPACES[name]
        if name in self.builtins:
            return self.builtins[name]
        known = list(self.env) + list(NAMESPACES) + list(self.builtins)
        hint = did_you_mean(name, known)
        if hint is None and name in tables.all_known_names():
            hint = f"Did you mean `torch.{name}`?"
        raise self.error("name", f"`{name}` is not defined", node, hint)

    def type_name(self, value) -> str:
        if isinstance(value, torch.Tensor):
            return "tensor"
        if isinstance(value, Namespace):
            return f"module ({value.path})"
        return type(value).__name__

    def require_operands(self, symbol: str, left, right, node, allow_str: bool = False) -> None:
        ok = (torch.Tensor, bool, int, float) + (
            (str, type(None), torch.dtype, torch.device) if allow_str else ()
        )
        for v in (left, right):
            if not isinstance(v, ok):
                raise self.error(
                    "type",
                    f"`{symbol}` works on tensors and numbers here, not on a {self.type_name(v)}",
                    node,
                )

    def binop(self, op: ast.operator, left, right, node):
        symbol, fn = BINOPS[type(op)]
        self.require_operands(symbol, left, right, node)
        if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            return self.call(
                symbol, fn, (left, right), {}, node, "meta" if symbol == "@" else "broadcast"
            )
        self.check_number_op(symbol, left, right, node)
        try:
            return fn(left, right)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise self.error("runtime", f"{type(exc).__name__}: {exc}", node) from None

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
            raise self.error(
                "limit",
                f"`{symbol}` would make an integer of about {estimate:,} bits; the limit is "
                f"{self.limits.max_int_bits:,} bits",
                node,
            )

    def attribute(self, node: ast.Attribute):
        obj = self.eval(node.value)
        name = node.attr
        if isinstance(obj, Namespace):
            if name in obj.members:
                member = obj.members[name]
                if isinstance(member, tables.FnSpec | _Marker):
                    raise self.error(
                        "type",
                        f"`{obj.path}.{name}` is a function: call it, e.g. {obj.path}.{name}(...)",
                        node,
                    )
                return member
            raise self.error(
                "name",
                f"`{obj.path}.{name}` is not available in this language",
                node,
                did_you_mean(name, obj.members),
            )
        if isinstance(obj, torch.Tensor):
            if name in tables.TENSOR_ATTRIBUTES:
                if name == "grad_fn":
                    return None if obj.grad_fn is None else GradFnRef(obj.grad_fn.name())
                if self.shadow is not None and name in ("device", "is_cuda"):
                    where = self.shadow.device_of(obj)
                    return where if name == "device" else where.type == "cuda"
                if self.shadow is not None and name == "grad":
                    grad = self.call(".grad", getattr, (obj, "grad"), {}, node, "bounded")
                    if isinstance(grad, torch.Tensor):  # a gradient lives on its tensor's device
                        self.shadow.place(grad, self.shadow.device_of(obj))
                    return grad
                return self.call(f".{name}", getattr, (obj, name), {}, node, "bounded")
            if name in tables.TENSOR_METHODS:
                raise self.error("type", f"`.{name}` is a method: call it, e.g. t.{name}()", node)
            raise self.error(
                "name",
                f"tensors have no attribute `.{name}` in this language",
                node,
                did_you_mean(name, set(tables.TENSOR_ATTRIBUTES) | set(tables.TENSOR_METHODS)),
            )
        if isinstance(obj, torch.device) and name in ("type", "index"):
            return getattr(obj, name)
        if isinstance(obj, torch.dtype) and name in ("is_floating_point", "itemsize"):
            return getattr(obj, name)
        raise self.error(
            "type", f"a {self.type_name(obj)} has no attribute `.{name}` in this language", node
        )

    def call_node(self, node: ast.Call):
        args = tuple(self.eval(a) for a in node.args)
        kwargs = {kw.arg: self.eval(kw.value) for kw in node.keywords}
        self.node = node
        func = node.func
        # Method call on a tensor: t.name(...)
        if isinstance(func, ast.Attribute):
            owner = self.eval(func.value)
            self.node = node
            if isinstance(owner, torch.Tensor):
                return self.tensor_method(owner, func.attr, args, kwargs, node)
            if isinstance(owner, Namespace):
                member = owner.members.get(func.attr)
                if member is None:
                    raise self.error(
                        "name",
                        f"`{owner.path}.{func.attr}` is not available in this language",
                        func,
                        did_you_mean(func.attr, owner.members),
                    )
                return self.call_member(f"{owner.path}.{func.attr}", member, args, kwargs, node)
            raise self.error(
                "type",
                f"a {self.type_name(owner)} has no method `.{func.attr}` in this language",
                func,
            )
        callee = self.eval(func)
        self.node = node
        if isinstance(callee, Builtin):
            return self.call_builtin(callee, args, kwargs, node)
        raise self.error("type", f"a {self.type_name(callee)} cannot be called", node)

    def call_builtin(self, builtin: Builtin, args, kwargs, node):
        if builtin.name == "print":
            if set(kwargs) - {"sep", "end"}:
                raise self.error("type", "print() takes sep= and end= only", node)
            return self._print(*args, **kwargs)
        if kwargs:
            raise self.error("type", f"{builtin.name}() takes no keyword arguments here", node)
        for a in args:
            if not isinstance(a, bool | int | float | torch.Tensor | tuple | list | torch.Size):
                raise self.error(
                    "type", f"{builtin.name}() does not take a {self.type_name(a)}", node
                )
        if builtin.name in ("min", "max") and any(isinstance(a, torch.Tensor) for a in args):
            raise self.error(
                "type",
                f"use torch.{builtin.name}(t) or t.{builtin.name}() for tensors",
                node,
            )
        if builtin.name == "round":
            self.check_round(args, node)
        try:
            return self.checked(builtin.fn(*args), node, builtin.name)
        except ProgramError:
            raise
        except Exception as exc:
            raise self.runtime_error(exc, node, builtin.name) from None

    def check_round(self, args, node) -> None:
        """round(int, -n) computes 10**n: refuse n beyond the integer-size cap first."""
        if len(args) != 2 or not isinstance(args[0], int) or not isinstance(args[1], int):
            return
        digits = -args[1]
        estimate = math.ceil(digits * math.log2(10)) if digits > 0 else 0
        if estimate > self.limits.max_int_bits:
            raise self.error(
                "limit",
                f"round(..., {args[1]:,}) would make an integer of about {estimate:,} bits; "
                f"the limit is {self.limits.max_int_bits:,} bits",
                node,
            )

    def _print(self, *args, sep=" ", end="\n"):
        if not isinstance(sep, str) or not isinstance(end, str):
            raise self.error("type", "print's sep and end must be strings")
        text = sep.join(a if isinstance(a, str) else self.repr_value(a) for a in args)
        if len(self.stdout) < 500:
            self.stdout.append(text[:5000] + ("" if end == "\n" else end))
        return None

    def repr_value(self, value) -> str:
        if isinstance(value, torch.Tensor) and self.shadow is not None:
            return devices.tensor_repr(value, self.shadow.device_of(value))
        return repr(value)

    def call_member(self, label: str, member, args, kwargs, node):
        if member is NO_GRAD or member is ENABLE_GRAD:
            raise self.error(
                "type",
                f"{label}() is used as `with {label}():` followed by an indented block",
                node,
            )
        if member is MANUAL_SEED:
            if len(args) != 1 or kwargs or not isinstance(args[0], int):
                raise self.error("type", "torch.manual_seed takes one integer", node)
            self.generator.manual_seed(args[0] % 2**63)  # the run's own generator, not torch's
            return None
        if member is DEVICE:
            return self.call("torch.device", torch.device, args, kwargs, node, "bounded")
        if self.shadow is not None and label in (
            "torch.cuda.is_available",
            "torch.cuda.device_count",
        ):
            note = (
                f"{label}() answered as simulated CUDA: this host has no CUDA GPU, so gradviz "
                f"simulates {SIMULATED_CUDA_COUNT} (cuda:0, cuda:1): values are computed "
                "on the CPU, device rules are PyTorch's own (FakeTensorMode)."
            )
            if note not in self.device_notes:
                self.device_notes.append(note)
            return True if label.endswith("is_available") else SIMULATED_CUDA_COUNT
        if not isinstance(member, tables.FnSpec):
            raise self.error("type", f"`{label}` cannot be called", node)
        if label.endswith("norm"):
            self.refuse_matrix_norm(args, kwargs, node)
        if member.random:
            kwargs = {**kwargs, "generator": self.generator}
        return self.call(label, member.target, args, kwargs, node, member.check)

    def tensor_method(self, tensor: torch.Tensor, name: str, args, kwargs, node):
        check = tables.TENSOR_METHODS.get(name)
        if check is None:
            if name in tables.TENSOR_ATTRIBUTES:
                raise self.error(
                    "type", f"`.{name}` is an attribute, not a method: write t.{name}", node
                )
            raise self.error(
                "name",
                f"tensors have no method `.{name}` in this language",
                node.func,
                did_you_mean(name, set(tables.TENSOR_METHODS) | set(tables.TENSOR_ATTRIBUTES)),
            )
        if name == "backward":
            if self.skip_backward:
                return None
            return self.run_backward(tensor, args, kwargs, node, origin="program")
        if name == "numpy" and self.shadow is not None:
            where = self.shadow.device_of(tensor)
            if where.type != "cpu":  # PyTorch's own message; FakeTensorMode cannot run .numpy()
                exc = TypeError(devices.numpy_message(where))
                raise self.runtime_error(exc, node, ".numpy()", (tensor,), rule_by_gradviz=True)
        if name == "numpy":
            # torch decides (and refuses, for GPU tensors or ones that require grad);
            # the program gets plain numbers, never an ndarray.
            return self.call(
                ".numpy()", lambda t: t.numpy().tolist(), (tensor,), {}, node, "bounded"
            )
        if name == "norm":
            self.refuse_matrix_norm(args, kwargs, node)
        method = getattr(torch.Tensor, name)
        return self.call(f".{name}()", method, (tensor, *args), kwargs, node, check)

    def refuse_matrix_norm(self, args, kwargs, node) -> None:
        """Nuclear and spectral norms run an SVD (cubic cost the FLOP counter cannot see)."""
        for v in (*args, kwargs.get("p"), kwargs.get("ord")):
            if isinstance(v, str) and v != "fro":
                raise self.error(
                    "forbidden",
                    f"the '{v}' norm is not available here (it needs a matrix decomposition); "
                    "use the default (Frobenius/2-norm) or p=1, p=2, p=float('inf')",
                    node,
                )

    # -- the one place tensor work happens

    def call(self, label: str, fn, args: tuple, kwargs: dict, node, check: str):
        self.node = node
        self.ops += 1
        if check == "meta":
            self.precheck(label, fn, args, kwargs, node)
        elif check == "broadcast":
            self.precheck_broadcast(label, args, kwargs, node)
        else:  # bounded: no bigger than the inputs, but the work still counts
            self.count_work(args, node)
        fake_out = _NO_FAKE
        real_fn = fn
        if self.shadow is not None and fn not in _NO_FAKE_FNS:
            if fn in _MOVES or self.shadow.needed(args, kwargs):
                fake_out = self.fake_call(label, fn, args, kwargs, node)
                real_fn, args, kwargs = self.real_call(fn, args, kwargs, fake_out)
        try:
            result = real_fn(*args, **kwargs)
        except ProgramError:
            raise
        except (RecursionError, MemoryError) as exc:
            raise self.error(
                "limit", f"{label} ran out of resources ({type(exc).__name__})", node
            ) from None
        except Exception as exc:
            raise self.runtime_error(exc, node, label, _tensors_in(args, kwargs)) from None
        if self.shadow is not None and fake_out is not _NO_FAKE:
            if not self.shadow.record(result, fake_out):
                self.shadow_fallback(result, args, kwargs)
        elif self.shadow is not None and self.shadow.active:
            self.shadow_fallback(result, args, kwargs)
        if self.shadow is None or self.shadow.active:  # before that, everything is on the CPU
            self.note_fn_devices(result)
        if check == "bounded":
            self.count_new_bytes(result, args, node)
        return self.checked(result, node, label)

    # -- simulated CUDA: PyTorch decides devices on fake twins, values come from the CPU

    def fake_call(self, label: str, fn, args, kwargs, node):
        try:
            return self.shadow.run(fn, args, kwargs)
        except Exception as exc:
            if devices.is_device_error(exc):
                raise self.runtime_error(
                    exc,
                    node,
                    label,
                    _tensors_in(args, kwargs),
                    rule_by_gradviz=isinstance(exc, devices.SimulatedDeviceError),
                ) from None
            return _NO_FAKE  # e.g. data-dependent outputs: the real run decides

    def real_call(self, fn, args, kwargs, fake_out):
        """The same call on the real CPU tensors: devices become "cpu"; a move is a copy."""

        def cpu(v):  # simulated CUDA only; a real device (e.g. Apple's mps) stays real
            return "cpu" if devices.is_device_like(v) and torch.device(v).type == "cuda" else v

        kwargs = {k: cpu(v) if k == "device" else v for k, v in kwargs.items()}
        if fn not in _MOVES:
            return fn, args, kwargs
        src = args[0]
        moved = isinstance(fake_out, torch.Tensor) and fake_out.device != self.shadow.device_of(src)
        if fn is torch.Tensor.to:
            args = tuple(cpu(a) for a in args)
            if moved:
                kwargs = {**kwargs, "copy": True}
            return fn, args, kwargs
        # .cuda(...) / .cpu(): a copy when the device changes, the tensor itself otherwise
        return (lambda t, *a, **k: t.to("cpu", copy=True) if moved else t), args, {}

    def shadow_fallback(self, result, args, kwargs) -> None:
        """Outputs FakeTensorMode could not compute (data-dependent shapes, Python numbers):
        they live where their first tensor input lives."""
        inputs = _tensors_in(args, kwargs)
        if not inputs:
            return
        where = self.shadow.device_of(inputs[0])
        if where.type == "cpu":
            return
        leaves, _ = tree_flatten(result)
        for t in leaves:
            if isinstance(t, torch.Tensor) and self.shadow.device_of(t).type == "cpu":
                self.shadow.place(t, where)

    def note_fn_devices(self, result) -> None:
        """The device of each autograd node this operation made (its output's device)."""
        leaves, _ = tree_flatten(result)
        for t in leaves:
            if not isinstance(t, torch.Tensor) or t.grad_fn is None:
                continue
            if id(t.grad_fn) in self.fn_devices:
                continue
            where = self.device_of(t)
            stack = [t.grad_fn]
            while stack:
                fn = stack.pop()
                if fn is None or id(fn) in self.fn_devices or hasattr(fn, "variable"):
                    continue
                self.fn_devices[id(fn)] = (fn, where)
                stack.extend(n for n, _ in fn.next_functions)

    def operand_names(self, node, operands) -> dict[str, str]:
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
            if isinstance(func, ast.Attribute) and not self._is_namespace(func.value):
                exprs.append(func.value)
            for a in [*node.args, *(k.value for k in node.keywords)]:
                exprs.extend(a.elts if isinstance(a, ast.List | ast.Tuple) else [a])
            exprs = [e for e in exprs if not isinstance(e, ast.Constant)]  # numbers are not tensors
        out: dict[str, str] = {}
        for i, t in enumerate(operands):
            name = self.name_of(t)
            if name is None and len(exprs) == len(operands):
                name = self.segment(exprs[i], 40)
            out[name or f"tensor {i + 1}"] = self.device_of(t)
        return out

    def _is_namespace(self, node) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in NAMESPACES and node.id not in self.env

    def count_work(self, args: tuple, node) -> None:
        """Reductions and unary ops allocate little but still read every input value."""
        self.total_elements += sum(
            max(a.numel(), list_cells(a.shape)) for a in args if isinstance(a, torch.Tensor)
        )
        if self.total_elements > self.limits.max_total_elements:
            raise self.error(
                "limit",
                f"this program would compute more than {self.limits.max_total_elements:,} values "
                "in all (the limit) by this line",
                node,
            )

    def count_new_bytes(self, result, args: tuple, node) -> None:
        """A bounded op's output is no bigger than its input; it still adds to the total."""
        inputs = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
        leaves, _ = tree_flatten(result)
        for t in leaves:
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                if t.untyped_storage().data_ptr() not in inputs:
                    self.total_bytes += t.untyped_storage().nbytes()
        if self.total_bytes > self.limits.max_total_bytes:
            raise self.error(
                "limit",
                f"this program would allocate more than {fmt_bytes(self.limits.max_total_bytes)} "
                "in all (the limit) by this line",
                node,
            )

    def runtime_error(
        self,
        exc: BaseException,
        node,
        label: str,
        operands: tuple | list = (),
        rule_by_gradviz: bool = False,
    ) -> ProgramError:
        message = _runtime_message(exc)
        explanation = explain_error(message)
        err = self.error("runtime", message, node, explanation.plain if explanation else None)
        err.details = {"exception": type(exc).__name__, "operation": label}
        if explanation:
            err.details.update(explanation.as_details())
        named = self.operand_names(node, operands) if operands else {}
        device = devices.explain_device_error(message, named)
        if device is not None:
            err.details.update(device.as_details())
            err.details["title"] = device.title
            err.details["fix"] = f"`{device.fix_code}`"
            err.hint = device.rule
            err.details["device_source"] = devices.message_source(self.simulated, rule_by_gradviz)
        return err

    def checked(self, value, node, label: str):
        """Only plain, safe values reach a program's variables."""
        if (
            isinstance(value, tuple)
            and type(value) is not tuple
            and not isinstance(value, torch.Size)
        ):
            value = tuple(value)  # torch.return_types.* (named tuples of tensors)
        if isinstance(value, SAFE_VALUE_TYPES):
            if isinstance(value, str) and len(value) > 10_000:
                raise self.error("limit", f"{label} made a string that is too long", node)
            return value
        if isinstance(value, tuple | list):
            leaves, _ = tree_flatten(value)
            if len(leaves) > 1_000_000:
                raise self.error("limit", f"{label} made a list with {len(leaves):,} items", node)
            for leaf in leaves:
                if not isinstance(leaf, SAFE_VALUE_TYPES):
                    raise self.error(
                        "type",
                        f"{label} gave a {type(leaf).__name__}, which programs cannot hold",
                        node,
                    )
            return value
        raise self.error(
            "type", f"{label} gave a {type(value).__name__}, which programs cannot hold", node
        )

    def precheck(self, label: str, fn, args, kwargs, node) -> None:
        """Run the operation on shape-only tensors and refuse it if a cap would be passed."""

        def to_meta(v):
            if isinstance(v, torch.Tensor):
                return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
            if isinstance(v, torch.Generator):
                return None
            return v

        if fn is F.one_hot:
            args, kwargs = _one_hot_classes(args, kwargs)
        meta_args = tree_map(to_meta, args)
        meta_kwargs = {
            k: to_meta(v) for k, v in kwargs.items() if k not in ("generator", "pin_memory")
        }
        out = self._meta_call(fn, meta_args, meta_kwargs)
        if out is _NO_FAKE:
            # A size given as a tensor (torch.zeros(torch.tensor(n)), steps=torch.tensor(n))
            # has no value on the meta device: read it as the number it holds, as the real
            # call will, and try again. A method's own tensor (args[0]) stays a tensor.
            keep = 0 if fn in FACTORIES else 1
            sized = (*args[:keep], *tree_map(size_number, args[keep:]))
            meta_args = tree_map(to_meta, sized)
            meta_kwargs = {
                k: to_meta(size_number(v))
                for k, v in kwargs.items()
                if k not in ("generator", "pin_memory")
            }
            out = self._meta_call(fn, meta_args, meta_kwargs)
            if out is _NO_FAKE:
                # Invalid arguments: the real call raises torch's own message, with real
                # devices, before it allocates anything. tests/unit/test_tables.py checks
                # every table entry has a meta kernel, so this is only taken for bad input.
                return
        counter, out = out
        leaves, _ = tree_flatten(out)
        outputs = [
            (t.shape, t.numel(), t.element_size(), t.dtype)
            for t in leaves
            if isinstance(t, torch.Tensor)
        ]
        work = float(counter.get_total_flops()) if counter else 0.0
        if fn in tables.POOLING and outputs:
            work += outputs[0][1] * _window(fn, args, kwargs)
        self.account(label, outputs, work, node)

    def _meta_call(self, fn, meta_args, meta_kwargs):
        """(FLOP counter or None, output) of the call on shape-only tensors; _NO_FAKE if it
        raised."""
        if "device" in meta_kwargs or fn in FACTORIES:
            # Factories (torch.ones(...)) have no tensor input to take the meta device from.
            meta_kwargs = {**meta_kwargs, "device": "meta"}
        if fn is torch.Tensor.to:
            meta_args = tuple("meta" if isinstance(a, str | torch.device) else a for a in meta_args)
            meta_kwargs = {k: v for k, v in meta_kwargs.items() if k != "device"}
        counter = FlopCounterMode(display=False) if fn in tables.MATRIX_WORK else None
        try:
            with torch.no_grad(), counter or contextlib.nullcontext():
                return counter, fn(*meta_args, **meta_kwargs)
        except Exception:
            return _NO_FAKE

    def precheck_broadcast(self, label: str, args, kwargs, node) -> None:
        """Element-wise operations: the output has the broadcast shape of the inputs."""
        tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
        if not tensors:
            return
        try:
            shape = torch.broadcast_shapes(*(t.shape for t in tensors))
        except RuntimeError:
            return  # shapes do not broadcast: the real call raises torch's own message
        numel = math.prod(shape)
        size = max(max(t.element_size() for t in tensors), 4)
        dtype = max(tensors, key=lambda t: t.element_size()).dtype
        self.account(label, [(shape, numel, size, dtype)], 0.0, node)

    def account(self, label: str, outputs, flops: float, node) -> None:
        """Refuse outputs or work over the caps; otherwise add them to the program's totals."""
        what = self.segment(node, 50) or label
        for shape, numel, size, dtype in outputs:
            nbytes = numel * size
            if numel > self.limits.max_tensor_elements or nbytes > self.limits.max_tensor_bytes:
                dims = "x".join(str(s) for s in shape) or "scalar"
                raise self.error(
                    "limit",
                    f"`{what}` would allocate {fmt_bytes(nbytes)} ({numel:,} {str(dtype).replace('torch.', '')} "
                    f"values, shape {dims}); the limit is {fmt_bytes(self.limits.max_tensor_bytes)} "
                    f"and {self.limits.max_tensor_elements:,} values per tensor",
                    node,
                    "Use smaller sizes: the ideas are the same at 3x3 as at 3000x3000.",
                )
            self.total_bytes += nbytes
            self.total_elements += numel
        if self.total_bytes > self.limits.max_total_bytes:
            raise self.error(
                "limit",
                f"this program would allocate more than {fmt_bytes(self.limits.max_total_bytes)} "
                f"in all (the limit) by this line",
                node,
            )
        if self.total_elements > self.limits.max_total_elements:
            raise self.error(
                "limit",
                f"this program would compute more than {self.limits.max_total_elements:,} values "
                "in all (the limit) by this line",
                node,
            )
        if flops > self.limits.max_flops_per_op:
            raise self.error(
                "limit",
                f"`{what}` is {flops:.3g} floating-point operations of "
                f"matrix work; the limit is {self.limits.max_flops_per_op:.3g} per operation",
                node,
            )
        self.total_flops += flops
        if self.total_flops > self.limits.max_total_flops:
            raise self.error(
                "limit",
                f"this program would do more than {self.limits.max_total_flops:.3g} floating-point "
                "operations of matrix work in all (the limit) by this line",
                node,
            )

    # -- backward, watched

    def run_backward(
        self, tensor: torch.Tensor, args, kwargs, node, origin: str, target: str | None = None
    ):
        gradient = args[0] if args else kwargs.get("gradient")
        allowed = {"gradient", "retain_graph", "create_graph"}
        extra = set(kwargs) - allowed
        if extra or len(args) > 3:
            raise self.error(
                "type",
                f"backward() takes gradient, retain_graph, create_graph; not {sorted(extra)}",
                node,
            )
        name = (
            target
            or self.name_of(tensor)
            or self.segment(
                getattr(node, "func", node).value
                if isinstance(getattr(node, "func", None), ast.Attribute)
                else node,
                40,
            )
        )
        record = BackwardRecord(
            target=name,
            line=getattr(node, "lineno", None),
            gradient="given" if gradient is not None else "implicit",
            origin=origin,
        )
        handles = []
        if tensor.grad_fn is not None:
            for fn in walk_graph(tensor.grad_fn):
                key = self.registry.key(fn)

                def hook(grad_inputs, grad_outputs, key=key, fn=fn):
                    record.steps.append(
                        BackwardStep(
                            index=len(record.steps),
                            node=key,
                            fn=fn.name(),
                            upstream=[_grad_preview(g) for g in grad_outputs],
                            produced=[_grad_preview(g) for g in grad_inputs],
                        )
                    )

                handles.append(fn.register_hook(hook))
        try:
            self.call(
                ".backward()", torch.Tensor.backward, (tensor, *args), kwargs, node, "bounded"
            )
        finally:
            for h in handles:
                h.remove()
        self.backward.append(record)
        return None

    def name_of(self, tensor: torch.Tensor) -> str | None:
        for b in reversed(self.bindings):
            if b.tensor is tensor:
                return b.name
        return None


_NO_FAKE = object()  # no fake run for this call
_MOVES = (torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu)
# backward() cannot run on fake CUDA tensors (hasPrimaryContext): values and gradients come
# from the real CPU run; setting attributes and reading them need no device rules.
_NO_FAKE_FNS = (torch.Tensor.backward, setattr, getattr)


def size_number(v):
    """A size as the precheck reads it: a one-element tensor is the number it holds
    (torch.arange(torch.tensor(n)) is torch.arange(n)); anything else is itself."""
    if isinstance(v, torch.Tensor) and v.device.type != "meta" and v.numel() == 1:
        if not (v.dtype.is_floating_point or v.dtype.is_complex or v.dtype == torch.bool):
            return int(v.item())
        if v.dtype.is_floating_point:
            return float(v.item())
    return v


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


def _tensors_in(args, kwargs) -> list[torch.Tensor]:
    leaves, _ = tree_flatten((args, kwargs))
    return [v for v in leaves if isinstance(v, torch.Tensor)]


def _window(fn, args, kwargs) -> int:
    """Values a pooling window covers (kernel_size, the argument after the input)."""
    size = kwargs.get("kernel_size", args[1] if len(args) > 1 else 1)
    if isinstance(size, int):
        size = (size, size) if fn in (F.max_pool2d, F.avg_pool2d) else (size,)
    try:
        return max(1, math.prod(int(k) for k in size))
    except (TypeError, ValueError):
        return 1


def _grad_preview(g) -> str:
    if g is None:
        return "None"
    _, preview = tensor_values(g)
    return preview


# ---------------------------------------------------------------- entry point

RESERVED_NAMES = frozenset(NAMESPACES) | {
    "print",
    "len",
    "abs",
    "min",
    "max",
    "round",
    "float",
    "int",
}


def _without_gc(fn):
    """Run without the cyclic garbage collector: a run allocates many small objects,
    and a full collection in the middle (tens of ms with torch loaded) was the largest
    single cost of big programs. Collection resumes afterwards."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return wrapper


@_without_gc
def run_program(source: object, options: RunOptions | None = None) -> Trace:
    """Parse, check and run a program. Never raises for anything a user typed."""
    options = options or RunOptions()
    started = time.perf_counter()
    text = source if isinstance(source, str) else ""
    try:
        tree = parse(source, options.limits, RESERVED_NAMES)
    except ProgramError as exc:
        return Trace(
            source=text, error=exc.to_dict(), stats={"seconds": time.perf_counter() - started}
        )
    interp = Interpreter(text, tree, options)
    error = _guarded(interp.run, interp)
    if error is None and options.backward:
        error = _guarded(lambda: requested_backward(interp, options), interp)
    record = interp.record()
    graph = build_graph(record)
    trace = Trace(
        source=text,
        tensors=graph.tensors,
        error=None if error is None else error.to_dict(),
        backward=interp.backward,
        stdout=interp.stdout,
        warnings=interp.warnings,
        graph=graph,
        simulated=interp.simulated,
        moves=interp.moves,
        device_notes=interp.device_notes,
        memory=devices.memory_summary(),
        stats={
            "seconds": time.perf_counter() - started,
            "operations": interp.ops,
            "statements": interp.statements,
            "bytes": interp.total_bytes,
            "flops": interp.total_flops,
        },
    )
    if options.classic:
        trace.classic_dot = classic_dot(record)
    return trace


def _guarded(fn, interp: Interpreter) -> ProgramError | None:
    try:
        fn()
    except ProgramError as exc:
        return exc
    except (RecursionError, MemoryError) as exc:
        return interp.error("limit", f"the program ran out of resources ({type(exc).__name__})")
    except Exception as exc:  # a gap in gradviz, reported without a traceback
        return interp.error(
            "internal", f"gradviz could not run this line: {type(exc).__name__}: {exc}"
        )
    return None


def requested_backward(interp: Interpreter, options: RunOptions) -> None:
    name = options.backward
    value = interp.env.get(name)
    if not isinstance(value, torch.Tensor):
        hint = did_you_mean(name, [k for k, v in interp.env.items() if isinstance(v, torch.Tensor)])
        raise ProgramError(
            "name", f"there is no tensor named `{name}` to run backward on", None, None, hint
        )
    node = None
    for b in reversed(interp.bindings):
        if b.name == name:
            node = ast.Name(id=name, lineno=b.line, col_offset=0)
            break
    args: tuple = ()
    if options.backward_ones and value.numel() != 1:
        args = (torch.ones_like(value),)
    interp.run_backward(value, args, {}, node, origin="request", target=name)
    if args:
        interp.backward[-1].gradient = "ones"
