"""Shared by the public-hosting benchmarks: start `streamlit run app.py` on loopback,
find its processes, and read their proportional set size."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

# One way to start and stop the app, shared with the real-browser tests.
from e2e_support import (  # noqa: E402, F401
    CHROMIUM,
    CHROMIUM_ARGS,
    DECODE_JS,
    GRAPH_IMG,
    GRAPH_JS,
    free_port,
    start_streamlit,
    stop,
)


def start(python: str, port: int, extra_env: dict | None = None, timeout: float = 180.0):
    """`streamlit run app.py` with the given Python (e.g. a venv with CPU-only torch)."""
    return start_streamlit(ROOT / "app.py", port, timeout, extra_env, python)


def descendants(pid: int) -> list[int]:
    """pid and every process below it (server, forkserver, workers)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def pss(pid: int) -> int:
    """Proportional set size in bytes, from /proc/PID/smaps_rollup (0 if gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 1024 // 1024
    return f"{platform.node()}: {os.cpu_count()} cores ({cpu}), {mem} GiB RAM, Linux {platform.release()}"
