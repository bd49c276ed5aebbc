"""Real browser: the Speed page's ratios agree with each other. After section 1 and a sweep
have both timed 1,000,000 elements x 10 on this CPU, section 3's headline and its crossover
table show one CPU figure for that job and the same ratio; a point the sweep flags is in no
ratio; the GPU's launch / pending columns say n/a on the CPU's row; the sweep's table has the
reference GPU's line beside this CPU's."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from e2e_support import free_port, start_streamlit, stop

pytestmark = pytest.mark.e2e

SCRIPT = Path(__file__).resolve().parent / "apps" / "speed_only.py"
WITH_COPY = "GPU with the copy against the CPU"
TABLES_JS = """() => [...document.querySelectorAll('table')].map((t) => {
  const head = [...t.querySelectorAll('thead th')].map((th) => th.innerText.trim());
  return [...t.querySelectorAll('tbody tr')].map((tr) => Object.fromEntries(
    [...tr.querySelectorAll('td')].map((td, i) => [head[i], td.innerText.trim()])));
})"""


@pytest.fixture
def server():
    port = free_port()
    proc = start_streamlit(SCRIPT, port)
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def _table(tables: list[list[dict]], column: str) -> list[dict]:
    return next(t for t in tables if t and column in t[0])


def test_the_pages_ratios_agree(server, browser):
    from playwright.sync_api import expect

    with contextlib.closing(browser.new_context(viewport={"width": 1400, "height": 900})) as ctx:
        page = ctx.new_page()
        try:
            page.goto(server, timeout=60_000)
            expect(page.get_by_text("CPU vs GPU speed")).to_be_visible(timeout=60_000)
            # Section 1 at its default job (1,000,000 elements, 10 iterations), then the sweep
            # at its default sizes, which include 1,000,000 at 10 iterations.
            compare = page.get_by_role("button", name="Time it both ways")
            expect(compare).to_be_enabled(timeout=120_000)  # after the quick run's estimate
            compare.click()
            # (a click on Run sweep before the comparison ends would stop it)
            expect(page.get_by_text("cpu (live)", exact=True)).to_have_count(1, timeout=120_000)
            page.get_by_role("button", name="Run sweep").click()
            expect(page.get_by_text("Sweep: done")).to_be_visible(timeout=180_000)
            page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=60_000)
            tables = page.evaluate(TABLES_JS)

            headline = _table(tables, "how it is known")
            cpu = headline[0]
            copy = next(r for r in headline if r["what"].endswith("copy from the CPU first"))
            crossover = _table(tables, WITH_COPY)
            row = next(r for r in crossover if r["shape"] == "1x1000x1000")
            if row[WITH_COPY] == "flagged, no ratio":  # both measurements flagged: none used
                assert cpu["how it is known"] == "scaled from the quick run on this host"
            else:
                assert cpu["time per call"] == row["CPU, this host"], (cpu, row)
                assert cpu["how it is known"] == row["how it is known"], (cpu, row)
                assert copy["against the CPU"] == row[WITH_COPY], (copy, row)

            # A sweep point the page flags is in no ratio (unless section 1's trusted
            # measurement of the same job stands for it).
            sweep = _table(tables, "series")
            flagged = {r["size"] for r in sweep if r["series"].startswith("CPU") and r["flag"]}
            for r in crossover:
                if r["size"] in flagged and r["how it is known"] != "measured in section 1":
                    assert r[WITH_COPY] == "flagged, no ratio", r
            # Both devices in the sweep, labelled: this CPU live, the reference GPU.
            series = {r["series"] for r in sweep}
            assert "CPU, this host (live)" in series
            assert any(s.startswith("GPU ") and "reference" in s for s in series), series

            comparison = _table(tables, "naive (lesson)")
            live = next(r for r in comparison if r["device"] == "cpu (live)")
            assert live["launch returned"] == live["pending at sync"] == "n/a on a CPU", live
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            page.close()
