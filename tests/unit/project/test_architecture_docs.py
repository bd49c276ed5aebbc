"""The generated parts of docs/ARCHITECTURE.md and README.md (scripts/architecture.py) match
the code: every module listed with its docstring's first sentence, every package with its
layer and the packages it imports."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))

import architecture  # noqa: E402


def test_every_module_has_a_docstring():
    assert not architecture.undocumented(), architecture.undocumented()


@pytest.mark.parametrize("name", sorted(architecture.BLOCKS))
def test_generated_block_matches_the_code(name):
    doc, make = architecture.BLOCKS[name]
    assert architecture.marked(doc.read_text(), name) == make(), (
        f"{doc.relative_to(ROOT)}'s {name} block is out of date: "
        "run `python scripts/architecture.py --write`"
    )


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "gradviz"
    shutil.copytree(architecture.SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def test_a_new_module_makes_the_documents_stale(tree):
    (tree / "graph" / "newpart.py").write_text('"""A part nobody documented yet. More."""\n')
    text = architecture.DOC.read_text()
    block = architecture.modules_block(tree)
    assert block != architecture.marked(text, "modules")
    assert "| `graph/newpart.py` | A part nobody documented yet. |" in block
    assert "newpart" in architecture.layout_block(tree)


def test_a_changed_docstring_makes_its_line_stale(tree):
    path = tree / "util" / "format.py"
    path.write_text(path.read_text().replace('"""Numbers for people', '"""Sizes for people', 1))
    assert "| `util/format.py` | Sizes for people" in architecture.modules_block(tree)
    assert architecture.modules_block(tree) != architecture.modules_block()


def test_a_module_without_a_docstring_is_named(tree):
    (tree / "util" / "bare.py").write_text("X = 1\n")
    assert architecture.undocumented(tree) == ["gradviz.util.bare"]


def test_imports_inside_functions_count_and_type_checking_ones_do_not(tree):
    (tree / "util" / "late.py").write_text(
        '"""Imports late."""\n'
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from gradviz.ui import common\n"
        "def f():\n"
        "    from gradviz.graph.model import GraphModel\n"
        "    import gradviz.util.format\n"
        "    return GraphModel, gradviz.util.format\n"
    )
    imports = architecture.package_imports(architecture.modules(tree))
    assert "graph" in imports["util"] and "ui" not in imports["util"]
    assert "| `util/late.py` | Imports late. | `format` |" in architecture.modules_block(tree)


def test_summary_is_the_first_sentence_on_one_line():
    assert architecture.summary("One thing, e.g. this one.\nMore. Other.\n\nNext.") == (
        "One thing, e.g. this one."
    )
    assert architecture.summary("No full stop\nat all") == "No full stop at all"
    long = architecture.summary("word " * 100)
    assert long.endswith(" …") and len(long) <= architecture.LONGEST + 2


def test_layers_come_from_pyproject():
    layers = architecture.layers()
    assert layers[0] == ["ui", "cli"] and layers[-1] == ["util"]
    rows = architecture.packages_block().splitlines()[2:]
    assert len(rows) == len({m.package for m in architecture.modules()} - {""})


def test_the_table_and_the_diagram_agree_on_who_imports_whom():
    """The table's imports (read with ast) are the diagram's edges (read with grimp)."""
    pytest.importorskip("grimp")
    table = architecture.package_imports(architecture.modules())
    edges = {(a, b) for a, deps in table.items() for b in deps}
    assert edges == set(architecture.package_edges())
