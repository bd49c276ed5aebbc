"""Runs only the training page (app.py also imports pages other engineers are writing)."""

import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parents[2] / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from gradviz.ui.training import page  # noqa: E402

page.page()
