"""`python -m gradviz ...`: the command line. Each subcommand lives in a module of
gradviz.commands that provides `register(subparsers)`; the parser it adds sets `func`.

Exit codes: 0 success, 1 a program/run error reported in the output, 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = [
    "gradviz.cli.run",
    "gradviz.cli.render",
    "gradviz.cli.speed",
    "gradviz.cli.train",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gradviz",
        description="See what PyTorch's autograd and devices are doing.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)
