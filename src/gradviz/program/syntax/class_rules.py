"""The rules of a program's own classes (`class Net(nn.Module):`, `class Accumulator:`,
`@dataclass`), checked as its syntax is."""

from __future__ import annotations

import ast

from gradviz.program.syntax.grammar import (
    BASE_REFUSAL,
    CLASS_DECORATORS,
    DATASET_BASE,
    DUNDER_METHODS,
    MAX_CLASSES,
    METHOD_DECORATORS,
    MODULE_BASES,
    MODULE_IMPORT,
    child_nodes,
    dotted,
    super_init_call,
)

# What a dataclass field's annotation may be made of (it is read, never evaluated).
ANNOTATION_NODES = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Tuple,
    ast.Constant,
    ast.BinOp,
    ast.BitOr,
    ast.Load,
)


class ClassRules:
    """The rules of classes, at the top level with one base or none, no keywords:
    `class Net(nn.Module):` holds methods only (public names, `__init__` and `__iter__`); a plain class
    (`class Accumulator:`, `class Config(Base):`) also class attributes, the dunder methods of
    DUNDER_METHODS, and as a `@dataclass` annotated fields. Methods may be decorated with
    @staticmethod, @classmethod or @property; `super().__init__(...)` is a statement of
    `__init__` only, `super().name(...)` (or `super(Cls, self).name(...)`) a call in any
    method, outside the functions and lambdas inside it."""

    top_classes: set[int]
    known_names: set[str]
    methods: set[int]  # the FunctionDef nodes that are methods
    supers: set[int]  # the `super` names and `__init__` attributes of super().__init__()
    fields: set[int]  # the annotated assignments that are a dataclass's fields

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        raise NotImplementedError

    def check_identifier(self, name: str, node: ast.AST, what: str) -> None:
        raise NotImplementedError

    def check_new_name(self, name: str, node: ast.AST, what: str = "name") -> None:
        raise NotImplementedError

    def find_classes(self, tree: ast.Module, imports: list[ast.Import | ast.ImportFrom]) -> None:
        classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
        if len(classes) > MAX_CLASSES:
            raise self.error(
                "limit",
                f"the program defines {len(classes)} classes; the limit is {MAX_CLASSES}",
                classes[MAX_CLASSES],
            )
        self.top_classes = {id(c) for c in classes}
        self.module_names = module_import_names(imports)
        self.methods, self.supers, self.self_targets = set(), set(), set()
        self.fields = set()

    def check_class(self, node: ast.ClassDef) -> None:
        if id(node) not in self.top_classes:
            raise self.error(
                "forbidden",
                "classes are defined at the top level of the program only (not inside a "
                "function, a class, a loop or an `if`)",
                node,
            )
        if node.keywords or getattr(node, "type_params", None):
            raise self.error(
                "forbidden",
                "class keywords (`metaclass=...`) and type parameters are not part of this "
                "language: write class Name: or class Name(Base):",
                node,
            )
        if len(node.bases) > 1:
            raise self.error(
                "forbidden",
                "a class has one base in this language (single inheritance): "
                "class Net(nn.Module): or class Config(Base):",
                node.bases[1],
            )
        base = dotted(node.bases[0]) if node.bases else None
        module = base in MODULE_BASES or base in self.module_names
        # torch.utils.data.Dataset (data.Dataset, with `from torch.utils import data`): a
        # plain class's base, which the run checks is torch's Dataset
        dataset = base is not None and base.endswith(DATASET_BASE)
        if (
            node.bases
            and not module
            and not dataset
            and (base is None or "." in base or base in self.known_names)
        ):
            raise self.error("forbidden", BASE_REFUSAL, node.bases[0])
        dataclass = self.check_class_decorators(node, module)
        self.check_new_name(node.name, node, "class name")
        for i, stmt in enumerate(node.body):
            doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            if (i == 0 and doc and isinstance(stmt.value.value, str)) or isinstance(stmt, ast.Pass):
                continue
            if isinstance(stmt, ast.FunctionDef):
                self.check_method(node, stmt, module)
            elif not module and isinstance(stmt, ast.Assign | ast.AnnAssign):
                self.check_class_attribute(stmt, dataclass)
            else:
                raise self.error(
                    "forbidden",
                    "a class holds methods (`def`) only, no class attributes: set what a "
                    "module holds in `__init__`, self.fc = nn.Linear(4, 2)"
                    if module
                    else "a class's body holds methods (`def`) and class attributes "
                    "(`name = value`) only",
                    stmt,
                )

    def check_class_decorators(self, node: ast.ClassDef, module: bool) -> bool:
        """`@dataclass` (imported from dataclasses) on a plain class; nothing else."""
        for decorator in node.decorator_list:
            if module or not (isinstance(decorator, ast.Name) and decorator.id in CLASS_DECORATORS):
                raise self.error(
                    "forbidden",
                    "decorators on classes are `@dataclass` only (from dataclasses import "
                    "dataclass), on a class that is not an nn.Module",
                    decorator,
                )
        return bool(node.decorator_list)

    def check_class_attribute(self, stmt: ast.Assign | ast.AnnAssign, dataclass: bool) -> None:
        """`EPS = 1e-5` in any plain class; `n_embd: int = 64` in a dataclass only."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            raise self.error("forbidden", "a class attribute is one plain name: EPS = 1e-5", stmt)
        self.check_new_name(targets[0].id, targets[0], "class attribute")
        if isinstance(stmt, ast.AnnAssign):
            if not dataclass:
                raise self.error(
                    "forbidden",
                    "annotated assignments (`x: int = 3`) are part of this language only as "
                    "the fields of a `@dataclass` class",
                    stmt,
                )
            self.fields.add(id(stmt))
            for part in ast.walk(stmt.annotation):  # a type, never run: int, list[int], ...
                if not isinstance(part, ANNOTATION_NODES):
                    raise self.error(
                        "forbidden",
                        "a field's annotation names a type (int, str, list[int], "
                        "torch.Tensor, int | None), nothing else",
                        part,
                    )

    def check_method(self, cls: ast.ClassDef, stmt: ast.FunctionDef, module: bool) -> None:
        allowed = ("__init__", "__iter__") if module else DUNDER_METHODS
        if stmt.name not in allowed:
            self.check_identifier(stmt.name, stmt, "method name")
        kinds = [d.id for d in stmt.decorator_list if isinstance(d, ast.Name)]
        static = "staticmethod" in kinds
        if len([k for k in kinds if k in METHOD_DECORATORS]) > 1 or (
            kinds and stmt.name in DUNDER_METHODS
        ):
            raise self.error(
                "forbidden",
                "a method takes one of @staticmethod, @classmethod and @property, and "
                "`__init__` and the other `__...__` methods none",
                stmt.decorator_list[0],
            )
        spec = stmt.args
        self.methods.add(id(stmt))
        if static:
            return
        if not (spec.posonlyargs or spec.args):
            raise self.error(
                "syntax", f"the method `{stmt.name}` needs `self` as its first parameter", stmt
            )
        me = (spec.posonlyargs or spec.args)[0].arg
        for call, attribute in self.read_method(stmt, me):
            if attribute.attr == "__init__":
                continue  # super().__init__(...): a statement of __init__ (below)
            named = [dotted(a) for a in call.args] == [cls.name, me]
            if call.args and not named:
                raise self.error(
                    "forbidden",
                    f"`super` takes no arguments here, or the class and `{me}`: "
                    f"super({cls.name}, {me})",
                    call,
                )
            if attribute.attr not in DUNDER_METHODS:
                self.check_identifier(attribute.attr, attribute, "attribute")
            self.supers.update((id(call.func), id(attribute)))
        if stmt.name != "__init__":
            return
        for inner in stmt.body:
            call = super_init_call(inner)
            if call is None:
                continue
            plain = not call.args
            named = [dotted(a) for a in call.args] == [cls.name, me]
            if plain or named:
                self.supers.update((id(call.func), id(inner.value.func)))

    def read_method(self, method: ast.FunctionDef, me: str) -> list[tuple[ast.Call, ast.Attribute]]:
        """One walk of a method's body: the `self.name` targets of its assignments noted
        (`me`: its first parameter; also in the functions inside it), and its `super()`
        calls, each with the `super().name` it stands in, in grammar.super_method_calls'
        order (not those inside its functions, lambdas and classes)."""
        found: list[tuple[ast.Call, ast.Attribute]] = []
        stack: list[tuple[ast.AST, bool]] = [(s, False) for s in method.body]
        while stack:
            node, inner = stack.pop()
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and dotted(t.value) == me:
                        self.self_targets.add(id(t))
            elif isinstance(node, ast.FunctionDef | ast.Lambda | ast.ClassDef):
                inner = True
            elif not inner and isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Call)
                    and isinstance(func.value.func, ast.Name)
                    and func.value.func.id == "super"
                    and not func.value.keywords
                ):
                    found.append((func.value, func))
            stack.extend([(child, inner) for child in child_nodes(node)])
        return found

    def check_field(self, node: ast.AnnAssign) -> None:
        """A dataclass's field, or `losses: List[float] = []`: a plain name given a value
        (the annotation, made of names, subscripts and `|`, is read, never evaluated)."""
        if id(node) in self.fields:
            return
        if node.value is None or not isinstance(node.target, ast.Name):
            raise self.error(
                "forbidden",
                "an annotated assignment gives a plain name a value here (`losses: "
                "list[float] = []`); without a value it is a `@dataclass` class's field only",
                node,
            )
        for part in ast.walk(node.annotation):
            if not isinstance(part, ANNOTATION_NODES):
                raise self.error(
                    "forbidden",
                    "an annotation is made of names, `a.b`, `A[B]` and `A | B` only",
                    part,
                )
        self.check_new_name(node.target.id, node.target)

    def check_super(self, node: ast.Name) -> None:
        if id(node) not in self.supers:
            raise self.error(
                "forbidden",
                "`super` is allowed as the statement `super().__init__()` in a class's "
                "`__init__` and as a call of the base's method in a class's methods: "
                "super().forward(x)",
                node,
            )


def module_import_names(imports: list[ast.Import | ast.ImportFrom]) -> set[str]:
    """The names a class's base may have to be an nn.Module class, as `class Net(nn.Module):`
    is, beyond MODULE_BASES: what `from torch.nn import Module [as name]` binds, and
    `alias.Module` for `import torch.nn as alias` and `from torch import nn as alias`
    (`imports`: the import statements of grammar.statements)."""
    source, name = MODULE_IMPORT
    names = set()
    for node in imports:
        if isinstance(node, ast.ImportFrom) and not node.level:
            for alias in node.names:
                if node.module == source and alias.name == name:
                    names.add(alias.asname or alias.name)
                elif node.module == "torch" and alias.name == "nn" and alias.asname:
                    names.add(f"{alias.asname}.{name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == source and alias.asname:
                    names.add(f"{alias.asname}.{name}")
    return names
