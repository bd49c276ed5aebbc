"""Background work that waits until the server's first page run is over.

A cold server's first page view is the one a visitor waits for. The work the page starts in
the background (the worker pool's start, asking a worker what the host offers) imports torch
in a new process: seconds of CPU that, on a small host, the page's own run and the browser
drawing the graph would otherwise share. So app.py holds that work back (`hold()` before its
first run, `release()` once the run is over, whatever way it ended) and the background
threads call `wait()` before they start a process: it returns GRACE_S after the release,
while the browser loads the page's scripts and draws the graph. A visitor who runs a
program sooner starts the workers at once (only this background start waits).

Nothing is held unless app.py asked: in tests, the CLI and a lone page the threads go on at
once. `wait` gives up after WAIT_S, so a first run that never ends holds nothing for long.
"""

from __future__ import annotations

import threading
import time

WAIT_S = 10.0
# After the run, the browser still loads Streamlit's element scripts (served by this process)
# and draws the graph: about a second or two on a small host. Held work waits that long too.
GRACE_S = 1.5

_gate: threading.Event | None = None
_released_at: float | None = None
_lock = threading.Lock()


def hold() -> None:
    """Hold background work until release(); only the first call of the process counts (a
    gate once opened stays open)."""
    global _gate
    with _lock:
        if _gate is None:
            _gate = threading.Event()


def release() -> None:
    """Let held background work go on, GRACE_S from now (idempotent)."""
    global _released_at
    with _lock:
        if _gate is not None and not _gate.is_set():
            _released_at = time.monotonic()
            _gate.set()


def wait(timeout: float = WAIT_S) -> bool:
    """Block until GRACE_S after the first page run is over (or `timeout` seconds passed);
    True at once when nothing is held. False when it gave up waiting."""
    gate = _gate
    if gate is None:
        return True
    started = time.monotonic()
    if not gate.wait(timeout):
        return False
    released = _released_at if _released_at is not None else started
    time.sleep(max(0.0, min(released + GRACE_S - time.monotonic(), timeout)))
    return True


def held() -> bool:
    """Whether background work is being held back now."""
    gate = _gate
    return gate is not None and not gate.is_set()
