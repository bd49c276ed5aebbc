"""Draw gradviz's package dependencies from the code, for docs/ARCHITECTURE.md.

    python scripts/architecture.py          print the generated block
    python scripts/architecture.py --write  rewrite it in docs/ARCHITECTURE.md
    python scripts/architecture.py --cycles list import circles between modules (exit 1 if any)

The block is a Mermaid graph of which package imports which (counting imports inside
functions), read with grimp, import-linter's own import graph; tests/unit/test_architecture.py
fails when the document and the code disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
BEGIN, END = "<!-- generated: scripts/architecture.py -->", "<!-- end generated -->"


def import_graph():
    import grimp

    sys.path.insert(0, str(ROOT / "src"))
    return grimp.build_graph("gradviz")


def cycles() -> tuple[int, list[str]]:
    """How many gradviz modules there are, and every import circle among them ("a -> b -> a"),
    counting imports inside functions."""
    graph = import_graph()
    state: dict[str, int] = {}
    found: list[str] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph.find_modules_directly_imported_by(m)):
            if state.get(n) == 1:
                found.append(" -> ".join(path[path.index(n) :] + [n]))
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph.modules):
        if m not in state:
            visit(m, [m])
    return len(graph.modules), found


def package_edges() -> list[tuple[str, str]]:
    graph = import_graph()
    edges = set()
    for module in graph.modules:
        src = module.split(".")[1] if module.count(".") >= 1 else None
        for target in graph.find_modules_directly_imported_by(module):
            dst = target.split(".")[1] if target.count(".") >= 1 else None
            if src and dst and src != dst and not src.startswith("__"):
                edges.add((src, dst))
    return sorted(edges)


def block() -> str:
    lines = [BEGIN, "```mermaid", "graph TD"]
    lines += [f"    {a} --> {b}" for a, b in package_edges()]
    lines += ["```", END]
    return "\n".join(lines)


def current() -> str:
    text = DOC.read_text()
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def main(argv: list[str]) -> int:
    if "--cycles" in argv:
        modules, found = cycles()
        print(f"{modules} modules in gradviz, {len(found)} import circles")
        print("\n".join(found))
        return 1 if found else 0
    new = block()
    if "--write" in argv:
        text = DOC.read_text()
        DOC.write_text(text.replace(current(), new))
    else:
        print(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
