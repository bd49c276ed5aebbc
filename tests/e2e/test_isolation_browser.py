"""Real server, real browser: workers killed or hung, and concurrent sessions kept apart."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from e2e_support import free_port, graph_svg, start_streamlit, stop

from gradviz.program.share import encode_program

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
SLOW_PROGRAM = "a = torch.rand(5000, 5000)\nb = torch.unique(a)\nc = torch.unique(a)\n"


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        p, pp = map(int, line.split())
        children.setdefault(pp, []).append(p)
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


@pytest.fixture(scope="module")
def server():
    os.environ["GRADVIZ_RUN_SECONDS"] = "4"
    try:
        port = free_port()
        proc = start_streamlit(ROOT / "app.py", port)
    finally:
        del os.environ["GRADVIZ_RUN_SECONDS"]
    yield proc, f"http://127.0.0.1:{port}"
    stop(proc)


def _open(browser, url: str, program: str, wait_for: str, timeout: float = 120_000):
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto(f"{url}/?p={encode_program(program)}", wait_until="domcontentloaded")
    graph_svg(page, wait_for, timeout=timeout)
    return page


def test_killed_workers_then_the_next_request_works(browser, server):
    proc, url = server
    page = _open(browser, url, "k = torch.full((2,), 41.0)\n", "41.0000")
    page.close()
    tree = _descendants(proc.pid)
    assert tree, "no worker processes under the server"
    # Kill every worker (grandchildren: server -> forkserver -> workers); keep the server.
    forkservers = [p for p in tree if _descendants(p)]
    victims = [w for f in forkservers for w in _descendants(f)]
    assert victims, "no workers found"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    assert proc.poll() is None, "the server died"
    page = _open(browser, url, "k = torch.full((2,), 42.0)\nm = k * 2\n", "84.0000")
    assert "42.0000" in graph_svg(page)
    page.close()


def test_hung_program_is_stopped_and_others_keep_working(browser, server):
    proc, url = server
    hung = browser.new_page(viewport={"width": 1300, "height": 1000})
    hung.goto(f"{url}/?p={encode_program(SLOW_PROGRAM)}", wait_until="domcontentloaded")
    other = _open(browser, url, "q = torch.full((2,), 43.0)\n", "43.0000")
    hung.get_by_text("the limit per run").first.wait_for(timeout=120_000)
    assert "nothing else was affected" in hung.inner_text("body").lower()
    other.close()
    hung.close()
    assert proc.poll() is None
    page = _open(browser, url, "r = torch.full((2,), 44.0)\n", "44.0000")
    page.close()


def test_concurrent_sessions_see_their_own_values_only(browser, server):
    _, url = server
    contexts, pages = [], []
    for k in range(4):
        ctx = browser.new_context(viewport={"width": 1200, "height": 900})
        page = ctx.new_page()
        program = f"v = torch.full((2,), {2000 + k}.0, requires_grad=True)\nw = (v * 3).sum()\n"
        page.goto(f"{url}/?p={encode_program(program)}&backward=w", wait_until="commit")
        contexts.append(ctx)
        pages.append(page)
    try:
        for k, page in enumerate(pages):
            graph_svg(page, f"{2000 + k}.0000", timeout=180_000)
            body = page.inner_text("body") + graph_svg(page, "grad [3.0000, 3.0000]")
            for j in range(4):
                if j != k:
                    assert f"{2000 + j}.0000" not in body
    finally:
        for ctx in contexts:
            ctx.close()
