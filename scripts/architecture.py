"""Generate the parts of gradviz's documents that the code can say: docs/ARCHITECTURE.md's
import diagram, its table of packages and its list of modules, and README.md's Layout and its
table of settings (every GRADVIZ_* variable, from gradviz.util.settings.SETTINGS).

    python scripts/architecture.py          print every generated block
    python scripts/architecture.py --write  rewrite them in docs/ARCHITECTURE.md and README.md
    python scripts/architecture.py --check  exit 1 (naming the blocks) if a document is stale
    python scripts/architecture.py --cycles list import circles between modules (exit 1 if any)

Each block sits between a pair of marker comments (`<!-- NAME:start -->`, `<!-- NAME:end -->`)
and is made from the tree as it is: every package under src/gradviz, every module with the
first sentence of its docstring, the layers of pyproject.toml's import contract, and what
imports what (the diagram read with grimp, import-linter's own import graph; the tables read
with `ast`; both count imports inside functions). tests/unit/project/test_architecture_docs.py fails
when a document and the code disagree.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gradviz"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
README = ROOT / "README.md"
PYPROJECT = ROOT / "pyproject.toml"
BEGIN, END = "<!-- generated: scripts/architecture.py -->", "<!-- end generated -->"
WIDTH = 100  # README's code block
LONGEST = 200  # characters of a summary


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
    """The import diagram, between its own markers."""
    lines = [BEGIN, "```mermaid", "graph TD"]
    lines += [f"    {a} --> {b}" for a, b in package_edges()]
    lines += ["```", END]
    return "\n".join(lines)


def current() -> str:
    text = DOC.read_text()
    return text[text.index(BEGIN) : text.index(END) + len(END)]


# --- modules and their docstrings, read with ast ---------------------------------------


@dataclass(frozen=True)
class Module:
    name: str  # "gradviz.graph.render"
    path: Path
    doc: str | None  # the whole docstring
    imports: frozenset[str]  # gradviz modules or packages it imports, anywhere in the file

    @property
    def package(self) -> str:
        """The top package it belongs to ("graph" for gradviz.graph.render); "" for gradviz/ itself."""
        parts = self.name.split(".")
        is_package = self.path.name == "__init__.py"
        return parts[1] if len(parts) > 2 or (is_package and len(parts) == 2) else ""


def _module_name(path: Path, src: Path) -> str:
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imports(tree: ast.Module) -> frozenset[str]:
    """gradviz names a module imports, at the top or inside functions (not under
    `if TYPE_CHECKING:`, which import-linter leaves out too)."""
    out: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if _type_checking(node):
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "gradviz")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gradviz":
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(out)


def modules(src: Path = SRC) -> list[Module]:
    """Every module under `src` (the gradviz package), in name order."""
    out = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        out.append(Module(_module_name(path, src), path, ast.get_docstring(tree), _imports(tree)))
    return sorted(out, key=lambda m: m.name)


def summary(doc: str | None, limit: int = LONGEST) -> str:
    """A docstring's first sentence (of its first paragraph), on one line, cut after a
    whole word with "…" past `limit` characters."""
    if not doc:
        return ""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    end = re.search(r"(?<!\be\.g)(?<!\bi\.e)\.(?=\s|$)", para)
    text = para[: end.end()] if end else para
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0].rstrip(",;:(") + " …"


def undocumented(src: Path = SRC) -> list[str]:
    return [m.name for m in modules(src) if not summary(m.doc)]


def layers(pyproject: Path = PYPROJECT) -> list[list[str]]:
    """The layers contract of pyproject.toml, top first: each a list of package names."""
    config = tomllib.loads(pyproject.read_text())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract.get("type") == "layers":
            return [
                [p.strip().removeprefix("gradviz.") for p in layer.split("|")]
                for layer in contract["layers"]
            ]
    return []


def _package_of(imported: str, names: set[str]) -> str:
    """The gradviz package an imported name belongs to ("" for gradviz itself)."""
    parts = imported.split(".")
    return parts[1] if len(parts) > 1 and f"gradviz.{parts[1]}" in names else ""


def package_imports(mods: list[Module]) -> dict[str, set[str]]:
    """Each package's gradviz packages imported by any of its modules (itself left out)."""
    names = {m.name for m in mods}
    out: dict[str, set[str]] = {m.package: set() for m in mods if m.package}
    for m in mods:
        if m.package:
            out[m.package] |= {_package_of(i, names) for i in m.imports} - {"", m.package}
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def packages_block(src: Path = SRC, pyproject: Path = PYPROJECT) -> str:
    """The table of packages: its layer (top first), what it holds, which packages it imports."""
    mods = modules(src)
    docs = {m.package: m.doc for m in mods if m.package and m.name == f"gradviz.{m.package}"}
    imports = package_imports(mods)
    rows = ["| layer | package | what it holds | imports |", "|---|---|---|---|"]
    placed: list[str] = []
    for number, layer in enumerate(layers(pyproject), 1):
        for package in layer:
            placed.append(package)
            used = ", ".join(f"`{p}`" for p in sorted(imports.get(package, ()))) or "none"
            rows.append(
                f"| {number} | `{package}` | {_cell(summary(docs.get(package)))} | {used} |"
            )
    for package in sorted(set(imports) - set(placed)):
        used = ", ".join(f"`{p}`" for p in sorted(imports[package])) or "none"
        rows.append(f"| none | `{package}` | {_cell(summary(docs.get(package)))} | {used} |")
    return "\n".join(rows)


def modules_block(src: Path = SRC) -> str:
    """Every module, package by package: its first docstring sentence, and the modules of
    its own package it imports."""
    mods = modules(src)
    names = {m.name for m in mods}
    out: list[str] = []
    for package in sorted({m.package for m in mods}):
        members = [m for m in mods if m.package == package and m.name != f"gradviz.{package}"]
        if not package:
            members = [m for m in mods if not m.package]
        title = f"`gradviz/{package}/`" if package else "`gradviz/` itself"
        out += [f"### {title}", "", "| module | what it holds | imports from its package |"]
        out.append("|---|---|---|")
        for m in members:
            inside = f"gradviz.{package}."
            own = sorted(
                i.removeprefix(inside)
                for i in m.imports
                if package and i in names and i.startswith(inside) and i != m.name
            )
            shown = ", ".join(f"`{i}`" for i in own) or ""
            file = m.path.relative_to(src).as_posix()
            out.append(f"| `{file}` | {_cell(summary(m.doc))} | {shown} |")
        out.append("")
    return "\n".join(out).rstrip()


def layout_block(src: Path = SRC) -> str:
    """README's layout of src/gradviz: each package, what it holds and its modules."""
    mods = modules(src)
    pad = " " * 23
    lines = ["```", "src/gradviz/".ljust(23) + "one folder per part; imports point down"]
    lines[-1] += " (docs/ARCHITECTURE.md)"
    for package in sorted({m.package for m in mods} - {""}):
        doc = next(m.doc for m in mods if m.name == f"gradviz.{package}")
        names = [
            m.name.removeprefix(f"gradviz.{package}.")
            + ("/" if m.path.name == "__init__.py" else "")
            for m in mods
            if m.package == package and m.name != f"gradviz.{package}"
        ]
        text = textwrap.wrap(summary(doc), WIDTH - 23)
        text += textwrap.wrap("modules: " + ", ".join(names), WIDTH - 23)
        lines.append(f"  {package}/".ljust(23) + text[0])
        lines += [pad + t for t in text[1:]]
    lines.append("```")
    return "\n".join(lines)


def settings_block(src: Path = SRC) -> str:
    """README's table of settings: util/settings.py's own table() (loaded from this tree, by
    path: it imports nothing but the standard library)."""
    path = src / "util" / "settings.py"
    spec = importlib.util.spec_from_file_location("gradviz_settings_for_docs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
        return module.table()
    finally:
        del sys.modules[spec.name]


# --- the documents' marked blocks --------------------------------------------------------

BLOCKS = {  # name: (document, generator)
    "packages": (DOC, packages_block),
    "modules": (DOC, modules_block),
    "layout": (README, layout_block),
    "settings": (README, settings_block),
}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def marked(text: str, name: str) -> str:
    """What a document holds between a block's markers (ValueError when they are missing)."""
    start, end = markers(name)
    i, j = text.index(start) + len(start), text.index(end)
    return text[i:j].strip("\n")


def replaced(text: str, name: str, body: str) -> str:
    start, end = markers(name)
    i, j = text.index(start) + len(start), text.index(end)
    return text[:i] + "\n" + body + "\n" + text[j:]


def stale() -> list[str]:
    """The blocks whose document differs from what the code generates now."""
    out = [] if current() == block() else ["diagram (docs/ARCHITECTURE.md)"]
    for name, (doc, make) in BLOCKS.items():
        try:
            if marked(doc.read_text(), name) != make():
                out.append(f"{name} ({doc.relative_to(ROOT)})")
        except ValueError:
            out.append(f"{name} ({doc.relative_to(ROOT)}: no {markers(name)[0]} marker pair)")
    return out


def write() -> None:
    DOC.write_text(DOC.read_text().replace(current(), block()))
    for name, (doc, make) in BLOCKS.items():
        doc.write_text(replaced(doc.read_text(), name, make()))


def main(argv: list[str]) -> int:
    if "--cycles" in argv:
        count, found = cycles()
        print(f"{count} modules in gradviz, {len(found)} import circles")
        print("\n".join(found))
        return 1 if found else 0
    missing = undocumented()
    if missing:
        print("modules without a docstring:", ", ".join(missing), file=sys.stderr)
        return 1
    if "--check" in argv:
        out = stale()
        if out:
            print("out of date: " + ", ".join(out), file=sys.stderr)
            print("run `python scripts/architecture.py --write`", file=sys.stderr)
            return 1
        return 0
    if "--write" in argv:
        write()
        return 0
    print(block())
    for name, (_doc, make) in BLOCKS.items():
        start, end = markers(name)
        print(f"\n{start}\n{make()}\n{end}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
