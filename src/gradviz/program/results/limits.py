"""The caps a program runs under (`Limits`), the defaults and a public host's tighter set.
All are checked before the work they bound is done: tensor sizes and FLOPs by
gradviz.program.budgets.precheck, the language's own work by gradviz.program.budgets.language_caps."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """Resource caps. All are checked before the work they bound is done."""

    max_source_chars: int = 50_000
    max_lines: int = 1_000
    max_nesting: int = 30  # bracket depth
    max_expr_depth: int = 100  # depth of the syntax tree (a+b+c+... nests one level a term)
    max_ast_nodes: int = 30_000
    max_literal_elements: int = 10_000
    max_int_bits: int = 4_096
    max_tensor_elements: int = 25_000_000
    max_tensor_bytes: int = 100_000_000
    max_total_bytes: int = 400_000_000
    max_total_elements: int = 500_000_000  # elements produced by all ops together
    max_flops_per_op: float = 5e9  # matrix work of one call (a layer's whole forward is one)
    max_total_flops: float = 2e10
    max_model_parameters: int = 20_000_000  # one model: a layer with every layer inside it
    max_total_parameters: int = 50_000_000  # every layer a program makes, together
    max_statements: int = 500_000  # statements run (a loop's body counts at every pass)
    # The language's own work (gradviz.program.budgets.language_caps), each checked before the step runs:
    max_steps: int = 2_000_000  # interpreted steps: statements, expressions, calls, iterations
    max_loop_iterations: int = 200_000  # passes of every loop and comprehension together
    max_call_depth: int = 50  # calls of a program's own functions inside one another
    max_container_length: int = 100_000  # items in one list, tuple or dict
    max_total_items: int = 5_000_000  # list, tuple and dict items made in all
    max_string_length: int = 100_000  # characters in one string a program makes
    max_total_string_chars: int = 50_000_000  # characters of all strings made in all
    max_seconds: float = 15.0  # wall time of the run (the worker's own limit is 20 s)
    # backward calls a result keeps one by one (the first and the last ones; program.calls)
    backward_calls_kept: int = 6


# What a run's output may hold: printed lines and the values its bare top-level expressions
# show (results.reports.ShownValue) together, each cut short past its characters, and the
# shown values' characters in all.
MAX_OUTPUT_LINES = 500
MAX_OUTPUT_LINE_CHARS = 5_000
MAX_SHOWN_CHARS = 100_000

DEFAULT_LIMITS = Limits()
# A public host's programs: with the server, the forkserver and a warm worker (about 340 MB
# together, docs/BENCHMARKS.md) the whole app stays under Community Cloud's 690 MB; the
# language's own work is bounded lower too, so one visitor's loop leaves the worker soon.
PUBLIC_PROGRAM_LIMITS = Limits(
    max_tensor_bytes=100_000_000,
    max_total_bytes=200_000_000,
    max_flops_per_op=2e9,
    max_total_flops=1e10,
    max_model_parameters=2_000_000,
    max_total_parameters=5_000_000,
    max_statements=100_000,
    max_steps=500_000,
    max_loop_iterations=50_000,
    max_call_depth=30,
    max_container_length=10_000,
    max_total_items=1_000_000,
    max_string_length=10_000,
    max_total_string_chars=10_000_000,
    max_seconds=10.0,
    backward_calls_kept=4,
)


def tightest(a: Limits, b: Limits) -> Limits:
    """Each cap the smaller of the two."""
    return Limits(**{f.name: min(getattr(a, f.name), getattr(b, f.name)) for f in fields(Limits)})
