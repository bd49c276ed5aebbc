"""Load test: N concurrent browser sessions against a real `streamlit run app.py` on loopback.

Each session opens its own share link with a distinct program (a tensor holding 1000+k),
waits until its graph shows its own value, and checks that no other session's value is
on its page (no cross-session leakage). It does this for several rounds, so later rounds
see warm workers and the cache. Reports p50/p95 latency and errors. With --public the
server runs as on a public host (GRADVIZ_PUBLIC=1: smaller caps, one heavy job at a time).

    python bench/load_test.py [--sessions 20] [--rounds 3] [--python .venv/bin/python] [--public]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from _app import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DECODE_JS,
    GRAPH_IMG,
    GRAPH_JS,
    free_port,
    machine,
    start,
    stop,
)

from gradviz.program.share import encode_program  # noqa: E402


def program(k: int, round_: int) -> str:
    return f"v = torch.full((2,), {1000 + k}.0, requires_grad=True)\nw = (v * {round_ + 2}).sum()\n"


async def session(browser, url: str, k: int, rounds: int, sessions: int, out: dict) -> None:
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    page = await context.new_page()
    mine = f"{1000 + k}.0000"
    others = [f"{1000 + j}.0000" for j in range(sessions) if j != k]
    try:
        for r in range(rounds):
            link = f"{url}/?p={encode_program(program(k, r))}&backward=w"
            t0 = time.perf_counter()
            try:
                await page.goto(link, wait_until="domcontentloaded", timeout=240_000)
                # the drawing (a server-rendered SVG <img>) with this session's value and
                # this round's gradient: dw/dv = round + 2
                grad = f"{float(r + 2):.4f}"
                await page.wait_for_function(
                    GRAPH_JS, arg=f"grad [{grad}, {grad}]", timeout=240_000
                )
                svg = await page.evaluate(
                    f"() => ({DECODE_JS})(document.querySelector('{GRAPH_IMG}'))"
                )
                if mine not in svg:
                    out["errors"].append((k, r, "the drawing does not show this session's value"))
                out["latency"].append(time.perf_counter() - t0)
                out["by_round"].setdefault(r, []).append(time.perf_counter() - t0)
                body = await page.inner_text("body")
                leaked = [o for o in others if o in svg or o in body]
                if leaked:
                    out["leaks"].append((k, r, leaked))
                if "Something went wrong" in body or "error." in body:
                    out["errors"].append((k, r, "error shown on the page"))
            except Exception as exc:  # noqa: BLE001 - counted, reported
                out["errors"].append((k, r, f"{type(exc).__name__}: {str(exc)[:200]}"))
    finally:
        await context.close()


async def main_async(url: str, sessions: int, rounds: int) -> dict:
    from playwright.async_api import async_playwright

    out: dict = {"latency": [], "errors": [], "leaks": [], "by_round": {}}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # One visit first, so the timed sessions meet a started server and worker pool.
        warm = await browser.new_page()
        await warm.goto(url + "/", wait_until="domcontentloaded", timeout=240_000)
        await warm.wait_for_function(GRAPH_JS, arg=None, timeout=240_000)
        # app.py's sidebar says "Public mode (...)" when the server runs in public mode.
        out["public_shown"] = "Public mode (" in await warm.inner_text("body")
        await warm.close()
        t0 = time.perf_counter()
        await asyncio.gather(
            *(session(browser, url, k, rounds, sessions, out) for k in range(sessions))
        )
        out["wall"] = time.perf_counter() - t0
        await browser.close()
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


def run(
    python: str, sessions: int, rounds: int, url: str | None = None, public: bool = False
) -> dict:
    proc = None
    if url is None:
        port = free_port()
        proc = start(python, port, {"GRADVIZ_PUBLIC": "1"} if public else None)
        url = f"http://127.0.0.1:{port}"
    try:
        out = asyncio.run(main_async(url, sessions, rounds))
        out["alive"] = proc is None or proc.poll() is None
    finally:
        if proc is not None:
            stop(proc)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument(
        "--public",
        action="store_true",
        help="run the app as on a public host (GRADVIZ_PUBLIC=1)",
    )
    args = ap.parse_args()
    out = run(args.python, args.sessions, args.rounds, public=args.public)
    lat = out["latency"]
    print(f"machine: {machine()}")
    print(f"python: {args.python}")
    shown = "on" if out.get("public_shown") else "off"
    print(
        f"public mode: {'on (GRADVIZ_PUBLIC=1)' if args.public else 'off'} as started; "
        f"the page's sidebar says: {shown}"
    )
    print(f"sessions={args.sessions} rounds={args.rounds} requests={args.sessions * args.rounds}")
    if lat:
        print(
            f"latency s: p50={statistics.median(lat):.2f} p95={percentile(lat, 0.95):.2f} "
            f"max={max(lat):.2f} (n={len(lat)}); wall {out['wall']:.1f} s"
        )
        for r, values in sorted(out["by_round"].items()):
            print(
                f"  round {r}: p50={statistics.median(values):.2f} "
                f"p95={percentile(values, 0.95):.2f} (n={len(values)})"
            )
    print(f"errors={len(out['errors'])} leaks={len(out['leaks'])} server_alive={out['alive']}")
    for e in out["errors"][:10]:
        print("  error:", e)
    for e in out["leaks"][:10]:
        print("  leak:", e)
    sys.exit(0 if not out["errors"] and not out["leaks"] and out["alive"] else 1)


if __name__ == "__main__":
    main()
