"""Statements: the `Interpreter` that runs a checked program's statements one by one
(assignments, `with`, `def`, `class`, `return`, imports; `if`, loops, `assert`, `raise`
and `try` through gradviz.program.interpreter.control), and the language's index: `STATEMENTS` here
and gradviz.program.interpreter.expressions.EXPRESSIONS name the handler of every node the
checker allows, `PARTS` the nodes read only as parts of their parents."""

from __future__ import annotations

import ast
import contextlib
import operator
import sys
import warnings
from operator import attrgetter
from time import perf_counter

import torch

from gradviz.graph.record import Binding, RunRecord
from gradviz.program.allowlists import tables
from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.precheck import Budget
from gradviz.program.interpreter.class_statements import ClassStatements
from gradviz.program.interpreter.classes import Classes, UserModule
from gradviz.program.interpreter.control import Break, Continue, Control
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.interpreter.generator_bodies import GeneratorBodies
from gradviz.program.interpreter.imports import Imports
from gradviz.program.interpreter.names import Names
from gradviz.program.interpreter.outputs import Outputs
from gradviz.program.interpreter.plain_classes import PlainClasses, PlainInstance
from gradviz.program.interpreter.updates import Updates
from gradviz.program.recording.sources import read_tensors, reads_sources
from gradviz.program.recording.state import RunState
from gradviz.program.results.reports import RunWarning
from gradviz.program.results.trace import RunOptions
from gradviz.program.runtime.arrays.values import ProgramArray
from gradviz.program.runtime.builtins import RESERVED
from gradviz.program.runtime.functions import Functions, Return
from gradviz.program.runtime.placement import Placement
from gradviz.program.runtime.pyrandom import ProgramRandom
from gradviz.program.runtime.torch_calls import Library
from gradviz.program.runtime.values import (
    NAMESPACES,
    Builtin,
    ClassRef,
    Marker,
    Namespace,
    ProgramObject,
    TypeRef,
)

# Names a program cannot assign: the namespaces and the built-ins it always had (the
# built-ins added since, such as sum or list, may be shadowed by a variable, as in Python).
RESERVED_NAMES = frozenset(NAMESPACES) | frozenset(RESERVED)

# Values a name is bound to as they are: no module, function, tensor or object (their exact
# types; a subclass goes the long way)
PLAIN_VALUES = frozenset({int, float, bool, str, type(None), list, tuple, dict, set, range})

PYTHON_FRAMES = 5_000  # Python's recursion limit while a program runs

# The language's index, with gradviz.program.interpreter.expressions.EXPRESSIONS: the
# handler of each statement (a method of the Interpreter, or of its `control`, `names` or
# `outputs`), and below the nodes read only as parts of their parents. The
# checker's allowed node types (gradviz.program.syntax.grammar.ALLOWED_NODES) are exactly
# these three tables (tests/unit/program/test_language_index.py).
STATEMENTS: dict[type[ast.stmt], str] = {
    ast.Expr: "outputs.expression_statement",
    ast.Assign: "assign_statement",
    ast.AugAssign: "updates.aug_assign",
    ast.If: "control.if_",
    ast.For: "control.for_",
    ast.While: "control.while_",
    ast.Break: "break_statement",
    ast.Continue: "continue_statement",
    ast.Return: "return_statement",
    ast.FunctionDef: "def_statement",
    ast.ClassDef: "class_statements.define",
    ast.AnnAssign: "class_statements.field",
    ast.Assert: "control.assert_",
    ast.Raise: "control.raise_",
    ast.Try: "control.try_",
    ast.With: "with_block",
    ast.Import: "imports.bind",
    ast.ImportFrom: "imports.bind",
    ast.Pass: "pass_statement",
    ast.Delete: "names.delete",
    ast.Global: "names.declare",
    ast.Nonlocal: "names.declare",
}
# Read by their parents' handlers: a name's `del` context, the program itself, a `with`
# item, a function's arguments, a `try`'s `except` blocks, an import's names, a call's
# keywords, a `*x` of a call, a display or a target (gradviz.program.runtime.functions.
# Unpacking), a comprehension's `for`, an f-string's parts, a constant (read in
# Evaluator.eval itself), a name's load or store, the operators
# (gradviz.program.runtime.operators), and `yield` and `yield from` (read by the
# generator's statement, gradviz.program.interpreter.generator_bodies).
PARTS: frozenset[type] = frozenset(
    {ast.Del, ast.Module, ast.withitem, ast.arguments, ast.arg, ast.alias, ast.keyword}
    | {ast.ExceptHandler, ast.Starred}
    | {ast.comprehension, ast.FormattedValue, ast.Constant, ast.Load, ast.Store}
    | {ast.And, ast.Or, ast.Not, ast.Invert, ast.USub, ast.UAdd}
    | {ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn}
    | {ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult}
    | {ast.BitAnd, ast.BitOr, ast.BitXor}
    | {ast.Yield, ast.YieldFrom}
)


class Interpreter:
    """Runs a checked program statement by statement."""

    def __init__(
        self,
        source: str,
        tree: ast.Module,
        options: RunOptions,
        leaf_overrides: dict[tuple[str, int], torch.Tensor] | None = None,
        skip_backward: bool = False,  # gradient checks re-run programs without their backward()
    ):
        self.tree = tree
        self.state = RunState(source, options, leaf_overrides, skip_backward)
        self.budget = Budget(self.state)
        self.quotas = Quotas(self.state)
        self.placement = Placement(self.state)
        self.library = Library(self.state, self.budget, self.placement, self.quotas)
        self.evaluator = Evaluator(self.state, self.budget, self.quotas, self.library)
        # `import random`: this run's own generator (gradviz.program.runtime.pyrandom)
        self.random = ProgramRandom(options.seed, self.state.limits.max_container_length)
        self.imports = Imports(self.state, self.random, self.library)
        self.caught: list = []  # warnings caught while the program runs
        # id() of each statement that bound a tensor -> its bind_plan (the tree outlives the run)
        self.bind_plans: dict[int, tuple] = {}
        run_body = self.run_body
        self.functions = Functions(self.state, self.quotas, self.evaluator.eval, run_body)
        self.evaluator.functions = self.functions
        layers = self.evaluator.objects.layers
        self.classes = Classes(layers, self.functions, self.evaluator.call_value)
        plain = PlainClasses(self.functions, self.evaluator.call_value, self.evaluator.eval)
        plain.represent = self.evaluator.strings.represent
        self.class_statements = ClassStatements(self.evaluator, self.classes, plain, self.bind)
        self.updates = Updates(self.evaluator, self.library, self.assign, self.bind)
        self.control = Control(
            self.state, self.quotas, self.evaluator, run_body, self.assign, self.bind
        )
        self.names = Names(self.state, self.evaluator)  # del, global, nonlocal
        self.generators = GeneratorBodies(
            self.state,
            self.budget,
            self.quotas,
            self.evaluator,
            self.control,
            run_body,
            self.assign,
        )
        self.functions.steps = self.generators.steps
        self.outputs = Outputs(
            self.state, self.evaluator, self.class_statements, self.bind, tree.body
        )
        self.handlers = {kind: attrgetter(name)(self) for kind, name in STATEMENTS.items()}

    def run(self) -> None:
        # A program's own calls nest the interpreter's (about 20 Python frames a call):
        # its call-depth cap (Limits.max_call_depth) is what stops recursion, not Python's.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, PYTHON_FRAMES))
        try:
            self._run_warned()
        finally:
            sys.setrecursionlimit(limit)

    def _run_warned(self) -> None:
        # Every run sees every warning: Python's "once" registries are bypassed by "always",
        # and PyTorch's warn-once warnings (TORCH_WARN_ONCE: backward(create_graph=True),
        # .T on 3-D tensors) by set_warn_always, so a warning shown to the first program a
        # worker ran is shown to the next one too, and does not tell it what ran before.
        was_always = torch.is_warn_always_enabled()
        torch.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.resetwarnings()
                warnings.simplefilter("always")
                self.caught = caught
                self.run_body(self.tree.body)
        finally:
            torch.set_warn_always(was_always)

    def record(self) -> RunRecord:
        """What the graph is built from (gradviz.graph.build)."""
        state = self.state
        return RunRecord(
            state.bindings,
            state.registry,
            state.device_of,
            self.placement.fn_devices,
            state.backward,
            bool(state.simulated),
            state.module_calls,
            state.fn_modules,
            state.inplace.snapshots,
            state.saved_before,
            state.calls.built.nodes,
            state.calls.built.passes,
        )

    # -- statements

    def run_body(self, body: list[ast.stmt]) -> None:
        caught, state, quotas, handlers = self.caught, self.state, self.quotas, self.handlers
        budget = self.budget
        max_statements = budget.limits.max_statements
        for stmt in body:
            if budget.statements < max_statements:  # Budget.count_statement, inline
                budget.statements += 1
            else:  # the statement past the cap: refused there, with its message
                budget.count_statement(stmt)
            quotas.steps += 1  # Quotas.step and Quotas.clock, inline
            if quotas.steps > quotas.max_steps:
                raise quotas.too_many_steps(stmt)
            if perf_counter() > quotas.deadline:
                quotas.clock(stmt)
            state.node = stmt
            before = len(caught)
            handler = handlers.get(type(stmt))
            try:
                if handler is None:  # the checker refuses everything else; a second defence
                    raise state.error(
                        "forbidden", f"`{type(stmt).__name__}` is not part of this language", stmt
                    )
                handler(stmt)
            finally:
                if len(caught) > before:
                    self._warned(stmt, before)

    def _warned(self, stmt: ast.stmt, before: int) -> None:
        """The warnings `stmt` raised, kept as the run's (at its line)."""
        caught = self.caught
        for w in caught[before:]:
            self.state.warnings.append(
                RunWarning(
                    line=stmt.lineno,
                    message=str(w.message).split("\n")[0],
                    category=w.category.__name__,
                )
            )
        del caught[before:]

    def assign_statement(self, stmt: ast.Assign) -> None:
        value = self.evaluator.eval(stmt.value)
        targets = stmt.targets
        if len(targets) == 1 and type(targets[0]) is ast.Name:  # what `assign` does first
            self.bind(targets[0].id, value, stmt)
            return
        for target in targets:
            self.assign(target, value, stmt)

    def break_statement(self, stmt: ast.Break) -> None:
        raise Break()

    def continue_statement(self, stmt: ast.Continue) -> None:
        raise Continue()

    def return_statement(self, stmt: ast.Return) -> None:
        raise Return(None if stmt.value is None else self.evaluator.eval(stmt.value))

    def def_statement(self, stmt: ast.FunctionDef) -> None:
        self.bind(stmt.name, self.functions.define(stmt), stmt)

    def pass_statement(self, stmt: ast.Pass) -> None:
        return

    def with_block(self, stmt: ast.With) -> None:
        """`with torch.no_grad():` (or enable_grad, inference_mode, or a name `from torch
        import no_grad` bound), as a decorated function's call runs."""
        with contextlib.ExitStack() as modes:
            for item in stmt.items:
                callee = item.context_expr.func
                if getattr(callee, "attr", None) == "detect_anomaly":  # a note says why
                    self.evaluator.library.functional.note_anomaly(item.context_expr)
                    continue
                mode = self.functions.grad_mode_of(callee, "open a `with` block")
                modes.enter_context(self.functions.grad_mode(mode))
            self.run_body(stmt.body)

    def assign(self, target: ast.AST, value, stmt: ast.stmt) -> None:
        if type(target) is ast.Name:  # the commonest target first
            self.bind(target.id, value, stmt)
            return
        error, call = self.state.error, self.library.call
        if isinstance(target, ast.Starred):  # first, *rest = items: rest is a new list
            self.quotas.items(len(value), target, "list")
            target = target.value
        if isinstance(target, ast.Name):
            self.bind(target.id, value, stmt)
        elif isinstance(target, ast.Tuple | ast.List):
            items = self.evaluator.iteration.unpack_into(value, target.elts, target)
            for elt, v in zip(target.elts, items, strict=True):
                self.assign(elt, v, stmt)
        elif isinstance(target, ast.Subscript):
            obj = self.evaluator.eval(target.value)
            if isinstance(obj, dict):
                key = self.evaluator.eval(target.slice)
                self.evaluator.containers.set_item(obj, key, value, target)
                return
            index = self.evaluator.indexing.eval_index(target.slice)
            if isinstance(obj, ProgramArray):
                self.library.arrays.set_item(obj, index, value, target)
                return
            if isinstance(obj, list):
                self.evaluator.containers.set_item(obj, index, value, target)
                return
            if not isinstance(obj, torch.Tensor):
                raise error(
                    "type", "item assignment works on tensors, lists and dicts only", target
                )
            for part in (index, value):
                self.evaluator.containers.bounded(part, target, "an item assignment")
            call("item assignment", operator.setitem, (obj, index, value), {}, target, "bounded")
        elif isinstance(target, ast.Attribute):
            obj = self.evaluator.lookup(target.value)
            if isinstance(obj, UserModule):  # self.fc = nn.Linear(4, 2)
                self.classes.set_attribute(obj, target.attr, value, target)
                return
            if isinstance(obj, PlainInstance):  # self.data = [0.0] * n, cfg.n_embd = 64
                obj.set(target.attr, value, target)
                return
            if not isinstance(obj, torch.Tensor) or target.attr not in ("grad", "requires_grad"):
                raise error(
                    "type",
                    f"`.{target.attr}` cannot be set here: only `t.grad`, `t.requires_grad` "
                    "and the attributes of the program's own objects (`self.fc = ...`, "
                    "`cfg.n_embd = 64`) can be assigned",
                    target,
                )
            if target.attr == "grad" and not (value is None or isinstance(value, torch.Tensor)):
                raise error("type", "`t.grad` can be set to None or a tensor", target)
            if target.attr == "requires_grad" and not isinstance(value, bool):
                raise error("type", "`t.requires_grad` can be set to True or False", target)
            call(
                f"setting .{target.attr}", setattr, (obj, target.attr, value), {}, target, "bounded"
            )

    def bind(self, name: str, value, stmt: ast.stmt) -> None:
        state = self.state
        if type(value) in PLAIN_VALUES:  # nothing to check or record: bound as it is
            scope = state.scope
            (scope.outer.get(name, scope) if scope.outer else scope).names[name] = value
            return
        if type(value) in tables.TENSOR_TYPES:  # the next commonest: no module or object to refuse
            value = self.bind_tensor(name, value, stmt)
            state.scope.home(name).names[name] = value
            return
        if isinstance(value, Namespace | Builtin | Marker | TypeRef | ClassRef):
            raise state.error(
                "type", f"`{name}` cannot hold a module or a function; call it instead", stmt
            )
        if isinstance(value, torch.Tensor):
            value = self.bind_tensor(name, value, stmt)
        if isinstance(value, ProgramObject):  # a layer's parameters: net.0.weight, ...
            for qualified, tensor, what in value.named_tensors(name, stmt.lineno):
                state.add_binding(Binding(qualified, tensor, stmt.lineno, what, False, "parameter"))
        state.scope.home(name).names[name] = value

    def bind_tensor(self, name: str, value: torch.Tensor, stmt: ast.stmt) -> torch.Tensor:
        """A tensor bound to a name: moved or replaced as the run's options ask, and named
        for the graph."""
        state = self.state
        if state.leaf_overrides and value.is_leaf:
            key = (name, stmt.lineno)
            if key in state.leaf_overrides:
                value = state.leaf_overrides[key]
            elif value.is_floating_point():
                value = value.to(torch.float64)  # gradient checks run every constant in float64
        overrides = self.placement.device_overrides
        if overrides:
            target = overrides.get(name, overrides.get("*"))
            if target and value.is_leaf:  # "*": every leaf
                value = self.placement.move_leaf(name, value, target, stmt)
        if state.options.retain_intermediate and value.requires_grad and not value.is_leaf:
            value.retain_grad()
        plan = self.bind_plans.get(id(stmt))  # what the statement alone decides, once
        if plan is None:
            plan = bind_plan(state, stmt)
            self.bind_plans[id(stmt)] = plan
        op, shown, segment, constructor, detach = plan
        no_grad = state.no_grad_depth > 0
        cut = not value.requires_grad and (no_grad or detach)
        # a pass no result shows (gradviz.program.recording.quiet_passes): no sources read
        quiet = state.quiet and reads_sources(value, cut)
        state.add_binding(
            Binding(
                name,
                value,
                stmt.lineno,
                segment,
                no_grad,
                op,
                constructor,
                tuple(state.loops),
                () if quiet else read_tensors(state, shown, value, cut),
                quiet,
            )
        )
        return value


def bind_plan(state: RunState, stmt: ast.stmt) -> tuple[str, ast.AST, str, bool, bool]:
    """What a binding made by `stmt` takes from the statement alone: the operation, the
    expression shown (and its source text), whether it makes a constant, whether it cuts
    the graph (`.detach()`)."""
    op = op_name(stmt.value) if isinstance(stmt, ast.Assign | ast.Expr) else ""
    shown = stmt.value if isinstance(stmt, ast.Assign | ast.AugAssign | ast.Expr) else stmt
    shown = stmt.iter if isinstance(stmt, ast.For) else shown
    constructor = op in tables.CONSTRUCTORS or op in ("Constant", "List")
    return op, shown, state.segment(shown), constructor, op in ("detach", "detach_")


def op_name(node: ast.AST) -> str:
    """The operation a binding's value came from: the function or method called, or the
    expression's kind ("BinOp", "Constant", ...)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return type(node).__name__
