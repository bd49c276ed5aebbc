"""`global` and `nonlocal` as Python's compiler holds them, before a program runs.

A function's declarations (`declared`) name the variables it binds outside itself: `global`
ones in the program's own scope, `nonlocal` ones in the nearest function around it that
binds them. `check_declarations` refuses, in Python's words and at the declaration, what
CPython's compiler refuses: `nonlocal` at the top level or with no binding around it, a
name declared both ways or also a parameter, a name used or assigned before its
declaration; `names` (the checker's rule for a name a statement binds) refuses private
names and the language's own (`global __builtins__`, `global torch`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from gradviz.program.syntax.grammar import child_nodes, statements

# What a nested scope's insides are (their names are theirs, not the function's).
_SCOPES = (ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp)
_SCOPES += (ast.GeneratorExp,)


def own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a body that are its own: not inside the functions, lambdas, classes
    and comprehensions it holds (those are yielded, their insides are not)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(reversed(child_nodes(node)))


def declared(body: list[ast.stmt]) -> dict[str, str]:
    """The names a function body declares, each "global" or "nonlocal"."""
    out: dict[str, str] = {}
    for node in statements(ast.Module(body=body, type_ignores=[]), _SCOPES):
        if isinstance(node, ast.Global | ast.Nonlocal):
            how = "global" if isinstance(node, ast.Global) else "nonlocal"
            out.update(dict.fromkeys(node.names, how))
    return out


def _parameters(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    return {p.arg for p in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg] if p}


def _bound(nodes: list[ast.AST]) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
    return found


Error = Callable[[str, str, ast.AST], Exception]


def check_declarations(
    tree: ast.Module, error: Error, names: Callable[[str, ast.AST], None]
) -> None:
    """Refuse what CPython's compiler refuses of `global` and `nonlocal` (see the module)."""
    todo: list[tuple[list[ast.stmt], ast.FunctionDef | None, tuple[frozenset[str], ...]]]
    todo = [(tree.body, None, ())]
    while todo:
        body, fn, around = todo.pop()
        nodes = list(own_nodes(body))
        params = _parameters(fn) if fn is not None else set()
        ways: dict[str, str] = {}
        first: dict[str, ast.Name] | None = None  # each name's first use, once asked
        for node in nodes:
            if isinstance(node, ast.Global | ast.Nonlocal):
                how = "global" if isinstance(node, ast.Global) else "nonlocal"
                first = _first_uses(nodes) if first is None else first
                for name in node.names:
                    names(name, node)
                    _check_one(name, how, node, fn, around, params, ways, first, error)
                    ways[name] = how
        mine = frozenset((_bound(nodes) | params) - {n for n, w in ways.items() if w == "global"})
        inner = around if fn is None else (*around, mine)
        for node in nodes:
            if isinstance(node, ast.FunctionDef):
                todo.append((node.body, node, inner))
            elif isinstance(node, ast.ClassDef):  # methods: the functions around the class
                todo.extend((m.body, m, inner) for m in node.body if isinstance(m, ast.FunctionDef))


def _first_uses(nodes: list[ast.AST]) -> dict[str, ast.Name]:
    """Each name's first use (read, assignment or `del`) in a body's own nodes."""
    first: dict[str, ast.Name] = {}
    for node in nodes:
        if isinstance(node, ast.Name):
            seen = first.get(node.id)
            if seen is None or (node.lineno, node.col_offset) < (seen.lineno, seen.col_offset):
                first[node.id] = node
    return first


def _check_one(name, how, node, fn, around, params, ways, first, error) -> None:
    if how == "nonlocal" and fn is None:
        raise error("syntax", "nonlocal declaration not allowed at module level", node)
    if ways.get(name, how) != how:
        raise error("syntax", f"name '{name}' is nonlocal and global", node)
    if name in params:
        raise error("syntax", f"name '{name}' is parameter and {how}", node)
    if how == "nonlocal" and not any(name in scope for scope in around):
        raise error("syntax", f"no binding for nonlocal '{name}' found", node)
    other = first.get(name)
    if other is not None and (other.lineno, other.col_offset) < (node.lineno, node.col_offset):
        done = "used prior to" if isinstance(other.ctx, ast.Load) else "assigned to before"
        raise error("syntax", f"name '{name}' is {done} {how} declaration", node)
