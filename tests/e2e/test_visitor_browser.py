"""Real browser: the tabs of one browser are one visitor (the page's signed cookie reaches
the server with every new tab), and another browser is another visitor (issue item 8)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from e2e_support import free_port, start_streamlit, stop

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "e2e" / "apps" / "visitor_only.py"
KEY = re.compile(r"\S+\|visitor [0-9a-f]{32}")


@pytest.fixture
def server():
    port = free_port()
    proc = start_streamlit(SCRIPT, port)
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def _key(context, url: str) -> str:
    page = context.new_page()
    page.goto(url, timeout=60_000)
    code = page.locator("code").filter(has_text="|visitor ")
    code.wait_for(timeout=30_000)
    text = code.inner_text().strip()
    assert KEY.fullmatch(text), text
    return text


def test_tabs_of_one_browser_share_one_key_and_another_browser_has_its_own(server, browser):
    with contextlib.closing(browser.new_context()) as one:
        first = _key(one, server)
        one.pages[0].wait_for_function("document.cookie.includes('gradviz_visitor=')")
        assert _key(one, server) == first  # a second tab
        assert _key(one, server) == first  # and a third
        with contextlib.closing(browser.new_context()) as other:
            assert _key(other, server) != first
