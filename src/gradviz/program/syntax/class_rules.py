"""The rules of a program's own classes (`class Net(nn.Module):`), checked as its syntax is."""

from __future__ import annotations

import ast

from gradviz.program.syntax.grammar import MAX_CLASSES, MODULE_BASES, dotted, super_init_call


class ClassRules:
    """The rules of `class Net(nn.Module):`: at the top level, one base (nn.Module), no
    decorators or keywords, methods only (public names and `__init__`), `super().__init__()`
    as a statement of `__init__` only."""

    top_classes: set[int]
    methods: set[int]  # the FunctionDef nodes that are methods
    supers: set[int]  # the `super` names and `__init__` attributes of super().__init__()

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        raise NotImplementedError

    def check_identifier(self, name: str, node: ast.AST, what: str) -> None:
        raise NotImplementedError

    def check_new_name(self, name: str, node: ast.AST, what: str = "name") -> None:
        raise NotImplementedError

    def find_classes(self, tree: ast.Module) -> None:
        classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
        if len(classes) > MAX_CLASSES:
            raise self.error(
                "limit",
                f"the program defines {len(classes)} classes; the limit is {MAX_CLASSES}",
                classes[MAX_CLASSES],
            )
        self.top_classes = {id(c) for c in classes}
        self.methods, self.supers, self.self_targets = set(), set(), set()

    def check_class(self, node: ast.ClassDef) -> None:
        if id(node) not in self.top_classes:
            raise self.error(
                "forbidden",
                "classes are defined at the top level of the program only (not inside a "
                "function, a class, a loop or an `if`)",
                node,
            )
        if node.decorator_list:
            raise self.error(
                "forbidden",
                "decorators (`@...`) on classes are not part of this language",
                node.decorator_list[0],
            )
        if node.keywords or getattr(node, "type_params", None):
            raise self.error(
                "forbidden",
                "class keywords (`metaclass=...`) and type parameters are not part of this "
                "language: classes are torch.nn modules, class Net(nn.Module): ...",
                node,
            )
        base = dotted(node.bases[0]) if len(node.bases) == 1 else None
        if base not in MODULE_BASES:
            raise self.error(
                "forbidden",
                "classes in this language are torch.nn modules only, with one base: "
                "class Net(nn.Module): ...",
                node.bases[0] if node.bases else node,
            )
        self.check_new_name(node.name, node, "class name")
        for i, stmt in enumerate(node.body):
            doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            if (i == 0 and doc and isinstance(stmt.value.value, str)) or isinstance(stmt, ast.Pass):
                continue
            if not isinstance(stmt, ast.FunctionDef):
                raise self.error(
                    "forbidden",
                    "a class holds methods (`def`) only, no class attributes: set what a "
                    "module holds in `__init__`, self.fc = nn.Linear(4, 2)",
                    stmt,
                )
            self.check_method(node, stmt)

    def check_method(self, cls: ast.ClassDef, stmt: ast.FunctionDef) -> None:
        if stmt.name != "__init__":
            self.check_identifier(stmt.name, stmt, "method name")
        spec = stmt.args
        if not (spec.posonlyargs or spec.args):
            raise self.error(
                "syntax", f"the method `{stmt.name}` needs `self` as its first parameter", stmt
            )
        self.methods.add(id(stmt))
        me = (spec.posonlyargs or spec.args)[0].arg
        for inner in ast.walk(stmt):
            targets = inner.targets if isinstance(inner, ast.Assign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and dotted(t.value) == me:
                    self.self_targets.add(id(t))
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

    def check_super(self, node: ast.Name) -> None:
        if id(node) not in self.supers:
            raise self.error(
                "forbidden",
                "`super` is allowed only as the statement `super().__init__()` in a class's "
                "`__init__`",
                node,
            )
