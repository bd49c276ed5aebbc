"""Write gradviz.program.syntax.vocabulary: the names a program may use, from the language's
own tables, for the Autograd page's "What can I write?" panel. The tables import torch and
the page never does, so the panel reads this written copy.

    python scripts/vocabulary.py          print the module
    python scripts/vocabulary.py --write  rewrite src/gradviz/program/syntax/vocabulary.py
    python scripts/vocabulary.py --check  exit 1 if the module and the tables disagree

tests/unit/program/test_vocabulary.py fails when they disagree.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "gradviz" / "program" / "syntax" / "vocabulary.py"

HEADER = '''"""The names a program may use, by group, as the Autograd page's "What can I write?" panel
lists them: written by scripts/vocabulary.py from the allow-lists and the built-ins (which
import torch; the page does not), and checked against them by tests/unit/program/test_vocabulary.py.
Do not edit by hand: add a name to its table and run `python scripts/vocabulary.py --write`."""

from __future__ import annotations

# group title -> the names, space-separated, in sorted order
GROUPS: dict[str, str] = {
'''


def collect() -> dict[str, list[str]]:
    """Each group's names, from the tables themselves."""
    from gradviz.program.allowlists import nntables, tables
    from gradviz.program.runtime import builtins
    from gradviz.program.runtime.arrays import tables as arrays
    from gradviz.program.runtime.values import AUTOGRAD_FUNCTIONAL, NAMESPACES

    groups = {
        "torch functions (`torch.…`)": tables.TORCH_FUNCTIONS,
        "`torch.nn.functional` (`F.…`)": tables.FUNCTIONAL,
        "`torch.linalg`": tables.LINALG,
        "dtypes (`torch.…`)": tables.DTYPES,
        "constants (`torch.…`)": tables.CONSTANTS,
        "tensor methods (`x.…()`)": tables.TENSOR_METHODS,
        "tensor attributes (`x.…`)": tables.TENSOR_ATTRIBUTES,
        "`torch.autograd`": NAMESPACES["torch"].members["autograd"].members,
        "`torch.autograd.functional`": AUTOGRAD_FUNCTIONAL,
        "`torch.nn.init`": tables.NN_INIT,
        "layers (`nn.…`)": nntables.LAYERS,
        "layer methods (`net.…()`)": nntables.MODULE_METHODS,
        "layer attributes (`net.…`)": nntables.MODULE_ATTRIBUTES,
        "optimizers (`optim.…`)": nntables.OPTIMIZERS,
        "schedulers (`optim.lr_scheduler.…`)": nntables.SCHEDULERS,
        "data (`torch.utils.data.…`)": nntables.DATA,
        "built-in functions": builtins.NAMES,
        "`math`": builtins.MATH.members,
        "`numpy` (`import numpy as np`, `np.…`)": [
            *arrays.FUNCTIONS,
            *arrays.DTYPE_NAMES,
            *arrays.CONSTANTS,
            "inf",
            "nan",
            "newaxis",
        ],
        "`np.random`": arrays.RANDOM,
        "`np.linalg`": arrays.LINALG,
        "array methods (`a.…()`)": arrays.METHODS,
        "array attributes (`a.…`)": arrays.ATTRIBUTES,
    }
    return {title: sorted(names) for title, names in groups.items() if names}


def source() -> str:
    lines = [HEADER]
    for title, names in collect().items():
        chunks = textwrap.wrap(" ".join(names), 76, break_on_hyphens=False)
        lines.append(f"    {title!r}: (\n")
        for i, chunk in enumerate(chunks):
            lines.append(f"        {chunk + (' ' if i < len(chunks) - 1 else '')!r}\n")
        lines.append("    ),\n")
    lines.append("}\n")
    return "".join(lines)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    if "--write" in argv:
        TARGET.write_text(source(), encoding="utf-8")
        return 0
    if "--check" in argv:
        from gradviz.program.syntax import vocabulary

        written = {title: names.split() for title, names in vocabulary.GROUPS.items()}
        if written != collect():
            print(
                f"{TARGET.relative_to(ROOT)} is stale: run `python scripts/vocabulary.py --write`"
            )
            return 1
        return 0
    print(source(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
