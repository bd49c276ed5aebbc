"""Real browser, a 1024x768 classroom screen: the Tensors tab's table fits the page's graph
column (nothing runs off its right edge) and each tensor is one short row (values used to
fill a cell each, making rows 100-240 px tall)."""

from __future__ import annotations

import pytest
from e2e_support import graph_svg

pytestmark = pytest.mark.e2e

PROGRAM = (
    "torch.manual_seed(0)\n"
    "W = torch.randn(4, 6, requires_grad=True)\n"
    "x = torch.randn(6)\n"
    "h = torch.tanh(W @ x)\n"
    "z = h.detach()\n"
    "loss = (h * h).sum()\n"
    "loss.backward()\n"
)

TABLE_JS = """() => {
  const table = [...document.querySelectorAll('table')].find(
    t => t.querySelector('thead') && t.querySelector('thead').innerText.includes('requires_grad'));
  if (!table) return null;
  const column = table.closest('[data-testid="stColumn"]') || document.body;
  const box = table.closest('[data-testid="stMarkdownContainer"]') || table.parentElement;
  const rows = [...table.querySelectorAll('tbody tr')];
  return {
    rows: rows.length,
    heights: rows.map(r => r.getBoundingClientRect().height),
    scroll: table.scrollWidth, box: box.clientWidth, boxScroll: box.scrollWidth,
    right: table.getBoundingClientRect().right,
    columnRight: column.getBoundingClientRect().right,
  };
}"""


def test_the_tensors_table_fits_its_column_at_1024_px(browser, app_server):
    from gradviz.program.share import encode_program

    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        page.goto(f"{app_server}/?p={encode_program(PROGRAM)}", wait_until="domcontentloaded")
        graph_svg(page, "TanhBackward0")
        idle = page.locator('[data-testid="stStatusWidget"]')
        idle.wait_for(state="hidden", timeout=120_000)  # the first run has finished
        page.get_by_role("tab", name="Tensors").click()
        page.wait_for_function(f"({TABLE_JS})() !== null", timeout=60_000)
        page.wait_for_timeout(500)  # the table laid out
        got = page.evaluate(TABLE_JS)
        assert got["rows"] >= 5
        assert got["scroll"] <= got["box"] + 1 and got["boxScroll"] <= got["box"] + 1, got
        assert got["right"] <= got["columnRight"] + 1, got
        assert max(got["heights"]) <= 48, got  # at most two short lines a tensor (was 627 px)
    finally:
        page.close()
