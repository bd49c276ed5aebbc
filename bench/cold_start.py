"""Cold start: `streamlit run` launched -> the first graph drawn in Chromium, gradviz's app
against a bare Streamlit page that imports torch and torchviz and draws the lesson's graph.

Alternates the two, each from a fresh `streamlit run` on loopback, in one headless Chromium
(launched once, before the timings). Times, from the launch of the server:
  gradviz: the first drawing on the page: the interactive viewer's frame has drawn its graph
           (its body gets data-gv-ready="1", looked for on every animation frame and timed
           by the page's clock: `first_seen`); also the plain picture below it (the <img>
           holding the lesson's SVG), printed for reference
  bare:    the page's st.image of torchviz's SVG (the lesson's forward graph, laid out by
           `dot` on the server, as gradviz does) has loaded (timed the same way)
Each server, and every process under it, has gone before the next starts (a worker still
importing torch outlives its server by seconds). Prints each pair, the medians and the
ratio gradviz / bare.

    python bench/cold_start.py [--pairs 5] [--app app.py [--app OTHER/app.py]] [--latency MS]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    descendants,
    free_port,
    machine,
    start_streamlit,
    stop,
)
from playwright.sync_api import sync_playwright  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from e2e_support import graph_svg  # noqa: E402

BARE_PAGE = """
import streamlit as st
import torch
from torchviz import make_dot

x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
st.title("bare")
st.image(make_dot(y, params={"x": x}).pipe(format="svg").decode(), caption="graph")
"""

# The viewer's frame (the component's iframe.gv-frame, same-origin) has drawn its graph. Polled
# on every animation frame, as the bare page's check is: a Playwright locator's wait polls at
# 20, 50, 100, 100 ms and then every 500 ms, so it saw the drawing up to half a second late.
VIEWER_READY = """() => {
  for (const f of document.querySelectorAll('iframe')) {
    let body = null;
    try { body = f.contentDocument && f.contentDocument.body; } catch (e) { continue; }
    if (body && body.dataset.gvReady === '1') { return true; }
  }
  return false;
}"""

BARE_READY = """() => {
  const img = document.querySelector('[data-testid="stImage"] img, [data-testid="stFullScreenFrame"] img');
  return !!img && img.complete && img.naturalWidth > 0;
}"""


def first_seen(page, ready_js: str, launched: float) -> float:
    """Seconds from `launched` (time.time() at the server's launch) to the first animation
    frame on which `ready_js` held, by the page's own clock (Date.now(), the same wall clock
    on this machine): not by when the answer reached this process through Playwright's
    driver, which lags by up to tenths of a second on a busy host."""
    page.wait_for_function(
        f"() => {{ if (({ready_js})()) {{ window.__seenAt = window.__seenAt || Date.now();"
        " return true; } return false; }",
        polling="raf",
        timeout=180_000,
    )
    return page.evaluate("() => window.__seenAt") / 1000.0 - launched


def stop_and_wait(proc, timeout: float = 60.0) -> None:
    """Stop the server and wait until every process under it has gone: a worker still
    importing torch outlives the server by seconds, and would slow the next timed start."""
    tree = descendants(proc.pid)
    stop(proc)
    deadline = time.time() + timeout
    while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in tree):
        time.sleep(0.1)


def open_page(browser, latency_ms: float = 0.0):
    """A new page; with `latency_ms`, each of its HTTP requests is answered that much later
    (Chromium's network emulation), as over a network rather than loopback."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    if latency_ms:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": latency_ms,
                "downloadThroughput": -1,
                "uploadThroughput": -1,
            },
        )
    return page


def time_gradviz(browser, app: Path, latency_ms: float = 0.0) -> tuple[float, float]:
    """(seconds to the viewer's drawing, seconds to the plain picture), from launch."""
    port = free_port()
    t0, launched = time.perf_counter(), time.time()
    proc = start_streamlit(app, port, timeout=180)
    try:
        page = open_page(browser, latency_ms)
        page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
        viewer = first_seen(page, VIEWER_READY, launched)
        graph_svg(page, "MeanBackward0", timeout=180_000)
        picture = time.perf_counter() - t0
        page.close()
        return viewer, picture
    finally:
        stop_and_wait(proc)


def time_bare(browser, script: Path, latency_ms: float = 0.0) -> float:
    port = free_port()
    launched = time.time()
    proc = start_streamlit(script, port, timeout=180)
    try:
        page = open_page(browser, latency_ms)
        page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
        took = first_seen(page, BARE_READY, launched)
        page.close()
        return took
    finally:
        stop_and_wait(proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument(
        "--latency",
        type=float,
        default=0.0,
        help="milliseconds added to each HTTP request of the page (default 0: loopback)",
    )
    ap.add_argument(
        "--app",
        action="append",
        help="the app script to start (default app.py); repeat to time checkouts side by "
        "side: each pair then runs the bare page and every app, in turn",
    )
    args = ap.parse_args()
    apps = args.app or [str(ROOT / "app.py")]
    print(f"# {date.today()} · {machine()} · Python {platform.python_version()}")
    print(
        f"# app: {', '.join(apps)}; {args.pairs} pairs, alternated; "
        f"HTTP latency {args.latency:g} ms"
    )
    viewer = {a: [] for a in apps}
    picture = {a: [] for a in apps}
    bare = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        script = Path(tmp) / "bare_page.py"
        script.write_text(BARE_PAGE)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for i in range(args.pairs):
            bare.append(time_bare(browser, script, args.latency))
            for app in apps:
                v, pic = time_gradviz(browser, Path(app), args.latency)
                viewer[app].append(v)
                picture[app].append(pic)
                name = "gradviz" if len(apps) == 1 else app
                print(
                    f"pair {i + 1}: {name} viewer {v:.2f} s (picture {pic:.2f} s), "
                    f"bare {bare[-1]:.2f} s"
                )
        browser.close()
    mb = statistics.median(bare)
    for app in apps:
        mv, mp = statistics.median(viewer[app]), statistics.median(picture[app])
        name = "gradviz" if len(apps) == 1 else app
        print(
            f"median: {name} first drawing (viewer) {mv:.2f} s, plain picture {mp:.2f} s; "
            f"bare torch+torchviz page {mb:.2f} s; ratio {mv / mb:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
