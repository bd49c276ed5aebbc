"""A program's own functions: `def` and `lambda`, their calls, `return`.

A `UserFunction` is plain data: its syntax node, the default values computed when it was
defined, the scope it was defined in (closures read through to it, late, as Python's do)
and the names its body assigns (its locals). It has no Python code object, frame, globals
or `__call__`: nothing of it runs except through `Functions.call`, which binds the
arguments as Python does (positional, keyword, defaults, keyword-only), opens a new
gradviz.program.recording.state.Scope, counts the call depth against its cap
(gradviz.program.budgets.language_caps) and runs the body through the interpreter. `return` ends a call
with a `Return` signal; `global` and `nonlocal` are refused by the checker.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState, Scope
from gradviz.program.runtime.values import held
from gradviz.program.syntax.checker import child_nodes
from gradviz.program.syntax.grammar import grad_decorator


class Return(Exception):
    """`return value`: ends the call it is in (caught by Functions.call)."""

    def __init__(self, value):
        super().__init__("return")
        self.value = value


@dataclass(eq=False)
class UserFunction:
    """A function the program defined."""

    name: str
    node: ast.FunctionDef | ast.Lambda
    defaults: dict[str, object]  # parameter -> default value, computed at definition
    closure: Scope
    local: frozenset[str] = field(default_factory=frozenset)
    grad_mode: str | None = None  # "no_grad" / "enable_grad": its decorator's, for each call

    type_label = "function"

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class Functions:
    """Defines the program's functions and runs their calls."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        evaluate: Callable[[ast.AST], object],
        run_body: Callable[[list[ast.stmt]], None],
    ):
        self.state = state
        self.quotas = quotas
        self.evaluate = evaluate
        self.run_body = run_body

    def define(self, node: ast.FunctionDef | ast.Lambda) -> UserFunction:
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults: dict[str, object] = {}
        for a, d in zip(
            positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
        ):
            defaults[a.arg] = held(self.state, self.evaluate(d), d, "a default value")
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            if d is not None:
                defaults[a.arg] = held(self.state, self.evaluate(d), d, "a default value")
        params = {a.arg for a in [*positional, *args.kwonlyargs]}
        if isinstance(node, ast.Lambda):
            return UserFunction("<lambda>", node, defaults, self.state.scope, frozenset(params))
        local = frozenset(params | assigned_names(node.body))
        # decorators apply bottom-up, so the outermost one's mode is the one a call runs in
        modes = [grad_decorator(d) for d in node.decorator_list]
        mode = modes[0] if modes else None
        return UserFunction(node.name, node, defaults, self.state.scope, local, mode)

    def call(self, fn: UserFunction, args: tuple, kwargs: dict, node):
        names = self.bind_arguments(fn, args, kwargs, node)
        self.quotas.enter_call(fn.name if fn.name != "<lambda>" else "lambda", node)
        outer = self.state.scope
        self.state.scope = Scope(names, fn.closure, fn.local, fn.name)
        try:
            if isinstance(fn.node, ast.Lambda):
                return self.evaluate(fn.node.body)
            with self.grad_mode(fn.grad_mode):
                try:
                    self.run_body(fn.node.body)
                except Return as done:
                    return done.value
            return None
        finally:
            self.state.scope = outer
            self.quotas.leave_call()

    @contextlib.contextmanager
    def grad_mode(self, mode: str | None) -> Iterator[None]:
        """A decorated function's call runs as `with torch.no_grad():` (or enable_grad) would
        run its body; the mode before the call is back after it, however it ends."""
        if mode is None:
            yield
            return
        manager = torch.no_grad() if mode == "no_grad" else torch.enable_grad()
        change = 1 if mode == "no_grad" else 0
        with manager:
            self.state.no_grad_depth += change
            try:
                yield
            finally:
                self.state.no_grad_depth -= change

    def bind_arguments(self, fn: UserFunction, args: tuple, kwargs: dict, node) -> dict:
        """The call's arguments by parameter name, as Python binds them."""
        spec = fn.node.args
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        keyword_only = [a.arg for a in spec.kwonlyargs]
        shown = fn.name if fn.name != "<lambda>" else "lambda"
        if len(args) > len(positional):
            raise self.state.error(
                "type",
                f"{shown}() takes {len(positional)} positional argument"
                f"{'' if len(positional) == 1 else 's'} but {len(args)} were given",
                node,
            )
        names = dict(zip(positional, args, strict=False))
        posonly = {a.arg for a in spec.posonlyargs}
        for key, value in kwargs.items():
            if key in names:
                raise self.state.error(
                    "type", f"{shown}() got multiple values for argument '{key}'", node
                )
            if key not in positional and key not in keyword_only or key in posonly:
                raise self.state.error(
                    "type", f"{shown}() got an unexpected keyword argument '{key}'", node
                )
            names[key] = value
        missing = []
        for p in [*positional, *keyword_only]:
            if p not in names:
                if p in fn.defaults:
                    names[p] = fn.defaults[p]
                else:
                    missing.append(p)
        if missing:
            listed = ", ".join(f"'{m}'" for m in missing)
            raise self.state.error(
                "type",
                f"{shown}() is missing {len(missing)} required argument"
                f"{'' if len(missing) == 1 else 's'}: {listed}",
                node,
            )
        return names


def assigned_names(body: list[ast.stmt]) -> set[str]:
    """The names a function body assigns (its locals), not looking into the functions and
    lambdas it defines (their own scopes) nor into comprehensions (theirs)."""
    found: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef):
            found.add(node.name)
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(
            node, ast.Lambda | ast.ListComp | ast.DictComp | ast.SetComp | ast.GeneratorExp
        ):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            found.add(node.name)  # except ValueError as e
        stack.extend(child_nodes(node))
    return found
