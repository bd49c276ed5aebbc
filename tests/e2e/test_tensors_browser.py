"""Real browser: the Tensors tab shows a matrix as a grid, one value per cell, that stays on
the page (the preview text used to wrap one number per line and run off the right edge)."""

from __future__ import annotations

import pytest
from e2e_support import graph_svg

pytestmark = pytest.mark.e2e

PROGRAM = "W = torch.randn(6, 12, requires_grad=True)\nloss = (W * W).sum()\n"

GRID_JS = """() => {
  const table = [...document.querySelectorAll('table')].find(
    t => t.innerText.includes('col 11') && t.innerText.includes('row 5'));
  if (!table) return null;
  const rows = [...table.querySelectorAll('tbody tr')];
  const heights = rows.map(r => r.getBoundingClientRect().height);
  const header = table.querySelector('thead tr').getBoundingClientRect().height;
  let box = table, scrolls = false;
  while (box && box !== document.body) {
    const style = getComputedStyle(box);
    if (['auto', 'scroll'].includes(style.overflowX) && box.scrollWidth > box.clientWidth)
      scrolls = true;
    box = box.parentElement;
  }
  return {rows: rows.length, cells: rows[0].children.length, heights, header,
          right: table.getBoundingClientRect().right,
          width: document.documentElement.clientWidth, scrolls};
}"""


def test_a_matrix_is_a_grid_that_stays_on_the_page(browser, app_server):
    from gradviz.program.share import encode_program

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        page.goto(f"{app_server}/?p={encode_program(PROGRAM)}", wait_until="domcontentloaded")
        graph_svg(page, "MulBackward0")
        idle = page.locator('[data-testid="stStatusWidget"]')
        idle.wait_for(state="hidden", timeout=120_000)  # the first run has finished
        page.get_by_role("tab", name="Tensors").click()
        select = page.locator('[data-testid="stSelectbox"]').filter(has_text="Show all values of")
        option = page.get_by_role("option", name="W", exact=True)
        for _ in range(12):  # the page may still be rerunning after its first load
            select.locator("input").click()
            try:
                option.wait_for(timeout=5_000)
                break
            except Exception:
                page.keyboard.press("Escape")
        option.click()
        page.wait_for_function(f"({GRID_JS})() !== null", timeout=60_000)
        grid = page.evaluate(GRID_JS)
        assert grid["rows"] == 6 and grid["cells"] == 13  # a row label and 12 values
        # one line per row: no value wraps onto a second line
        assert max(grid["heights"]) <= 1.3 * min(grid["heights"])
        assert max(grid["heights"]) <= 1.3 * grid["header"]
        # on the page, or inside a box that scrolls sideways
        assert grid["right"] <= grid["width"] or grid["scrolls"], grid
    finally:
        page.close()
