"""Real browser: move a leaf to (simulated) CUDA, see the mixing error explained, move every
leaf and see the graph coloured by device with a copy edge."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import graph_svg

pytestmark = pytest.mark.e2e
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PROGRAM = (
    "w = torch.randn(2, 3, requires_grad=True)\nx = torch.randn(3)\nh = w @ x\ny = h.cpu().sum()\n"
)


def test_move_leaf_to_cuda_error_then_colours(browser, app_server):
    from gradviz.program.share import encode_program

    page = browser.new_page(viewport={"width": 1400, "height": 1700})
    try:
        page.goto(
            f"{app_server}/?p={encode_program(PROGRAM)}&backward=y",
            wait_until="domcontentloaded",
        )
        graph_svg(page)
        # The sidebar says which devices exist.
        page.locator('[data-testid="stSidebar"]').get_by_text("cuda:0", exact=False).first.wait_for(
            timeout=30_000
        )

        idle = page.locator('[data-testid="stStatusWidget"]')
        idle.wait_for(state="hidden", timeout=120_000)  # the first run has finished
        page.get_by_text("Devices: move leaf tensors and rerun").click()
        idle.wait_for(state="hidden", timeout=120_000)
        select = page.locator('[data-testid="stMultiSelect"]').first
        option = page.get_by_role("option", name="w", exact=True)
        for _ in range(12):  # the page may still be rerunning after its first load
            select.get_by_role("button", name="Open").click()
            try:
                option.wait_for(timeout=5_000)
                break
            except Exception:
                page.keyboard.press("Escape")
        option.click()
        page.keyboard.press("Escape")

        # Only w moved: PyTorch refuses w @ x, and the page says which tensor to move.
        page.get_by_text("Expected all tensors to be on the same device").first.wait_for(
            timeout=60_000
        )
        page.get_by_text("x = x.to(w.device)").first.wait_for(timeout=30_000)
        page.get_by_text("(line 1) from cpu to", exact=False).first.wait_for(timeout=30_000)

        # Move every leaf: the graph is drawn, coloured by device, with the copy back to the CPU.
        page.get_by_text("all leaves").click()
        svg = graph_svg(page, "copy cuda:0→cpu")
        assert "#76b900" in svg  # cuda:0's colour
        assert "cuda:0" in svg
        # the previous run's error and fix leave once this run has finished
        page.get_by_text("x = x.to(w.device)").first.wait_for(state="detached", timeout=30_000)
        assert "Expected all tensors" not in page.content()
        # Streamlit's "running" widget is gone once the rerun has finished: no stale elements
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=60_000)
        page.wait_for_timeout(1_000)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "devices.png"), full_page=True)
    finally:
        page.close()


def test_devices_page_lists_lessons(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    try:
        page.goto(f"{app_server}/devices", wait_until="domcontentloaded")
        page.get_by_text("Mixing devices").first.wait_for(timeout=60_000)
        page.get_by_text("Model placement").first.wait_for(timeout=30_000)
        page.get_by_text("What moving data costs").first.wait_for(timeout=30_000)
    finally:
        page.close()
