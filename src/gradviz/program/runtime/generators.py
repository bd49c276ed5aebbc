"""Generators: what calling a program's generator function gives (a `def` with `yield`).

A `ProgramGenerator` is one of the interpreter's own values (a ProgramObject), never a
Python generator: a program reaches it only through `for`, next(), iter() and the
built-ins that read a sequence (list, sum, zip, enumerate, ...); it has no attributes and
no methods (no gi_frame, gi_code, send, throw or close). It holds, out of the program's
reach, the steps of its body: a Python generator of the interpreter's own
(gradviz.program.interpreter.generator_bodies) that runs the body's statements through the
interpreter, each counted against the step, loop and wall-clock caps, and stops at each
`yield` with the value yielded. So a generator runs lazily, as Python's does: nothing of
its body runs before the first next(), and a loop that leaves early (`break`) never runs the
rest.

Each resumption (`next_value`) runs as a call of the function (its depth counted against
the call-depth cap, so generators delegating to themselves stop at that cap), in the
generator's own scope, with its decorator's grad mode, and with the loop passes the body
was in the middle of put back on RunState.loops (the graph's labels) for as long as it runs.
A generator resumed while it runs (one that reads itself) fails as Python's does:
`ValueError: generator already executing`. One that ended, by `return`, by running off its
end or by an error, gives no more values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState, Scope
from gradviz.program.runtime.values import ProgramObject


class ProgramGenerator(ProgramObject):
    """A generator of the program's: its body runs up to the next `yield` at each next()."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        name: str,
        steps: Iterator,
        scope: Scope,
        around: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
        known: int | None = None,
    ):
        super().__init__(state)
        # A generator expression's passes over its first iterable, where known (a loader's
        # batches): a loop reading it whole is held to the loop caps before it starts.
        self.known = known
        self.started = False
        self.quotas = quotas
        self.name = name
        self.steps = steps  # the interpreter's own Python generator: never the program's
        self.scope = scope
        self.around = around  # what each resumption runs inside (a decorator's grad mode)
        self.loops: list[int] = []  # the passes of the body's loops it is suspended in
        self.running = False
        self.finished = False
        self.returned = None  # the value of its `return` (what `yield from` it gives)

    def describe(self) -> str:
        return "generator"

    def __repr__(self) -> str:
        return f"<generator object {self.name}>"

    def iterate(self, node) -> ProgramObject:
        return self

    def equals(self, other) -> bool:
        return self is other  # as Python's generators compare: by identity

    def passes(self) -> int | None:
        return None if self.started else self.known

    def next_value(self, node):
        if self.finished:
            raise StopIteration
        if self.running:
            err = self.state.error("runtime", "ValueError: generator already executing", node)
            raise err
        state, quotas = self.state, self.quotas
        quotas.enter_call(self.name, node)
        scope, at, base = state.scope, state.node, len(state.loops)
        state.scope = self.scope
        state.loops.extend(self.loops)
        self.running = self.started = True
        try:
            if self.around is contextlib.nullcontext:  # no grad mode of its own: nothing
                value, ended = self._resume()
            else:
                with self.around():
                    value, ended = self._resume()
        except BaseException:
            self.finished = True
            raise
        finally:
            self.running = False
            self.loops = state.loops[base:]
            del state.loops[base:]
            state.scope, state.node = scope, at
            quotas.leave_call()
        if ended:
            self.finished = True
            raise StopIteration
        return value

    def _resume(self) -> tuple[object, bool]:
        """(the body's next value, False), or (None, True) once it has returned (its value
        kept for `yield from`)."""
        try:
            return next(self.steps), False
        except StopIteration as end:
            self.returned = end.value
            return None, True

    def delegate(self, node) -> Iterator:
        """`yield from` it, in another generator's body: its values, then its `return`'s
        value as the Python generator's own return value."""
        while True:
            try:
                value = self.next_value(node)
            except StopIteration:
                return self.returned
            yield value
