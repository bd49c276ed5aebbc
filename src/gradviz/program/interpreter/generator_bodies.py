"""A generator function's body, run lazily: the interpreter's statements as a Python
generator of the values the body yields (gradviz.program.runtime.generators.ProgramGenerator
holds it, out of the program's reach).

`GeneratorBodies.steps` walks the body statement by statement. A statement with no
`yield` in it runs as any other (Interpreter.run_body: counted, timed, its warnings kept).
One that holds a `yield` (gradviz.program.syntax.generator_rules says where one may stand:
a statement of its own, an assignment's value, inside `if`, `for`, `while` and a `try` with
no `finally`) is counted as a statement is and run here, in the same steps as
gradviz.program.interpreter.control runs it, each `yield` suspending the Python generator
with the value. `yield from` reads another generator of the program's through its own
next() (its `return` value is the expression's value), or any other iterable item by item.
`return` ends the body: its value is the Python generator's return value.

Nothing here holds the run's state across a suspension with `finally` or `with`: a
generator the program leaves unfinished is closed by Python's collector at a time of its
own (GeneratorExit, let through untouched). A loop's pass number on RunState.loops is
taken off again by the loop itself on every way out but that one (the generator puts the
rest back around each resumption).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.budgets.precheck import Budget
from gradviz.program.interpreter.control import Break, Continue, Control, exception_of, handles
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.functions import Return
from gradviz.program.runtime.generators import ProgramGenerator
from gradviz.program.syntax.generator_rules import has_yield
from gradviz.program.syntax.program_error import ProgramError

Steps = Iterator  # a Python generator of a body's yielded values


class GeneratorBodies:
    """Runs the statements of generator functions' bodies lazily."""

    def __init__(
        self,
        state: RunState,
        budget: Budget,
        quotas: Quotas,
        evaluator: Evaluator,
        control: Control,
        run_body: Callable[[list[ast.stmt]], None],
        assign: Callable[[ast.AST, object, ast.stmt], None],
    ):
        self.state = state
        self.budget = budget
        self.quotas = quotas
        self.evaluator = evaluator
        self.iteration = evaluator.iteration
        self.control = control
        self.run_body = run_body
        self.assign = assign
        # id() of a body run so far -> its `plan` (the tree is held for the run, its
        # bodies too, so no other list takes an id)
        self.plans: dict[int, list[tuple[bool, object]]] = {}
        self.handlers: dict[type, Callable[[ast.stmt], Steps]] = {
            ast.Expr: self.expression,
            ast.Assign: self.assignment,
            ast.If: self.if_,
            ast.For: self.for_,
            ast.While: self.while_,
            ast.Try: self.try_,
        }

    def steps(self, body: list[ast.stmt]) -> Steps:
        """A generator function's whole body; `return x` ends it with x."""
        try:
            yield from self.run(body)
        except Return as done:
            return done.value
        return None

    def run(self, body: list[ast.stmt]) -> Steps:
        plan = self.plans.get(id(body))
        if plan is None:
            plan = self.plans[id(body)] = self.plan(body)
        for plain, part in plan:
            if plain:  # statements with no `yield`: run as any others, in one call
                self.run_body(part)
                continue
            stmt = part
            self.budget.count_statement(stmt)
            self.quotas.step(stmt)
            self.quotas.clock(stmt)
            self.state.node = stmt
            handler = self.handlers.get(type(stmt))
            if handler is None:  # the checker refuses every other place; a second defence
                raise self.state.error("forbidden", "`yield` cannot stand here", stmt)
            yield from handler(stmt)

    def plan(self, body: list[ast.stmt]) -> list[tuple[bool, object]]:
        """`body` as `run` takes it: each run of statements with no `yield` in them as
        (True, the statements), each statement that holds one as (False, the statement)."""
        plan: list[tuple[bool, object]] = []
        for stmt in body:
            if has_yield(stmt):
                plan.append((False, stmt))
            elif plan and plan[-1][0]:
                plan[-1][1].append(stmt)
            else:
                plan.append((True, [stmt]))
        return plan

    # -- the statements that hold a `yield`

    def value(self, node: ast.expr) -> Steps:
        """`yield x` (its value is None: nothing is ever sent in) or `yield from items`."""
        if isinstance(node, ast.Yield):
            yield None if node.value is None else self.evaluator.eval(node.value)
            return None
        if not isinstance(node, ast.YieldFrom):  # checked: a second defence
            raise self.state.error("forbidden", "`yield` cannot stand here", node)
        source = self.evaluator.eval(node.value)
        if isinstance(source, ProgramGenerator):
            return (yield from source.delegate(node.value))
        yield from self.iteration.over(source, node.value)
        return None

    def expression(self, stmt: ast.Expr) -> Steps:
        return self.value(stmt.value)  # its steps themselves: one generator fewer to resume

    def assignment(self, stmt: ast.Assign) -> Steps:
        value = yield from self.value(stmt.value)
        for target in stmt.targets:
            self.assign(target, value, stmt)

    def if_(self, stmt: ast.If) -> Steps:
        test = self.iteration.truth(self.evaluator.eval(stmt.test), stmt.test)
        yield from self.run(stmt.body if test else stmt.orelse)

    def for_(self, stmt: ast.For) -> Steps:
        iterable = self.evaluator.eval(stmt.iter)
        planned = self.iteration.passes(iterable)
        if planned is not None:
            what = f"this loop over `{self.state.segment(stmt.iter, 40)}`"
            self.quotas.planned(planned, stmt.iter, what)
        items = self.iteration.over(iterable, stmt.iter)
        if (yield from self.passes(stmt, items, stmt.target)):
            yield from self.run(stmt.orelse)

    def while_(self, stmt: ast.While) -> Steps:
        def tests():
            while self.iteration.truth(self.evaluator.eval(stmt.test), stmt.test):
                yield None

        if (yield from self.passes(stmt, tests(), None)):
            yield from self.run(stmt.orelse)

    def passes(self, stmt: ast.For | ast.While, items, target) -> Steps:
        """The loop's passes (as Control runs them); True if it ran to its end, False if it
        ended with `break`."""
        loops = self.state.loops
        loops.append(0)
        try:
            for number, item in enumerate(items):
                self.quotas.loop_pass(stmt)
                loops[-1] = number
                if target is not None:
                    self.assign(target, item, stmt)
                try:
                    yield from self.run(stmt.body)
                except Break:
                    loops.pop()
                    return False
                except Continue:
                    continue
        except GeneratorExit:  # closed unfinished by Python's collector: nothing to give back
            raise
        except BaseException:
            loops.pop()  # the inner loops took theirs off already
            raise
        loops.pop()
        return True

    def try_(self, stmt: ast.Try) -> Steps:
        """`try` with no `finally` (checked), its `except` blocks with no `yield`."""
        try:
            yield from self.run(stmt.body)
        except ProgramError as err:
            name = exception_of(err)
            chosen = [h for h in stmt.handlers if name and handles(h, name)]
            if not chosen:
                raise
            self.control.handle(chosen[0], err, name)
        else:
            yield from self.run(stmt.orelse)
