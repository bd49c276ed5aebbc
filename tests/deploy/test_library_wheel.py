"""The distribution `gradviz-autograd` (`gradviz` on PyPI is another project; the import
package stays `gradviz`). `pip install .` installs the library without the app: the built
wheel requires torch, torchviz, setuptools, and pypdf and Pillow (the command line's
walk-through PDF and GIF) only; streamlit, graphviz (the Python package) and torchvision are
the `app` extra. Community Cloud reads requirements.txt, which pins the app's set. The
installed `gradviz` script works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.deploy]


DISTRIBUTION = "gradviz-autograd"  # `gradviz` on PyPI is another project
# The file a Streamlit server sends for the code editor's script URL, in an installed gradviz
SERVED = """
from pathlib import Path
from streamlit.components.v2.component_manager import BidiComponentManager
from gradviz.ui.autograd import code_editor as editor
manager = BidiComponentManager()
editor.declare_assets(manager)
found = manager.build_definition_with_validation(
    component_key=editor.NAME, html=None, css=None, js=editor.SCRIPT
)
print(Path(manager.get_component_path(editor.NAME), found.js_url))
"""


def build_wheel(out: Path) -> Path:
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
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return next(out.glob("gradviz_autograd-*.whl"))


def test_the_wheel_needs_no_streamlit_and_the_app_extra_brings_it(tmp_path):
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        scripts = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    assert f"Name: {DISTRIBUTION}" in meta.splitlines()
    assert "gradviz = gradviz.cli.main:console" in scripts.decode()
    requires = [
        line.split(": ", 1)[1] for line in meta.splitlines() if line.startswith("Requires-Dist: ")
    ]
    plain = sorted(r.split(">=")[0] for r in requires if "extra ==" not in r)
    app = sorted(r.split(">=")[0] for r in requires if 'extra == "app"' in r)
    assert plain == ["pillow", "pypdf", "setuptools", "torch", "torchviz"]
    assert app == ["graphviz", "streamlit", "torchvision"]
    assert "gradviz/library/figure.py" in names and "gradviz/graph/collapse.py" in names


def test_the_installed_gradviz_script_runs_the_lesson(tmp_path):
    """The wheel in a fresh virtual environment: its `gradviz` script answers --help, draws
    the lesson and runs it as JSON. The environment sees the test run's own site-packages
    (torch, torchviz) through a plain path line, which adds no .pth of theirs, so the
    checkout's editable gradviz stays out and only the wheel's gradviz can be imported."""
    wheel = build_wheel(tmp_path / "dist")
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = bin_dir / "python"
    # No PYTHONPATH, and not from the checkout: its src/ (with the build's egg-info) would
    # tell pip the distribution is installed already, and gradviz would import from there.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", wheel],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    # after the install: pip run for the new environment must not see these packages
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = bin_dir / "gradviz"
    lesson = ROOT / "examples" / "lesson.py"

    def gradviz(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [script, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    where = subprocess.run(
        [py, "-c", "import gradviz; print(gradviz.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(env_dir)), where.stdout + where.stderr
    shown = gradviz("--help")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: gradviz ") and "render" in shown.stdout
    drawn = gradviz("render", str(lesson), "-o", "lesson.dot")
    assert drawn.returncode == 0, drawn.stderr
    assert (tmp_path / "lesson.dot").read_text().startswith("digraph")
    ran = gradviz("run", str(lesson), "--json")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["error"] is None
    assert {t["name"] for t in result["tensors"]} >= {"x", "y"}
    # the app's code editor: Streamlit serves its script from the installed package's files
    served = subprocess.run(
        [py, "-c", SERVED], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert served.returncode == 0, served.stderr
    script = Path(served.stdout.strip())
    assert script.is_relative_to(env_dir) and script.name == "code_editor.min.js"
    bundle = ROOT / "src/gradviz/ui/autograd/assets/code_editor.min.js"
    assert script.read_bytes() == bundle.read_bytes()
