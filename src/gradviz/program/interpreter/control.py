"""Control flow: `if`/`elif`/`else`, `for` and `while` (with `break`, `continue` and
`else`), and `assert`.

Conditions are decided by gradviz.program.runtime.iteration.Iteration.truth (a tensor's with
PyTorch's own message when it has more than one value). A `for` loop goes over what
Iteration.over walks; when the length is known first (a range, a list, a tensor's rows) the
loop is refused before its first pass if it could not finish within the loop cap, and every
pass of every loop counts against the cap and the wall clock (gradviz.program.budgets.language_caps).
While a loop runs, the pass it is on is kept in RunState.loops, so the tensors its body
names are labelled with it on the graph (`loss[3]`). `break` and `continue` are signals
caught by the loop they are in (the checker refuses them outside one).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.recording.quiet_passes import QuietPasses
from gradviz.program.recording.state import RunState
from gradviz.program.results.reports import ErrorDetails


class Break(Exception):
    """`break`: leaves the innermost loop."""


class Continue(Exception):
    """`continue`: goes on to the innermost loop's next pass."""


class Control:
    """Runs `if`, `for`, `while` and `assert` statements."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        evaluator: Evaluator,
        run_block: Callable[[list[ast.stmt]], None],
        assign: Callable[[ast.AST, object, ast.stmt], None],
    ):
        self.state = state
        self.quotas = quotas
        self.evaluator = evaluator
        self.iteration = evaluator.iteration
        self.run_block = run_block
        self.assign = assign
        self.quiet = QuietPasses(state, state.options.quiet_passes)

    def if_(self, stmt: ast.If) -> None:
        test = self.iteration.truth(self.evaluator.eval(stmt.test), stmt.test)
        self.run_block(stmt.body if test else stmt.orelse)

    def for_(self, stmt: ast.For) -> None:
        iterable = self.evaluator.eval(stmt.iter)
        known = self.iteration.length(iterable)
        planned = self.iteration.passes(iterable)
        if planned is not None:
            what = f"this loop over `{self.state.segment(stmt.iter, 40)}`"
            self.quotas.planned(planned, stmt.iter, what)
        items = self.iteration.over(iterable, stmt.iter)
        if self._passes(stmt, items, stmt.target, known):
            self.run_block(stmt.orelse)

    def while_(self, stmt: ast.While) -> None:
        def passes():
            while self.iteration.truth(self.evaluator.eval(stmt.test), stmt.test):
                yield None

        if self._passes(stmt, passes(), None, None):
            self.run_block(stmt.orelse)

    def _passes(self, stmt: ast.For | ast.While, items, target, length: int | None) -> bool:
        """Run the loop's body once per item (`length`: how many, when known first); False
        if it ended with `break`."""
        self.state.loops.append(0)
        passes = self.quiet.loop(stmt, length)
        try:
            for number, item in enumerate(items):
                self.quotas.loop_pass(stmt)
                self.state.loops[-1] = number
                passes.begin(number)
                if target is not None:
                    self.assign(target, item, stmt)
                try:
                    self.run_block(stmt.body)
                except Break:
                    return False
                except Continue:
                    continue
            return True
        finally:
            passes.end()
            self.state.loops.pop()

    def raise_(self, stmt: ast.Raise) -> None:
        """An uncaught `raise` (checked: an exception of RAISABLE): the program ends with
        Python's words for it, `ValueError: why`, at the raise's line."""
        exc = stmt.exc
        name = exc.func.id if isinstance(exc, ast.Call) else exc.id
        said = (
            self.evaluator.unpacking.items(exc.args, "tuple") if isinstance(exc, ast.Call) else []
        )
        strings = self.evaluator.strings
        if len(said) == 1 and name == "KeyError":
            text = strings.represent(said[0], stmt, cap=-1)  # as Python shows a KeyError's
        elif len(said) == 1:
            text = strings.show(said[0], stmt, cap=-1)
        elif said:
            text = strings.represent(tuple(said), stmt, cap=-1)
        else:
            text = ""
        err = self.state.error("runtime", f"{name}: {text}" if text else name, stmt)
        err.details = ErrorDetails(exception=name, operation="raise")
        raise err

    def assert_(self, stmt: ast.Assert) -> None:
        if self.iteration.truth(self.evaluator.eval(stmt.test), stmt.test):
            return
        if stmt.msg is not None:
            said = self.evaluator.strings.show(self.evaluator.eval(stmt.msg), stmt.msg)
            message = f"AssertionError: {said}"
        else:
            message = f"AssertionError: `{self.state.segment(stmt.test, 80)}` is false"
        err = self.state.error("runtime", message, stmt)
        err.details = ErrorDetails(exception="AssertionError", operation="assert")
        raise err
