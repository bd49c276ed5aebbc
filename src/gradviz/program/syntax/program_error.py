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
    """At most three names a typo probably meant: the same name in other case (`Print`,
    `W`), else the names one or two edits away (a letter added, dropped, changed or two
    swapped: `Ture`), else difflib's close matches."""
    close = close_names(name, candidates)
    if not close:
        return None
    return "Did you mean " + " or ".join(f"`{c}`" for c in close) + "?"


def close_names(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    names = sorted(set(candidates) - {name})
    same_case = [c for c in names if c.lower() == name.lower()]
    if same_case:
        return same_case[:limit]
    # one letter of two changed is another name, not a typo: short names match by case only
    most = 0 if len(name) <= 2 else 1 if len(name) <= 4 else 2
    lowered = name.lower()
    near = sorted(
        (d, c)
        for c in (names if most else ())
        if abs(len(c) - len(name)) <= most and (d := edit_distance(lowered, c.lower())) <= most
    )
    if near:
        best = near[0][0]
        return [c for d, c in near if d == best][:limit]
    return difflib.get_close_matches(name, names, n=limit, cutoff=0.6)


def edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): insertions, deletions,
    substitutions and swaps of two neighbouring letters, each counting one."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[len(b)]


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
