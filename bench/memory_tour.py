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

With --attacks, after the tour (with --attacks-only, instead of it) it repeats a hostile
visitor's inputs, each as a phase of its own: a ~3,000-node graph exported as SVG and PNG
and opened on the Graph tab (the server refuses to draw it and the browser is not asked
to lay it out), a 2,500-tensor result opened in 5 fresh browser sessions at once (values
left out), sizes given as tensors (refused before they allocate), the Speed page's
comparison at the largest size the page accepts, and a dense graph (~750 nodes, ~13,000
edges) reloaded 3 times and exported, and a 1.6 kB link naming 600 empty tensors (their
values were 2.5 million empty lists, 5 MB pickled and 160 MB read back in the server) opened
in 5 fresh sessions held open together, each tab rerun 3 times, then every tab closed (the
server's CPU seconds and memory are noted). Each step waits for a definite outcome on the
page. --attack empty-unbind runs that last one alone.

--attack crowd runs, instead of the tour, --crowd hostile tabs at once (bench/class_load.py's
ATTACKS, each tab in turn: results that decode big, values-free tensors made into millions of
objects, a broadcast in a list comparison, Markdown and bare URLs in names, a graph slow to
lay out) while --victims other visitors run their own programs 3 times: the whole app's peak
and the victims' submit -> own graph p50/p95 are reported; an internal error, a victim's
error or a peak over the limit fails the run.

    python bench/memory_tour.py [--python /tmp/cpuvenv/bin/python] [--limit-mb 690] [--public]
        [--attacks | --attacks-only | --attack empty-unbind | --attack crowd [--crowd 10]
         [--victims 5]]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from _app import CHROMIUM, CHROMIUM_ARGS, descendants, free_port, machine, pss, start, stop  # noqa: E402

from gradviz.program.presets import PRESETS  # noqa: E402
from gradviz.program.share import encode_program  # noqa: E402
from gradviz.util import resources  # noqa: E402

# What the page says, as the app words it (grep src/gradviz for each):
TOO_BIG = "too big to draw as"  # graph/render._too_big: the server refuses to lay it out
BROWSER_LAYOUT = "Lay out all"  # ui/autograd/graph_tab.show_graph: the opt-in checkbox
DRAW_ANYWAY = "Draw it anyway"  # ui/autograd/graph_tab.tab: graphs over BIG_GRAPH nodes
LEFT_OUT = "values are shown for"  # program/results.cap_result: over the value budget
WOULD_ALLOCATE = "would allocate"  # program/budget: over the per-tensor or total caps
PUBLIC_TIMING_CAP = "one timing may use on this public server"  # speed/memory.check_public_cap
SMALLER = "Choose a smaller size"  # speed/memory.check_memory and check_public_cap
COMPARED = "Why the two figures differ"  # ui/speed/compare.EXPLAIN, under a finished comparison
ALERT_ERROR = '[data-testid="stAlertContentError"]'


class Sampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.peak_detail, self.samples = pid, 0, {}, 0
        self.peak_who: dict[int, str] = {}
        self.running = True
        self.phase = "start"
        self.phase_peak: dict[str, int] = {}
        self.phase_parts: dict[str, str] = {}  # each phase's peak, process by process
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
            if total > self.phase_peak.get(self.phase, -1):
                self.phase_peak[self.phase] = total
                roles = _roles(self.pid, detail)
                self.phase_parts[self.phase] = " + ".join(
                    f"{roles[p]} {size / 1e6:.0f}"
                    for p, size in sorted(detail.items(), key=lambda kv: -kv[1])
                    if size >= 1e6
                )
            if total > self.peak:
                self.peak, self.peak_detail = total, detail
                # Who they were, read now: job workers are gone by the time of the report.
                roles = _roles(self.pid, detail)
                self.peak_who = {p: f"{roles[p]}: {_cmd(p)}" for p in detail}
            time.sleep(0.2)


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _roles(server: int, pids) -> dict[int, str]:
    """server, forkserver, resource tracker, or worker (a fork of the forkserver: same
    command line, so told apart by its parent)."""
    roles = {}
    for p in pids:
        cmd = _cmd(p)
        if p == server:
            roles[p] = "server"
        elif "forkserver import main" in cmd and _ppid(p) == server:
            roles[p] = "forkserver"
        elif "resource_tracker" in cmd:
            roles[p] = "resource tracker"
        elif "forkserver import main" in cmd:
            roles[p] = "worker"
        else:
            roles[p] = "other"
    return roles


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:90]
    except OSError:
        return "(gone)"


# The graph: an <img> of the server-drawn SVG where Graphviz is installed, else
# Streamlit's in-browser graphviz chart.
CHART = 'img[alt="autograd graph"], [data-testid="stGraphVizChart"] svg'
# A graph, or a message (a preset with a classic mistake, nothing tracked, a refusal).
DRAWN = CHART + ', [data-testid="stAlert"]'


def tour(
    url: str,
    sampler: Sampler | None = None,
    batch: int | None = None,
    normal: bool = True,
    attacks: bool = False,
    public: bool = False,
    only: str | None = None,
) -> list[str]:
    from playwright.sync_api import sync_playwright

    visited = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
        chart = page.locator(CHART).first

        def visit(
            link: str, label: str, wait_text: str | None = "Backward", on=None, wait_s: float = 60
        ) -> None:
            on = on or page
            on.goto(link, wait_until="domcontentloaded", timeout=120_000)
            on.locator(DRAWN).first.wait_for(timeout=120_000)
            if wait_text:
                on.get_by_text(wait_text).first.wait_for(timeout=wait_s * 1000)
            on.wait_for_timeout(300)
            visited.append(label)

        def phase(name: str) -> None:
            if sampler:
                sampler.phase = name

        try:
            if normal:
                _normal_tour(url, page, chart, visit, phase, visited, batch)
            if attacks:
                _attacks(url, browser, page, visit, phase, visited, public)
            if attacks or only == "empty-unbind":
                _empty_unbind(url, browser, visit, phase, visited, sampler)
        except Exception:
            print(f"a step failed after: {visited[-1:]}", file=sys.stderr)
            _show_pages(browser)
            raise
        phase("after")
        page.wait_for_timeout(3000)
        browser.close()
    return visited


def _show_pages(browser) -> None:
    """Every open page's alerts, and a screenshot of it: what a failed step was looking at."""
    pages = [pg for context in browser.contexts for pg in context.pages]
    for i, pg in enumerate(pages):
        shot = Path(tempfile.gettempdir()) / f"memory-tour-failed-{os.getpid()}-{i}.png"
        try:
            pg.screenshot(path=str(shot), full_page=True, timeout=30_000)
            alerts = pg.locator('[data-testid="stAlert"]').all_inner_texts()
        except Exception as exc:  # noqa: BLE001 - a report on the way out
            print(f"  page {i} {pg.url[:80]}: unreadable ({exc})", file=sys.stderr)
            continue
        print(f"  page {i} {pg.url[:80]}: {shot}", file=sys.stderr)
        for text in alerts:
            print("    alert: " + " ".join(text.split())[:400], file=sys.stderr)


def _normal_tour(url, page, chart, visit, phase, visited, batch) -> None:
    """Every page, as a visitor would see it."""
    phase("autograd")
    visit(url + "/", "landing (the lesson)")
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

    phase("devices")
    page.goto(f"{url}/devices", wait_until="domcontentloaded")
    page.get_by_text("This host").first.wait_for(timeout=120_000)
    page.wait_for_timeout(1000)
    visited.append("devices")

    phase("speed")
    page.goto(f"{url}/speed", wait_until="domcontentloaded")
    page.get_by_text("Estimated on this CPU").first.wait_for(timeout=180_000)
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("button", name="Time it both ways").click()
    page.get_by_text("Why the two figures differ").first.wait_for(timeout=180_000)
    visited.append("speed: estimate and a timing (1,000,000 elements, 10 iterations)")

    phase("training")
    page.goto(f"{url}/training", wait_until="domcontentloaded")
    page.get_by_text("training and", exact=False).first.wait_for(timeout=120_000)
    fields = [("Epochs", 1)] + ([("Batch size", batch)] if batch else [])
    for label, value in fields:
        box = page.get_by_label(label, exact=True)
        box.fill(str(value))
        box.press("Enter")
        page.wait_for_timeout(1500)
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click()
    page.get_by_text("Accuracy of the network on the", exact=False).first.wait_for(timeout=600_000)
    visited.append(f"training: fast preset, 1 epoch, batch {batch or 'default'}, default folder")


# ---------------------------------------------------------------------------------------------
# A hostile visitor's inputs (--attacks, --attacks-only)
# ---------------------------------------------------------------------------------------------


def big_graph_program(rounds: int = 420) -> str:
    """unbind/stack rounds: 420 give 2,948 nodes and 3,782 edges (`gradviz render`), over
    every format's node cap on a public host (PNG 1,000, SVG 1,500)."""
    body = "a, b, c = x.unbind()\nx = torch.stack([b, c, a]) * 1.01\n" * rounds
    return "x = torch.rand(3, 3, requires_grad=True)\n" + body + "y = x.sum()\n"


def many_tensors_program(n: int = 2500) -> str:
    """n named tensors of 4,096 values each: far over a result's value budget."""
    names = ", ".join(f"a{i}" for i in range(n))
    return f"x = torch.rand({n}, 4096)\n{names} = x.unbind()\n"


# Sizes given as 0-d tensors: each must be refused before it allocates (1.6 GB, 800 MB).
SIZES_AS_TENSORS = (
    "n = torch.tensor(200000000)\na = torch.arange(n)\n",
    "z = torch.zeros(torch.tensor(200000000))\n",
    "l = torch.linspace(0, 1, steps=torch.tensor(200000000))\n",
)


def dense_graph_program(inputs: int = 100, sums: int = 125) -> str:
    """Few nodes, many edges: `inputs` named slices of x, and `sums` stacks of all of them
    (each stack an edge from every slice). 100 and 125 give 735 nodes and 13,228 edges
    (`gradviz render`), in 6 kB of source: over the public edge caps (SVG 3,000, PNG 2,000)."""
    lines = [
        f"x = torch.rand({inputs}, 2, requires_grad=True)",
        "u = x.unbind()",
        ", ".join(f"a{i}" for i in range(inputs)) + " = u",
    ]
    lines += [f"s{k} = torch.stack(u).sum(0) * {k + 2} + 1" for k in range(sums)]
    lines.append("y = torch.stack([" + ", ".join(f"s{k}" for k in range(sums)) + "]).sum()")
    return "\n".join(lines) + "\n"


def largest_speed_size(public: bool, workload: str = "elementwise") -> int:
    """The largest size the Speed page accepts for a CPU float32 comparison (its memory check,
    gradviz.speed.memory.check_memory, against the RAM free now), as the server would judge it."""
    from gradviz.speed import memory, workloads

    old = os.environ.get("GRADVIZ_PUBLIC")
    os.environ["GRADVIZ_PUBLIC"] = "1" if public else "0"
    try:
        free = resources.cpu_memory_available()
        lo, hi = 1, 10**10  # the page's max_value
        while lo < hi:
            mid = (lo + hi + 1) // 2
            try:
                memory.check_memory(workloads.TimingJob(workload, mid), free)
                lo = mid
            except memory.SizeTooLarge:
                hi = mid - 1
        return lo
    finally:
        if old is None:
            del os.environ["GRADVIZ_PUBLIC"]
        else:
            os.environ["GRADVIZ_PUBLIC"] = old


def _share(url: str, source: str, backward: str | None = None) -> str:
    link = f"{url}/?p={encode_program(source)}"
    return link + (f"&backward={backward}" if backward else "")


def _alert_text(page, text: str, kind: str = "") -> str:
    """The visible alert (kind: Error, Warning, Info, Success) that holds `text`, once there."""
    alert = (
        page.locator(f'[data-testid="stAlertContent{kind}"]' if kind else '[data-testid="stAlert"]')
        .filter(has_text=text)
        .filter(visible=True)
        .first
    )
    alert.wait_for(timeout=180_000)
    return " ".join(alert.inner_text().split())


def _choose_format(page, fmt: str) -> None:
    radio = page.get_by_test_id("stRadio").filter(has_text="Format").filter(visible=True)
    radio.get_by_text(fmt, exact=True).click()


def _export_outcome(page, fmt: str, before: str | None = None, timeout_s: float = 180) -> str:
    """What the Export tab answers for `fmt`: a download (taken), or an error's text (other
    than `before`, the answer for the format chosen before, still shown during the rerun)."""
    button = page.get_by_role("button", name=f"Download {fmt.upper()}").filter(visible=True)
    errors = page.locator(ALERT_ERROR).filter(visible=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if button.count():
            with page.expect_download(timeout=120_000):
                button.first.click()
            return f"{fmt.upper()} drawn and downloaded"
        if errors.count():
            text = " ".join(errors.first.inner_text().split())
            if text != before:
                return text
        page.wait_for_timeout(250)
    raise TimeoutError(f"the Export tab gave no answer for {fmt.upper()} in {timeout_s:.0f} s")


def _export_svg_and_png(page, visited, label: str) -> tuple[str, str]:
    """The Export tab's answers for SVG, then PNG, each noted in `visited`."""
    page.get_by_role("tab", name="Export").click()
    svg = _export_outcome(page, "svg")
    _choose_format(page, "png")
    png = _export_outcome(page, "png", before=svg)
    visited.append(f"{label}, SVG export: {svg}")
    visited.append(f"{label}, PNG export: {png}")
    return svg, png


def _attacks(url, browser, page, visit, phase, visited, public: bool) -> None:
    """A hostile visitor's inputs, each a phase of its own; each waits for a definite outcome."""
    from playwright.sync_api import expect

    # a. A ~3,000-node graph: export refused; the Graph tab does not lay it out in the browser.
    phase("attack: big graph")
    visit(_share(url, big_graph_program(), "y"), "attack a: big graph opened", None)
    svg, png = _export_svg_and_png(page, visited, "attack a: big graph")
    if TOO_BIG not in svg or TOO_BIG not in png:
        raise AssertionError(f"a {TOO_BIG!r} refusal was expected for SVG and PNG")
    page.get_by_role("tab", name="Graph").click()
    anyway = page.get_by_role("button", name=DRAW_ANYWAY).filter(visible=True)
    refused = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text=TOO_BIG)
    anyway.or_(refused.filter(visible=True)).first.wait_for(timeout=120_000)
    if anyway.count():  # graphs over BIG_GRAPH nodes wait for this button first
        visited.append("attack a: big graph, Graph tab: 'Draw it anyway' offered, clicked")
        anyway.first.click()
    warning = _alert_text(page, TOO_BIG, "Warning")
    checkbox = page.get_by_role("checkbox", name=BROWSER_LAYOUT).filter(visible=True)
    checkbox.first.wait_for(timeout=60_000)
    page.wait_for_timeout(3000)  # time for a layout to start, were one started
    laid_out = page.locator(CHART).count()
    visited.append(
        f"attack a: big graph, Graph tab: warning {warning!r}; checkbox "
        f"{'ticked' if checkbox.first.is_checked() else 'not ticked'}; "
        f"graph drawings on the page: {laid_out}"
    )
    if laid_out:
        visited.append("FINDING: attack a: the refused graph was laid out anyway")

    # b. A 2,500-tensor result, opened in 5 fresh browser sessions held open together.
    phase("attack: many tensors")
    link = _share(url, many_tensors_program())
    contexts = []
    try:
        for i in range(5):
            contexts.append(browser.new_context(viewport={"width": 1400, "height": 1100}))
            tab = contexts[-1].new_page()
            # The page lays out a 2,501-row Tensors table: on 2 cores the tab can take a
            # minute or more to answer (seen 30-95 s), while the server has long finished.
            label = f"attack b: 2,500-tensor unbind, fresh session {i + 1} of 5"
            t0 = time.perf_counter()
            visit(link, label, LEFT_OUT, tab, wait_s=300)
            visited[-1] += f" (summary visible after {time.perf_counter() - t0:.0f} s)"
        visited.append(f"attack b: summary: {_alert_text(tab, LEFT_OUT, 'Info')}")
    finally:
        for context in contexts:
            context.close()

    # c. Sizes given as tensors: refused before anything is allocated.
    phase("attack: sizes as tensors")
    for source in SIZES_AS_TENSORS:
        visit(_share(url, source), "attack c: " + source.strip().replace("\n", "; "), None)
        visited.append(f"attack c: refused: {_alert_text(page, WOULD_ALLOCATE)}")

    # d. The Speed page's comparison at the largest size it accepts (and one past it).
    phase("attack: speed max size")
    page.goto(f"{url}/speed", wait_until="domcontentloaded")
    page.get_by_text("Estimated on this CPU").first.wait_for(timeout=180_000)
    main = page.get_by_test_id("stMainBlockContainer")
    run = main.get_by_role("button", name="Time it both ways")
    size = page.get_by_label("Size (elements per tensor)", exact=True)
    size.fill(str(10**10))  # the number input's max_value
    size.press("Enter")
    too_big = _alert_text(page, PUBLIC_TIMING_CAP if public else SMALLER, "Warning")
    expect(run).to_be_disabled(timeout=60_000)
    visited.append(f"attack d: 10,000,000,000 elements: button disabled; {too_big}")
    largest = largest_speed_size(public)
    size.fill(str(largest))
    size.press("Enter")
    page.locator('[data-testid="stAlertContentWarning"]').filter(has_text=SMALLER).first.wait_for(
        state="detached", timeout=120_000
    )
    expect(run).to_be_enabled(timeout=120_000)
    run.click()
    outcome = page.get_by_text(COMPARED).or_(page.locator(ALERT_ERROR)).first
    outcome.wait_for(timeout=600_000)
    if page.get_by_text(COMPARED).count():
        rows = main.locator("table").filter(has_text="naive / correct").first  # ui.common.table
        result = " ".join(rows.inner_text().split())[:400]
    else:
        result = "refused: " + " ".join(page.locator(ALERT_ERROR).first.inner_text().split())
    visited.append(f"attack d: {largest:,} elements (the largest accepted), timed: {result}")

    # e. A dense graph (~750 nodes, ~13,000 edges): 3 reloads, then SVG and PNG export.
    phase("attack: dense graph")
    visit(_share(url, dense_graph_program(), "y"), "attack e: dense graph opened", None)
    for i in range(3):
        page.reload(wait_until="domcontentloaded", timeout=120_000)
        page.locator(DRAWN).first.wait_for(timeout=120_000)
        page.wait_for_timeout(300)
        visited.append(f"attack e: dense graph, reload {i + 1} of 3")
    _export_svg_and_png(page, visited, "attack e: dense graph")


def empty_unbind_program(n: int = 600, rows: int = 4096) -> str:
    """n names unbound from an n x rows x 0 tensor: a 1.6 kB link. Each name's value used to
    come back as `rows` empty lists (no number, so the value budget let them through): 5 MB
    pickled, 160 MB once the server had read it back, on every rerun of every session."""
    names = ", ".join(f"a{i}" for i in range(n))
    return f"x = torch.zeros({n}, {rows}, 0)\n{names} = x.unbind()\n"


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process pid so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _empty_unbind(url, browser, visit, phase, visited, sampler: Sampler | None) -> None:
    """f. The empty-unbind link in 5 fresh sessions held open together, each tab rerun 3
    times (R, Streamlit's rerun key), then every tab closed; the server's CPU seconds for
    each step and its memory 20 s after the last tab closed."""
    server = sampler.pid if sampler else None
    cpu = (lambda: _cpu_seconds(server)) if server else (lambda: 0.0)
    phase("attack: empty unbind")
    link = _share(url, empty_unbind_program())
    contexts = []
    try:
        for i in range(5):
            contexts.append(browser.new_context(viewport={"width": 1400, "height": 1100}))
            tab = contexts[-1].new_page()
            t0, c0 = time.perf_counter(), cpu()
            visit(link, f"attack f: empty unbind, fresh session {i + 1} of 5", None, tab)
            tab.get_by_text("a599").first.wait_for(timeout=300_000)
            visited[-1] += (
                f" (shown after {time.perf_counter() - t0:.0f} s; server CPU {cpu() - c0:.2f} s)"
            )
        c0 = cpu()
        for context in contexts:
            tab = context.pages[0]
            for _ in range(3):
                tab.locator("body").press("r")
                tab.wait_for_timeout(300)
                tab.locator('[data-testid="stStatusWidget"]').wait_for(
                    state="hidden", timeout=120_000
                )
        visited.append(
            f"attack f: empty unbind, 15 reruns (3 per tab): server CPU {cpu() - c0:.2f} s"
        )
    finally:
        for context in contexts:
            context.close()
    phase("attack: empty unbind, tabs closed")
    time.sleep(20)
    if server:
        visited.append(
            f"attack f: 20 s after the tabs closed: server {pss(server) / 1e6:.0f} MB PSS"
        )


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
    steps = ap.add_mutually_exclusive_group()
    steps.add_argument(
        "--attacks", action="store_true", help="after the tour, repeat a hostile visitor's inputs"
    )
    steps.add_argument(
        "--attacks-only", action="store_true", help="only the hostile inputs, not the tour"
    )
    steps.add_argument(
        "--attack",
        choices=["empty-unbind", "crowd"],
        help="only this one hostile input, not the tour (crowd: many hostile tabs at once)",
    )
    ap.add_argument("--crowd", type=int, default=10, help="hostile tabs for --attack crowd")
    ap.add_argument("--victims", type=int, default=5, help="other visitors for --attack crowd")
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
    crowd = None
    try:
        if args.attack == "crowd":
            visited, crowd = [], crowd_attack(f"http://127.0.0.1:{port}", sampler, args)
        else:
            visited = tour(
                f"http://127.0.0.1:{port}",
                sampler,
                args.batch,
                normal=not (args.attacks_only or args.attack),
                attacks=args.attacks or args.attacks_only,
                public=args.public,
                only=args.attack,
            )
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
    steps = "attacks only" if args.attacks_only else "tour and attacks" if args.attacks else "tour"
    steps = f"attack {args.attack} only" if args.attack else steps
    print(f"steps: {steps}")
    print(
        f"pages/steps toured: {len(visited)} in {time.perf_counter() - t0:.0f} s; samples: {sampler.samples}"
    )
    print(f"peak PSS (server + workers): {peak_mb:.0f} MB (limit {args.limit_mb:.0f} MB)")
    print(f"processes seen: {len(sampler.processes_seen)}")
    width = max(map(len, sampler.phase_peak), default=9)
    for phase, peak in sampler.phase_peak.items():
        parts = sampler.phase_parts.get(phase, "")
        print(f"  peak during {phase:{width}s} {peak / 1e6:7.0f} MB  ({parts})")
    print("processes at the peak:")
    for pid, size in sorted(sampler.peak_detail.items(), key=lambda kv: -kv[1]):
        print(f"  {size / 1e6:7.0f} MB  {pid}  {sampler.peak_who.get(pid) or _cmd(pid)}")
    outcomes = [v for v in visited if v.startswith(("attack", "FINDING"))]
    if outcomes:
        print("attack steps and what the page answered:")
        for line in outcomes:
            print(f"  {line}")
    ok = peak_mb <= args.limit_mb
    if crowd is not None:
        ok = report_crowd(crowd, args) and ok
    sys.exit(0 if ok else 1)


def crowd_attack(url: str, sampler: Sampler, args) -> dict:
    """--attack crowd: class_load's hostile tabs and victims against this server at once."""
    import asyncio

    import class_load

    sampler.phase = f"attack: crowd of {args.crowd}"
    return asyncio.run(class_load.drive(url, args.victims, 3, False, None, args.crowd))


def report_crowd(out: dict, args) -> bool:
    """The victims' figures and every attack's outcomes; False if anything broke."""
    from class_load import percentile, report_attacks

    lat = out["latency"]
    print(f"crowd: {args.crowd} hostile tabs, {args.victims} victims x 3 runs")
    if lat:
        print(
            f"  victims' submit -> own graph s: p50={sorted(lat)[len(lat) // 2]:.2f} "
            f"p95={percentile(lat, 0.95):.2f} max={max(lat):.2f} (n={len(lat)})"
        )
    print(f"  victims' errors: {len(out['errors'])}; leaks: {len(out['leaks'])}")
    for e in out["errors"][:10]:
        print(f"    error: {e}")
    print(f"  attack runs answered: {out['attack_runs']}")
    broken = report_attacks(out)
    return not broken and not out["errors"] and not out["leaks"]


if __name__ == "__main__":
    main()
