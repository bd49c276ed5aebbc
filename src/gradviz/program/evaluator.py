"""Expressions: what a program's right-hand sides evaluate to.

`Evaluator.eval` walks one checked expression (gradviz.program.language has already
refused everything outside the language; anything unknown here is refused again):
constants, names, lists and tuples, arithmetic and comparisons, indexing and slices,
attributes, and calls. It never runs user text: operators on tensors, indexing, attribute
reads and calls go to gradviz.program.library.Library.call, under the run's caps; operators
on plain numbers run here, after the budget has checked the result's size.
"""

from __future__ import annotations

import ast
import operator

import torch

from gradviz.program import tables
from gradviz.program.budget import Budget
from gradviz.program.language import did_you_mean
from gradviz.program.library import Library
from gradviz.program.nntables import ObjectSpec
from gradviz.program.objects import Objects
from gradviz.program.state import RunState
from gradviz.program.values import (
    NAMESPACES,
    Builtin,
    GradFnRef,
    Marker,
    Namespace,
    ProgramObject,
    type_name,
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


class Evaluator:
    """Evaluates a program's expressions against the run's variables."""

    def __init__(self, state: RunState, budget: Budget, library: Library):
        self.state = state
        self.budget = budget
        self.library = library
        self.objects = Objects(library)  # layers, optimizers, data (nn, optim, utils.data)

    def eval(self, node: ast.AST):
        self.state.node = node
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
            return self.unary(node)
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            right = self.eval(node.comparators[0])
            symbol, fn = CMPOPS[type(node.ops[0])]
            self.require_operands(symbol, left, right, node, allow_str=True)
            if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
                return self.library.call(symbol, fn, (left, right), {}, node, "broadcast")
            return fn(left, right)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return self.call_node(node)
        if isinstance(node, ast.Slice):
            return self.eval_index(node)
        raise self.state.error(
            "forbidden", f"`{type(node).__name__}` is not part of this language", node
        )

    def unary(self, node: ast.UnaryOp):
        operand = self.eval(node.operand)
        symbol, fn = UNARYOPS[type(node.op)]
        if isinstance(operand, torch.Tensor):
            return self.library.call(f"unary {symbol}", fn, (operand,), {}, node, "bounded")
        if isinstance(operand, bool | int | float):
            return fn(operand)
        raise self.state.error("type", f"`{symbol}` does not apply to a {type_name(operand)}", node)

    def subscript(self, node: ast.Subscript):
        obj = self.eval(node.value)
        if isinstance(obj, ProgramObject):  # its own rules: sd["0.weight"], net[0], net[1:]
            return obj.index(self.eval(node.slice), node)
        index = self.eval_index(node.slice)
        if isinstance(obj, torch.Tensor):
            return self.library.call("indexing", operator.getitem, (obj, index), {}, node, "meta")
        if isinstance(obj, tuple | list | torch.Size):
            try:
                return obj[index]
            except (IndexError, TypeError) as exc:
                raise self.state.error("runtime", str(exc), node) from None
        raise self.state.error("type", f"a {type_name(obj)} cannot be indexed", node)

    def eval_index(self, node: ast.AST):
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)
            ]
            for p in parts:
                if p is not None and not isinstance(p, int | torch.Tensor):
                    raise self.state.error("type", "slice bounds must be integers", node)
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self.eval_index(e) for e in node.elts)
        value = self.eval(node)
        if isinstance(value, list):  # x[[0, 2]] is advanced indexing with a list
            return value
        if not isinstance(value, int | torch.Tensor | type(None) | type(Ellipsis) | slice):
            raise self.state.error(
                "type",
                f"an index must be an integer, slice or tensor, not a {type_name(value)}",
                node,
            )
        return value

    def lookup(self, node: ast.Name):
        name = node.id
        env, builtins = self.state.env, self.library.builtins
        if name in env:
            return env[name]
        if name in NAMESPACES:
            return NAMESPACES[name]
        if name in builtins:
            return builtins[name]
        known = list(env) + list(NAMESPACES) + list(builtins)
        hint = did_you_mean(name, known)
        if hint is None and name in tables.all_known_names():
            hint = f"Did you mean `torch.{name}`?"
        raise self.state.error("name", f"`{name}` is not defined", node, hint)

    def require_operands(self, symbol: str, left, right, node, allow_str: bool = False) -> None:
        ok = (torch.Tensor, bool, int, float) + (
            (str, type(None), torch.dtype, torch.device) if allow_str else ()
        )
        for v in (left, right):
            if not isinstance(v, ok):
                raise self.state.error(
                    "type",
                    f"`{symbol}` works on tensors and numbers here, not on a {type_name(v)}",
                    node,
                )

    def binop(self, op: ast.operator, left, right, node):
        symbol, fn = BINOPS[type(op)]
        self.require_operands(symbol, left, right, node)
        if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            return self.library.call(
                symbol, fn, (left, right), {}, node, "meta" if symbol == "@" else "broadcast"
            )
        self.budget.check_number_op(symbol, left, right, node)
        try:
            return fn(left, right)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise self.state.error("runtime", f"{type(exc).__name__}: {exc}", node) from None

    def attribute(self, node: ast.Attribute):
        obj = self.eval(node.value)
        name = node.attr
        if isinstance(obj, Namespace):
            if name in obj.members:
                member = obj.members[name]
                if isinstance(member, tables.FnSpec | Marker | ObjectSpec):
                    raise self.state.error(
                        "type",
                        f"`{obj.path}.{name}` is a function: call it, e.g. {obj.path}.{name}(...)",
                        node,
                    )
                return member
            raise self.state.error(
                "name",
                f"`{obj.path}.{name}` is not available in this language",
                node,
                did_you_mean(name, obj.members),
            )
        if isinstance(obj, torch.Tensor):
            return self.tensor_attribute(obj, name, node)
        if isinstance(obj, ProgramObject):
            return obj.attribute(name, node)
        if isinstance(obj, torch.device) and name in ("type", "index"):
            return getattr(obj, name)
        if isinstance(obj, torch.dtype) and name in ("is_floating_point", "itemsize"):
            return getattr(obj, name)
        raise self.state.error(
            "type", f"a {type_name(obj)} has no attribute `.{name}` in this language", node
        )

    def tensor_attribute(self, obj: torch.Tensor, name: str, node: ast.Attribute):
        shadow = self.state.shadow
        if name in tables.TENSOR_ATTRIBUTES:
            if name == "grad_fn":
                return None if obj.grad_fn is None else GradFnRef(obj.grad_fn.name())
            if shadow is not None and name in ("device", "is_cuda"):
                where = shadow.device_of(obj)
                return where if name == "device" else where.type == "cuda"
            if shadow is not None and name == "grad":
                grad = self.library.call(".grad", getattr, (obj, "grad"), {}, node, "bounded")
                if isinstance(grad, torch.Tensor):  # a gradient lives on its tensor's device
                    shadow.place(grad, shadow.device_of(obj))
                return grad
            return self.library.call(f".{name}", getattr, (obj, name), {}, node, "bounded")
        if name in tables.TENSOR_METHODS:
            raise self.state.error("type", f"`.{name}` is a method: call it, e.g. t.{name}()", node)
        raise self.state.error(
            "name",
            f"tensors have no attribute `.{name}` in this language",
            node,
            did_you_mean(name, set(tables.TENSOR_ATTRIBUTES) | set(tables.TENSOR_METHODS)),
        )

    def call_node(self, node: ast.Call):
        args = tuple(self.eval(a) for a in node.args)
        kwargs = {kw.arg: self.eval(kw.value) for kw in node.keywords}
        self.state.node = node
        func = node.func
        # Method call on a tensor: t.name(...)
        if isinstance(func, ast.Attribute):
            owner = self.eval(func.value)
            self.state.node = node
            if isinstance(owner, torch.Tensor):
                return self.library.tensor_method(owner, func.attr, args, kwargs, node)
            if isinstance(owner, Namespace):
                member = owner.members.get(func.attr)
                if member is None:
                    raise self.state.error(
                        "name",
                        f"`{owner.path}.{func.attr}` is not available in this language",
                        func,
                        did_you_mean(func.attr, owner.members),
                    )
                label = f"{owner.path}.{func.attr}"
                if isinstance(member, ObjectSpec):
                    return self.objects.make(label, member, args, kwargs, node)
                return self.library.call_member(label, member, args, kwargs, node)
            if isinstance(owner, ProgramObject):
                return owner.method(func.attr, args, kwargs, node)
            raise self.state.error(
                "type",
                f"a {type_name(owner)} has no method `.{func.attr}` in this language",
                func,
            )
        callee = self.eval(func)
        self.state.node = node
        if isinstance(callee, Builtin):
            return self.library.call_builtin(callee, args, kwargs, node)
        if isinstance(callee, ProgramObject):
            return callee.call(args, kwargs, node)
        raise self.state.error("type", f"a {type_name(callee)} cannot be called", node)
