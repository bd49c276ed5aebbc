"""`pip install .` installs the library without the app: the built wheel requires torch,
torchviz, setuptools, and pypdf and Pillow (the command line's walk-through PDF and GIF)
only; streamlit, graphviz (the Python package) and torchvision are
the `app` extra. Community Cloud reads requirements.txt, which pins the app's set."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.deploy]


def test_the_wheel_needs_no_streamlit_and_the_app_extra_brings_it(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            ".",
            "-w",
            str(tmp_path),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    wheel = next(tmp_path.glob("gradviz-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    requires = [
        line.split(": ", 1)[1] for line in meta.splitlines() if line.startswith("Requires-Dist: ")
    ]
    plain = sorted(r.split(">=")[0] for r in requires if "extra ==" not in r)
    app = sorted(r.split(">=")[0] for r in requires if 'extra == "app"' in r)
    assert plain == ["pillow", "pypdf", "setuptools", "torch", "torchviz"]
    assert app == ["graphviz", "streamlit", "torchvision"]
    assert "gradviz/library/figure.py" in names and "gradviz/graph/collapse.py" in names
