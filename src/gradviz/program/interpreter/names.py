"""`del` and the declarations `global` and `nonlocal`: a program's names and items undone.

`del name` unbinds a variable of the scope being run (or, under `global`/`nonlocal`, of the
scope the name lives in); the checker has refused `del` of the language's own names
(`torch`, `print`, ...), so only what the program bound can go. `del items[i]` (an index or
a slice) and `del table[key]` remove from the program's own lists and dicts; nothing else
(tensors, layers, attributes) can be deleted. `global` and `nonlocal` do nothing when run:
gradviz.program.runtime.functions reads them when the function is defined.
"""

from __future__ import annotations

import ast

from gradviz.program.interpreter.expressions import Evaluator
from gradviz.program.recording.state import RunState
from gradviz.program.runtime.values import clipped, type_name


class Names:
    """Runs `del`, `global` and `nonlocal`."""

    def __init__(self, state: RunState, evaluator: Evaluator):
        self.state = state
        self.evaluator = evaluator

    def declare(self, stmt: ast.Global | ast.Nonlocal) -> None:
        return  # read when the function was defined (Functions.define)

    def delete(self, stmt: ast.Delete) -> None:
        for target in stmt.targets:
            self.delete_target(target)

    def delete_target(self, target: ast.AST) -> None:
        state = self.state
        if isinstance(target, ast.Tuple | ast.List):  # del a, b
            for elt in target.elts:
                self.delete_target(elt)
            return
        if isinstance(target, ast.Name):
            home = state.scope.home(target.id)
            if target.id not in home.names:
                message = f"name '{target.id}' is not defined"
                if target.id in home.local:  # a function's own name, not bound (yet, or again)
                    message = (
                        f"cannot access local variable '{target.id}' where it is not "
                        "associated with a value"
                    )
                raise state.error("name", message, target)
            del home.names[target.id]
            return
        # checked: a Subscript of a name (del items[i], del table[key], del grid[0][1])
        evaluator = self.evaluator
        obj = evaluator.eval(target.value)
        if isinstance(obj, dict):
            key = evaluator.containers.key(evaluator.eval(target.slice), target)
            if key not in obj:
                raise state.error("runtime", f"KeyError: {clipped(repr(key), 80)}", target)
            del obj[key]
            return
        if not isinstance(obj, list):
            raise state.error(
                "type",
                f"'{type_name(obj)}' object doesn't support item deletion: `del` removes items "
                "of lists and dicts only",
                target,
            )
        index = evaluator.indexing.eval_index(target.slice)
        if not isinstance(index, int | slice):
            raise state.error(
                "type", f"list indices must be integers or slices, not {type_name(index)}", target
            )
        try:
            del obj[index]
        except (IndexError, ValueError) as exc:
            raise state.error("runtime", f"{type(exc).__name__}: {exc}", target) from None
