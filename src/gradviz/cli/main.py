"""`gradviz ...` and `python -m gradviz ...`: the command line. Each subcommand lives in a
module of gradviz.cli that provides `register(subparsers)`; the parser it adds sets `func`.
`console` is the entry point of both (the installed `gradviz` script and `__main__`).

Exit codes: 0 success, 1 a program/run error reported in the output, 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from gradviz.util import settings
from gradviz.workers.process import enabled, start_forkserver, stop_forkserver
from gradviz.workers.table import CLI_PRELOAD

SANDBOXED = ("run", "render")  # the commands whose program runs in a worker
COMMAND_MODULES = [
    "gradviz.cli.run",
    "gradviz.cli.render",
    "gradviz.cli.speed",
    "gradviz.cli.train",
]


def command_modules(argv: list[str]) -> list[str]:
    """The modules to import: only the named command's when argv names one (so `render`
    does not import what `train` and `speed` need: torch, numpy), else all (for help)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    named = [m for m in COMMAND_MODULES if m.rsplit(".", 1)[1] == first]
    if named and argv[0] == first:
        return named
    return COMMAND_MODULES


def program_name() -> str:
    """What the user typed: `gradviz` for the installed script, `python -m gradviz` else."""
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "gradviz" if script in ("gradviz", "gradviz.exe") else "python -m gradviz"


def build_parser(modules: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name(),
        description="See what PyTorch's autograd and devices are doing.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules or COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def start_worker_early(argv: list[str]) -> None:
    """`run` and `render` run the program in a sandbox worker (gradviz.cli.run): start its
    forkserver (a Python that imports torch) before this process imports the command's
    modules and reads the file, so the two overlap. Not for --no-sandbox or help."""
    if not argv or argv[0] not in SANDBOXED or not enabled():
        return
    if any(a in ("--no-sandbox", "-h", "--help") for a in argv):
        return
    start_forkserver(CLI_PRELOAD)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    wrong = settings.problems()
    if wrong:
        print("\n".join(f"error: {w}" for w in wrong), file=sys.stderr)
        return 2
    start_worker_early(argv)
    parser = build_parser(command_modules(argv) if argv else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


def console() -> None:
    """The `gradviz` script's entry point (pyproject's [project.scripts]) and `python -m
    gradviz`'s: run the command, stop the worker forkserver run/render started, exit with
    the command's status."""
    status = main()
    stop_forkserver()  # run/render's worker forkserver, if this command started one
    sys.exit(status)
