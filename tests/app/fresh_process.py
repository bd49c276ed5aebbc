"""Run a script in a fresh Python process, as the Streamlit server starts: the app tests that
check what the server imports need one, since the test process has torch loaded already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(script: str, *args: object, timeout: float = 600) -> dict:
    """Run `script` with `args` (as sys.argv[1:]) in the checkout, with the sandbox on (the
    default) and gradviz from src/; return the JSON object its last line of output prints."""
    env = {k: v for k, v in os.environ.items() if k not in ("GRADVIZ_SANDBOX", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
