"""torchviz does `from distutils.version import LooseVersion`; Python 3.12 removed distutils.

requirements.txt and requirements-local.txt pin setuptools, whose distutils shim makes that
import work again.
This test proves it on a real Python 3.12 in a throwaway venv (skipped without one, or
without access to the package index).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CANDIDATES = [
    "/root/.pyenv/versions/3.12.1/bin/python3",
    shutil.which("python3.12"),
]


def python312() -> str | None:
    for path in CANDIDATES:
        if not path or not os.path.exists(path):
            continue
        try:
            out = subprocess.run(
                [path, "-c", "import sys; print(sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "(3, 12)":
            return path
    return None


def setuptools_pin() -> str:
    """The setuptools requirement line of requirements-local.txt (the same in requirements.txt)."""
    text = (Path(__file__).resolve().parents[3] / "requirements-local.txt").read_text()
    return next(line.strip() for line in text.splitlines() if line.startswith("setuptools"))


def run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


@pytest.mark.slow
def test_distutils_import_works_on_python312_with_setuptools(tmp_path: Path):
    python = python312()
    if python is None:
        pytest.skip("no Python 3.12 interpreter here")
    venv = tmp_path / "venv"
    made = run([python, "-m", "venv", str(venv)], timeout=60)
    assert made.returncode == 0, made.stderr
    vpy = str(venv / "bin" / "python")

    # Without setuptools, Python 3.12 has no distutils: the problem torchviz would hit.
    bare = run([vpy, "-c", "import distutils.version"], timeout=30)
    if bare.returncode == 0:
        # some builds ship setuptools in new venvs; remove it to see the bare state
        run([vpy, "-m", "pip", "uninstall", "-y", "setuptools"], timeout=60)
        bare = run([vpy, "-c", "import distutils.version"], timeout=30)
    assert bare.returncode != 0
    assert "distutils" in bare.stderr

    try:
        pip = run(
            [vpy, "-m", "pip", "install", "--quiet", "--timeout", "15", setuptools_pin()],
            timeout=45,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("pip could not reach the package index in time")
    if pip.returncode != 0:
        text = pip.stderr + pip.stdout
        if any(
            s in text
            for s in (
                "Could not find a version",
                "NewConnectionError",
                "Temporary failure",
                "No matching distribution",
            )
        ):
            pytest.skip(f"no access to the package index: {text.strip().splitlines()[-1]}")
        pytest.fail(f"pip install setuptools failed: {text[-2000:]}")

    shim = run(
        [
            vpy,
            "-c",
            "from distutils.version import LooseVersion; "
            "assert LooseVersion('2.14.1') > LooseVersion('1.9'); print('ok')",
        ],
        timeout=30,
    )
    assert shim.returncode == 0, shim.stderr
    assert shim.stdout.strip() == "ok"
