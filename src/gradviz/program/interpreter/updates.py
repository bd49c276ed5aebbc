"""Augmented assignments: `x += 1`, `t[i] -= v`, `W.data -= lr * W.grad`, `self.n += 1`."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

import torch

from gradviz.program.interpreter.classes import UserModule
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.interpreter.plain_classes import PlainInstance
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.runtime.operators import BINOPS
from gradviz.program.runtime.torch_calls import Library

INPLACE = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
    ast.Pow: operator.ipow,
    ast.MatMult: operator.imatmul,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
    ast.BitAnd: operator.iand,
    ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
}


class Updates:
    """Runs `target op= value` for each kind of target."""

    def __init__(self, evaluator: Evaluator, library: Library, assign: Callable, bind: Callable):
        self.evaluator = evaluator
        self.state = evaluator.state
        self.library = library
        self.assign = assign
        self.bind = bind

    def aug_assign(self, stmt: ast.AugAssign) -> None:
        value = self.evaluator.eval(stmt.value)
        if isinstance(stmt.target, ast.Attribute):  # checked: t.data op= v, obj.n op= v
            owner = self.evaluator.eval(stmt.target.value)
            if isinstance(owner, PlainInstance | UserModule):
                current = owner.attribute(stmt.target.attr, stmt.target)
                updated = self.updated(current, value, stmt)
                self.assign(stmt.target, updated, stmt)
                return
            if stmt.target.attr != "data":
                raise self.state.error(
                    "type",
                    f"`.{stmt.target.attr} op= ...` works on `t.data` and the attributes of the "
                    "program's own objects only",
                    stmt.target,
                )
            data = self.evaluator.eval(stmt.target)  # t.data, a tensor's own attribute
            if not isinstance(data, torch.Tensor):
                raise self.state.error("type", "`.data op= ...` works on tensors only", stmt.target)
            self.updated(data, value, stmt)  # in place: the tensor's values change
            return
        if isinstance(stmt.target, ast.Name):
            current = self.evaluator.lookup(stmt.target)
            self.bind(stmt.target.id, self.updated(current, value, stmt), stmt)
            return
        obj = self.evaluator.eval(stmt.target.value)  # x[i] += v: read, update, write back
        if isinstance(obj, list | dict):
            containers = self.evaluator.containers
            if isinstance(obj, dict):
                index = self.evaluator.eval(stmt.target.slice)
            else:
                index = self.evaluator.indexing.eval_index(stmt.target.slice)
            current = containers.get_item(obj, index, stmt.target)
            containers.set_item(obj, index, self.updated(current, value, stmt), stmt.target)
            return
        if isinstance(obj, ProgramArray):  # a[i] += v, in place as numpy's
            arrays = self.library.arrays
            index = self.evaluator.indexing.eval_index(stmt.target.slice)
            current = arrays.get_item(obj, index, stmt.target)
            symbol = BINOPS[type(stmt.op)][0] + "="
            updated = arrays.binop(symbol, INPLACE[type(stmt.op)], current, value, stmt)
            arrays.set_item(obj, index, updated, stmt.target)
            return
        if not isinstance(obj, torch.Tensor):
            raise self.state.error("type", "item assignment works on tensors only", stmt.target)
        call = self.library.call
        index = self.evaluator.indexing.eval_index(stmt.target.slice)
        current = call("indexing", operator.getitem, (obj, index), {}, stmt.target, "meta")
        updated = call("+=", INPLACE[type(stmt.op)], (current, value), {}, stmt, "broadcast")
        call("item assignment", operator.setitem, (obj, index, updated), {}, stmt, "bounded")

    def updated(self, current, value, stmt: ast.AugAssign):
        """current op= value: in place for a tensor (as Python's `t += v`) and a list
        (`items += more` extends it); a new value otherwise."""
        if isinstance(current, torch.Tensor):
            symbol = BINOPS[type(stmt.op)][0]
            check = "meta" if symbol == "@" else "broadcast"
            fn = INPLACE[type(stmt.op)]
            return self.library.call(f"{symbol}=", fn, (current, value), {}, stmt, check)
        if isinstance(current, ProgramArray):  # a += v: numpy's own in-place update
            symbol = BINOPS[type(stmt.op)][0] + "="
            return self.library.arrays.binop(symbol, INPLACE[type(stmt.op)], current, value, stmt)
        if isinstance(current, list) and isinstance(stmt.op, ast.Add):
            self.evaluator.containers.method(current, "extend", (value,), {}, stmt)
            return current
        return self.evaluator.operators.binop(stmt.op, current, value, stmt)
