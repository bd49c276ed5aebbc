"""The program language: source text -> checked `ast.Module`, or one `ProgramError`.

User text is parsed with `ast.parse` and then walked against an allow-list of node
types and rules. It never reaches eval, exec or compile. Every refusal is a
`ProgramError` with a kind, a message, a 1-based line and column and, where it
helps, a hint ("did you mean ...?").

What is allowed (everything else is refused):
- statements: assignment (to names, tuples of names, `t[...]`, `t.grad`,
  `t.requires_grad`), augmented assignment, expression statements, `pass`, and
  `with torch.no_grad():` / `with torch.enable_grad():` blocks;
- expressions: numbers, short strings, True/False/None, lists and tuples,
  arithmetic (+ - * / // % ** @, unary - + ~ not), single comparisons,
  indexing and slicing, attribute access and calls. Which names, attributes and
  functions exist is decided by the interpreter's tables (gradviz.program.tables), which
  this module consults for early "did you mean" messages.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from gradviz.program.reports import ErrorDetails, RunError


@dataclass(frozen=True)
class Limits:
    """Resource caps. All are checked before the work they bound is done."""

    max_source_chars: int = 50_000
    max_lines: int = 1_000
    max_nesting: int = 30  # bracket depth
    max_expr_depth: int = 100  # depth of the syntax tree (a+b+c+... nests one level a term)
    max_ast_nodes: int = 30_000
    max_string_chars: int = 200
    max_literal_elements: int = 10_000
    max_int_bits: int = 4_096
    max_tensor_elements: int = 25_000_000
    max_tensor_bytes: int = 100_000_000
    max_total_bytes: int = 400_000_000
    max_total_elements: int = 500_000_000  # elements produced by all ops together
    max_flops_per_op: float = 5e9  # matrix work of one call (a layer's whole forward is one)
    max_total_flops: float = 2e10
    max_statements: int = 2_000
    max_model_parameters: int = 20_000_000  # one model: a layer with every layer inside it
    max_total_parameters: int = 50_000_000  # every layer a program makes, together


DEFAULT_LIMITS = Limits()
# A public host's programs: with the server, the forkserver and a warm worker (about 340 MB
# together, docs/BENCHMARKS.md) the whole app stays under Community Cloud's 690 MB.
PUBLIC_PROGRAM_LIMITS = Limits(
    max_tensor_bytes=100_000_000,
    max_total_bytes=200_000_000,
    max_flops_per_op=2e9,
    max_total_flops=1e10,
    max_model_parameters=2_000_000,
    max_total_parameters=5_000_000,
)


def tightest(a: Limits, b: Limits) -> Limits:
    """Each cap the smaller of the two."""
    return Limits(**{f.name: min(getattr(a, f.name), getattr(b, f.name)) for f in fields(Limits)})


@dataclass
class ProgramError(Exception):
    """A refusal or a runtime error in a user program, with where it happened."""

    kind: str  # syntax | forbidden | name | limit | type | runtime
    message: str
    line: int | None = None
    col: int | None = None
    hint: str | None = None
    details: ErrorDetails = field(default_factory=ErrorDetails)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        where = f"line {self.line}, col {self.col}: " if self.line else ""
        return f"{where}{self.message}"

    def report(self) -> RunError:
        """The error as a run's result carries it (Trace.error)."""
        return RunError(self.kind, self.message, self.line, self.col, self.hint, self.details)


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    if not close:
        return None
    return "Did you mean " + " or ".join(f"`{c}`" for c in close) + "?"


def char_col(source_lines: list[str], line: int | None, byte_offset: int | None) -> int | None:
    """ast gives UTF-8 byte offsets; users count characters. Returns a 1-based column."""
    if line is None or byte_offset is None:
        return None
    if 1 <= line <= len(source_lines):
        text = source_lines[line - 1].encode("utf-8")[:byte_offset]
        return len(text.decode("utf-8", errors="ignore")) + 1
    return byte_offset + 1


# Node types the interpreter understands. Anything else gets a tailored refusal.
ALLOWED_NODES: tuple[type, ...] = (
    ast.Module,
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.Pass,
    ast.With,
    ast.withitem,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.Call,
    ast.keyword,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    # operators
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.MatMult,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.Invert,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)

_ALLOWED_TYPES = frozenset(ALLOWED_NODES)
# Allowed nodes with no rule of their own (their children are checked): the fast path.
_NOTHING_TO_CHECK = frozenset(
    {ast.Load, ast.Store, ast.Module, ast.Expr, ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript}
    | {ast.Slice, ast.withitem, ast.Pass}
    | {t for t in ALLOWED_NODES if issubclass(t, ast.operator | ast.unaryop | ast.cmpop)}
)

# Plain words for constructs that are refused, by node type.
REFUSALS: dict[type, str] = {
    ast.Import: "imports are not allowed: `torch` and `F` (torch.nn.functional) are already available",
    ast.ImportFrom: "imports are not allowed: `torch` and `F` (torch.nn.functional) are already available",
    ast.FunctionDef: "defining functions (`def`) is not part of this language",
    ast.AsyncFunctionDef: "defining functions (`async def`) is not part of this language",
    ast.ClassDef: "defining classes is not part of this language",
    ast.Lambda: "`lambda` is not part of this language",
    ast.For: "loops (`for`) are not part of this language: write the steps out, or use tensor operations",
    ast.AsyncFor: "loops are not part of this language",
    ast.While: "loops (`while`) are not part of this language",
    ast.If: "`if` statements are not part of this language",
    ast.IfExp: "conditional expressions (`a if c else b`) are not part of this language; try torch.where",
    ast.Try: "`try` is not part of this language: errors are reported for you",
    ast.Raise: "`raise` is not part of this language",
    ast.Assert: "`assert` is not part of this language",
    ast.Delete: "`del` is not part of this language",
    ast.Global: "`global` is not part of this language",
    ast.Nonlocal: "`nonlocal` is not part of this language",
    ast.Return: "`return` is only meaningful in functions, which this language does not have",
    ast.Yield: "generators (`yield`) are not part of this language",
    ast.YieldFrom: "generators (`yield from`) are not part of this language",
    ast.Await: "`await` is not part of this language",
    ast.AsyncWith: "`async with` is not part of this language",
    ast.ListComp: "comprehensions are not part of this language: use tensor operations",
    ast.SetComp: "comprehensions are not part of this language",
    ast.DictComp: "comprehensions are not part of this language",
    ast.GeneratorExp: "generator expressions are not part of this language",
    ast.JoinedStr: "f-strings are not part of this language: print values directly, e.g. print(x, y)",
    ast.FormattedValue: "f-strings are not part of this language",
    ast.Dict: "dictionaries are not part of this language",
    ast.Set: "sets are not part of this language",
    ast.Starred: "star-arguments (`*args`) are not part of this language",
    ast.NamedExpr: "the walrus operator (`:=`) is not part of this language",
    ast.BoolOp: "`and` / `or` are not part of this language: for tensors use `&` and `|`... which are also not available; use torch.logical_and / torch.logical_or",
    ast.AnnAssign: "annotated assignments are not part of this language",
    ast.Break: "`break` is not part of this language",
    ast.Continue: "`continue` is not part of this language",
    ast.Match: "`match` is not part of this language",
    ast.BitAnd: "the `&` operator is not part of this language; use torch.logical_and",
    ast.BitOr: "the `|` operator is not part of this language; use torch.logical_or",
    ast.BitXor: "the `^` operator is not part of this language; use torch.logical_xor",
    ast.LShift: "shift operators are not part of this language",
    ast.RShift: "shift operators are not part of this language",
    ast.Is: "`is` is not part of this language; use ==",
    ast.IsNot: "`is not` is not part of this language; use !=",
    ast.In: "`in` is not part of this language",
    ast.NotIn: "`not in` is not part of this language",
}

CONTEXT_MANAGERS = ("no_grad", "enable_grad")


class Checker:
    """Walks a parsed program and refuses anything outside the language."""

    def __init__(self, source: str, limits: Limits, known_names: Iterable[str] = ()):
        self.lines = source.splitlines()
        self.limits = limits
        self.known_names = set(known_names)
        self.anchor: ast.AST | None = None  # nearest node with a position (operators have none)

    def error(self, kind: str, message: str, node: ast.AST | None, hint: str | None = None):
        if getattr(node, "lineno", None) is None:
            node = self.anchor
        line = getattr(node, "lineno", None)
        col = char_col(self.lines, line, getattr(node, "col_offset", None))
        return ProgramError(kind, message, line, col, hint)

    def check(self, tree: ast.Module) -> None:
        count = 0
        # Iterative walk with depth, so a deep tree cannot exhaust Python's stack here.
        stack: list[tuple[ast.AST, int, ast.AST | None, ast.AST | None]] = [(tree, 0, None, None)]
        while stack:
            node, depth, parent, anchor = stack.pop()
            if getattr(node, "lineno", None) is not None:
                anchor = node
            self.anchor = anchor
            count += 1
            if count > self.limits.max_ast_nodes:
                raise self.error(
                    "limit",
                    f"the program has more than {self.limits.max_ast_nodes:,} syntax elements; "
                    "that is the limit",
                    node,
                )
            if depth > self.limits.max_expr_depth:
                raise self.error(
                    "limit",
                    f"expressions are nested more than {self.limits.max_expr_depth} levels deep; "
                    "that is the limit: split it into several lines",
                    node,
                )
            self.check_node(node, parent)
            for child in ast.iter_child_nodes(node):
                stack.append((child, depth + 1, node, anchor))

    def check_node(self, node: ast.AST, parent: ast.AST | None) -> None:
        kind = type(node)
        if kind in _NOTHING_TO_CHECK:
            return
        if kind not in _ALLOWED_TYPES:
            reason = REFUSALS.get(
                type(node), f"`{type(node).__name__}` is not part of this language"
            )
            raise self.error("forbidden", reason[0].upper() + reason[1:], node)
        if isinstance(node, ast.Name):
            self.check_identifier(node.id, node, "name")
        elif isinstance(node, ast.Attribute):
            self.check_identifier(node.attr, node, "attribute")
        elif isinstance(node, ast.keyword):
            if node.arg is None:
                raise self.error(
                    "forbidden", "`**` keyword unpacking is not part of this language", node
                )
            self.check_identifier(node.arg, node, "keyword argument")
            if node.arg == "out":
                raise self.error(
                    "forbidden",
                    "the `out=` argument is not supported: assign the result instead (y = ...)",
                    node,
                )
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.List | ast.Tuple):
            if len(node.elts) > self.limits.max_literal_elements:
                raise self.error(
                    "limit",
                    f"a list literal has {len(node.elts):,} elements; the limit is "
                    f"{self.limits.max_literal_elements:,}: use torch.arange, torch.linspace or torch.rand",
                    node,
                )
        elif isinstance(node, ast.Compare):
            if len(node.ops) > 1:
                raise self.error(
                    "forbidden",
                    "chained comparisons (a < b < c) are not supported: compare two values at a time",
                    node,
                )
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.check_target(target)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name | ast.Subscript):
                raise self.error(
                    "forbidden", "augmented assignment works on names and t[...] only", node
                )
            self.check_target(node.target)
        elif isinstance(node, ast.With):
            self.check_with(node)

    def check_identifier(self, name: str, node: ast.AST, what: str) -> None:
        if name.startswith("_"):
            raise self.error(
                "forbidden",
                f"the {what} `{name}` starts with an underscore: names beginning with `_` "
                "(private and 'dunder' names) are not allowed",
                node,
            )

    def check_constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str):
            if len(value) > self.limits.max_string_chars:
                raise self.error(
                    "limit",
                    f"a string of {len(value):,} characters; the limit is "
                    f"{self.limits.max_string_chars}",
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

    def check_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.known_names:
                raise self.error(
                    "forbidden",
                    f"`{target.id}` is a built-in name of this language and cannot be reassigned; "
                    "pick another name",
                    target,
                )
            return
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                if not isinstance(elt, ast.Name):
                    raise self.error(
                        "forbidden", "unpacking works into plain names only: a, b = ...", elt
                    )
                self.check_target(elt)
            return
        if isinstance(target, ast.Subscript):
            if not isinstance(target.value, ast.Name):
                raise self.error(
                    "forbidden", "item assignment works on a named tensor only: t[0] = 1", target
                )
            return
        if isinstance(target, ast.Attribute):
            if not isinstance(target.value, ast.Name) or target.attr not in (
                "grad",
                "requires_grad",
            ):
                raise self.error(
                    "forbidden",
                    "only `t.grad = ...` and `t.requires_grad = ...` can be assigned to",
                    target,
                )
            return
        raise self.error("forbidden", "this kind of assignment target is not supported", target)

    def check_with(self, node: ast.With) -> None:
        for item in node.items:
            expr = item.context_expr
            ok = (
                isinstance(expr, ast.Call)
                and not expr.args
                and not expr.keywords
                and isinstance(expr.func, ast.Attribute)
                and isinstance(expr.func.value, ast.Name)
                and expr.func.value.id == "torch"
                and expr.func.attr in CONTEXT_MANAGERS
            )
            if not ok:
                raise self.error(
                    "forbidden",
                    "`with` works with torch.no_grad() and torch.enable_grad() only",
                    expr,
                )
            if item.optional_vars is not None:
                raise self.error(
                    "forbidden", "`with ... as name` is not supported here", item.optional_vars
                )


def _bracket_depth_check(source: str, limits: Limits) -> None:
    """Refuse deep bracket nesting before the parser sees it (the parser recurses)."""
    depth = 0
    line, col = 1, 0
    quote: str | None = None
    for i, ch in enumerate(source):
        if ch == "\n":
            line, col, quote = line + 1, 0, None
            continue
        col += 1
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
                    col,
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
            hint = "Lines at the top level start in the first column; only lines inside `with` are indented."
        elif text.rstrip().endswith(":") and "with" not in text:
            hint = "Only `with torch.no_grad():` blocks end with a colon in this language."
        raise ProgramError("syntax", f"syntax error: {msg}", line, col, hint) from None
    except (RecursionError, MemoryError):
        raise ProgramError(
            "limit", "the program is nested too deeply to read; split it into several lines", 1, 1
        ) from None
    except ValueError as exc:  # e.g. source the tokenizer rejects
        raise ProgramError("syntax", f"cannot read the program: {exc}", 1, 1) from None
    Checker(source, limits, known_names).check(tree)
    return tree


def source_segment(lines: list[str], node: ast.AST, max_len: int = 60) -> str:
    """The text of a node (first line only), shortened for labels."""
    line = getattr(node, "lineno", None)
    if not line or line > len(lines):
        return ""
    text = lines[line - 1]
    raw = text.encode("utf-8")
    start = getattr(node, "col_offset", 0) or 0
    end_line = getattr(node, "end_lineno", line)
    end = getattr(node, "end_col_offset", None) if end_line == line else None
    seg = (
        raw[start:end].decode("utf-8", errors="replace")
        if end
        else raw[start:].decode("utf-8", errors="replace")
    )
    seg = seg.strip()
    return seg if len(seg) <= max_len else seg[: max_len - 1] + "…"
