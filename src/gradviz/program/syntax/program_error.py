"""`ProgramError`: a refusal or a runtime error in a program, with its line and column;
"did you mean" suggestions, and columns and source snippets counted in characters."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from gradviz.program.results.reports import ErrorDetails, RunError


@dataclass
class ProgramError(Exception):
    """A refusal or a runtime error in a user program, with where it happened."""

    kind: str  # syntax | forbidden | name | limit | type | runtime
    message: str
    line: int | None = None
    col: int | None = None
    hint: str | None = None
    details: ErrorDetails = field(default_factory=ErrorDetails)
    # str() and repr() of the exception a program raised itself (`raise ValueError(5)`:
    # "5", "ValueError(5)"), what `except ... as e` shows where its message would not say it
    raised: tuple[str, str] | None = None

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


def source_segment(lines: list[str], node: ast.AST, max_len: int = 60) -> str:
    """The text of a node (first line only), shortened for labels."""
    line = getattr(node, "lineno", None)
    if not line or line > len(lines):
        return ""
    text = lines[line - 1]
    start = getattr(node, "col_offset", 0) or 0
    end_line = getattr(node, "end_lineno", line)
    end = getattr(node, "end_col_offset", None) if end_line == line else None
    if text.isascii():  # the offsets count UTF-8 bytes: here one a character
        seg = text[start:end] if end else text[start:]
    else:
        raw = text.encode("utf-8")
        seg = (
            raw[start:end].decode("utf-8", errors="replace")
            if end
            else raw[start:].decode("utf-8", errors="replace")
        )
    seg = seg.strip()
    return seg if len(seg) <= max_len else seg[: max_len - 1] + "…"
