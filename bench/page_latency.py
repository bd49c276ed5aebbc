"""Time from launch to the first graph, and from "Run program" to the new graph, in a real browser.

Starts `streamlit run app.py` on loopback, opens headless Chromium, and measures:
  cold: process start -> the lesson's graph visible (first visit, torch import included)
  warm: click "Run program" on a changed program -> its graph drawn (repeated, median and max)

    python bench/page_latency.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from e2e_support import CHROMIUM, CHROMIUM_ARGS, free_port, graph_svg, start_streamlit, stop  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

LESSON = "x = torch.arange(1, 4, dtype=torch.float32, requires_grad=True)\na = x + {k}\nb = a ** 2\nc = b + 3\ny = c.mean()\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    port = free_port()
    t0 = time.perf_counter()
    proc = start_streamlit(ROOT / "app.py", port)
    t_healthy = time.perf_counter() - t0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
            graph_svg(page, "PowBackward0", timeout=120_000)
            t_cold = time.perf_counter() - t0
            page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=60_000)
            warm = []
            for k in range(args.repeats):
                value = 100 + k  # a fresh program each time, so no cached result helps
                page.get_by_role("textbox", name="Program", exact=True).first.fill(
                    LESSON.format(k=value)
                )
                start = time.perf_counter()
                page.get_by_role("button", name="Run program").first.click()
                # a = x + value: its data row shows value + 1 first.
                graph_svg(page, f"data [{value + 1}.0000")
                warm.append(time.perf_counter() - start)
                page.locator('[data-testid="stStatusWidget"]').wait_for(
                    state="hidden", timeout=60_000
                )
            browser.close()
    finally:
        stop(proc)
    print(
        f"# {date.today()} · {platform.node()} · {platform.machine()} · Python {platform.python_version()}"
    )
    print(
        f"server healthy after {t_healthy:.2f} s; first graph visible {t_cold:.2f} s after launch"
    )
    print(
        f"warm submit -> new graph drawn: median {statistics.median(warm) * 1000:.0f} ms, "
        f"max {max(warm) * 1000:.0f} ms over {len(warm)} runs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
