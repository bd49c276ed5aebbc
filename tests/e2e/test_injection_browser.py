"""Real browser: a share link whose program carries Markdown, HTML and bare addresses makes
the page fetch nothing from another host and shows no link or image from the program: in
the device error's Fix box (the dictionary key stays whole), in "The program itself ran
backward" and in an error box quoting a bare URL, www. address and e-mail address."""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlparse

import pytest

from gradviz.program.share import encode_program
from tests.security.injection import HOST

pytestmark = pytest.mark.e2e

KEY = repr(f"`![](http://{HOST}/x)`")
FIX_PROGRAM = (
    f"a = torch.ones(2)\nd = {{{KEY}: torch.ones(2, requires_grad=True)}}\n"
    f"d[{KEY}].sum().backward()\ny = a + d[{KEY}]\n"
)
ADDRESSES = f"see http://{HOST}/x www.{HOST} or mail@{HOST}"
ERROR_PROGRAM = f"x = torch.ones(3, requires_grad=True)\ny = torch.norm(x, p={ADDRESSES!r})\n"


def _open(browser, url: str):
    """The page with every request to another host refused and noted."""
    context = browser.new_context(viewport={"width": 1400, "height": 1300})
    elsewhere: list[str] = []

    def route(r):
        if urlparse(r.request.url).hostname in ("127.0.0.1", "localhost"):
            r.continue_()
        else:
            elsewhere.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    return page, elsewhere


def _from_program(page) -> dict[str, int]:
    return {
        "img": page.locator(f'img[src*="{HOST}"]').count(),
        "a": page.locator(f'a[href*="{HOST}"]').count(),
    }


def test_program_text_in_the_fix_box_is_text_and_fetches_nothing(browser, app_server):
    params = {"p": encode_program(FIX_PROGRAM), "move": "a", "to": "cuda:0"}
    page, elsewhere = _open(browser, f"{app_server}/?{urlencode(params)}")
    try:
        fix = page.locator('[data-testid="stAlert"]').filter(has_text="Fix:")
        fix.wait_for(timeout=120_000)
        ran = page.locator('[data-testid="stAlert"]').filter(has_text="ran backward")
        ran.wait_for(timeout=30_000)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)
        assert f"d[{KEY}] = d[{KEY}].to(a.device)" in fix.inner_text()
        assert f"d[{KEY}].sum().backward()" in ran.inner_text()
        for box in (fix, ran):
            assert box.locator("img, a").count() == 0, box.inner_html()
        assert _from_program(page) == {"img": 0, "a": 0}
        assert [u for u in elsewhere if HOST in u] == []
    finally:
        page.context.close()


def test_bare_addresses_in_an_error_box_are_not_links(browser, app_server):
    page, elsewhere = _open(
        browser, f"{app_server}/?{urlencode({'p': encode_program(ERROR_PROGRAM)})}"
    )
    try:
        # the word joiner that keeps an address from being linked sits after the @
        said = re.compile(f"mail@\u2060?{re.escape(HOST)}")
        box = page.locator('[data-testid="stAlert"]').filter(has_text=said)
        box.wait_for(timeout=120_000)
        shown = box.inner_text().replace("\u2060", "")
        assert ADDRESSES in shown, shown
        assert box.locator("a").count() == 0, box.inner_html()
        assert _from_program(page) == {"img": 0, "a": 0}
        assert [u for u in elsewhere if HOST in u] == []
    finally:
        page.context.close()
