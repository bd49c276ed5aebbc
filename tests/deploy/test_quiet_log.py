"""What the app prints while its pages open: no warnings from our code or pinned packages.

Python hides DeprecationWarning outside __main__, so these runs show every warning
(PYTHONWARNINGS=default) and fail on any Deprecation, Future, User or Runtime warning: what
a host that shows warnings would write into the app's log. Known source silenced: torchviz
0.0.3's distutils LooseVersion (gradviz.graph.render filters that one message).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WARNING = re.compile(r"\b(Deprecation|PendingDeprecation|Future|User|Runtime)Warning\b")


def shown_warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if WARNING.search(line)]


@pytest.mark.slow
def test_every_page_opens_without_warnings():
    env = {**os.environ, "PYTHONWARNINGS": "default", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "tests/deploy/open_every_page.py", "app.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert shown_warnings(done.stderr) == [], done.stderr[-3000:]


def test_torchviz_distutils_warning_is_silenced_at_its_source():
    """The classic view's make_dot, with that one DeprecationWarning turned into an error."""
    code = (
        "import torch, gradviz.graph.classic as c\n"
        "from torchviz import make_dot\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "print(len(make_dot((x * 2).sum()).source) > 0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-W", "error:distutils Version classes:DeprecationWarning", "-c", code],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-2000:]
