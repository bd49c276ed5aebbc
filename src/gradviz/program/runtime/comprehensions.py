"""List, dict and set comprehensions, and generator expressions.

A comprehension runs in its own gradviz.program.recording.state.Scope (its loop variables do not leak,
as in Python 3); its first iterable is evaluated in the scope around it. Each pass counts
against the loop cap and each item against the container caps (gradviz.program.budgets.language_caps),
so `[[0] * 1000 for i in range(10**6)]` stops at its first pass over the limit, or before
the first when the passes are known (a range's length, a tensor's rows, a DataLoader's
batches, through enumerate() and zip() too). A generator expression is lazy, as Python's
is: its first iterable is read when it is made, the rest item by item as it is read, in a
gradviz.program.runtime.generators.ProgramGenerator (the interpreter's own value: a
program never holds a Python generator, nor its frame); each of its passes counts against
the loop cap as it runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState, Scope
from gradviz.program.runtime.containers import Containers
from gradviz.program.runtime.generators import ProgramGenerator
from gradviz.program.runtime.iteration import Iteration
from gradviz.program.runtime.values import held


class Comprehensions:
    """Runs comprehensions and generator expressions."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        iteration: Iteration,
        containers: Containers,
        evaluate: Callable[[ast.AST], object],
    ):
        self.state = state
        self.quotas = quotas
        self.iteration = iteration
        self.containers = containers
        self.evaluate = evaluate

    def run(self, node: ast.ListComp | ast.GeneratorExp | ast.DictComp | ast.SetComp):
        if isinstance(node, ast.GeneratorExp):
            return self.lazy(node)
        out: list | dict | set = (
            {} if isinstance(node, ast.DictComp) else set() if isinstance(node, ast.SetComp) else []
        )
        first = self.evaluate(node.generators[0].iter)  # in the scope around it, as Python does
        outer = self.state.scope
        self.state.scope = Scope({}, outer)
        try:
            self._generate(node, 0, first, out)
        finally:
            self.state.scope = outer
        return out

    def lazy(self, node: ast.GeneratorExp) -> ProgramGenerator:
        """A generator expression: its first iterable read now, in the scope around it (as
        Python does), and the rest, item by item, as the generator is read."""
        first = node.generators[0].iter
        value = self.evaluate(first)
        known = self.iteration.passes(value)  # a loader's batches: list(...) of it is planned
        items = self.iteration.over(value, first)
        scope = Scope({}, self.state.scope)
        steps = self._values(node, 0, items)
        return ProgramGenerator(self.state, self.quotas, "<genexpr>", steps, scope, known=known)

    def _values(self, node: ast.GeneratorExp, level: int, items) -> Iterator:
        gen = node.generators[level]
        names = self.state.scope.names  # the generator's own scope, set while it runs
        target, ifs, loop_pass = gen.target, gen.ifs, self.quotas.loop_pass
        name = target.id if type(target) is ast.Name else None  # bound as `assign` binds it
        for item in items:
            loop_pass(node)
            if name is not None:
                names[name] = item
            else:
                self.iteration.assign(target, item, target, names.__setitem__)
            if ifs and not all(self.iteration.truth(self.evaluate(c), c) for c in ifs):
                continue
            if level + 1 < len(node.generators):
                inner = node.generators[level + 1].iter
                yield from self._values(
                    node, level + 1, self.iteration.over(self.evaluate(inner), inner)
                )
            else:
                yield self.evaluate(node.elt)

    def _generate(self, node, level: int, iterable, out) -> None:
        gen = node.generators[level]
        what = "generator expression" if isinstance(node, ast.GeneratorExp) else "comprehension"
        known = self.iteration.passes(iterable)  # a loader's batches, through zip() too
        if known is not None:
            self.quotas.planned(known, gen.iter, f"this {what}")
        names = self.state.scope.names
        target, ifs, loop_pass = gen.target, gen.ifs, self.quotas.loop_pass
        name = target.id if type(target) is ast.Name else None  # bound as `assign` binds it
        for item in self.iteration.over(iterable, gen.iter):
            loop_pass(node)
            if name is not None:
                names[name] = item
            else:
                self.iteration.assign(target, item, target, names.__setitem__)
            if ifs and not all(self.iteration.truth(self.evaluate(c), c) for c in ifs):
                continue
            if level + 1 < len(node.generators):
                inner = node.generators[level + 1]
                self._generate(node, level + 1, self.evaluate(inner.iter), out)
            elif isinstance(out, dict):
                key = self.containers.key(self.evaluate(node.key), node.key)
                value = held(self.state, self.evaluate(node.value), node.value, "a dict")
                try:
                    if key not in out:
                        self.quotas.items(len(out) + 1, node, "dict", made=1)
                    out[key] = value
                except TypeError as exc:
                    raise self.state.error("runtime", f"TypeError: {exc}", node.key) from None
            elif isinstance(out, set):
                value = self.evaluate(node.elt)
                self.containers.new_set([value], node.elt)  # held and hashable
                if value not in out:
                    self.quotas.items(len(out) + 1, node, "set", made=1)
                out.add(value)
            else:
                value = held(self.state, self.evaluate(node.elt), node.elt, "a list")
                self.quotas.items(len(out) + 1, node, "list", made=1)
                out.append(value)
