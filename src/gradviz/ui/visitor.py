"""Who is asking: one key per visitor, for the worker pool's turns and limits, that more tabs
do not multiply.

A key is `ADDRESS|visitor ID` (gradviz.workers.turns): turns go round the addresses first,
then round the identities behind each, and each identity has one program in flight and, on a
public host, one budget of worker-seconds per minute.

- ID: a random identity the server signs (HMAC-SHA256 with a secret made when the server
  starts) and the page keeps in a cookie (`gradviz_visitor`, written by the sidebar's own
  script), so every tab of one browser sends the same one: a first tab, which has no cookie
  yet, uses the identity it has just written. A cookie this server did not sign is ignored
  (a new identity is made), so identities cannot be chosen, only asked for afresh; and
  asking afresh (a private window, a script that drops its cookies) gains no turns, because
  they stay behind the same address.
- ADDRESS: the client's, as the proxies in front of the server saw it. Behind a proxy (a
  public host: GRADVIZ_PROXY_HOPS, default 1 in public mode, 0 locally) it is the entry
  that many places from the right of X-Forwarded-For: each trusted proxy appends the
  address that connected to it, and everything left of those entries is whatever the
  client sent, so it is never read. Without proxies it is the connection's own address.
  IPv6 addresses count by their /64 (one host usually holds a whole /64). A classroom behind
  one address shares the turns of one address, but each student keeps their own budget and
  their own program in flight; set GRADVIZ_PROXY_HOPS to the number of proxies the host
  really has: too few reads a proxy's address (every visitor then shares one address, and
  turns go by identity, as they would without addresses), too many reads what a client wrote.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import math
import re
import secrets

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gradviz.services.programs import waiting_told
from gradviz.util import settings

COOKIE = "gradviz_visitor"
COOKIE_DAYS = 30
_SECRET = secrets.token_bytes(32)  # this server's; identities signed by another are refused
_MINTED = "gradviz_visitor_minted"  # session_state: the identity this tab made
_SIGNED = re.compile(r"[0-9a-f]{32}\.[0-9a-f]{64}")


def _signature(identity: str) -> str:
    return hmac.new(_SECRET, identity.encode("ascii"), hashlib.sha256).hexdigest()


def signed(identity: str) -> str:
    """The cookie's value for `identity`: the identity and this server's signature of it."""
    return f"{identity}.{_signature(identity)}"


def identity_in(cookie: str | None) -> str | None:
    """The identity a cookie carries, if this server signed it; None otherwise."""
    if not isinstance(cookie, str) or not _SIGNED.fullmatch(cookie):
        return None
    identity, _, signature = cookie.partition(".")
    return identity if hmac.compare_digest(signature, _signature(identity)) else None


def proxy_hops() -> int:
    """How many proxies in front of the server append to X-Forwarded-For (trusted)."""
    return settings.integer("GRADVIZ_PROXY_HOPS")


def client_address(forwarded: list[str], connected: str | None, hops: int) -> str:
    """The client's address: the entry `hops` from the right of the X-Forwarded-For headers
    (`forwarded`, in order), or the connection's own (`connected`) without proxies; IPv6 by
    its /64. "local" for a visitor on this machine, "unknown" for what is not an address."""
    entries = [e.strip() for header in forwarded for e in header.split(",") if e.strip()]
    text = entries[-hops] if 0 < hops <= len(entries) else connected
    if text is None:
        return "local"
    try:
        address = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return "unknown"
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


def _identity() -> tuple[str, bool]:
    """This browser's identity, and whether this tab made it (its cookie is still to write)."""
    known = identity_in(st.context.cookies.get(COOKIE))
    if known is not None:
        return known, False
    if _MINTED not in st.session_state:
        st.session_state[_MINTED] = secrets.token_hex(16)
    return st.session_state[_MINTED], True


def visitor_key() -> str:
    """ "ADDRESS|visitor ID" for the running page; "" outside one (tests, scripts)."""
    if get_script_run_ctx() is None:
        return ""
    headers = st.context.headers
    address = client_address(
        headers.get_all("X-Forwarded-For"), st.context.ip_address, proxy_hops()
    )
    return f"{address}|visitor {_identity()[0]}"


def cookie_script() -> str:
    """The script that keeps this tab's identity in the browser's cookie, for its other tabs
    ("" when the cookie already holds it). Only hex digits and a dot of the server's own."""
    if get_script_run_ctx() is None:
        return ""
    identity, made = _identity()
    if not made:
        return ""
    age = COOKIE_DAYS * 24 * 3600
    return (
        "<script>document.cookie = "
        f'"{COOKIE}={signed(identity)}; Path=/; Max-Age={age}; SameSite=Lax"'
        ' + (location.protocol === "https:" ? "; Secure" : "");</script>'
    )


def waiting_text(ahead: int, seconds: float) -> str:
    """What a page says while a visitor's program waits for its turn."""
    wait = f"about {max(1, math.ceil(seconds))} s"
    if ahead == 0:
        return f"Waiting for a free worker: yours is next in line ({wait})."
    programs = "program is" if ahead == 1 else "programs are"
    return f"Waiting for your turn: {ahead} {programs} ahead of yours ({wait})."


@contextlib.contextmanager
def wait_shown():
    """Around a run: while it waits for its turn, a line on the page says the place in line
    and the seconds left; gone when the run starts."""
    slot = st.empty()
    icon = ":material/hourglass_top:"
    try:
        with waiting_told(
            lambda ahead, seconds: slot.info(waiting_text(ahead, seconds), icon=icon)
        ):
            yield
    finally:
        slot.empty()
