"""The caps on the language's own work (Limits in gradviz.program.syntax.checker), checked before
the step they bound runs.

gradviz.program.budgets.precheck bounds tensors (sizes, values, FLOPs); `Quotas` bounds what the
interpreter itself does with a program's plain values and control flow, so that no loop,
recursion, list or string can hold the worker past its limits:

- interpreted steps (`step`: every statement, expression, call and loop pass);
- loop passes, all loops and comprehensions together (`loop_pass`; `planned` refuses a loop
  over a known length, e.g. `range(10**9)`, before its first pass);
- call depth of a program's own functions (`enter_call`, `leave_call`);
- items of one list, tuple or dict and in all (`items`), characters of one string and in all
  (`chars`), checked before the container or string is made;
- wall time (`clock`, at each statement, call and loop pass).

Each refusal is a "limit" error at the node, naming the cap, how far the program got and
the limit.

The interpreter's hottest paths (gradviz.program.interpreter: each expression and statement)
count a step inline, as `step` does (`steps` up by one, refused by `too_many_steps` past
`max_steps`), and read the clock against `deadline` themselves, refused by `clock`.
"""

from __future__ import annotations

from time import perf_counter

from gradviz.program.recording.state import RunState


class Quotas:
    """What one run has used of the language's own caps."""

    def __init__(self, state: RunState):
        self.state = state
        self.limits = state.limits
        self.steps = 0
        self.passes = 0
        self.depth = 0
        self.total_items = 0
        self.total_chars = 0
        self.max_steps = self.limits.max_steps
        self.max_passes = self.limits.max_loop_iterations
        self.max_items = self.limits.max_container_length
        self.max_total_items = self.limits.max_total_items
        self.deadline = perf_counter() + self.limits.max_seconds

    def step(self, node) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise self.too_many_steps(node)

    def too_many_steps(self, node):
        """The error for the step past the cap (`steps` already counts it)."""
        return self.state.error(
            "limit",
            f"this program ran more than {self.limits.max_steps:,} steps (statements, "
            "expressions, calls and loop passes); that is the limit of steps per run",
            node,
        )

    def clock(self, node) -> None:
        if perf_counter() > self.deadline:
            raise self.state.error(
                "limit",
                f"this program ran for more than {self.limits.max_seconds:g} seconds by this "
                f"line; that is the limit of wall time per run",
                node,
            )

    def loop_pass(self, node) -> None:
        self.passes += 1
        if self.passes > self.max_passes:
            raise self.too_many_passes(node)
        self.steps += 1
        if self.steps > self.max_steps:
            raise self.too_many_steps(node)
        if perf_counter() > self.deadline:
            self.clock(node)

    def too_many_passes(self, node):
        """The error for the loop pass past the cap (`passes` already counts it)."""
        return self.state.error(
            "limit",
            f"loops ran {self.passes:,} passes in all by this line; the limit is "
            f"{self.limits.max_loop_iterations:,} loop iterations per run",
            node,
        )

    def planned(self, length: int, node, what: str) -> None:
        """A loop over something of known length (`what`: "this loop over `range(n)`",
        "sum()"): refuse it before its first pass if it cannot finish within the loop
        iterations left."""
        left = self.limits.max_loop_iterations - self.passes
        if length > left:
            before = f" (after the {self.passes:,} passes already run)" if self.passes else ""
            raise self.state.error(
                "limit",
                f"{what} would run {length:,} loop passes{before}; the limit is "
                f"{self.limits.max_loop_iterations:,} loop iterations per run",
                node,
            )

    def enter_call(self, name: str, node) -> None:
        self.depth += 1
        if self.depth > self.limits.max_call_depth:
            self.depth -= 1
            raise self.state.error(
                "limit",
                f"calls of `{name}` are nested {self.depth + 1} deep; the limit is "
                f"{self.limits.max_call_depth} (call depth): does the recursion stop?",
                node,
            )
        self.steps += 1  # step and clock, inline: every call and generator resumption
        if self.steps > self.max_steps:
            raise self.too_many_steps(node)
        if perf_counter() > self.deadline:
            self.clock(node)

    def leave_call(self) -> None:
        self.depth -= 1

    def items(self, length: int, node, what: str = "list", made: int | None = None) -> None:
        """A list, tuple or dict of `length` items is about to be made (or grown to it),
        adding `made` items (all of them unless said)."""
        if length > self.max_items:
            raise self.state.error(
                "limit",
                f"this would make a {what} of {length:,} items; the limit is "
                f"{self.limits.max_container_length:,} items per list, tuple, dict or set",
                node,
            )
        self.total_items += length if made is None else made
        if self.total_items > self.max_total_items:
            raise self.state.error(
                "limit",
                f"this program would make more than {self.limits.max_total_items:,} list, "
                "tuple and dict items in all by this line; that is the limit",
                node,
            )

    def chars(self, length: int, node) -> None:
        """A string of `length` characters is about to be made."""
        if length > self.limits.max_string_length:
            raise self.state.error(
                "limit",
                f"this would make a string of {length:,} characters; the limit is "
                f"{self.limits.max_string_length:,} characters per string",
                node,
            )
        self.total_chars += length
        if self.total_chars > self.limits.max_total_string_chars:
            raise self.state.error(
                "limit",
                f"this program would make more than {self.limits.max_total_string_chars:,} "
                "characters of strings in all by this line; that is the limit",
                node,
            )
