"""Expression statements, answered as a notebook answers them.

A lesson written as a notebook ends its cells with bare expressions (`x.device`, `Y + Z`,
`net(X)`) and reads their values under them. Here each bare expression at the top level of
a program is such a cell: its value's repr, as Python (and so Jupyter) writes it, is kept
as a `ShownValue` (`Out[line]`), and a tensor autograd made there (one with a grad_fn,
not bound to a name already) is named `_line` on the graph, as IPython's `_5` holds
`Out[5]`, so that a backward the page asks for can start from it (the program's own text
cannot name it: `_` and digits is refused as a name,
gradviz.program.syntax.grammar.SHOWN_VALUE_NAME); those in a tuple or a list shown
(`x + y, x * y`) are `_line.0`, `_line.1`, ... . As in a notebook, a value of None (`loss.backward()`,
`print(...)`, `optimizer.step()`) shows nothing, and neither does an expression inside a
function, a loop or any other block; a bare string or `...` (a comment or a placeholder)
shows nothing either.

What is shown is bounded as printed output is (gradviz.program.results.limits): each value
cut short past MAX_OUTPUT_LINE_CHARS characters, which it is written no further than,
printed lines and shown values MAX_OUTPUT_LINES together, and MAX_SHOWN_CHARS characters
of shown values in all.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import torch

from gradviz.program.interpreter.class_statements import ClassStatements
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.recording.state import RunState
from gradviz.program.results.limits import (
    MAX_OUTPUT_LINE_CHARS,
    MAX_OUTPUT_LINES,
    MAX_SHOWN_CHARS,
)
from gradviz.program.results.reports import ShownValue
from gradviz.program.syntax.grammar import super_init_call

MAX_NAMED_ITEMS = 16  # the items of a shown tuple or list named on the graph
# What an expression statement is: run only, its value shown (top level), `super().__init__()`
RUN, SHOWN, SUPER_INIT = 0, 1, 2


class Outputs:
    """Runs expression statements; keeps what the top-level ones show."""

    def __init__(
        self,
        state: RunState,
        evaluator: Evaluator,
        class_statements: ClassStatements,
        bind: Callable[[str, object, ast.stmt], None],
        top: list[ast.stmt],
    ):
        self.state = state
        self.evaluator = evaluator
        self.class_statements = class_statements
        self.bind = bind
        self.top = {id(stmt) for stmt in top if isinstance(stmt, ast.Expr)}
        self.chars = 0  # characters of the values shown so far
        # id() of each expression statement run so far -> SUPER_INIT if it is
        # `super().__init__()`, SHOWN if it is at the program's top level (its value shown),
        # else RUN (the tree is held for the run, so no other node takes an id)
        self.kinds: dict[int, int] = {}

    def expression_statement(self, stmt: ast.Expr) -> None:
        kind = self.kinds.get(id(stmt))
        if kind is None:
            kind = self.kinds[id(stmt)] = (
                SUPER_INIT
                if super_init_call(stmt) is not None
                else SHOWN
                if id(stmt) in self.top
                else RUN
            )
        if kind == RUN:
            self.evaluator.eval(stmt.value)
        elif kind == SUPER_INIT:  # checked: in a class's __init__
            self.class_statements.super_init(stmt)
        else:
            value = self.evaluator.eval(stmt.value)
            if value is not None and not _quiet(stmt.value):
                self.answer(stmt, value)

    def name_tensor(self, name: str, value, stmt: ast.Expr) -> None:
        """A tensor autograd made, on the graph as `name`; a bare `y` is there as y already."""
        if isinstance(value, torch.Tensor) and value.grad_fn is not None:
            if not self.state.bound_now(value):
                self.bind(name, value, stmt)

    def answer(self, stmt: ast.Expr, value) -> None:
        """Show `value` under its line; name a tensor autograd made there on the graph."""
        state = self.state
        name = f"_{stmt.lineno}"
        if isinstance(value, tuple | list):  # `x + y, x * y`: _5.0 and _5.1
            for i, item in enumerate(value[:MAX_NAMED_ITEMS]):
                self.name_tensor(f"{name}.{i}", item, stmt)
        else:
            self.name_tensor(name, value, stmt)
        if len(state.stdout) + len(state.shown) >= MAX_OUTPUT_LINES:
            return
        room = min(MAX_OUTPUT_LINE_CHARS, MAX_SHOWN_CHARS - self.chars)
        if room <= 0:
            return
        text = self.evaluator.strings.represent(value, stmt, cap=room, cut=True)
        self.chars += len(text)
        state.shown.append(ShownValue(stmt.lineno, text))


def _quiet(node: ast.expr) -> bool:
    """A bare string or `...`: a comment or a placeholder, not a value to show."""
    return isinstance(node, ast.Constant) and (isinstance(node.value, str) or node.value is ...)
