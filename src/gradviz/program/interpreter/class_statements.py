"""The `class` statement (an nn.Module subclass for gradviz.program.interpreter.classes, any
other class for gradviz.program.interpreter.plain_classes), a dataclass's fields,
`super().__init__(...)` for the innermost `__init__` running, and `super().name(...)` in a
method: the base's method of the class the method is written in (Python's zero-argument
super), on the method's first argument; nn.Module's own for a module class."""

from __future__ import annotations

import ast
from collections.abc import Callable

from gradviz.program.interpreter.classes import Classes, UserClass, UserModule
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.interpreter.plain_classes import Method, PlainClasses
from gradviz.program.objects.layers import LayerRef
from gradviz.program.runtime.values import DATACLASS, NAMESPACES
from gradviz.program.syntax.grammar import (
    BASE_REFUSAL,
    MODULE_BASES,
    dotted,
    super_method_calls,
)

NN_MODULE = NAMESPACES["nn"].members["Module"]
DATASET = NAMESPACES["torch"].members["utils"].members["data"].members["Dataset"]


class ClassStatements:
    """Defines the program's classes and runs `super().__init__(...)`."""

    def __init__(self, evaluator: Evaluator, classes: Classes, plain: PlainClasses, bind: Callable):
        self.evaluator = evaluator
        self.state = evaluator.state
        self.classes = classes
        self.plain = plain
        self.bind = bind
        evaluator.super_method = self.super_method

    def define(self, stmt: ast.ClassDef) -> None:
        base = dotted(stmt.bases[0]) if stmt.bases else None
        parent = (
            None if base in (None, "object", *MODULE_BASES) else self.evaluator.eval(stmt.bases[0])
        )
        if base in MODULE_BASES or parent is NN_MODULE:  # from torch.nn import Module
            module_class = self.classes.define(stmt)
            self.bind(stmt.name, module_class, stmt)
            self.note_supers(stmt, module_class)
            return
        for decorator in stmt.decorator_list:  # checked: `@dataclass`, imported as such
            if self.evaluator.eval(decorator) is not DATACLASS:
                raise self.state.error(
                    "name",
                    "`dataclass` here is not the one of `from dataclasses import dataclass`",
                    decorator,
                )
        torch_base = None
        if parent is DATASET:  # class Pairs(Dataset): a plain class DataLoader reads
            parent, torch_base = None, DATASET.type
        elif "." in (base or ""):  # checked: `<...>.Dataset`, which must be torch's
            raise self.state.error("forbidden", BASE_REFUSAL, stmt.bases[0])
        if isinstance(parent, UserClass):
            raise self.state.error(
                "forbidden",
                f"a class built on the program's nn.Module class `{parent.name}` is not part of "
                f"this language: hold one as a layer instead (self.inner = {parent.name}())",
                stmt.bases[0],
            )
        made = self.plain.define(stmt, parent, bool(stmt.decorator_list))
        made.torch_base = made.torch_base or torch_base
        self.bind(stmt.name, made, stmt)
        self.note_supers(stmt, made)

    def note_supers(self, stmt: ast.ClassDef, made) -> None:
        """Each `super()` of the class's methods' `super().name(...)` calls, with its class
        and the method's first parameter (the checker has allowed only these)."""
        for method in stmt.body:
            spec = method.args if isinstance(method, ast.FunctionDef) else None
            if spec is None or not (spec.posonlyargs or spec.args):
                continue
            me = (spec.posonlyargs or spec.args)[0].arg
            for call in super_method_calls(method):
                self.evaluator.super_owners[id(call)] = (made, me)

    def super_method(self, call: ast.Call, name: str, args: tuple, kwargs: dict, node):
        """super().name(...): the base's `name`, found from the class the method is in."""
        cls, me = self.evaluator.super_owners[id(call)]
        state = self.state
        if call.args:
            given = [self.evaluator.eval(a) for a in call.args]  # super(Cls, self)
            if given[0] is not cls:
                raise state.error(
                    "type", "super(Cls, self) names the class its method is written in here", call
                )
        obj = self.evaluator.lookup(ast.copy_location(ast.Name(id=me, ctx=ast.Load()), call))
        state.node = node
        if isinstance(cls, UserClass):
            return self.module_super(cls, obj, name, args, kwargs, node)
        if not cls.covers(obj):
            raise state.error(
                "type",
                "super(type, obj): obj must be an instance or subtype of type",
                call,
            )
        found = cls.base.find(name) if cls.base is not None else None
        if isinstance(found, Method):
            first = {"method": (obj,), "classmethod": (obj.cls,), "staticmethod": ()}
            if found.kind == "property":
                value = self.plain.functions.call(found.fn, (obj,), {}, node)
                return self.evaluator.call_value(value, args, kwargs, node)
            return self.plain.functions.call(found.fn, (*first[found.kind], *args), kwargs, node)
        if found is not None:
            return self.evaluator.call_value(found, args, kwargs, node)
        if name in ("__repr__", "__str__") and not args and not kwargs:
            return repr(obj) if name == "__str__" else obj.default_repr()
        raise state.error("name", f"'super' object has no attribute '{name}'", node)

    def module_super(self, cls: UserClass, obj, name: str, args: tuple, kwargs: dict, node):
        """super().name(...) in a module class: nn.Module's own `name`."""
        state = self.state
        if not (isinstance(obj, UserModule) and obj.cls is cls):
            raise state.error(
                "type", "super(type, obj): obj must be an instance or subtype of type", node
            )
        if name == "forward":
            raise state.error(
                "runtime",
                f'NotImplementedError: Module [{cls.name}] is missing the required "forward" '
                "function",
                node,
                "nn.Module's own forward does nothing: the class's forward is the model's.",
            )
        if name in ("__repr__", "__str__"):
            if args or kwargs:
                raise state.error("type", f"{name}() takes no arguments", node)
            return repr(obj)
        return LayerRef.method(obj, name, args, kwargs, node)

    def field(self, stmt: ast.AnnAssign) -> None:
        """`losses: List[float] = []` binds the value as `=` does (the checker allows a plain
        name with a value only); the annotation is never evaluated. A dataclass's fields
        (`n_embd: int = 64`) are read with their class (PlainClasses), never run here."""
        self.bind(stmt.target.id, self.evaluator.eval(stmt.value), stmt)

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
