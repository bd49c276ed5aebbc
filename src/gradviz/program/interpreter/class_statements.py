"""The `class` statement (an nn.Module subclass for gradviz.program.interpreter.classes, any
other class for gradviz.program.interpreter.plain_classes), a dataclass's fields, and
`super().__init__(...)` for the innermost `__init__` running."""

from __future__ import annotations

import ast
from collections.abc import Callable

from gradviz.program.interpreter.classes import Classes, UserClass
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.interpreter.plain_classes import PlainClasses
from gradviz.program.runtime.values import DATACLASS
from gradviz.program.syntax.grammar import MODULE_BASES, dotted


class ClassStatements:
    """Defines the program's classes and runs `super().__init__(...)`."""

    def __init__(self, evaluator: Evaluator, classes: Classes, plain: PlainClasses, bind: Callable):
        self.evaluator = evaluator
        self.state = evaluator.state
        self.classes = classes
        self.plain = plain
        self.bind = bind

    def define(self, stmt: ast.ClassDef) -> None:
        base = dotted(stmt.bases[0]) if stmt.bases else None
        if base in MODULE_BASES:
            self.bind(stmt.name, self.classes.define(stmt), stmt)
            return
        for decorator in stmt.decorator_list:  # checked: `@dataclass`, imported as such
            if self.evaluator.eval(decorator) is not DATACLASS:
                raise self.state.error(
                    "name",
                    "`dataclass` here is not the one of `from dataclasses import dataclass`",
                    decorator,
                )
        parent = None if base in (None, "object") else self.evaluator.eval(stmt.bases[0])
        if isinstance(parent, UserClass):
            raise self.state.error(
                "forbidden",
                f"a class built on the program's nn.Module class `{parent.name}` is not part of "
                f"this language: hold one as a layer instead (self.inner = {parent.name}())",
                stmt.bases[0],
            )
        made = self.plain.define(stmt, parent, bool(stmt.decorator_list))
        self.bind(stmt.name, made, stmt)

    def field(self, stmt: ast.AnnAssign) -> None:
        """`n_embd: int = 64` is a dataclass's field, read with its class (PlainClasses)."""
        raise self.state.error(
            "forbidden", "annotated assignments are a dataclass's fields only", stmt
        )

    def super_init(self, stmt: ast.Expr) -> None:
        """super().__init__(...): a plain class's base's __init__, or nn.Module's (no
        arguments) for the innermost __init__ running."""
        call = stmt.value
        building = self.plain.building
        if building and building[-1][2] == self.evaluator.quotas.depth:
            args = tuple(self.evaluator.unpacking.items(call.args, "list of arguments"))
            kwargs = self.evaluator.unpacking.keywords(call)
            self.plain.super_init(args, kwargs, stmt)
            return
        if call.args or call.keywords:
            raise self.state.error(
                "type", "nn.Module's `__init__()` takes no arguments: super().__init__()", stmt
            )
        self.classes.super_init(stmt)
