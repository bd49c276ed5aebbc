"""bench/op_overhead.py runs each of its cases through the interpreter and as Python, and
prints one table row per case (a small pass count: the numbers are the bench's, not a test's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_bench_prints_a_row_for_each_case():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "op_overhead.py"), "--passes", "50", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `")]
    assert len(rows) == 7
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert all(float(c) >= 0 for c in cells[1:3]), row
