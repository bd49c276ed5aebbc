"""Operators on a program's values: arithmetic, comparisons, `in`, `is`, unary operators.

On tensors they run through gradviz.program.runtime.torch_calls.Library.call (under the budget, with
PyTorch's own errors); on plain numbers here, after gradviz.program.budgets.precheck.Budget has
checked an integer result's size; `+`, `*` and `%` on lists, tuples and strings go to
gradviz.program.runtime.containers and gradviz.program.runtime.strings, which size what they make first.
"""

from __future__ import annotations

import ast
import operator

import torch

from gradviz.program.allowlists.tables import TENSOR_TYPES
from gradviz.program.budgets.precheck import Budget
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.runtime.containers import Containers
from gradviz.program.runtime.generators import ProgramGenerator
from gradviz.program.runtime.iteration import Iteration, range_length
from gradviz.program.runtime.strings import Strings
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import ProgramObject, type_name

BINOPS = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
    ast.MatMult: ("@", operator.matmul),
    ast.BitAnd: ("&", operator.and_),
    ast.BitOr: ("|", operator.or_),
    ast.BitXor: ("^", operator.xor),
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

# The exact types of plain numbers, whose operators take the short way (a subclass, a numpy
# scalar or a tensor goes the long way)
NUMBERS = frozenset({int, float, bool})
ADDITIVE = frozenset({"+", "-"})


class Operators:
    """Applies the language's operators to evaluated operands."""

    def __init__(
        self,
        state: RunState,
        budget: Budget,
        library: Library,
        iteration: Iteration,
        strings: Strings,
        containers: Containers,
    ):
        self.state = state
        self.budget = budget
        self.library = library
        self.iteration = iteration
        self.strings = strings
        self.containers = containers
        self.arrays = library.arrays
        # ints this far from 0 add and subtract within the cap on an integer's bits
        bits = state.limits.max_int_bits
        self.small = 2 ** (bits - 2) if bits >= 2 else 0

    def unary(self, op: ast.unaryop, operand, node):
        symbol, fn = UNARYOPS[type(op)]
        if symbol != "not" and self.arrays.involved(operand):
            return self.arrays.unary(symbol, fn, operand, node)
        if isinstance(operand, torch.Tensor):
            return self.library.call(f"unary {symbol}", fn, (operand,), {}, node, "bounded")
        if isinstance(operand, bool | int | float):
            return fn(operand)
        if symbol == "not":
            return not self.iteration.truth(operand, node)
        raise self.library.none_grads.error(node.operand, operand) or self.state.error(
            "type", f"`{symbol}` does not apply to a {type_name(operand)}", node
        )

    def found_in(self, value, generator: ProgramGenerator, node) -> bool:
        """`value in generator`: its values read until one is `value` or equals it, as
        Python reads them (each a loop pass; the rest stay unread)."""
        for item in self.iteration.over(generator, node):
            self.library.quotas.loop_pass(node)
            if item is value:
                return True
            if self.iteration.truth(self.compare(ast.Eq(), value, item, node), node):
                return True
        return False

    def compare(self, op: ast.cmpop, left, right, node):
        if type(left) in NUMBERS and type(right) in NUMBERS and type(op) in CMPOPS:
            return CMPOPS[type(op)][1](left, right)  # what the checks below come to for them
        if isinstance(op, ast.Is | ast.IsNot):
            return (left is right) == isinstance(op, ast.Is)
        if isinstance(op, ast.In | ast.NotIn):
            for side in (left, right):  # read in full, in C
                self.containers.bounded(side, node, "a side of `in`")
            if isinstance(right, ProgramArray):
                found = self.arrays.contains(right, left, node)
            elif isinstance(right, torch.Tensor):
                # Tensor.__contains__ is (left == right).any(): sized as that comparison
                self.budget.precheck_broadcast("in", (left, right), {}, node)
                found = self.library.call(
                    "in", operator.contains, (right, left), {}, node, "bounded"
                )
            elif isinstance(right, list | tuple | dict | set | str | range | torch.Size):
                self.compared_in(left, right, node)
                try:
                    found = left in right
                except (TypeError, RuntimeError) as exc:
                    raise self.containers.fail(exc, node) from None
            elif isinstance(right, ProgramGenerator):
                found = self.found_in(left, right, node)
            else:
                raise self.state.error(
                    "type",
                    f"`in` looks into lists, tuples, dicts, sets, strings, ranges and "
                    f"tensors, not a {type_name(right)}",
                    node,
                )
            return found if isinstance(op, ast.In) else not found
        symbol, fn = CMPOPS[type(op)]
        if self.arrays.involved(left, right):
            return self.arrays.binop(symbol, fn, left, right, node)
        if isinstance(op, ast.Eq | ast.NotEq):  # the program's own objects: as Python's
            same = left.equals(right) if isinstance(left, ProgramObject) else None
            if same is None and isinstance(right, ProgramObject):
                same = right.equals(left)
            if same is not None:
                return same == isinstance(op, ast.Eq)
        if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            self.require_operands(symbol, left, right, node, allow_str=True)
            return self.library.call(symbol, fn, (left, right), {}, node, "broadcast")
        if not (
            isinstance(left, list | tuple | dict | set)
            or isinstance(right, list | tuple | dict | set)
        ):
            self.require_operands(symbol, left, right, node, allow_str=True)
        for side in (left, right):  # containers are compared in full, in C
            self.containers.bounded(side, node, f"a side of `{symbol}`")
        self.budget.precheck_comparison(left, right, node, symbol)
        try:
            return fn(left, right)
        except (TypeError, RuntimeError) as exc:
            raise self.containers.fail(exc, node) from None

    def compared_in(self, left, right, node) -> None:
        """`left in right` compares `left` with the items of `right` in C: each tensor
        comparison is sized first; a tensor looked for in a range is compared with each
        number of it, a loop the loop caps count."""
        if isinstance(right, list | tuple | set):
            for item in right:
                self.budget.precheck_comparison(left, item, node, "in")
        elif isinstance(left, torch.Tensor) and isinstance(right, range | torch.Size):
            self.budget.precheck_broadcast("in", (left,), {}, node)
            if isinstance(right, range):
                self.containers.quotas.planned(range_length(right), node, "`in` over a range")

    def require_operands(self, symbol: str, left, right, node, allow_str: bool = False) -> None:
        ok = (torch.Tensor, bool, int, float) + (
            (str, type(None), torch.dtype, torch.device) if allow_str else ()
        )
        sides = (
            (node.left, node.right)
            if isinstance(node, ast.BinOp)
            else (node.target, node.value)
            if isinstance(node, ast.AugAssign)
            else (None, None)
        )
        for v, side in zip((left, right), sides, strict=True):
            if not isinstance(v, ok):
                raise self.library.none_grads.error(side, v) or self.state.error(
                    "type",
                    f"`{symbol}` works on tensors and numbers here, not on a {type_name(v)}",
                    node,
                )

    def binop(self, op: ast.operator, left, right, node):
        symbol, fn = BINOPS[type(op)]
        kind = type(left)
        other = type(right)
        if kind in NUMBERS and other in NUMBERS:  # what the checks below come to
            small = self.small
            if (kind is float and other is float) or (
                kind is int
                and other is int
                and symbol in ADDITIVE
                and -small < left < small
                and -small < right < small
            ):  # `numbers` without its checks: none could refuse these
                try:
                    return fn(left, right)
                except (ZeroDivisionError, OverflowError, ValueError, TypeError):
                    pass  # its error, as `numbers` words it
            return self.numbers(symbol, fn, left, right, node)
        if (kind in TENSOR_TYPES and (other in TENSOR_TYPES or other in NUMBERS)) or (
            kind in NUMBERS and other in TENSOR_TYPES
        ):  # a tensor with a tensor or a number: as below, without the other cases' tests
            check = "meta" if symbol == "@" else "broadcast"
            return self.library.call(symbol, fn, (left, right), {}, node, check)
        if kind is type(right) and (kind is list or kind is str) and symbol == "+":
            return self.containers.concat(left, right, node)
        if symbol == "%" and isinstance(left, str):
            return self.strings.percent(left, right, node)
        if self.arrays.involved(left, right):
            return self.arrays.binop(symbol, fn, left, right, node)
        if not (isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor)):
            made = None
            if symbol == "+":
                made = self.containers.concat(left, right, node)
            elif symbol == "*":
                made = self.containers.repeat(left, right, node)
            elif isinstance(left, set) and isinstance(right, set):
                made = self.containers.set_operator(symbol, left, right, node)
            if made is not None:
                return made
        self.require_operands(symbol, left, right, node)
        if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            return self.library.call(
                symbol, fn, (left, right), {}, node, "meta" if symbol == "@" else "broadcast"
            )
        return self.numbers(symbol, fn, left, right, node)

    def numbers(self, symbol: str, fn, left, right, node):
        """An operator on two plain numbers, an integer result sized first (`binop` takes
        the ones Budget.check_number_op could not refuse without it)."""
        self.budget.check_number_op(symbol, left, right, node)
        try:
            return fn(left, right)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise self.state.error("runtime", f"{type(exc).__name__}: {exc}", node) from None
