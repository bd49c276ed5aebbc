"""Cold start, phase by phase: where the time from `streamlit run app.py` to the first graph
goes. One fresh server per run, timed from its launch (medians over --runs):

  health     the server answers /_stcore/health (Streamlit's start and app.py's imports are
             not in it: Streamlit imports the script at the first run, not at start)
  html       the page's HTML has arrived (the browser's request sent at `health`)
  socket     the browser opened Streamlit's websocket (the page's JS bundle has loaded)
  first msg  the first message on it (the script run began: new session)
  graph msg  the message with the viewer's document has arrived
  last msg   the last message before the graph was drawn (the script run's end)
  viewer     the viewer's frame has drawn its graph (body[data-gv-ready="1"], looked for on
             every animation frame and timed by the page's clock, as cold_start.py does;
             the phases before it are when this process heard of them, which on a busy
             host can be tenths of a second after the browser did)

Also the websocket's bytes before the viewer's message, and its size.

    python bench/cold_phases.py [--runs 3] [--app app.py [--app OTHER/app.py]]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _app import CHROMIUM, CHROMIUM_ARGS, free_port, machine, start_streamlit  # noqa: E402
from cold_start import VIEWER_READY, first_seen, stop_and_wait  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

PHASES = ["health", "html", "socket", "first msg", "graph msg", "last msg", "viewer"]
VIEWER_MARK = b"gvReady"  # in the viewer's document (its script sets it once drawn)


def _payload(frame) -> bytes:
    return frame if isinstance(frame, bytes) else frame.encode("utf-8", "replace")


def one_run(browser, app: Path) -> tuple[dict[str, float], int, int]:
    port = free_port()
    t0, launched = time.perf_counter(), time.time()
    proc = start_streamlit(app, port, timeout=180)
    marks: dict[str, float] = {"health": time.perf_counter() - t0}
    sizes = {"before": 0, "graph": 0}

    def at(name: str) -> None:
        marks.setdefault(name, time.perf_counter() - t0)

    def on_frame(frame) -> None:
        data = _payload(frame)
        at("first msg")
        if "graph msg" not in marks:
            if VIEWER_MARK in data:
                at("graph msg")
                sizes["graph"] = len(data)
            else:
                sizes["before"] += len(data)
        if "viewer" not in marks:  # the run's end: its last message before the drawing
            marks["last msg"] = time.perf_counter() - t0

    def on_socket(ws) -> None:
        at("socket")
        ws.on("framereceived", on_frame)

    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("websocket", on_socket)
        page.on("response", lambda r: at("html") if r.url.rstrip("/").endswith(str(port)) else None)
        page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
        marks["viewer"] = first_seen(page, VIEWER_READY, launched)
        page.close()
    finally:
        stop_and_wait(proc)
    return marks, sizes["before"], sizes["graph"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--app",
        action="append",
        help="app script to start (repeat to compare checkouts, alternated); default app.py",
    )
    args = ap.parse_args()
    apps = [Path(a) for a in (args.app or [str(ROOT / "app.py")])]
    print(f"# {machine()}; {args.runs} runs of each of: {', '.join(map(str, apps))}")
    runs: dict[Path, list[dict[str, float]]] = {a: [] for a in apps}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for i in range(args.runs):
            for app in apps:
                marks, before, graph = one_run(browser, app)
                runs[app].append(marks)
                line = ", ".join(f"{k} {marks[k]:.2f}" for k in PHASES if k in marks)
                print(
                    f"run {i + 1} {app}: {line}; bytes before the viewer {before:,}, "
                    f"its message {graph:,}"
                )
        browser.close()
    for app, done in runs.items():
        medians = {
            k: statistics.median(r[k] for r in done) for k in PHASES if all(k in r for r in done)
        }
        print(f"median {app}: " + ", ".join(f"{k} {v:.2f}" for k, v in medians.items()))
        if "first msg" in medians:
            run_to_viewer = statistics.median(r["viewer"] - r["first msg"] for r in done)
            print(f"  first message -> viewer drawn: {run_to_viewer:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
