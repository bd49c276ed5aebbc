"""Memory of the whole app during a tour of every page: server plus workers, summed PSS.

Starts `streamlit run app.py` with the given Python (e.g. a venv with CPU-only torch),
tours every page in headless Chromium (the autograd page: landing, every preset with
backward, both views, every tab, a gradient check, an SVG export, a hostile program; the
Devices page; the Speed page: its estimate and a small timing, both in job workers; the
Training page: a one-epoch run of the fast preset on the default folder, the real
ImageFolder subset, in a job worker), samples the proportional set size
(/proc/PID/smaps_rollup) of the server and all its descendant processes (forkserver,
the warm worker, job workers while they live) every 0.2 s, and reports the peak, overall
and per page.

    python bench/memory_tour.py [--python /tmp/cpuvenv/bin/python] [--limit-mb 690] [--public]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from _app import CHROMIUM, CHROMIUM_ARGS, descendants, free_port, machine, pss, start, stop  # noqa: E402

from gradviz.presets import PRESETS  # noqa: E402
from gradviz.share import encode_program  # noqa: E402


class Sampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.peak_detail, self.samples = pid, 0, {}, 0
        self.running = True
        self.phase = "start"
        self.phase_peak: dict[str, int] = {}
        self.processes_seen: set[int] = set()

    def run(self) -> None:
        while self.running:
            # A child between fork and exec (subprocess's vfork) reads as the server's
            # whole address space: leave out children still running the server's command.
            detail = {
                p: pss(p)
                for p in descendants(self.pid)
                if p == self.pid or _cmd(p) != _cmd(self.pid)
            }
            total = sum(detail.values())
            self.samples += 1
            self.processes_seen.update(detail)
            self.phase_peak[self.phase] = max(self.phase_peak.get(self.phase, 0), total)
            if total > self.peak:
                self.peak, self.peak_detail = total, detail
            time.sleep(0.2)


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:90]
    except OSError:
        return "(gone)"


def tour(url: str, sampler: Sampler | None = None, batch: int | None = None) -> list[str]:
    from playwright.sync_api import sync_playwright

    visited = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
        # The graph: an <img> of the server-drawn SVG where Graphviz is installed, else
        # Streamlit's in-browser graphviz chart.
        chart = page.locator('img[alt="autograd graph"], [data-testid="stGraphVizChart"] svg').first
        drawn = page.locator(
            'img[alt="autograd graph"], [data-testid="stGraphVizChart"] svg, '
            '[data-testid="stAlert"]'
        ).first  # a graph, or a message (a preset with a classic mistake, nothing tracked)

        def visit(link: str, label: str, wait_text: str | None = "Backward") -> None:
            page.goto(link, wait_until="domcontentloaded", timeout=120_000)
            drawn.wait_for(timeout=120_000)
            if wait_text:
                page.get_by_text(wait_text).first.wait_for(timeout=60_000)
            page.wait_for_timeout(300)
            visited.append(label)

        if sampler:
            sampler.phase = "autograd"
        visit(url + "/", "landing (seed lesson)")
        chart.wait_for(timeout=120_000)
        for tab in (
            "Tensors",
            "Backward walk-through",
            "Gradient check",
            "Export",
            "Share",
            "Graph",
        ):
            page.get_by_role("tab", name=tab).click()
            if tab == "Gradient check":
                page.get_by_role("button", name="Check gradients").click()
                page.get_by_text("finite differences").first.wait_for(timeout=120_000)
            if tab == "Export":
                button = page.get_by_role("button", name="Download SVG")
                button.wait_for(timeout=60_000)
                with page.expect_download(timeout=60_000):
                    button.click()
            visited.append(f"tab {tab}")
        for preset in PRESETS:
            link = f"{url}/?p={encode_program(preset.source)}"
            if preset.backward:
                link += f"&backward={preset.backward}"
            visit(link, f"preset {preset.key}", None)
            visit(link + "&view=classic&dir=LR&theme=dark", f"preset {preset.key} classic", None)
        hostile = "a = torch.ones(100000, 100000)\n"
        page.goto(f"{url}/?p={encode_program(hostile)}", wait_until="domcontentloaded")
        page.get_by_text("would allocate").first.wait_for(timeout=60_000)
        visited.append("hostile program refused")

        if sampler:
            sampler.phase = "devices"
        page.goto(f"{url}/devices", wait_until="domcontentloaded")
        page.get_by_text("This host").first.wait_for(timeout=120_000)
        page.wait_for_timeout(1000)
        visited.append("devices")

        if sampler:
            sampler.phase = "speed"
        page.goto(f"{url}/speed", wait_until="domcontentloaded")
        page.get_by_text("Estimated on this CPU").first.wait_for(timeout=180_000)
        main = page.get_by_test_id("stMainBlockContainer")
        main.get_by_role("button", name="Time it both ways").click()
        page.get_by_text("Why the two figures differ").first.wait_for(timeout=180_000)
        visited.append("speed: estimate and a timing (1,000,000 elements, 10 iterations)")

        if sampler:
            sampler.phase = "training"
        page.goto(f"{url}/training", wait_until="domcontentloaded")
        page.get_by_text("training and", exact=False).first.wait_for(timeout=120_000)
        fields = [("Epochs", 1)] + ([("Batch size", batch)] if batch else [])
        for label, value in fields:
            box = page.get_by_label(label, exact=True)
            box.fill(str(value))
            box.press("Enter")
            page.wait_for_timeout(1500)
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click()
        page.get_by_text("Accuracy of the network on the", exact=False).first.wait_for(
            timeout=600_000
        )
        visited.append(
            f"training: fast preset, 1 epoch, batch {batch or 'default'}, default folder"
        )
        if sampler:
            sampler.phase = "after"
        page.wait_for_timeout(3000)
        browser.close()
    return visited


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--limit-mb", type=float, default=690)
    ap.add_argument("--batch", type=int, help="training batch size (default: the preset's)")
    ap.add_argument(
        "--public",
        action="store_true",
        help="run the app as on a public host (GRADVIZ_PUBLIC=1: batch cap, one heavy job)",
    )
    args = ap.parse_args()
    torch_version = subprocess.run(
        [args.python, "-c", "import torch; print(torch.__version__)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    port = free_port()
    t0 = time.perf_counter()
    proc = start(args.python, port, {"GRADVIZ_PUBLIC": "1"} if args.public else None)
    sampler = Sampler(proc.pid)
    sampler.start()
    try:
        visited = tour(f"http://127.0.0.1:{port}", sampler, args.batch)
        time.sleep(1.0)
    finally:
        sampler.running = False
        sampler.join(2)
        stop(proc)
    peak_mb = sampler.peak / 1e6
    print(f"machine: {machine()}")
    print(
        f"python: {args.python}  torch {torch_version}  date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    default = "the public cap (128)" if args.public else "preset default (512)"
    print(f"public mode: {'on' if args.public else 'off'}; training batch: {args.batch or default}")
    print(
        f"pages/steps toured: {len(visited)} in {time.perf_counter() - t0:.0f} s; samples: {sampler.samples}"
    )
    print(f"peak PSS (server + workers): {peak_mb:.0f} MB (limit {args.limit_mb:.0f} MB)")
    print(f"processes seen: {len(sampler.processes_seen)}")
    for phase, peak in sampler.phase_peak.items():
        print(f"  peak during {phase:9s} {peak / 1e6:7.0f} MB")
    print("processes at the peak:")
    for pid, size in sorted(sampler.peak_detail.items(), key=lambda kv: -kv[1]):
        print(f"  {size / 1e6:7.0f} MB  {pid}  {_cmd(pid)}")
    sys.exit(0 if peak_mb <= args.limit_mb else 1)


if __name__ == "__main__":
    main()
