"""Local mode is for one person on their own machine, never reachable from others.

`make run` listened on every interface and accepted a WebSocket under a foreign Host header
(DNS rebinding), and a deploy that forgot GRADVIZ_PUBLIC=1 ran local mode on the internet.
Now: `make run` binds 127.0.0.1 and answers only loopback names; a server others can reach
is public unless the operator says otherwise twice; a local page opened under another
site's name refuses to work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from gradviz.util import hosting
from tests.e2e.e2e_support import CHROMIUM, CHROMIUM_ARGS, free_port, start_streamlit, stop

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("env", "address", "public"),
    [
        ({}, "127.0.0.1", False),
        ({}, "localhost", False),
        ({}, "::1", False),
        ({}, None, True),  # Streamlit's default: every interface (Community Cloud)
        ({}, "0.0.0.0", True),
        ({}, "192.168.1.5", True),
        ({"GRADVIZ_PUBLIC": "0"}, "0.0.0.0", True),  # saying local is not enough when exposed
        ({"GRADVIZ_PUBLIC": "0", "GRADVIZ_TRUST_NETWORK": "1"}, "0.0.0.0", False),
        ({"GRADVIZ_TRUST_NETWORK": "1"}, None, True),  # trust alone does not choose local
        ({"GRADVIZ_PUBLIC": "1"}, "127.0.0.1", True),
    ],
)
def test_mode_follows_where_the_server_listens(env, address, public):
    env = dict(env)
    hosting.settle_mode(address, env)
    assert (env["GRADVIZ_PUBLIC"] == "1") is public


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("localhost:8501", True),
        ("127.0.0.1:8501", True),
        ("[::1]:8501", True),
        ("app.localhost", True),
        ("evil.example:8501", False),
        ("127.0.0.1.evil.example", False),
        ("", False),
        (None, False),
    ],
)
def test_local_pages_answer_loopback_names_only(header, allowed):
    assert hosting.host_allowed(header, {}) is allowed


def test_allowed_hosts_adds_a_trusted_name():
    assert hosting.host_allowed("lab-pc:8501", {"GRADVIZ_ALLOWED_HOSTS": "lab-pc, other"})


def _make_run_flags() -> list[str]:
    """The flags `make run` gives streamlit, read from the Makefile as make expands them."""
    out = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "run", "setup=true"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout
    line = next(ln for ln in out.splitlines() if "streamlit run app.py" in ln)
    return shlex.split(line.split("app.py", 1)[1])


def test_make_run_binds_loopback_and_names_its_hosts():
    flags = _make_run_flags()
    assert flags[flags.index("--server.address") + 1] == "127.0.0.1"
    hosts = [flags[i + 1] for i, f in enumerate(flags) if f == "--server.allowedHosts"]
    assert set(hosts) == {"localhost", "127.0.0.1"}


def _in_thread(fn, *args):
    """Run fn in a thread of its own: asyncio.run and Playwright's sync API refuse a thread
    where another test's event loop is running."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _websocket(port: int, host_name: str) -> str:
    return _in_thread(_websocket_here, port, host_name)


def _websocket_here(port: int, host_name: str) -> str:
    from websockets.asyncio.client import connect

    async def go() -> str:
        try:
            async with connect(
                f"ws://{host_name}:{port}/_stcore/stream",
                host="127.0.0.1",
                port=port,
                origin=f"http://{host_name}:{port}",
                subprotocols=["streamlit"],
                open_timeout=20,
            ):
                return "accepted"
        except Exception as exc:  # noqa: BLE001 - the refusal is the answer
            return f"refused: {exc}"

    return asyncio.run(go())


def _listening(port: int) -> list[str]:
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True)
    return [line.split()[3] for line in out.stdout.splitlines() if line.strip()]


@pytest.mark.slow
def test_a_make_run_server_refuses_a_foreign_host_and_listens_on_loopback():
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port, extra_args=_make_run_flags())
    try:
        assert _websocket(port, "localhost") == "accepted"
        refused = _websocket(port, "evil.example")
        assert refused.startswith("refused") and "403" in refused, refused
        listening = _listening(port)
        if listening:  # `ss` is there: nothing but loopback
            assert all(re.match(r"(127\.0\.0\.1|\[::1\]):", a) for a in listening), listening
    finally:
        stop(proc)


def _page_text(url: str, wait_for: str) -> str:
    return _in_thread(_page_text_here, url, wait_for)


def _page_text_here(url: str, wait_for: str) -> str:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); CI installs it")
    rules = "--host-resolver-rules=MAP evil.example 127.0.0.1"  # DNS rebinding, simulated
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, rules], headless=True
        )
        try:
            page = browser.new_page()
            page.goto(url)
            page.get_by_text(wait_for).first.wait_for(timeout=90_000)
            return page.inner_text("body")
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.e2e
def test_a_local_page_opened_under_another_name_refuses_to_work():
    """Even without allowedHosts (someone runs `streamlit run --server.address 127.0.0.1`
    by hand), a page whose Host is another site's name runs no program."""
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port)
    try:
        text = _page_text(f"http://evil.example:{port}/", "runs in local mode")
        assert "runs in local mode" in text and "evil.example" in text
        assert "Autograd playground" not in text
        assert "Autograd playground" in _page_text(
            f"http://localhost:{port}/", "Autograd playground"
        )
    finally:
        stop(proc)


@pytest.mark.slow
@pytest.mark.e2e
def test_a_server_others_can_reach_is_public_without_being_told():
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port, address="0.0.0.0", env={"GRADVIZ_PUBLIC": ""})
    try:
        text = _page_text(f"http://127.0.0.1:{port}/training", "Public mode")
        assert "Public mode (reachable from other machines)" in text
    finally:
        stop(proc)
