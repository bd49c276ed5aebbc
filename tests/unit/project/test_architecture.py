"""The package's shape, held by tests as well as by import-linter (pyproject.toml): one home
per name (nothing imported from a module that only imports it), no private names across
modules, no module __getattr__, no class over about 300 lines, no module over 600 lines, no
folder over 15 modules."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src" / "gradviz"
CHECKED = [SRC, ROOT / "tests", ROOT / "bench", ROOT / "app.py"]
MAX_CLASS_LINES = 300
MAX_MODULE_LINES = 600
MAX_FOLDER_MODULES = 15  # besides the folder's __init__


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _defined(tree: ast.Module) -> set[str]:
    """Names a module defines itself (not the ones it imports)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.add(n.id)
    return out


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    return {
        _module_name(p): (p, ast.parse(p.read_text(), str(p))) for p in sorted(SRC.rglob("*.py"))
    }


def _files() -> list[Path]:
    out = []
    for where in CHECKED:
        out.extend([where] if where.is_file() else sorted(where.rglob("*.py")))
    return out


def test_every_name_is_imported_from_its_home():
    modules = _modules()
    packages = {m for m, (p, _) in modules.items() if p.name == "__init__.py"}
    wrong = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                "gradviz"
            ):
                continue
            home = modules.get(node.module)
            if home is None:
                wrong.append(f"{path}:{node.lineno}: no module {node.module}")
                continue
            defined = _defined(home[1])
            for alias in node.names:
                name = alias.name
                if node.module in packages and f"{node.module}.{name}" in modules:
                    continue  # a submodule
                if name not in defined:
                    wrong.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: {name} from {node.module}"
                    )
                elif name.startswith("_") and not name.startswith("__"):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: private {name}")
    assert not wrong, "\n".join(wrong)


def test_no_module_getattr_and_no_giant_class():
    problems = []
    for name, (_path, tree) in _modules().items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__"):
                problems.append(f"{name}: module {node.name}")
            if isinstance(node, ast.ClassDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    problems.append(f"{name}.{node.name}: {lines} lines")
    assert not problems, "\n".join(problems)


def test_no_module_over_600_lines_and_no_folder_over_15_modules():
    """A module longer than a few screens, or a folder a newcomer cannot take in at a glance,
    is cut where its concepts cut (a subfolder per stage, a module per concept)."""
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in sorted(SRC.rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    crowded = [
        f"{d.relative_to(ROOT)}: {n} modules"
        for d in sorted({p.parent for p in SRC.rglob("*.py")})
        if (n := len([p for p in d.glob("*.py") if p.name != "__init__.py"])) > MAX_FOLDER_MODULES
    ]
    assert not long and not crowded, "\n".join(long + crowded)


def test_import_contracts_hold():
    """lint-imports: the layers, the server side without torch, no circles (pyproject.toml)."""
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed (requirements-dev.txt)")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_torch_import_on_the_server_side_breaks_the_contract(tmp_path):
    """The same lint-imports run on a copy of the package with `import torch` added to a
    module the server loads (util/format.py) fails, naming the chain from a server module."""
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed (requirements-dev.txt)")
    shutil.copytree(SRC, tmp_path / "src" / "gradviz", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    broken = tmp_path / "src" / "gradviz" / "util" / "format.py"
    broken.write_text("import torch  # noqa: F401\n" + broken.read_text())
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "src"))
    out = subprocess.run(
        [str(exe)], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode != 0
    assert "BROKEN" in out.stdout and "gradviz.util.format -> torch" in out.stdout


def test_no_import_circles():
    """No module reaches itself through imports, counting imports inside functions
    (`python scripts/architecture.py --cycles`)."""
    pytest.importorskip("grimp")
    sys.path.insert(0, str(ROOT / "scripts"))
    import architecture

    modules, found = architecture.cycles()
    assert modules > 50  # the whole package was read
    assert not found, "\n".join(found)


def test_architecture_document_matches_the_code():
    pytest.importorskip("grimp")
    sys.path.insert(0, str(ROOT / "scripts"))
    import architecture

    assert architecture.current() == architecture.block(), (
        "docs/ARCHITECTURE.md is out of date: run `python scripts/architecture.py --write`"
    )


MAX_FUNCTION_LINES = 80


def test_no_function_over_about_eighty_lines():
    long = []
    for path, tree in _modules().values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}, {lines} lines"
                    )
    assert not long, "split these functions along their steps:\n" + "\n".join(long)


def test_unit_tests_mirror_the_source_folders():
    """tests/unit/<package>/ holds the unit tests of src/gradviz/<package>/ (and project/
    the tests of the repository's own rules): none at the top, none in a folder that names
    no package, and every package has its folder."""
    unit = ROOT / "tests" / "unit"
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    loose = sorted(p.name for p in unit.glob("*.py"))
    assert not loose, f"tests/unit/ holds {loose}: put each in the folder of its package"
    folders = {p.name for p in unit.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - packages <= {"project"}, folders - packages
    without = sorted(p for p in packages if not list((unit / p).glob("test_*.py")))
    assert not without, f"packages without unit tests: {without}"
