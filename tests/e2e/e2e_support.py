"""Real-browser helpers: a `streamlit run` server on loopback, Chromium settings, the drawing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("GRADVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_streamlit(
    script: Path,
    port: int,
    timeout: float = 90.0,
    env: dict[str, str] | None = None,
    python: str = sys.executable,
    address: str = "127.0.0.1",
    extra_args: list[str] | None = None,
) -> subprocess.Popen:
    """`streamlit run script` on 127.0.0.1:port, returned once healthy. Its output goes to a
    file (a pipe nobody reads would fill up and stall the server)."""
    full_env = {
        **os.environ,
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        "PYTHONPATH": str(ROOT / "src"),
        **(env or {}),
    }
    with tempfile.NamedTemporaryFile("w", prefix="streamlit-", suffix=".log", delete=False) as log:
        proc = subprocess.Popen(
            [
                python, "-m", "streamlit", "run", str(script),
                "--server.port", str(port), "--server.address", address,
                "--server.headless", "true", "--server.fileWatcherType", "none",
                *(extra_args or []),
            ],
            cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    proc.log_path = log.name
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("streamlit exited: " + Path(log.name).read_text()[-2000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(
        "streamlit did not become healthy in time: " + Path(log.name).read_text()[-2000:]
    )


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)
    Path(getattr(proc, "log_path", "")).unlink(missing_ok=True) if getattr(
        proc, "log_path", None
    ) else None


GRAPH_IMG = 'img[alt="autograd graph"]'
DECODE_JS = """(img) => new TextDecoder().decode(
  Uint8Array.from(atob(img.src.split(',')[1]), (c) => c.charCodeAt(0)))"""
GRAPH_JS = """(needle) => {
  const img = document.querySelector('img[alt="autograd graph"]');
  if (!img || !img.complete) return false;
  const svg = (DECODE)(img);
  return needle === null || svg.includes(needle);
}""".replace("DECODE", DECODE_JS)


def graph_svg(page, needle: str | None = None, timeout: float = 60_000) -> str:
    """The autograd page's drawing (a server-rendered SVG image), once it contains `needle`."""
    page.wait_for_function(GRAPH_JS, arg=needle, timeout=timeout)
    return page.evaluate(
        "() => (DECODE)(document.querySelector('img[alt=\"autograd graph\"]'))".replace(
            "DECODE", DECODE_JS
        )
    )


EDITOR = ".gv-editor .cm-content"  # the autograd page's code editor (ui/autograd/code_editor)
EDITOR_TEXT_JS = """() => [...document.querySelectorAll('.gv-editor .cm-line')]
  .map((line) => line.textContent).join('\\n')"""


def program_editor(page, timeout: float = 90_000):
    """The autograd page's code editor (CodeMirror's editable element), once it is there."""
    editor = page.locator(EDITOR)
    editor.wait_for(timeout=timeout)
    return editor


def type_program(page, source: str) -> None:
    """Put `source` in the code editor (not run yet)."""
    program_editor(page).fill(source)
    page.wait_for_function(f"(want) => ({EDITOR_TEXT_JS})() === want", arg=source)


def editor_text(page) -> str:
    """The code editor's text, as its lines joined."""
    return page.evaluate(EDITOR_TEXT_JS)


# A small layered program: two Linear layers in a Sequential (clusters to fold and draw).
MLP = (
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
    "x = torch.randn(5, 4, requires_grad=True)\n"
    "loss = net(x).pow(2).mean()\n"
)
