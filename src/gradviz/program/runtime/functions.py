"""A program's own functions: `def` and `lambda`, their calls, `return`.

A `UserFunction` is plain data: its syntax node, the default values computed when it was
defined, the scope it was defined in (closures read through to it, late, as Python's do)
and the names its body assigns (its locals). It has no Python code object, frame, globals
or `__call__`: nothing of it runs except through `Functions.call`, which binds the
arguments as Python does (positional, keyword, defaults, keyword-only, `*args` and
`**kwargs`), opens a new
gradviz.program.recording.state.Scope, counts the call depth against its cap
(gradviz.program.budgets.language_caps) and runs the body through the interpreter. `return` ends a call
with a `Return` signal. A name the body declares `global` or `nonlocal` is not one of its
locals: each call's scope sends it to the program's scope or to the nearest enclosing call
that binds it (gradviz.program.recording.state.Scope.outer), for reads, assignments and `del`.

`Unpacking` reads a call's `*items` and `**options` (and a display's `*items`): each item is
counted against the item caps (a `*` of a known length before its first item is read), and
each keyword a `**` brings is checked as the checker checks a written one (no `_` names,
no `out=`).
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState, Scope
from gradviz.program.runtime.generators import ProgramGenerator
from gradviz.program.runtime.iteration import PLAIN_SEQUENCES, Iteration, LazySequence
from gradviz.program.runtime.values import (
    GRAD_MODES,
    Namespace,
    ProgramObject,
    clipped,
    held,
    type_name,
)
from gradviz.program.syntax.generator_rules import is_generator
from gradviz.program.syntax.grammar import METHOD_DECORATORS, child_nodes, dotted
from gradviz.program.syntax.scope_rules import declared


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
    declared: dict[str, str] = field(default_factory=dict)  # name -> "global" / "nonlocal"
    generator: bool = False  # its body has a `yield`: a call makes a ProgramGenerator

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
        # a generator's body as the interpreter's own Python generator of its values
        # (gradviz.program.interpreter.generator_bodies), set by the interpreter
        self.steps: Callable[[list[ast.stmt]], Iterator] | None = None
        # id() of each def run so far (the tree is held for the run) -> (its body's global
        # and nonlocal declarations, the names it assigns, whether it is a generator's)
        self.bodies: dict[int, tuple[dict[str, str], frozenset[str], bool]] = {}

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
        params = {a.arg for a in [*positional, *args.kwonlyargs, args.vararg, args.kwarg] if a}
        if isinstance(node, ast.Lambda):
            return UserFunction("<lambda>", node, defaults, self.state.scope, frozenset(params))
        known = self.bodies.get(id(node))  # what its body declares and assigns, once a def
        if known is None:
            ways = declared(node.body)
            assigned = frozenset(assigned_names(node.body))
            known = self.bodies[id(node)] = (ways, assigned, is_generator(node))
        ways, assigned, generator = known
        local = frozenset((params | assigned) - set(ways))
        # decorators apply bottom-up, so the outermost one's mode is the one a call runs in
        modes = [self.decorator_mode(d) for d in node.decorator_list]
        mode = modes[0] if modes else None
        made = UserFunction(node.name, node, defaults, self.state.scope, local, mode, ways)
        made.generator = generator
        return made

    def call(self, fn: UserFunction, args: tuple, kwargs: dict, node):
        names = self.bind_arguments(fn, args, kwargs, node)
        if fn.generator and self.steps is not None:
            return self.generator(fn, names, node)
        self.quotas.enter_call(fn.name if fn.name != "<lambda>" else "lambda", node)
        outer = self.state.scope
        self.state.scope = Scope(names, fn.closure, fn.local, fn.name)
        for name, how in fn.declared.items():
            self.state.scope.outer[name] = self.home(fn, name, how, node)
        try:
            if isinstance(fn.node, ast.Lambda):
                return self.evaluate(fn.node.body)
            if fn.grad_mode is None:  # what grad_mode(None) comes to, without its frame
                try:
                    self.run_body(fn.node.body)
                except Return as done:
                    return done.value
                return None
            with self.grad_mode(fn.grad_mode):
                try:
                    self.run_body(fn.node.body)
                except Return as done:
                    return done.value
            return None
        finally:
            self.state.scope = outer
            self.quotas.leave_call()

    def generator(self, fn: UserFunction, names: dict, node) -> ProgramGenerator:
        """A generator function's call: its arguments bound in a scope of its own, and
        nothing of its body run yet."""
        self.quotas.step(node)
        scope = Scope(names, fn.closure, fn.local, fn.name)
        for name, how in fn.declared.items():
            scope.outer[name] = self.home(fn, name, how, node)
        steps = self.steps(fn.node.body)
        mode = fn.grad_mode
        # what grad_mode(None) comes to, without its frame at each resumption
        around = contextlib.nullcontext if mode is None else lambda: self.grad_mode(mode)
        return ProgramGenerator(self.state, self.quotas, fn.name, steps, scope, around)

    def home(self, fn: UserFunction, name: str, how: str, node) -> Scope:
        """The scope a `global` (the program's) or `nonlocal` name (the nearest enclosing
        call that binds it) of `fn` lives in."""
        scope = fn.closure
        if how == "global":
            return self.state.globals
        while scope.parent is not None:
            if name in scope.outer:
                return scope.outer[name]
            if name in scope.local:
                return scope
            scope = scope.parent
        raise self.state.error("syntax", f"no binding for nonlocal '{name}' found", node)

    def decorator_mode(self, decorator: ast.expr) -> str | None:
        """The grad mode a decorator sets (checked: a method's @staticmethod, @classmethod
        or @property, which set none, or what grammar.grad_manager allows)."""
        callee = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(callee, ast.Name) and callee.id in METHOD_DECORATORS:
            return None
        return self.grad_mode_of(callee, "decorate a function")

    def grad_mode_of(self, callee: ast.expr, use: str) -> str:
        """The mode of a `with` item's or a decorator's callee (`torch.no_grad`, or a name
        `from torch import no_grad [as name]` bound): its value must be one of torch's grad
        modes, whatever the program has bound that name to since."""
        if isinstance(callee, ast.Attribute):  # torch.no_grad: read as a member, never kept
            owner = self.evaluate(callee.value)
            value = owner.members.get(callee.attr) if isinstance(owner, Namespace) else owner
        else:
            value = self.evaluate(callee)
        for marker, mode in GRAD_MODES:
            if value is marker:
                return mode
        raise self.state.error(
            "type",
            f"`{dotted(callee)}` is a {type_name(value)}, not torch.no_grad, torch.enable_grad "
            f"or torch.inference_mode, so it cannot {use}",
            callee,
        )

    @contextlib.contextmanager
    def grad_mode(self, mode: str | None) -> Iterator[None]:
        """A decorated function's call runs as `with torch.no_grad():` (or enable_grad,
        inference_mode) would run its body; the mode before the call is back after it, however
        it ends. inference_mode runs as no_grad: what it computes is the same (requires_grad
        False), while PyTorch's inference tensors have no version counter, which the run's
        in-place checks read on every tensor bound to a name."""
        if mode is None:
            yield
            return
        manager = torch.enable_grad() if mode == "enable_grad" else torch.no_grad()
        change = 0 if mode == "enable_grad" else 1
        with manager:
            self.state.no_grad_depth += change
            try:
                yield
            finally:
                self.state.no_grad_depth -= change

    def bind_arguments(self, fn: UserFunction, args: tuple, kwargs: dict, node) -> dict:
        """The call's arguments by parameter name, as Python binds them."""
        spec = fn.node.args
        if not kwargs and simple_parameters(spec) and len(args) == len(spec.args):
            return dict(zip([a.arg for a in spec.args], args, strict=True))  # f(a, b): as below
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        keyword_only = [a.arg for a in spec.kwonlyargs]
        shown = fn.name if fn.name != "<lambda>" else "lambda"
        if len(args) > len(positional) and spec.vararg is None:
            least = len(positional) - len(spec.defaults)
            takes = f"from {least} to " if least < len(positional) else ""
            raise self.state.error(
                "type",
                f"{shown}() takes {takes}{len(positional)} positional argument"
                f"{'' if len(positional) == 1 else 's'} but {len(args)} "
                f"{'was' if len(args) == 1 else 'were'} given",
                node,
            )
        names = dict(zip(positional, args, strict=False))
        if spec.vararg is not None:
            extra = args[len(positional) :]
            self.quotas.items(len(extra), node, "tuple")
            names[spec.vararg.arg] = tuple(extra)
        posonly = {a.arg for a in spec.posonlyargs}
        options: dict[str, object] = {}
        for key, value in kwargs.items():
            named = (key in positional and key not in posonly) or key in keyword_only
            if not named and spec.kwarg is not None:
                options[key] = value
                continue
            if key in names:
                raise self.state.error(
                    "type", f"{shown}() got multiple values for argument '{key}'", node
                )
            if not named:
                raise self.state.error(
                    "type", f"{shown}() got an unexpected keyword argument '{key}'", node
                )
            names[key] = value
        if spec.kwarg is not None:
            self.quotas.items(len(options), node, "dict")
            names[spec.kwarg.arg] = options
        for group, what in ((positional, "positional"), (keyword_only, "keyword-only")):
            missing = [p for p in group if p not in names and p not in fn.defaults]
            if missing:  # as Python words it: 'a', 'a' and 'b', 'a', 'b', and 'c'
                quoted = [f"'{m}'" for m in missing]
                listed = quoted[0] if len(quoted) == 1 else " and ".join(quoted)
                if len(quoted) > 2:
                    listed = ", ".join(quoted[:-1]) + ", and " + quoted[-1]
                raise self.state.error(
                    "type",
                    f"{shown}() missing {len(missing)} required {what} argument"
                    f"{'' if len(missing) == 1 else 's'}: {listed}",
                    node,
                )
            names.update({p: fn.defaults[p] for p in group if p not in names})
        return names


def simple_parameters(spec: ast.arguments) -> bool:
    """Whether a function's parameters are plain names only: no `/`, `*args`, keyword-only
    parameters or `**options`, so a call with one value for each binds them in order."""
    return not (spec.posonlyargs or spec.vararg or spec.kwonlyargs or spec.kwarg)


class Unpacking:
    """A call's arguments and a display's items with their `*items` and `**options` read."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        iteration: Iteration,
        evaluate: Callable[[ast.AST], object],
    ):
        self.state = state
        self.quotas = quotas
        self.iteration = iteration
        self.evaluate = evaluate

    def items(self, nodes: list[ast.expr], what: str) -> list:
        """The values of `nodes`, each `*x` unpacked in place."""
        out: list = []
        for e in nodes:
            out.extend(self.part(e, len(out), what))
        return out

    def part(self, node: ast.expr, have: int, what: str) -> list:
        """[the value of `node`], or the items of `*x`, to join `have` items."""
        if isinstance(node, ast.Starred):
            return self.spread(self.evaluate(node.value), node, have, what)
        return [self.evaluate(node)]

    def spread(self, value, node, have: int, what: str) -> list:
        """The items of `*value`, to join `have` items: refused past the item caps before the
        first is read where the length is known, else as soon as there are too many; a
        tensor's rows and a loader's batches are each a loop pass."""
        quotas = self.quotas
        known = self.iteration.length(value)
        if known is not None:
            quotas.items(have + known, node, what, made=0)
        elif not isinstance(value, LazySequence | ProgramObject):
            raise self.state.error(
                "type", f"argument after * must be an iterable, not {type_name(value)}", node
            )
        room = self.state.limits.max_container_length - have
        plain = isinstance(value, PLAIN_SEQUENCES)
        items: list = []
        for item in self.iteration.over(value, node):
            items.append(item)
            if not plain:
                quotas.loop_pass(node)
            if len(items) > room:
                quotas.items(have + len(items), node, what, made=0)
        quotas.items(have + len(items), node, what, made=len(items))
        return items

    def merge(self, out: dict, mapping, node) -> None:
        """`{**mapping, ...}`: its items into the dict being made, within the item cap."""
        if not isinstance(mapping, dict):
            raise self.state.error("type", f"'{type_name(mapping)}' object is not a mapping", node)
        self.quotas.items(len(out) + len(mapping), node, "dict", made=0)
        out.update(mapping)

    def keywords(self, call: ast.Call) -> dict:
        """A call's keyword arguments, each `**options` merged in order, as Python does."""
        out: dict = {}
        for kw in call.keywords:
            if kw.arg is not None:
                if kw.arg in out:
                    raise self._twice(call, kw.arg, kw)
                out[kw.arg] = self.evaluate(kw.value)
                continue
            mapping = self.evaluate(kw.value)
            if not isinstance(mapping, dict):
                raise self.state.error(
                    "type",
                    f"{dotted(call.func) or 'the function'}() argument after ** must be a "
                    f"mapping, not {type_name(mapping)}",
                    kw,
                )
            self.quotas.items(len(out) + len(mapping), kw, "dict of keyword arguments", made=0)
            for key, value in mapping.items():
                self.keyword_name(key, kw)
                if key in out:
                    raise self._twice(call, key, kw)
                out[key] = value
        return out

    def keyword_name(self, key, node) -> None:
        """A keyword a `**` brings, held to what the checker asks of a written one."""
        if not isinstance(key, str):
            raise self.state.error("type", "keywords must be strings", node)
        if key.startswith("_"):
            raise self.state.error(
                "forbidden",
                f"the keyword argument `{clipped(key)}` starts with an underscore: names beginning "
                "with `_` (private and 'dunder' names) are not allowed",
                node,
            )
        if not key.isidentifier():
            raise self.state.error(
                "forbidden", f"the keyword argument {clipped(repr(key))} is not a Python name", node
            )
        if key == "out":
            raise self.state.error(
                "forbidden",
                "the `out=` argument is not supported: assign the result instead (y = ...)",
                node,
            )

    def _twice(self, call: ast.Call, key: str, node):
        callee = dotted(call.func) or "the function"
        return self.state.error(
            "type", f"{callee}() got multiple values for keyword argument '{clipped(key)}'", node
        )


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
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found.add(node.id)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            found.add(node.name)  # except ValueError as e
        stack.extend(child_nodes(node))
    return found
