"""A program's displays: `[a, b]`, `(a, *rest)`, `{"lr": 0.1, **defaults}`, each item held
as the language holds values (gradviz.program.runtime.values.held) and counted against the
items cap; a display without `*x` takes the short way."""

from __future__ import annotations

import ast
from collections.abc import Callable

from gradviz.program.budgets.language_caps import Quotas
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.builtins import is_type
from gradviz.program.runtime.containers import PLAIN_ITEMS, Containers
from gradviz.program.runtime.functions import Unpacking
from gradviz.program.runtime.values import held


class Displays:
    """The list, tuple and dict displays of a run (the evaluator's EXPRESSIONS table names
    them)."""

    def __init__(
        self,
        state: RunState,
        quotas: Quotas,
        containers: Containers,
        unpacking: Unpacking,
        evaluate: Callable,
    ):
        self.state = state
        self.quotas = quotas
        self.containers = containers
        self.unpacking = unpacking
        self.eval = evaluate
        self.spread: dict[int, bool] = {}  # id() of a display run so far -> any `*x` in it

    def display(self, node: ast.List | ast.Tuple):
        kind = "list" if isinstance(node, ast.List) else "tuple"
        spread = self.spread.get(id(node))  # whether any item is `*x`, per display
        if spread is None:
            spread = any(isinstance(e, ast.Starred) for e in node.elts)
            self.spread[id(node)] = spread
        if not spread:
            return self._plain_display(node, kind)
        items: list = []
        for e in node.elts:
            more = self.unpacking.part(e, len(items), kind)  # [x] or, for [*xs], its items
            for item in more:
                if not (kind == "tuple" and is_type(item)):  # (int, float)
                    held(self.state, item, e, f"a {kind}")
            items.extend(more)
        self.quotas.items(len(items), node, kind)
        return items if kind == "list" else tuple(items)

    def _plain_display(self, node: ast.List | ast.Tuple, kind: str):
        """A display without `*x`: what `display` makes of it, each item held as it is."""
        evaluate, state = self.eval, self.state
        tuple_ = kind == "tuple"
        items: list = []
        for e in node.elts:
            item = evaluate(e)
            if type(item) not in PLAIN_ITEMS and not (tuple_ and is_type(item)):  # (int, float)
                held(state, item, e, f"a {kind}")
            items.append(item)
        self.quotas.items(len(items), node, kind)
        return tuple(items) if tuple_ else items

    def dict_display(self, node: ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:  # {**defaults, "lr": 0.1}
                self.unpacking.merge(out, self.eval(v), v)
                continue
            key = self.containers.key(self.eval(k), k)
            value = held(self.state, self.eval(v), v, "a dict")
            try:
                out[key] = value
            except TypeError as exc:  # an unhashable key
                raise self.state.error("runtime", f"TypeError: {exc}", k) from None
        self.quotas.items(len(out), node, "dict")
        return out
