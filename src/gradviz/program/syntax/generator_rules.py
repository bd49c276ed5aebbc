"""Where `yield` and `yield from` may stand, before a program runs.

A function whose own body (not the functions, lambdas, classes and comprehensions inside
it) holds a `yield` is a generator function (`is_generator`): calling it makes a generator
the interpreter runs lazily (gradviz.program.runtime.generators). The interpreter suspends
a generator's body only at a whole statement, so `check_generators` holds a `yield` to
two places: a statement of its own (`yield x`, `yield from items`) and the whole value of
an assignment (`v = yield x`, whose value is None: nothing is ever sent in), inside `if`,
`for`, `while` and a `try` with no `finally` (the body and its `else`; not an `except`
block) as deep as they nest. Refused, at the `yield`: one at the top level or in a class
body (Python's "'yield' outside function"), in a comprehension or generator expression
(as Python refuses it), in a lambda, inside another expression, inside a `with` block, a
`finally` or an `except` block, and in a class's `__...__` method other than `__iter__`
(Python would fail when it runs: `__init__() should return None, not 'generator'`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from gradviz.program.syntax.scope_rules import own_nodes

YIELDS = (ast.Yield, ast.YieldFrom)
_COMPREHENSIONS = {
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
}

Error = Callable[[str, str, ast.AST], Exception]


def is_generator(node: ast.AST) -> bool:
    """Whether a `def`'s own body holds a `yield` (a lambda never does: refused)."""
    if not isinstance(node, ast.FunctionDef):
        return False
    return any(isinstance(n, YIELDS) for n in own_nodes(node.body))


def has_yield(stmt: ast.stmt) -> bool:
    """Whether a statement of a generator's body holds one of its `yield`s."""
    return any(isinstance(n, YIELDS) for n in own_nodes([stmt]))


def word(node: ast.AST) -> str:
    return "yield from" if isinstance(node, ast.YieldFrom) else "yield"


def check_generators(tree: ast.Module, error: Error) -> None:
    """Refuse each `yield` outside the places the module docstring names."""
    placed: set[int] = set()  # the yields that stand where the interpreter can suspend
    stack: list[tuple[ast.AST, str | None]] = [(tree, "outside")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, YIELDS):
            if where == "function" and id(node) in placed:
                pass
            elif where == "function":
                raise error(
                    "forbidden",
                    f"`{word(node)}` works as a statement of its own (`yield x`, `yield from "
                    "items`) or as the whole value of an assignment (`v = yield x`), not "
                    "inside another expression",
                    node,
                )
            else:
                raise error(*_misplaced(node, where or "outside"), node)
        inner = where
        if isinstance(node, ast.FunctionDef):
            name = node.name
            if where == "class" and name.startswith("__") and name != "__iter__":
                inner = f"method {name}"
            else:
                inner = "function"
                placed.update(_placed(node.body))
        elif isinstance(node, ast.Lambda):
            inner = "lambda"
        elif isinstance(node, ast.ClassDef):
            inner = "class"
        elif type(node) in _COMPREHENSIONS:
            inner = _COMPREHENSIONS[type(node)]
        elif isinstance(node, ast.With) and where == "function":
            inner = "with"
        elif isinstance(node, ast.Try) and where == "function":
            guarded = "finally" if node.finalbody else where
            parts = [(p, guarded) for p in node.body]
            parts += [(p, "except") for p in node.handlers]
            parts += [(p, guarded) for p in node.orelse]
            parts += [(p, "finally") for p in node.finalbody]
            stack.extend(reversed(parts))  # the first in the source is refused first
            continue
        stack.extend((child, inner) for child in reversed(list(ast.iter_child_nodes(node))))


def _placed(body: list[ast.stmt]) -> set[int]:
    """The yields of a function's body at a place the interpreter suspends at."""
    out: set[int] = set()
    stack = list(body)
    while stack:
        stmt = stack.pop()
        value = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
        if isinstance(value, YIELDS):
            out.add(id(value))
        elif isinstance(stmt, ast.If | ast.For | ast.While | ast.Try):
            stack.extend([*stmt.body, *stmt.orelse])
    return out


def _misplaced(node: ast.AST, where: str) -> tuple[str, str]:
    what = word(node)
    if where in ("outside", "class"):
        return "syntax", f"'{what}' outside function"
    if where == "lambda":
        return "forbidden", f"`{what}` inside a lambda is not part of this language: use a `def`"
    if where == "with":
        return (
            "forbidden",
            f"`{what}` inside a `with` block is not part of this language: yield after the block",
        )
    if where == "finally":
        return (
            "forbidden",
            f"`{what}` inside a `try` that has a `finally` is not part of this language",
        )
    if where == "except":
        return "forbidden", f"`{what}` inside an `except` block is not part of this language"
    if where.startswith("method "):
        return (
            "forbidden",
            f"`{where.removeprefix('method ')}` cannot be a generator (`{what}`): only `__iter__` and plain "
            "methods and functions can",
        )
    return "syntax", f"'{what}' inside {where}"
