"""Write the table of GPU figures (gradviz.speed.gpus) into docs/gpus.md.

    python scripts/gpu_table.py          print the generated block
    python scripts/gpu_table.py --write  rewrite it in docs/gpus.md

tests/unit/speed/test_gpus.py fails when the document and the table disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "gpus.md"
sys.path.insert(0, str(ROOT / "src"))

from gradviz.speed import gpus_doc  # noqa: E402


def current() -> str:
    """The generated block as docs/gpus.md has it now ("" when it has none)."""
    text = DOC.read_text() if DOC.exists() else ""
    if gpus_doc.DOC_BEGIN not in text or gpus_doc.DOC_END not in text:
        return ""
    start = text.index(gpus_doc.DOC_BEGIN)
    return text[start : text.index(gpus_doc.DOC_END, start) + len(gpus_doc.DOC_END)]


def write() -> None:
    text = DOC.read_text()
    old = current()
    if not old:
        raise SystemExit(f"{DOC} has no {gpus_doc.DOC_BEGIN} ... {gpus_doc.DOC_END} block")
    DOC.write_text(text.replace(old, gpus_doc.markdown()))


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        write()
    elif argv:
        print(__doc__, file=sys.stderr)
        return 2
    else:
        print(gpus_doc.markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
