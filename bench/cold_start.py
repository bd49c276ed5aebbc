"""Cold start: `streamlit run` launched -> the first graph drawn in Chromium, gradviz's app
against a bare Streamlit page that imports torch and torchviz and draws the lesson's graph.

Alternates the two, each from a fresh `streamlit run` on loopback, in one headless Chromium
(launched once, before the timings). Times, from the launch of the server:
  gradviz: the first drawing on the page: the interactive viewer's frame has drawn its graph
           (its body gets data-gv-ready="1"); also the plain picture below it (the <img>
           holding the lesson's SVG), printed for reference
  bare:    the page's st.image of torchviz's SVG (the lesson's forward graph, laid out by
           `dot` on the server, as gradviz does) has loaded
Prints each pair, the medians and the ratio gradviz / bare.

    python bench/cold_start.py [--pairs 5] [--app app.py]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _app import CHROMIUM, CHROMIUM_ARGS, free_port, machine, start_streamlit, stop  # noqa: E402
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

BARE_READY = """() => {
  const img = document.querySelector('[data-testid="stImage"] img, [data-testid="stFullScreenFrame"] img');
  return !!img && img.complete && img.naturalWidth > 0;
}"""


def time_gradviz(browser, app: Path) -> tuple[float, float]:
    """(seconds to the viewer's drawing, seconds to the plain picture), from launch."""
    port = free_port()
    t0 = time.perf_counter()
    proc = start_streamlit(app, port, timeout=180)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
        frame = page.frame_locator("iframe").first
        frame.locator("body[data-gv-ready='1']").wait_for(timeout=180_000)
        viewer = time.perf_counter() - t0
        graph_svg(page, "MeanBackward0", timeout=180_000)
        picture = time.perf_counter() - t0
        page.close()
        return viewer, picture
    finally:
        stop(proc)


def time_bare(browser, script: Path) -> float:
    port = free_port()
    t0 = time.perf_counter()
    proc = start_streamlit(script, port, timeout=180)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
        page.wait_for_function(BARE_READY, timeout=180_000)
        took = time.perf_counter() - t0
        page.close()
        return took
    finally:
        stop(proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--app", default=str(ROOT / "app.py"), help="the app script to start")
    args = ap.parse_args()
    print(f"# {date.today()} · {machine()} · Python {platform.python_version()}")
    print(f"# app: {args.app}; {args.pairs} pairs, alternated")
    viewer, picture, bare = [], [], []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        script = Path(tmp) / "bare_page.py"
        script.write_text(BARE_PAGE)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for i in range(args.pairs):
            bare.append(time_bare(browser, script))
            v, pic = time_gradviz(browser, Path(args.app))
            viewer.append(v)
            picture.append(pic)
            print(
                f"pair {i + 1}: gradviz viewer {v:.2f} s (picture {pic:.2f} s), bare {bare[-1]:.2f} s"
            )
        browser.close()
    mv, mp, mb = (statistics.median(x) for x in (viewer, picture, bare))
    print(
        f"median: gradviz first drawing (viewer) {mv:.2f} s, plain picture {mp:.2f} s; "
        f"bare torch+torchviz page {mb:.2f} s; ratio {mv / mb:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
