"""Control flow: `if`/`elif`/`else`, `for` and `while` (with `break`, `continue` and
`else`), `assert`, `raise`, and `try` with `except`, `else` and `finally`.

Conditions are decided by gradviz.program.runtime.iteration.Iteration.truth (a tensor's with
PyTorch's own message when it has more than one value). A `for` loop goes over what
Iteration.over walks; when the length is known first (a range, a list, a tensor's rows) the
loop is refused before its first pass if it could not finish within the loop cap, and every
pass of every loop counts against the cap and the wall clock (gradviz.program.budgets.language_caps).
While a loop runs, the pass it is on is kept in RunState.loops, so the tensors its body
names are labelled with it on the graph (`loss[3]`). `break` and `continue` are signals
caught by the loop they are in (the checker refuses them outside one).

`try`: an `except` catches only what Python would raise for the program's own work
(`exception_of`): a kind "runtime" error that is one of Python's exceptions (CATCHABLE),
raised by the program, by an operation on its values (ZeroDivisionError, IndexError,
KeyError, ...) or by torch (a shape mismatch is a RuntimeError). The run's caps (kind
"limit"), the language's refusals and its own errors (every other kind) are never caught:
they end the run at their line at once, without running any `finally` on the way out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.recording.quiet_passes import QuietPasses
from gradviz.program.recording.state import RunState
from gradviz.program.results.reports import ErrorDetails
from gradviz.program.runtime.functions import Return
from gradviz.program.runtime.values import ProgramObject
from gradviz.program.syntax.program_error import ProgramError

# The exceptions a program can catch, each with the one it is a kind of, as in Python
# (`except RuntimeError` catches NotImplementedError and torch's linear-algebra error;
# `except Exception` catches them all). Any other exception torch or Python raises
# (torch.OutOfMemoryError, RecursionError, MemoryError, ...) ends the run.
CATCHABLE: dict[str, str] = {
    "Exception": "",
    "ValueError": "Exception",
    "TypeError": "Exception",
    "RuntimeError": "Exception",
    "KeyError": "Exception",
    "IndexError": "Exception",
    "AssertionError": "Exception",
    "ZeroDivisionError": "Exception",
    "OverflowError": "Exception",
    "StopIteration": "Exception",
    "NotImplementedError": "RuntimeError",
    "_LinAlgError": "RuntimeError",  # torch.linalg.LinAlgError
}
# What torch says, as a RuntimeError, when the worker's memory cap (RLIMIT_DATA) makes its
# allocator fail (gradviz.workers.jobs.ALLOCATION_FAILED), or when the GPU itself fails: a
# cap and a broken device, never the program's to catch.
NOT_THE_PROGRAMS = (
    "can't allocate memory",
    "could not create a primitive",
    "std::bad_alloc",
    "out of memory",
    "CUDA error",
    "CUBLAS_STATUS_",
    "CUDNN_STATUS_",
)


def exception_of(err: ProgramError) -> str | None:
    """The Python exception a program may catch `err` as ("ValueError"), or None: the
    run's caps, the language's refusals and its own errors are never caught."""
    if err.kind != "runtime":
        return None
    name = err.details.exception
    if name is None:  # the interpreter's words for Python's errors: "KeyError: 'k'"
        head, sep, _ = err.message.partition(": ")
        name = head if sep else err.message
    elif err.raised is None and any(sign in err.message for sign in NOT_THE_PROGRAMS):
        return None  # torch's words, not the program's own raise
    if name not in CATCHABLE and err.details.device is not None:
        # a device rule on simulated CUDA (FakeTensorMode's own error class, or gradviz's
        # SimulatedDeviceError): a real GPU raises it as a RuntimeError
        name = "RuntimeError"
    return name if name in CATCHABLE else None


def handles(handler: ast.ExceptHandler, name: str) -> bool:
    """Whether `except ...:` catches the exception `name` (checked: names of RAISABLE)."""
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    wanted = {k.id for k in kinds if isinstance(k, ast.Name)}
    while name:
        if name in wanted:
            return True
        name = CATCHABLE[name]
    return False


class CaughtException(ProgramObject):
    """What `except ... as e` names: str(e), print(e) and f"{e}" give the exception's
    message and repr(e) `ValueError('why')`, as Python's do; nothing else of it can be read
    (no attributes: no traceback, context or cause)."""

    def __init__(self, state: RunState, name: str, err: ProgramError):
        super().__init__(state)
        self.name = name
        if err.raised is not None:
            self.text, self.shown = err.raised
        else:
            message = err.message
            self.text = "" if message == name else message.removeprefix(f"{name}: ")
            inner = self.text if name == "KeyError" else repr(self.text)  # KeyError('k')
            self.shown = f"{name}({inner})"

    def describe(self) -> str:
        return self.name

    def as_str(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.shown


class Break(Exception):
    """`break`: leaves the innermost loop."""


class Continue(Exception):
    """`continue`: goes on to the innermost loop's next pass."""


class Control:
    """Runs `if`, `for`, `while`, `assert`, `raise` and `try` statements."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        evaluator: Evaluator,
        run_block: Callable[[list[ast.stmt]], None],
        assign: Callable[[ast.AST, object, ast.stmt], None],
        bind: Callable[[str, object, ast.stmt], None],
    ):
        self.state = state
        self.bind = bind  # a name's binding: what `assign` does for a name target
        self.quotas = quotas
        self.evaluator = evaluator
        self.iteration = evaluator.iteration
        self.run_block = run_block
        self.assign = assign
        self.quiet = QuietPasses(state, state.options.quiet_passes)
        self.handling: list[ProgramError] = []  # the errors `except` blocks now handle

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
        loops, loop_pass, body, run_block = (
            self.state.loops,
            self.quotas.loop_pass,
            stmt.body,
            self.run_block,
        )
        loops.append(0)
        passes = self.quiet.loop(stmt, length)
        begin = passes.begin
        # a name target is bound as `assign` binds one, without its tests
        name = target.id if type(target) is ast.Name else None
        bind, assign = self.bind, self.assign
        try:
            for number, item in enumerate(items):
                loop_pass(stmt)
                loops[-1] = number
                begin(number)
                if name is not None:
                    bind(name, item, stmt)
                elif target is not None:
                    assign(target, item, stmt)
                try:
                    run_block(body)
                except Break:
                    return False
                except Continue:
                    continue
            return True
        finally:
            passes.end()
            loops.pop()

    def try_(self, stmt: ast.Try) -> None:
        """The body; on an error a program may catch (exception_of), the first `except`
        that names it (`as e` bound while it runs, unbound after, as in Python); `else` if
        the body raised nothing; `finally` last, on every way out (`return`, `break` and
        `continue` too) but an error the program cannot catch: that ends the run now."""
        try:
            try:
                self.run_block(stmt.body)
            except ProgramError as err:
                name = exception_of(err)
                chosen = [h for h in stmt.handlers if name and handles(h, name)]
                if not chosen:
                    raise
                self.handle(chosen[0], err, name)
            else:
                self.run_block(stmt.orelse)
        except (Break, Continue, Return):
            self.run_block(stmt.finalbody)
            raise
        except ProgramError as err:
            if exception_of(err) is None:
                raise
            self.run_block(stmt.finalbody)
            raise
        self.run_block(stmt.finalbody)

    def handle(self, handler: ast.ExceptHandler, err: ProgramError, name: str) -> None:
        names = self.state.scope.names
        if handler.name is not None:
            names[handler.name] = CaughtException(self.state, name, err)
        self.handling.append(err)
        try:
            self.run_block(handler.body)
        finally:
            self.handling.pop()
            if handler.name is not None:
                names.pop(handler.name, None)

    def raise_(self, stmt: ast.Raise) -> None:
        """`raise` (checked: an exception of RAISABLE): uncaught, the program ends with
        Python's words for it, `ValueError: why`, at the raise's line. A bare `raise`
        (checked: in an `except` block) raises the error that block handles again."""
        exc = stmt.exc
        if exc is None:
            if self.handling:  # a fresh traceback: Python would add to the old one each time
                raise self.handling[-1].with_traceback(None)
            err = self.state.error("runtime", "RuntimeError: No active exception to reraise")
            raise err
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
        shown = ", ".join(strings.represent(v, stmt, cap=-1) for v in said)
        err.raised = (text, f"{name}({shown})")
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
        said = message.removeprefix("AssertionError: ") if stmt.msg is not None else ""
        err.raised = (said, f"AssertionError({said!r})" if said else "AssertionError()")
        raise err
