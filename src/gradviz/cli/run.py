"""`python -m gradviz run PROGRAM.py [--json] [--backward NAME] [--ones] [--no-sandbox]`.

Runs a program file (or `-` for stdin) with gradviz's interpreter and prints its
tensors, values and gradients: a table, or one JSON object (Trace.to_json()).
Exit codes: 0 success, 1 a program error (reported in the output), 2 usage.

The program runs in a sandbox worker with the app's limits (wall clock, CPU, memory, no
file writes; gradviz.services.programs), so a program from anywhere is as safe here as on the page.
`--no-sandbox` (or GRADVIZ_SANDBOX=off) runs it in this process, without those limits:
for trusted programs only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from gradviz.program.results.reports import RunError
from gradviz.program.results.trace import RunOptions, Trace
from gradviz.services.programs import run_isolated
from gradviz.util import settings
from gradviz.workers.pool import Pool, SandboxLimits
from gradviz.workers.process import enabled


class UsageError(Exception):
    """Something about the command line or the input file; exit code 2."""


def read_program(path: str) -> str:
    """The program text from a file or `-` (stdin). Raises UsageError with a plain message."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else None
            if data is None:  # a text-only stdin (tests, some embedders)
                return sys.stdin.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a program file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path}: not UTF-8 text (bad byte at offset {exc.start}); save the program as UTF-8"
        ) from None
    return text.removeprefix("\ufeff")


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def format_error(path: str, error: RunError) -> str:
    """`PROGRAM.py:LINE:COL: kind: message`, then the hint and the fix, if any."""
    where = display_name(path)
    if error.line:
        where += f":{error.line}"
        if error.col:
            where += f":{error.col}"
    lines = [f"{where}: {error.kind}: {error.message}"]
    if error.hint:
        lines.append(f"  hint: {error.hint}")
    if error.details.fix:
        lines.append(f"  fix: {error.details.fix}")
    return "\n".join(lines)


def json_safe(value):
    """Standard JSON has no NaN or Infinity: write them as the strings "nan", "inf", "-inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def format_table(trace: Trace) -> str:
    headers = ["name", "shape", "dtype", "device", "value", "grad"]
    rows = []
    for t in trace.tensors:
        shape = "(" + ", ".join(map(str, t.shape)) + ("," if len(t.shape) == 1 else "") + ")"
        grad = t.grad_preview if t.grad_preview is not None else "—"
        rows.append([t.label, shape, t.dtype, t.device, t.preview, grad])
    if not rows:
        return "(no tensors)"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    for r in rows:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(out)


def add_program_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", metavar="PROGRAM.py", help="program file, or - for stdin")
    parser.add_argument(
        "--backward", metavar="NAME", help="after the program, run backward on this tensor"
    )
    parser.add_argument(
        "--ones",
        action="store_true",
        help="for a non-scalar --backward output, use a gradient of ones",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run in this process without the worker's time and memory limits "
        "(trusted programs only)",
    )


def run_from_args(args: argparse.Namespace) -> Trace:
    """Read and run the program the arguments name. Raises UsageError."""
    source = read_program(args.program)
    # torchviz's classic DOT only when it is drawn (`render --view classic`)
    classic = getattr(args, "view", None) == "classic"
    options = RunOptions(backward=args.backward, backward_ones=args.ones, classic=classic)
    if args.no_sandbox or not enabled():
        # Imported here: the sandboxed path never imports torch in this process (the
        # worker does), which keeps `render` and `run` near a plain torch script's cost.
        from gradviz.program.interpreter.run import run_program

        return run_program(source, options)
    seconds = settings.number("GRADVIZ_RUN_SECONDS")
    with Pool(SandboxLimits(workers=1, run_seconds=seconds), one_shot=True) as pool:
        return run_isolated(source, options, pool=pool)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a program and print its tensors and gradients",
        description="Run a program with gradviz's interpreter and print its tensors, "
        "values and gradients. Exit codes: 0 success, 1 program error, 2 usage.",
    )
    add_program_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        trace = run_from_args(args)
    except UsageError as exc:
        print(f"gradviz run: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(json_safe(trace.to_json()), indent=2, default=str, allow_nan=False))
        return 1 if trace.error else 0
    for line in trace.stdout:
        print(line)
    for shown in trace.shown:  # a bare expression's value, as a notebook shows it
        print(shown.out())
    print(format_table(trace))
    for w in trace.warnings:
        print(f"{display_name(args.program)}:{w.line}: warning: {w.message}")
    for note in trace.summary:
        print(f"{display_name(args.program)}: summarised: {note}")
    if trace.backward:
        last = trace.backward[-1]
        print(f"backward: {last.target} ({', '.join(s.fn for s in last.steps)})")
    if trace.error:
        print(format_error(args.program, trace.error), file=sys.stderr)
        return 1
    return 0
