"""gradviz.program.syntax.vocabulary, the torch-free copy of the language's names that the
Autograd page lists, agrees with the tables it is written from (scripts/vocabulary.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gradviz.program.allowlists import nntables, tables
from gradviz.program.runtime import builtins
from gradviz.program.syntax import vocabulary

ROOT = Path(__file__).resolve().parents[3]


def _listed() -> set[str]:
    return {name for names in vocabulary.GROUPS.values() for name in names.split()}


def test_the_written_names_are_the_tables_names():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "vocabulary.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_table_name_is_listed():
    listed = _listed()
    for table in (
        tables.TORCH_FUNCTIONS,
        tables.FUNCTIONAL,
        tables.TENSOR_METHODS,
        nntables.LAYERS,
        nntables.OPTIMIZERS,
        nntables.DATA,
        builtins.NAMES,
    ):
        assert set(table) <= listed
