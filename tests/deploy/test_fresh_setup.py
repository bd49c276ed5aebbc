"""README's set-up command in a fresh virtual environment, then every page, headless.

Each test copies the checkout's files (what `git ls-files` lists: tracked and new, not
ignored) into a temporary folder, runs scripts/setup.sh there (which creates .venv), and,
with that .venv's Python: opens every page of app.py in AppTest
(tests/deploy/open_every_page.py), then starts `streamlit run app.py` on a free loopback
port, waits for /_stcore/health and stops it. pip runs without a cache, so nothing comes
from an earlier install.

- test_readme_setup: `scripts/setup.sh`, what `make run` does (requirements-local.txt).
- test_cpu_only_setup: `scripts/setup.sh --cpu`, the set Community Cloud installs
  (requirements.txt), with one change this machine forces: torch 2.14.1+cpu and torchvision
  0.29.1+cpu come from PyTorch's CPU index, which cannot be reached here, so the copy's
  requirements.txt names the CPU-only torch 2.13.0 wheel on disk instead and leaves
  torchvision out (no torchvision wheel here works with it). Skipped when that wheel is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.deploy]

ROOT = Path(__file__).resolve().parents[2]
CPU_WHEEL = Path(
    os.environ.get(
        "GRADVIZ_CPU_TORCH_WHEEL",
        "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
    )
)
TITLES = {  # each page's st.title
    "autograd": "Autograd playground",
    "devices": "Devices",
    "speed": "CPU vs GPU speed",
    "training": "CIFAR-10 training",
}


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the test runner's virtual environment or import path, and
    pip without a cache."""
    venv = os.environ.get("VIRTUAL_ENV")
    path = [
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and not (venv and p.startswith(venv)) and not p.startswith(str(ROOT / ".venv"))
    ]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_CACHE_DIR")
    }
    env.update(
        PATH=os.pathsep.join(path),
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
        **extra,
    )
    return env


def copy_checkout(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    copied = 0
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the work tree is left out
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
            copied += 1
    assert copied and (dest / "app.py").is_file() and (dest / "scripts" / "setup.sh").is_file()
    return dest


def run(cmd: list[str], cwd: Path, timeout: float, env=None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        cmd, cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{' '.join(cmd)} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


def open_every_page(copy: Path) -> dict[str, dict]:
    done = run(
        [str(copy / ".venv" / "bin" / "python"), "tests/deploy/open_every_page.py", "app.py"],
        cwd=copy,
        timeout=600,
    )
    pages = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
            pages[report["page"]] = report
    assert set(pages) == set(TITLES), done.stdout
    for name, report in pages.items():
        assert report["opened"], report
        assert report["exception"] == [], report
        assert report["titles"][:1] == [TITLES[name]], report
    return pages


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_once(copy: Path) -> str:
    """`streamlit run app.py` as README says (settings from .streamlit/config.toml), healthy
    and serving the page, then stopped. Returns what the server printed."""
    port = free_port()
    log_path = copy / "streamlit.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(copy / ".venv" / "bin" / "streamlit"), "run", "app.py",
             "--server.port", str(port), "--server.address", "127.0.0.1"],
            cwd=copy, env=clean_env(), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.time() + 120
        while True:
            assert proc.poll() is None, "streamlit exited:\n" + log_path.read_text()[-3000:]
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/_stcore/health", timeout=2
                ) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            assert time.time() < deadline, "not healthy in 120 s:\n" + log_path.read_text()
            time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    text = log_path.read_text()
    assert "Traceback" not in text, text
    return text


def venv_facts(copy: Path) -> dict:
    code = (
        "import json, importlib.util, torch, streamlit, gradviz; print(json.dumps({"
        "'torch': torch.__version__, 'cuda_build': torch.version.cuda,"
        "'streamlit': streamlit.__version__, 'gradviz': gradviz.__file__,"
        "'torchvision': importlib.util.find_spec('torchvision') is not None}))"
    )
    done = run([str(copy / ".venv" / "bin" / "python"), "-c", code], cwd=copy, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def pinned(copy: Path, name: str, package: str) -> str:
    for line in (copy / name).read_text().splitlines():
        if line.startswith(f"{package}=="):
            return line.split("==", 1)[1].strip()
    raise AssertionError(f"{package} not pinned in {name}")


def test_readme_setup_then_every_page_headless():
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gradviz-fresh-") as tmp:
        copy = copy_checkout(Path(tmp) / "gradviz")
        run(["scripts/setup.sh"], cwd=copy, timeout=1800)
        set_up = time.perf_counter() - started
        facts = venv_facts(copy)
        assert facts["torch"].split("+")[0] == pinned(copy, "requirements-local.txt", "torch")
        assert facts["streamlit"] == pinned(copy, "requirements-local.txt", "streamlit")
        assert facts["torchvision"]
        assert Path(facts["gradviz"]).resolve().is_relative_to(copy.resolve())
        pages = open_every_page(copy)
        assert not any("torchvision is not installed" in w for w in pages["training"]["warnings"])
        serve_once(copy)
    print(f"\nfresh set-up {set_up:.0f} s, in all {time.perf_counter() - started:.0f} s")


@pytest.mark.skipif(not CPU_WHEEL.is_file(), reason=f"no CPU-only torch wheel at {CPU_WHEEL}")
def test_cpu_only_setup_then_every_page_headless():
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gradviz-cpu-") as tmp:
        copy = copy_checkout(Path(tmp) / "gradviz")
        requirements = copy / "requirements.txt"
        lines = []
        for line in requirements.read_text().splitlines():
            if line.startswith("--extra-index-url") or line.startswith("torchvision=="):
                continue  # the CPU index is out of reach here; no torchvision wheel fits
            lines.append(f"torch @ {CPU_WHEEL.as_uri()}" if line.startswith("torch==") else line)
        requirements.write_text("\n".join(lines) + "\n")
        run(["scripts/setup.sh", "--cpu"], cwd=copy, timeout=1800)
        set_up = time.perf_counter() - started
        facts = venv_facts(copy)
        assert facts["torch"].endswith("+cpu") and facts["cuda_build"] is None, facts
        assert not facts["torchvision"]
        assert facts["streamlit"] == pinned(copy, "requirements.txt", "streamlit")
        listed = run(
            [str(copy / ".venv" / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
            cwd=copy,
            timeout=120,
        ).stdout.lower()
        assert "nvidia-" not in listed and "triton" not in listed, listed
        pages = open_every_page(copy)
        training = pages["training"]
        assert any("torchvision is not installed" in w for w in training["warnings"]), training
        serve_once(copy)
    print(f"\nCPU-only set-up {set_up:.0f} s, in all {time.perf_counter() - started:.0f} s")
