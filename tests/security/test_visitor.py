"""One visitor, one identity, however many tabs (issue item 8): the page's signed cookie is
shared by a browser's tabs, and the address behind the proxy groups identities; the pool's
budget and turns follow that key, not the tab."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
import streamlit.runtime.context as st_context
from streamlit.testing.v1 import AppTest

from gradviz.ui.visitor import COOKIE, client_address, identity_in, signed
from gradviz.util.busy import Busy
from gradviz.workers.pool import Pool, SandboxLimits

# AppTest leaves this script as the process's __main__, which a later test's spawned
# process (torch's DDP ranks) runs again without a Streamlit context: it must do nothing there.
PAGE = """
import uuid
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from gradviz.ui.visitor import cookie_script, visitor_key
ctx = get_script_run_ctx()
if ctx is not None:
    if ctx.session_id == "test session id":  # AppTest names every session alike; a tab's own
        ctx.session_id = str(uuid.uuid4())
    st.text(visitor_key())
    st.text(cookie_script())
"""


def _tab(monkeypatch, cookies: dict, forwarded: str | None = None, ip: str = "192.0.2.10"):
    """One browser tab's first request: its cookies and headers, as Streamlit hands them over;
    what the page made of them (the key, the cookie script)."""
    headers = [("X-Forwarded-For", forwarded)] if forwarded else []
    client = SimpleNamespace(headers=headers, cookies=cookies, remote_ip=ip)
    monkeypatch.setattr(st_context, "_get_client_context", lambda: client)
    at = AppTest.from_string(PAGE).run(timeout=30)
    assert not at.exception, at.exception
    return at.text[0].value, at.text[1].value


def _cookie_from(script: str) -> str:
    return re.search(rf"{COOKIE}=([0-9a-f.]+);", script).group(1)


def test_three_tabs_of_one_browser_are_one_visitor_with_one_budget(monkeypatch):
    first, script = _tab(monkeypatch, {})  # the first tab: no cookie yet; it writes one
    cookie = _cookie_from(script)
    second, again = _tab(monkeypatch, {COOKIE: cookie})
    third, _ = _tab(monkeypatch, {COOKIE: cookie})
    assert first == second == third and not again  # the cookie is there: nothing to write
    limits = SandboxLimits(workers=1, run_seconds=10, visitor_seconds_per_minute=1.0)
    with Pool(limits, testing=True) as p:
        assert p.call("hang", (1.2,), 10, visitor=first).status == "ok"
        for tab in (second, third):
            with pytest.raises(Busy, match="last minute"):
                p.call("hang", (0.0,), 10, visitor=tab)
        other, _ = _tab(monkeypatch, {})  # another browser: its own budget
        assert p.call("hang", (0.0,), 10, visitor=other).status == "ok"


def test_a_cookie_the_server_did_not_sign_is_not_an_identity(monkeypatch):
    forged = "0" * 32 + "." + "0" * 64
    assert identity_in(forged) is None and identity_in(signed("ab" * 16)) == "ab" * 16
    assert identity_in("x" * 5000) is None and identity_in(None) is None
    key, script = _tab(monkeypatch, {COOKIE: forged})
    assert "0" * 32 not in key and _cookie_from(script) != forged  # a new one, signed


def test_the_address_is_the_proxy_hop_not_what_the_client_wrote(monkeypatch):
    monkeypatch.setenv("GRADVIZ_PROXY_HOPS", "1")
    key, _ = _tab(monkeypatch, {}, forwarded="6.6.6.6, 203.0.113.9")
    assert key.startswith("203.0.113.9|visitor ")
    monkeypatch.setenv("GRADVIZ_PROXY_HOPS", "0")  # no proxy: the connection's address
    key, _ = _tab(monkeypatch, {}, forwarded="6.6.6.6")
    assert key.startswith("192.0.2.10|")


@pytest.mark.parametrize(
    ("forwarded", "connected", "hops", "address"),
    [
        (["1.2.3.4, 5.6.7.8"], "10.0.0.1", 1, "5.6.7.8"),
        (["1.2.3.4", "5.6.7.8, 10.0.0.2"], "10.0.0.1", 2, "5.6.7.8"),  # two proxies
        ([], "10.0.0.1", 1, "10.0.0.1"),  # no header: the connection
        (["1.2.3.4"], None, 0, "local"),  # no proxy, this machine
        (["2001:db8:1:2:3:4:5:6"], None, 1, "2001:db8:1:2::/64"),  # IPv6 by its /64
        (["::ffff:1.2.3.4"], None, 1, "1.2.3.4"),
        (["not an address<script>"], None, 1, "unknown"),
    ],
)
def test_client_address(forwarded, connected, hops, address):
    assert client_address(forwarded, connected, hops) == address


def test_the_wait_is_said_with_the_place_in_line_and_seconds():
    from gradviz.ui.visitor import waiting_text

    assert (
        waiting_text(2, 7.2) == "Waiting for your turn: 2 programs are ahead of yours (about 8 s)."
    )
    assert "yours is next in line (about 1 s)" in waiting_text(0, 0.2)
