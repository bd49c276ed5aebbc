"""The program language's checker: source text -> checked `ast.Module`, or one `ProgramError`.

User text is parsed with `ast.parse` and then walked against an allow-list of node
types and rules. It never reaches eval, exec or compile. Every refusal is a
`ProgramError` with a kind, a message, a 1-based line and column and, where it
helps, a hint ("did you mean ...?").

What is allowed (everything else is refused):
- statements: assignment (to names, nested tuples of names with at most one starred,
  `first, *rest = items`, `t[...]`, `items[i]`, `table[key]`, `t.grad`, `t.requires_grad`),
  augmented assignment, `del` (of names the program bound, `items[i]`, `table[key]`; not of
  attributes nor of the language's own names), expression statements,
  `pass`, `with torch.no_grad():` / `enable_grad()` / `inference_mode()` blocks (also by
  the names `from torch import no_grad [as name]` binds), `if/elif/else`,
  `for` and `while` (with `break`, `continue` and `else`), `assert`, `raise` of Python's
  exceptions (`RAISABLE`; a bare `raise` inside an `except` block re-raises), `try` with
  `except` (bare, `except ValueError:`, `except (TypeError, KeyError) as e:`, exceptions
  of `RAISABLE` only), `else` and `finally` (`except*` is refused; the run's caps and the
  language's refusals are never caught), `def` (positional, keyword and default arguments,
  `*args` and `**kwargs`, the same grad modes as decorators; no other decorators)
  and `return`, `global` and `nonlocal` in them (held to CPython's compiler rules,
  gradviz.program.syntax.scope_rules), `yield` and `yield from` in them as a statement or
  an assignment's value (generators, gradviz.program.syntax.generator_rules), `del`, and
  the imports tutorials write (`IMPORTABLE`: torch, torch.nn, torch.nn.functional,
  torch.optim, math, ..., and `from <one of them> import name [as other]`, the name found
  in its module's table when the import runs; `from torch.nn import Module` makes `Module`
  a base as nn.Module is);
- expressions: numbers, short strings, f-strings (and `str.format`, read field by field when
  it runs, gradviz.program.runtime.strings: no attribute in a field), True/False/None, lists, tuples and
  dicts (with `*items` and `**table` unpacked in them, and in calls: `f(*xs, **options)`,
  each key checked when the call runs as a written keyword is here),
  comprehensions and generator expressions, `lambda`, arithmetic
  (+ - * / // % ** @, unary - + ~ not), comparisons (chained, `in`, `is`), `and`/`or`,
  conditional expressions, indexing and slicing, attribute access and calls. Which names,
  attributes and functions exist is decided by the interpreter's tables
  (gradviz.program.allowlists.tables);
- names: a name with one leading underscore is the program's own (`_init_weights`,
  `self._cache`); PyTorch's and Python's internals under such names
  (gradviz.program.syntax.grammar.INTERNAL_UNDERSCORE, any `_name` read from the library:
  `torch._C`), names beginning with `__` (but the dunder methods a class may define) and
  `_` keywords and imported names are refused.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from gradviz.program.results.limits import DEFAULT_LIMITS, Limits
from gradviz.program.syntax.block_rules import BlockRules
from gradviz.program.syntax.class_rules import ClassRules
from gradviz.program.syntax.generator_rules import YIELDS, check_generators
from gradviz.program.syntax.grammar import (
    ALLOWED_TYPES,
    INTERNAL_ATTRIBUTES,
    LIBRARY_ROOTS,
    NOTHING_TO_CHECK,
    REFUSALS,
    SAVED_VIEWS,
    child_nodes,
    dotted,
    grad_manager_names,
    statements,
)
from gradviz.program.syntax.program_error import ProgramError, char_col
from gradviz.program.syntax.scope_rules import check_declarations


@dataclass(frozen=True)
class _Where:
    """Where a node sits: inside a function (may `return`), inside a loop (may `break`) and
    inside an `except` block (a bare `raise` re-raises what it handles)."""

    function: bool = False
    loop: bool = False
    handler: bool = False


class Checker(BlockRules, ClassRules):
    """Walks a parsed program and refuses anything outside the language."""

    def __init__(self, source: str, limits: Limits, known_names: Iterable[str] = ()):
        self.lines = source.splitlines()
        self.limits = limits
        self.known_names = set(known_names)
        self.anchor: ast.AST | None = None  # nearest node with a position (operators have none)
        self.top_classes, self.methods, self.supers = set(), set(), set()
        self.self_targets: set[int] = set()
        self.stars: set[int] = set()  # `*x` where it may stand: a call's, a display's item
        self.grad_names: set[str] = set()

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        if getattr(node, "lineno", None) is None:
            node = self.anchor
        line = getattr(node, "lineno", None)
        col = char_col(self.lines, line, getattr(node, "col_offset", None))
        return ProgramError(kind, message, line, col, hint)

    def check(self, tree: ast.Module) -> None:
        found = statements(tree)
        imports = [s for s in found if isinstance(s, ast.Import | ast.ImportFrom)]
        self.find_classes(tree, imports)
        self.grad_names = grad_manager_names(imports)
        # check_declarations refuses only at a `global` or `nonlocal`: none, nothing to do
        if any(isinstance(s, ast.Global | ast.Nonlocal) for s in found):
            check_declarations(tree, self.error, lambda name, n: self.check_new_name(name, n))
        count = 0
        max_nodes, max_depth = self.limits.max_ast_nodes, self.limits.max_expr_depth
        check_node = self.check_node
        yields = False  # any `yield`: only then has check_generators anything to refuse
        # Iterative walk with depth, so a deep tree cannot exhaust Python's stack here.
        stack: list[tuple[ast.AST, int, ast.AST | None, _Where]] = [(tree, 0, None, _Where())]
        pop, push = stack.pop, stack.append
        while stack:
            node, depth, anchor, where = pop()
            if getattr(node, "lineno", None) is not None:
                anchor = node
            self.anchor = anchor
            count += 1
            if count > max_nodes:
                raise self.error(
                    "limit",
                    f"the program has more than {max_nodes:,} syntax elements; that is the limit",
                    node,
                )
            if depth > max_depth:
                raise self.error(
                    "limit",
                    f"expressions are nested more than {max_depth} levels deep; "
                    "that is the limit: split it into several lines",
                    node,
                )
            check_node(node, where)
            yields = yields or type(node) in YIELDS
            depth += 1
            kids = child_nodes(node)
            if not kids:
                continue
            if isinstance(node, ast.FunctionDef | ast.Lambda | ast.For | ast.While):
                for child, inner in _children(node, where, kids):
                    push((child, depth, anchor, inner))
            elif isinstance(node, ast.ExceptHandler):
                inner = _Where(where.function, where.loop, handler=True)
                for child in kids:
                    push((child, depth, anchor, inner))
            else:
                for child in kids:
                    push((child, depth, anchor, where))
        if yields:
            check_generators(tree, self.error)

    def check_node(self, node: ast.AST, where: _Where) -> None:
        kind = type(node)
        if kind in NOTHING_TO_CHECK:
            return
        if kind not in ALLOWED_TYPES:
            reason = REFUSALS.get(
                type(node), f"`{type(node).__name__}` is not part of this language"
            )
            raise self.error("forbidden", reason[0].upper() + reason[1:], node)
        if isinstance(node, ast.Name):
            if node.id == "super":
                self.check_super(node)
            self.check_identifier(node.id, node, "name")
        elif isinstance(node, ast.Attribute):
            if id(node) not in self.supers:
                if isinstance(node.value, ast.Call) and dotted(node.value.func) == "super":
                    self.check_super(node.value.func)  # super(Odd, args).__init__()
                self.check_attribute(node)
        elif isinstance(node, ast.Call):
            self.stars.update(id(a) for a in node.args if isinstance(a, ast.Starred))
        elif isinstance(node, ast.Starred):
            if id(node) not in self.stars:
                raise self.error(
                    "forbidden",
                    "`*` unpacking works in calls, in list, tuple and set displays and in "
                    "assignment targets (`first, *rest = items`) only",
                    node,
                )
        elif isinstance(node, ast.keyword):
            self.check_keyword(node)
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.List | ast.Tuple | ast.Dict | ast.Set):
            self.check_display(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.check_target(target)
        elif isinstance(node, ast.AugAssign):
            target = node.target
            if isinstance(target, ast.Attribute) and (
                target.attr == "data" or isinstance(target.value, ast.Name)
            ):
                return  # W.data += -lr * W.grad: in place on the tensor's data; acc.n += 1 on
                # a program's own object (the interpreter decides; the attribute is checked
                # as an expression)
            if not isinstance(target, ast.Name | ast.Subscript):
                raise self.error(
                    "forbidden",
                    "augmented assignment works on names, t[...] and t.data only",
                    node,
                )
            self.check_target(target)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self.check_delete(target)
        elif isinstance(node, ast.With):
            self.check_with(node)
        elif isinstance(node, ast.Raise):
            self.check_raise(node, where.handler)
        elif isinstance(node, ast.ExceptHandler):
            self.check_handler(node)
        elif isinstance(node, ast.FunctionDef | ast.Lambda):
            self.check_function(node, id(node) in self.methods)
        elif isinstance(node, ast.ClassDef):
            self.check_class(node)
        elif isinstance(node, ast.AnnAssign):
            self.check_field(node)
        elif isinstance(node, ast.For | ast.comprehension):
            if getattr(node, "is_async", 0):
                raise self.error("forbidden", "`async for` is not part of this language", node)
            self.check_loop_target(node.target)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            self.check_import(node)
        else:
            self.check_placement(node, where)

    def check_placement(self, node: ast.AST, where: _Where) -> None:
        """`return` inside a function, `break` and `continue` inside a loop."""
        if isinstance(node, ast.Return) and not where.function:
            raise self.error("syntax", "`return` outside a function", node)
        if isinstance(node, ast.Break | ast.Continue) and not where.loop:
            word = "break" if isinstance(node, ast.Break) else "continue"
            raise self.error("syntax", f"`{word}` outside a loop", node)

    def check_attribute(self, node: ast.Attribute) -> None:
        if node.attr in SAVED_VIEWS and isinstance(node.ctx, ast.Load):
            return  # y.grad_fn._saved_self: read only, and only a grad_fn answers it
        self.check_identifier(node.attr, node, "attribute")
        root = dotted(node.value)
        if node.attr.startswith("_") and root and root.split(".")[0] in LIBRARY_ROOTS:
            raise self.error(
                "forbidden",
                f"`{root}.{node.attr}` is one of the library's internals: a name starting "
                "with an underscore is the program's own, never the library's",
                node,
            )
        if node.attr in INTERNAL_ATTRIBUTES:
            raise self.error(
                "forbidden",
                f"`.{node.attr}` reaches into Python's own machinery (generator frames, code, "
                "globals) and is not part of this language",
                node,
            )

    def check_keyword(self, node: ast.keyword) -> None:
        if node.arg is None:  # f(**options): each key is checked when the call runs
            return
        self.check_identifier(node.arg, node, "keyword argument")
        if node.arg == "out":
            raise self.error(
                "forbidden",
                "the `out=` argument is not supported: assign the result instead (y = ...)",
                node,
            )

    def check_display(self, node: ast.List | ast.Tuple | ast.Dict | ast.Set) -> None:
        items = node.keys if isinstance(node, ast.Dict) else node.elts
        if len(items) > self.limits.max_literal_elements:
            what = "dict" if isinstance(node, ast.Dict) else "list"
            raise self.error(
                "limit",
                f"a {what} literal has {len(items):,} elements; the limit is "
                f"{self.limits.max_literal_elements:,}: use torch.arange, torch.linspace or torch.rand",
                node,
            )
        if not isinstance(node, ast.Dict):
            self.stars.update(id(e) for e in node.elts if isinstance(e, ast.Starred))

    def check_constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str):
            # The source is capped as a whole (max_source_chars); a literal (a docstring, a
            # tutorial's text) is held to what any string a program makes may be.
            if len(value) > self.limits.max_string_length:
                raise self.error(
                    "limit",
                    f"a string of {len(value):,} characters; a string may have at most "
                    f"{self.limits.max_string_length:,}",
                    node,
                )
        elif isinstance(value, bytes):
            raise self.error("forbidden", "bytes literals are not part of this language", node)
        elif isinstance(value, complex):
            raise self.error("forbidden", "complex literals are not part of this language", node)
        elif isinstance(value, int) and not isinstance(value, bool):
            if value.bit_length() > self.limits.max_int_bits:
                raise self.error(
                    "limit",
                    f"an integer of {value.bit_length():,} bits; the limit is "
                    f"{self.limits.max_int_bits:,} bits",
                    node,
                )


def _children(
    node: ast.AST, where: _Where, kids: list[ast.AST]
) -> Iterable[tuple[ast.AST, _Where]]:
    """The children (`kids`) of a function or a loop (the checker's walk gives every other
    node's children its own `where`), each with where it sits: a function's body may
    `return` (and leaves the loops around it), a loop's body may `break`."""
    if isinstance(node, ast.FunctionDef | ast.Lambda):
        inner = _Where(function=True)
        return [(c, inner) for c in kids]
    loop = _Where(function=where.function, loop=True, handler=where.handler)
    body = {id(s) for s in node.body}
    return [(c, loop if id(c) in body else where) for c in kids]


_BRACKET_EVENTS = re.compile(r"""[\n'"#()\[\]{}]""")  # the characters the check acts on


def _bracket_depth_check(source: str, limits: Limits) -> None:
    """Refuse deep bracket nesting before the parser sees it (the parser recurses). Only
    the characters in _BRACKET_EVENTS change what it knows (each other one only moves the
    column on, as its distance from the line's start says), so only they are visited."""
    depth = 0
    line, line_start = 1, -1  # line_start: where the line's newline is (-1: none before)
    quote: str | None = None
    for match in _BRACKET_EVENTS.finditer(source):
        i = match.start()
        ch = source[i]
        if ch == "\n":
            line, line_start, quote = line + 1, i, None
            continue
        if quote:
            if ch == quote and source[i - 1] != "\\":
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "#":
            quote = "\n"
        elif ch in "([{":
            depth += 1
            if depth > limits.max_nesting:
                raise ProgramError(
                    "limit",
                    f"brackets are nested more than {limits.max_nesting} levels deep; "
                    "that is the limit: split the expression into several lines",
                    line,
                    i - line_start,
                )
        elif ch in ")]}":
            depth = max(0, depth - 1)


def parse(
    source: object, limits: Limits = DEFAULT_LIMITS, known_names: Iterable[str] = ()
) -> ast.Module:
    """Parse and check a program. Raises ProgramError; never anything else."""
    if not isinstance(source, str):
        raise ProgramError("type", f"a program must be text, not {type(source).__name__}")
    if len(source) > limits.max_source_chars:
        raise ProgramError(
            "limit",
            f"the program has {len(source):,} characters; the limit is {limits.max_source_chars:,}",
            1,
            1,
        )
    if "\x00" in source:
        before = source[: source.index("\x00")]
        line = before.count("\n") + 1
        raise ProgramError(
            "syntax",
            "the program contains a NUL character (binary data?); paste plain text",
            line,
            len(before) - (before.rfind("\n") + 1) + 1,
        )
    n_lines = source.count("\n") + 1
    if n_lines > limits.max_lines:
        raise ProgramError(
            "limit", f"the program has {n_lines:,} lines; the limit is {limits.max_lines:,}", 1, 1
        )
    if not source.strip():
        raise ProgramError(
            "syntax", "the program is empty: type a few lines, or pick a preset", 1, 1
        )
    _bracket_depth_check(source, limits)
    lines = source.splitlines()
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if "integer string conversion" in msg:  # Python's own cap on digits in a literal
            raise ProgramError(
                "limit",
                f"an integer literal is too long (over 4,300 digits); the limit is "
                f"{limits.max_int_bits:,} bits",
                exc.lineno,
                exc.offset,
            ) from None
        line = exc.lineno
        col = exc.offset
        text = lines[line - 1] if line and 1 <= line <= len(lines) else ""
        hint = None
        if "indent" in msg.lower():
            hint = (
                "Lines at the top level start in the first column; the lines of a block "
                "(after `def`, `if`, `for`, `while` or `with` and a colon) are indented "
                "by the same amount."
            )
        elif text.rstrip().endswith(":"):
            hint = "A line ending with `:` opens a block: indent the lines that follow it."
        raise ProgramError("syntax", f"syntax error: {msg}", line, col, hint) from None
    except (RecursionError, MemoryError):
        raise ProgramError(
            "limit", "the program is nested too deeply to read; split it into several lines", 1, 1
        ) from None
    except ValueError as exc:  # e.g. source the tokenizer rejects
        raise ProgramError("syntax", f"cannot read the program: {exc}", 1, 1) from None
    Checker(source, limits, known_names).check(tree)
    return tree
