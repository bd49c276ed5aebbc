"""The program language: source text -> checked `ast.Module`, or one `ProgramError`.

User text is parsed with `ast.parse` and then walked against an allow-list of node
types and rules. It never reaches eval, exec or compile. Every refusal is a
`ProgramError` with a kind, a message, a 1-based line and column and, where it
helps, a hint ("did you mean ...?").

What is allowed (everything else is refused):
- statements: assignment (to names, nested tuples of names, `t[...]`, `items[i]`,
  `table[key]`, `t.grad`, `t.requires_grad`), augmented assignment, expression statements,
  `pass`, `with torch.no_grad():` / `with torch.enable_grad():` blocks, `if/elif/else`,
  `for` and `while` (with `break`, `continue` and `else`), `assert`, `def` (positional,
  keyword and default arguments, `@torch.no_grad()`/`@torch.enable_grad()`; no other
  decorators, `*args` or `**kwargs`) and `return`, and
  the imports tutorials write (`IMPORTABLE`: torch, torch.nn, torch.nn.functional,
  torch.optim, math);
- expressions: numbers, short strings, f-strings, True/False/None, lists, tuples and
  dicts, comprehensions and generator expressions, `lambda`, arithmetic
  (+ - * / // % ** @, unary - + ~ not), comparisons (chained, `in`, `is`), `and`/`or`,
  conditional expressions, indexing and slicing, attribute access and calls. Which names,
  attributes and functions exist is decided by the interpreter's tables
  (gradviz.program.tables), which this module consults for early "did you mean" messages.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from gradviz.program.reports import ErrorDetails, RunError


@dataclass(frozen=True)
class Limits:
    """Resource caps. All are checked before the work they bound is done."""

    max_source_chars: int = 50_000
    max_lines: int = 1_000
    max_nesting: int = 30  # bracket depth
    max_expr_depth: int = 100  # depth of the syntax tree (a+b+c+... nests one level a term)
    max_ast_nodes: int = 30_000
    max_literal_elements: int = 10_000
    max_int_bits: int = 4_096
    max_tensor_elements: int = 25_000_000
    max_tensor_bytes: int = 100_000_000
    max_total_bytes: int = 400_000_000
    max_total_elements: int = 500_000_000  # elements produced by all ops together
    max_flops_per_op: float = 5e9  # matrix work of one call (a layer's whole forward is one)
    max_total_flops: float = 2e10
    max_model_parameters: int = 20_000_000  # one model: a layer with every layer inside it
    max_total_parameters: int = 50_000_000  # every layer a program makes, together
    max_statements: int = 500_000  # statements run (a loop's body counts at every pass)
    # The language's own work (gradviz.program.quotas), each checked before the step runs:
    max_steps: int = 2_000_000  # interpreted steps: statements, expressions, calls, iterations
    max_loop_iterations: int = 200_000  # passes of every loop and comprehension together
    max_call_depth: int = 50  # calls of a program's own functions inside one another
    max_container_length: int = 100_000  # items in one list, tuple or dict
    max_total_items: int = 5_000_000  # list, tuple and dict items made in all
    max_string_length: int = 100_000  # characters in one string a program makes
    max_total_string_chars: int = 50_000_000  # characters of all strings made in all
    max_seconds: float = 15.0  # wall time of the run (the worker's own limit is 20 s)
    # backward calls a result keeps one by one (the first and the last ones; program.calls)
    backward_calls_kept: int = 6


DEFAULT_LIMITS = Limits()
# A public host's programs: with the server, the forkserver and a warm worker (about 340 MB
# together, docs/BENCHMARKS.md) the whole app stays under Community Cloud's 690 MB; the
# language's own work is bounded lower too, so one visitor's loop leaves the worker soon.
PUBLIC_PROGRAM_LIMITS = Limits(
    max_tensor_bytes=100_000_000,
    max_total_bytes=200_000_000,
    max_flops_per_op=2e9,
    max_total_flops=1e10,
    max_model_parameters=2_000_000,
    max_total_parameters=5_000_000,
    max_statements=100_000,
    max_steps=500_000,
    max_loop_iterations=50_000,
    max_call_depth=30,
    max_container_length=10_000,
    max_total_items=1_000_000,
    max_string_length=10_000,
    max_total_string_chars=10_000_000,
    max_seconds=10.0,
    backward_calls_kept=4,
)


def tightest(a: Limits, b: Limits) -> Limits:
    """Each cap the smaller of the two."""
    return Limits(**{f.name: min(getattr(a, f.name), getattr(b, f.name)) for f in fields(Limits)})


@dataclass
class ProgramError(Exception):
    """A refusal or a runtime error in a user program, with where it happened."""

    kind: str  # syntax | forbidden | name | limit | type | runtime
    message: str
    line: int | None = None
    col: int | None = None
    hint: str | None = None
    details: ErrorDetails = field(default_factory=ErrorDetails)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        where = f"line {self.line}, col {self.col}: " if self.line else ""
        return f"{where}{self.message}"

    def report(self) -> RunError:
        """The error as a run's result carries it (Trace.error)."""
        return RunError(self.kind, self.message, self.line, self.col, self.hint, self.details)


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    if not close:
        return None
    return "Did you mean " + " or ".join(f"`{c}`" for c in close) + "?"


def char_col(source_lines: list[str], line: int | None, byte_offset: int | None) -> int | None:
    """ast gives UTF-8 byte offsets; users count characters. Returns a 1-based column."""
    if line is None or byte_offset is None:
        return None
    if 1 <= line <= len(source_lines):
        text = source_lines[line - 1].encode("utf-8")[:byte_offset]
        return len(text.decode("utf-8", errors="ignore")) + 1
    return byte_offset + 1


# Node types the interpreter understands. Anything else gets a tailored refusal.
ALLOWED_NODES: tuple[type, ...] = (
    ast.Module,
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.Pass,
    ast.With,
    ast.withitem,
    ast.If,
    ast.For,
    ast.While,
    ast.Break,
    ast.Continue,
    ast.Assert,
    ast.Raise,
    ast.FunctionDef,
    ast.ClassDef,
    ast.arguments,
    ast.arg,
    ast.Return,
    ast.Lambda,
    ast.Import,
    ast.ImportFrom,
    ast.alias,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.SetComp,
    ast.comprehension,
    ast.JoinedStr,
    ast.FormattedValue,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.IfExp,
    ast.Compare,
    ast.Call,
    ast.keyword,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    # operators
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.MatMult,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.Invert,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.Is,
    ast.IsNot,
    ast.In,
    ast.NotIn,
)

_ALLOWED_TYPES = frozenset(ALLOWED_NODES)
# Allowed nodes with no rule of their own (their children are checked): the fast path.
_NOTHING_TO_CHECK = frozenset(
    {ast.Load, ast.Store, ast.Module, ast.Expr, ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript}
    | {ast.Slice, ast.withitem, ast.Pass, ast.If, ast.While, ast.Assert, ast.BoolOp, ast.IfExp}
    | {ast.Compare, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.JoinedStr}
    | {ast.FormattedValue}
    | {t for t in ALLOWED_NODES if issubclass(t, ast.operator | ast.unaryop | ast.cmpop)}
    | {ast.And, ast.Or}
)

# Plain words for constructs that are refused, by node type.
REFUSALS: dict[type, str] = {
    ast.AsyncFunctionDef: "defining functions (`async def`) is not part of this language",
    ast.AsyncFor: "loops (`async for`) are not part of this language",
    ast.Try: "`try` is not part of this language: errors are reported for you",
    ast.Delete: "`del` is not part of this language",
    ast.Global: "`global` is not part of this language: a function reads the variables around "
    "it; to change one, return the new value and assign it",
    ast.Nonlocal: "`nonlocal` is not part of this language: a function reads the variables "
    "around it; to change one, return the new value and assign it",
    ast.Yield: "generators (`yield`) are not part of this language",
    ast.YieldFrom: "generators (`yield from`) are not part of this language",
    ast.Await: "`await` is not part of this language",
    ast.AsyncWith: "`async with` is not part of this language",
    ast.Starred: "star-arguments (`*args`) are not part of this language",
    ast.NamedExpr: "the walrus operator (`:=`) is not part of this language",
    ast.AnnAssign: "annotated assignments are not part of this language",
    ast.Match: "`match` is not part of this language",
    ast.LShift: "shift operators are not part of this language",
    ast.RShift: "shift operators are not part of this language",
}

CONTEXT_MANAGERS = ("no_grad", "enable_grad")
# The exceptions a program may raise (and so end itself with, at that line).
RAISABLE = (
    "Exception",
    "ValueError",
    "TypeError",
    "RuntimeError",
    "KeyError",
    "IndexError",
    "NotImplementedError",
    "AssertionError",
    "ZeroDivisionError",
    "StopIteration",
)


def grad_decorator(node: ast.expr) -> str | None:
    """The grad mode a function decorator sets (`@torch.no_grad()`, `@torch.no_grad`,
    `@torch.enable_grad()`): "no_grad" or "enable_grad"; None for any other decorator."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
        and node.attr in CONTEXT_MANAGERS
    ):
        return node.attr
    return None


# What a program may import (the interpreter binds them to what is available under those
# names today), and the names that may only ever be bound to the module they already are.
IMPORTABLE = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.utils.data",
    "math",
    "time",
    "random",
)
IMPORT_NAMES = {
    "torch": "torch",
    "F": "torch.nn.functional",
    "nn": "torch.nn",
    "optim": "torch.optim",
}
# Modules whose classes a program may import by name (`from torch.utils.data import
# DataLoader`, `from torch.nn import Linear`): the interpreter binds the class if the
# module's table has it, and refuses any other name at its line.
CLASS_SOURCES = ("torch.nn", "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data")

# Attributes that reach Python's own machinery (frames, code, globals) on objects that have
# them. Every attribute is allow-listed at run time anyway; these get a plain refusal first.
INTERNAL_ATTRIBUTES = frozenset(
    (
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "gi_running",
        "gi_suspended",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "f_lasti",
        "tb_frame",
        "tb_next",
        "tb_lasti",
        "func_globals",
        "func_code",
        "func_closure",
        "func_defaults",
        "co_code",
        "co_consts",
        "co_names",
    )
)


# Classes: `class Net(nn.Module):` with methods only (gradviz.program.classes runs them).
MODULE_BASES = ("nn.Module", "torch.nn.Module")
MAX_CLASSES = 20  # classes in one program


def dotted(node: ast.AST) -> str | None:
    """`torch.nn.Module` as text, for a chain of plain names; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def super_init_call(stmt: ast.stmt) -> ast.Call | None:
    """The `super()` call of a statement `super().__init__()` (or `super(Net, self)...`)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    func = call.func
    if call.args or call.keywords or not isinstance(func, ast.Attribute):
        return None
    inner = func.value
    ok = func.attr == "__init__" and isinstance(inner, ast.Call)
    ok = ok and isinstance(inner.func, ast.Name) and inner.func.id == "super"
    return inner if ok and not inner.keywords else None


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


@dataclass(frozen=True)
class _Where:
    """Where a node sits: inside a function (may `return`) and inside a loop (may `break`)."""

    function: bool = False
    loop: bool = False


class BlockRules:
    """The rules of the statements that open blocks or bind names: `def`, `lambda`, loops,
    imports and assignment targets (the Checker below walks the tree and calls them)."""

    known_names: set[str]
    self_targets: set[int]  # `self.name = ...` targets in methods (ClassRules)

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        raise NotImplementedError

    def check_identifier(self, name: str, node: ast.AST, what: str) -> None:
        if name.startswith("_") and not (name == "_" and what in ("name", "loop variable")):
            raise self.error(
                "forbidden",
                f"the {what} `{name}` starts with an underscore: names beginning with `_` "
                "(private and 'dunder' names) are not allowed",
                node,
            )

    def check_new_name(self, name: str, node: ast.AST, what: str = "name") -> None:
        """A name a statement binds: not private, not one of the language's own names."""
        self.check_identifier(name, node, what)
        if name in self.known_names:
            raise self.error(
                "forbidden",
                f"`{name}` is a built-in name of this language and cannot be reassigned; "
                "pick another name",
                node,
            )

    def check_function(self, node: ast.FunctionDef | ast.Lambda, method: bool = False) -> None:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if grad_decorator(decorator) is None:
                    raise self.error(
                        "forbidden",
                        "this decorator is not part of this language: a function or method "
                        "may be decorated with @torch.no_grad() or @torch.enable_grad() only",
                        decorator,
                    )
            if not method:  # a method's name was checked with its class
                self.check_new_name(node.name, node, "function name")
        args = node.args
        if args.vararg is not None:
            raise self.error(
                "forbidden", "`*args` parameters are not part of this language", args.vararg
            )
        if args.kwarg is not None:
            raise self.error(
                "forbidden", "`**kwargs` parameters are not part of this language", args.kwarg
            )
        seen: set[str] = set()
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            self.check_new_name(a.arg, a, "parameter")
            if a.arg in seen:
                raise self.error("syntax", f"the parameter `{a.arg}` is named twice", a)
            seen.add(a.arg)

    def check_loop_target(self, target: ast.AST) -> None:
        """`for` and comprehension targets: names, or (nested) tuples of names."""
        if isinstance(target, ast.Name):
            self.check_new_name(target.id, target, "loop variable")
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.check_loop_target(elt)
        else:
            raise self.error(
                "forbidden",
                "a loop assigns to plain names only: for i, (a, b) in enumerate(pairs): ...",
                target,
            )

    def check_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                raise self.error(
                    "forbidden", "relative imports are not part of this language", node
                )
            pairs = []
            for alias in node.names:
                if alias.name == "*":
                    raise self.error(
                        "forbidden",
                        f"`from {node.module} import *` is not allowed: name what you need",
                        node,
                    )
                full = f"{node.module}.{alias.name}"
                pairs.append((full, alias.asname or alias.name, full))
        else:  # `import torch.nn` binds `torch`; `import torch.nn as nn` binds torch.nn
            pairs = [
                (a.name, a.asname, a.name) if a.asname else (a.name, *[a.name.split(".")[0]] * 2)
                for a in node.names
            ]
        for module, bound, bound_module in pairs:
            source = getattr(node, "module", None)
            if module not in IMPORTABLE and source in CLASS_SOURCES:
                self.check_identifier(module.rsplit(".", 1)[1], node, "imported name")
            elif module not in IMPORTABLE:
                if source in IMPORTABLE:  # from math import sqrt
                    raise self.error(
                        "forbidden",
                        f"`{module}` is not a module: imports bring in modules only here; "
                        f"write `import {source}` and use `{module}`",
                        node,
                    )
                raise self.error(
                    "forbidden",
                    f"`{source or module}` is not available: imports can bring in "
                    + ", ".join(IMPORTABLE)
                    + " only (torch, F, nn and optim are already there)",
                    node,
                )
            if bound in IMPORT_NAMES and IMPORT_NAMES[bound] != bound_module:
                raise self.error(
                    "forbidden",
                    f"`{bound}` is {IMPORT_NAMES[bound]} in this language and cannot name "
                    f"{module}; pick another name",
                    node,
                )
            if bound not in IMPORT_NAMES:
                self.check_new_name(bound, node)

    def check_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.check_new_name(target.id, target)
            return
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                if not isinstance(elt, ast.Name | ast.Tuple | ast.List):
                    raise self.error(
                        "forbidden", "unpacking works into plain names only: a, (b, c) = ...", elt
                    )
                self.check_target(elt)
            return
        if isinstance(target, ast.Subscript):
            inner = target.value
            while isinstance(inner, ast.Subscript):
                inner = inner.value
            if not isinstance(inner, ast.Name):
                raise self.error(
                    "forbidden",
                    "item assignment works on a named tensor, list or dict only: t[0] = 1",
                    target,
                )
            return
        if isinstance(target, ast.Attribute):  # in a method, self.fc = ... (checked when run)
            if id(target) in self.self_targets:
                return
            if not isinstance(target.value, ast.Name) or target.attr not in (
                "grad",
                "requires_grad",
            ):
                raise self.error(
                    "forbidden",
                    "only `t.grad = ...` and `t.requires_grad = ...` can be assigned to (and "
                    "`self.name = ...` in a class's methods)",
                    target,
                )
            return
        raise self.error("forbidden", "this kind of assignment target is not supported", target)

    def check_raise(self, node: ast.Raise) -> None:
        """`raise ValueError("...")` (or a bare exception name) from RAISABLE: it ends the
        program with that error at its line, as an uncaught raise does in Python."""
        exc = node.exc
        name = exc.func if isinstance(exc, ast.Call) else exc
        if (
            node.cause is not None
            or not isinstance(name, ast.Name)
            or name.id not in RAISABLE
            or (isinstance(exc, ast.Call) and exc.keywords)
        ):
            raise self.error(
                "forbidden",
                '`raise` takes one of Python\'s exceptions here, as in `raise ValueError("why")`: '
                + ", ".join(RAISABLE),
                node,
            )

    def check_with(self, node: ast.With) -> None:
        for item in node.items:
            expr = item.context_expr
            ok = (
                isinstance(expr, ast.Call)
                and not expr.args
                and not expr.keywords
                and isinstance(expr.func, ast.Attribute)
                and isinstance(expr.func.value, ast.Name)
                and expr.func.value.id == "torch"
                and expr.func.attr in CONTEXT_MANAGERS
            )
            if not ok:
                raise self.error(
                    "forbidden",
                    "`with` works with torch.no_grad() and torch.enable_grad() only",
                    expr,
                )
            if item.optional_vars is not None:
                raise self.error(
                    "forbidden", "`with ... as name` is not supported here", item.optional_vars
                )


class Checker(BlockRules, ClassRules):
    """Walks a parsed program and refuses anything outside the language."""

    def __init__(self, source: str, limits: Limits, known_names: Iterable[str] = ()):
        self.lines = source.splitlines()
        self.limits = limits
        self.known_names = set(known_names)
        self.anchor: ast.AST | None = None  # nearest node with a position (operators have none)
        self.top_classes, self.methods, self.supers = set(), set(), set()
        self.self_targets: set[int] = set()

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        if getattr(node, "lineno", None) is None:
            node = self.anchor
        line = getattr(node, "lineno", None)
        col = char_col(self.lines, line, getattr(node, "col_offset", None))
        return ProgramError(kind, message, line, col, hint)

    def check(self, tree: ast.Module) -> None:
        self.find_classes(tree)
        count = 0
        max_nodes, max_depth = self.limits.max_ast_nodes, self.limits.max_expr_depth
        check_node = self.check_node
        # Iterative walk with depth, so a deep tree cannot exhaust Python's stack here.
        stack: list[tuple[ast.AST, int, ast.AST | None, _Where]] = [(tree, 0, None, _Where())]
        pop, push = stack.pop, stack.append
        while stack:
            node, depth, anchor, where = pop()
            if getattr(node, "lineno", None) is not None:
                anchor = node
            self.anchor = anchor
            count += 1
            if count > max_nodes:
                raise self.error(
                    "limit",
                    f"the program has more than {max_nodes:,} syntax elements; that is the limit",
                    node,
                )
            if depth > max_depth:
                raise self.error(
                    "limit",
                    f"expressions are nested more than {max_depth} levels deep; "
                    "that is the limit: split it into several lines",
                    node,
                )
            check_node(node, where)
            depth += 1
            kids = child_nodes(node)
            if not kids:
                continue
            if isinstance(node, ast.FunctionDef | ast.Lambda | ast.For | ast.While):
                for child, inner in _children(node, where, kids):
                    push((child, depth, anchor, inner))
            else:
                for child in kids:
                    push((child, depth, anchor, where))

    def check_node(self, node: ast.AST, where: _Where) -> None:
        kind = type(node)
        if kind in _NOTHING_TO_CHECK:
            return
        if kind not in _ALLOWED_TYPES:
            reason = REFUSALS.get(
                type(node), f"`{type(node).__name__}` is not part of this language"
            )
            raise self.error("forbidden", reason[0].upper() + reason[1:], node)
        if isinstance(node, ast.Name):
            if node.id == "super":
                self.check_super(node)
            self.check_identifier(node.id, node, "name")
        elif isinstance(node, ast.Attribute):
            if id(node) not in self.supers:
                if isinstance(node.value, ast.Call) and dotted(node.value.func) == "super":
                    self.check_super(node.value.func)  # super(Odd, args).__init__()
                self.check_attribute(node)
        elif isinstance(node, ast.keyword):
            self.check_keyword(node)
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.List | ast.Tuple | ast.Dict | ast.Set):
            self.check_display(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.check_target(target)
        elif isinstance(node, ast.AugAssign):
            target = node.target
            if isinstance(target, ast.Attribute) and target.attr == "data":
                return  # W.data += -lr * W.grad: in place on the tensor's data (its value is
                # checked as an expression)
            if not isinstance(target, ast.Name | ast.Subscript):
                raise self.error(
                    "forbidden",
                    "augmented assignment works on names, t[...] and t.data only",
                    node,
                )
            self.check_target(target)
        elif isinstance(node, ast.With):
            self.check_with(node)
        elif isinstance(node, ast.Raise):
            self.check_raise(node)
        elif isinstance(node, ast.FunctionDef | ast.Lambda):
            self.check_function(node, id(node) in self.methods)
        elif isinstance(node, ast.ClassDef):
            self.check_class(node)
        elif isinstance(node, ast.For | ast.comprehension):
            if getattr(node, "is_async", 0):
                raise self.error("forbidden", "`async for` is not part of this language", node)
            self.check_loop_target(node.target)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            self.check_import(node)
        else:
            self.check_placement(node, where)

    def check_placement(self, node: ast.AST, where: _Where) -> None:
        """`return` inside a function, `break` and `continue` inside a loop."""
        if isinstance(node, ast.Return) and not where.function:
            raise self.error("syntax", "`return` outside a function", node)
        if isinstance(node, ast.Break | ast.Continue) and not where.loop:
            word = "break" if isinstance(node, ast.Break) else "continue"
            raise self.error("syntax", f"`{word}` outside a loop", node)

    def check_attribute(self, node: ast.Attribute) -> None:
        self.check_identifier(node.attr, node, "attribute")
        if node.attr in INTERNAL_ATTRIBUTES:
            raise self.error(
                "forbidden",
                f"`.{node.attr}` reaches into Python's own machinery (generator frames, code, "
                "globals) and is not part of this language",
                node,
            )

    def check_keyword(self, node: ast.keyword) -> None:
        if node.arg is None:
            raise self.error(
                "forbidden", "`**` keyword unpacking is not part of this language", node
            )
        self.check_identifier(node.arg, node, "keyword argument")
        if node.arg == "out":
            raise self.error(
                "forbidden",
                "the `out=` argument is not supported: assign the result instead (y = ...)",
                node,
            )

    def check_display(self, node: ast.List | ast.Tuple | ast.Dict | ast.Set) -> None:
        items = node.keys if isinstance(node, ast.Dict) else node.elts
        if len(items) > self.limits.max_literal_elements:
            what = "dict" if isinstance(node, ast.Dict) else "list"
            raise self.error(
                "limit",
                f"a {what} literal has {len(items):,} elements; the limit is "
                f"{self.limits.max_literal_elements:,}: use torch.arange, torch.linspace or torch.rand",
                node,
            )
        if isinstance(node, ast.Dict) and any(k is None for k in node.keys):
            raise self.error(
                "forbidden", "`**` unpacking in a dict is not part of this language", node
            )

    def check_constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str):
            # The source is capped as a whole (max_source_chars); a literal (a docstring, a
            # tutorial's text) is held to what any string a program makes may be.
            if len(value) > self.limits.max_string_length:
                raise self.error(
                    "limit",
                    f"a string of {len(value):,} characters; a string may have at most "
                    f"{self.limits.max_string_length:,}",
                    node,
                )
        elif isinstance(value, bytes):
            raise self.error("forbidden", "bytes literals are not part of this language", node)
        elif isinstance(value, complex):
            raise self.error("forbidden", "complex literals are not part of this language", node)
        elif isinstance(value, int) and not isinstance(value, bool):
            if value.bit_length() > self.limits.max_int_bits:
                raise self.error(
                    "limit",
                    f"an integer of {value.bit_length():,} bits; the limit is "
                    f"{self.limits.max_int_bits:,} bits",
                    node,
                )


def _children(
    node: ast.AST, where: _Where, kids: list[ast.AST]
) -> Iterable[tuple[ast.AST, _Where]]:
    """The children (`kids`) of a function or a loop (the checker's walk gives every other
    node's children its own `where`), each with where it sits: a function's body may
    `return` (and leaves the loops around it), a loop's body may `break`."""
    if isinstance(node, ast.FunctionDef | ast.Lambda):
        inner = _Where(function=True)
        return [(c, inner) for c in kids]
    loop = _Where(function=where.function, loop=True)
    body = {id(s) for s in node.body}
    return [(c, loop if id(c) in body else where) for c in kids]


_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """list(ast.iter_child_nodes(node)), the same nodes in the same order, without its two
    generators per node (the checker's walk of a 1,000-line program spent half its time
    there): each field in `_fields` order, a node as it is, a list's nodes in turn."""
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(kind._fields)
    out: list[ast.AST] = []
    for name in names:
        try:
            value = getattr(node, name)
        except AttributeError:  # as ast.iter_fields: a field left unset is skipped
            continue
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, ast.AST)])
    return out


_BRACKET_EVENTS = re.compile(r"""[\n'"#()\[\]{}]""")  # the characters the check acts on


def _bracket_depth_check(source: str, limits: Limits) -> None:
    """Refuse deep bracket nesting before the parser sees it (the parser recurses). Only
    the characters in _BRACKET_EVENTS change what it knows (each other one only moves the
    column on, as its distance from the line's start says), so only they are visited."""
    depth = 0
    line, line_start = 1, -1  # line_start: where the line's newline is (-1: none before)
    quote: str | None = None
    for match in _BRACKET_EVENTS.finditer(source):
        i = match.start()
        ch = source[i]
        if ch == "\n":
            line, line_start, quote = line + 1, i, None
            continue
        if quote:
            if ch == quote and source[i - 1] != "\\":
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "#":
            quote = "\n"
        elif ch in "([{":
            depth += 1
            if depth > limits.max_nesting:
                raise ProgramError(
                    "limit",
                    f"brackets are nested more than {limits.max_nesting} levels deep; "
                    "that is the limit: split the expression into several lines",
                    line,
                    i - line_start,
                )
        elif ch in ")]}":
            depth = max(0, depth - 1)


def parse(
    source: object, limits: Limits = DEFAULT_LIMITS, known_names: Iterable[str] = ()
) -> ast.Module:
    """Parse and check a program. Raises ProgramError; never anything else."""
    if not isinstance(source, str):
        raise ProgramError("type", f"a program must be text, not {type(source).__name__}")
    if len(source) > limits.max_source_chars:
        raise ProgramError(
            "limit",
            f"the program has {len(source):,} characters; the limit is {limits.max_source_chars:,}",
            1,
            1,
        )
    if "\x00" in source:
        before = source[: source.index("\x00")]
        line = before.count("\n") + 1
        raise ProgramError(
            "syntax",
            "the program contains a NUL character (binary data?); paste plain text",
            line,
            len(before) - (before.rfind("\n") + 1) + 1,
        )
    n_lines = source.count("\n") + 1
    if n_lines > limits.max_lines:
        raise ProgramError(
            "limit", f"the program has {n_lines:,} lines; the limit is {limits.max_lines:,}", 1, 1
        )
    if not source.strip():
        raise ProgramError(
            "syntax", "the program is empty: type a few lines, or pick a preset", 1, 1
        )
    _bracket_depth_check(source, limits)
    lines = source.splitlines()
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if "integer string conversion" in msg:  # Python's own cap on digits in a literal
            raise ProgramError(
                "limit",
                f"an integer literal is too long (over 4,300 digits); the limit is "
                f"{limits.max_int_bits:,} bits",
                exc.lineno,
                exc.offset,
            ) from None
        line = exc.lineno
        col = exc.offset
        text = lines[line - 1] if line and 1 <= line <= len(lines) else ""
        hint = None
        if "indent" in msg.lower():
            hint = (
                "Lines at the top level start in the first column; the lines of a block "
                "(after `def`, `if`, `for`, `while` or `with` and a colon) are indented "
                "by the same amount."
            )
        elif text.rstrip().endswith(":"):
            hint = "A line ending with `:` opens a block: indent the lines that follow it."
        raise ProgramError("syntax", f"syntax error: {msg}", line, col, hint) from None
    except (RecursionError, MemoryError):
        raise ProgramError(
            "limit", "the program is nested too deeply to read; split it into several lines", 1, 1
        ) from None
    except ValueError as exc:  # e.g. source the tokenizer rejects
        raise ProgramError("syntax", f"cannot read the program: {exc}", 1, 1) from None
    Checker(source, limits, known_names).check(tree)
    return tree


def source_segment(lines: list[str], node: ast.AST, max_len: int = 60) -> str:
    """The text of a node (first line only), shortened for labels."""
    line = getattr(node, "lineno", None)
    if not line or line > len(lines):
        return ""
    text = lines[line - 1]
    start = getattr(node, "col_offset", 0) or 0
    end_line = getattr(node, "end_lineno", line)
    end = getattr(node, "end_col_offset", None) if end_line == line else None
    if text.isascii():  # the offsets count UTF-8 bytes: here one a character
        seg = text[start:end] if end else text[start:]
    else:
        raw = text.encode("utf-8")
        seg = (
            raw[start:end].decode("utf-8", errors="replace")
            if end
            else raw[start:].decode("utf-8", errors="replace")
        )
    seg = seg.strip()
    return seg if len(seg) <= max_len else seg[: max_len - 1] + "…"
