"""Who is asking: one key per visitor, for the worker pool's turns and limits (sandbox.Pool).

All tabs of one person should share a key, or three tabs would get three turns. Streamlit
knows the client's address (st.context.ip_address): a public address is used as the key.
An address that is not public (localhost, a private network, a reverse proxy's own address)
would put every visitor under one key, so this session's id is used instead.
"""

from __future__ import annotations

import ipaddress

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx


def visitor_key() -> str:
    """The key: "ip ADDRESS" for a public client address, else "session ID"; "" outside a page."""
    try:
        address = st.context.ip_address
        if address and ipaddress.ip_address(address).is_global:
            return f"ip {address}"
    except (ValueError, RuntimeError, AttributeError):
        pass  # no address, or not one Python can read: fall back on the session
    ctx = get_script_run_ctx()
    return "" if ctx is None else f"session {ctx.session_id}"
