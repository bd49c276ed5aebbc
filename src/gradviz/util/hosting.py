"""How this server is hosted: public (anyone on the internet: smaller caps, no visitor
writes) or local (one person on their own machine, loopback only), and which Host names a
local page answers. The variables are read through gradviz.util.settings."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, MutableMapping

from gradviz.util import settings

# Local mode (visitors may type folders, train on any folder, long jobs) is for one person on
# their own machine: the server must listen on loopback only.
TRUST_NETWORK = "GRADVIZ_TRUST_NETWORK"  # 1: local mode even when reachable from the network


def is_loopback(address: str | None) -> bool:
    """Whether a listening address or Host name reaches this machine only."""
    if not address:
        return False  # unset: Streamlit listens on every interface
    name = address.strip().strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def settle_mode(address: str | None, env: MutableMapping[str, str] | None = None) -> str:
    """Decide public or local mode for a server listening on `address`, and record it in
    GRADVIZ_PUBLIC (which worker processes inherit). Returns why, in a few words.

    GRADVIZ_PUBLIC=1 is always public. Otherwise local mode needs a loopback address, or
    GRADVIZ_PUBLIC=0 together with GRADVIZ_TRUST_NETWORK=1: a server that others can reach
    (Community Cloud, `streamlit run` on a shared machine) is public by default, so a
    deployment that forgets GRADVIZ_PUBLIC does not hand the internet local mode."""
    env = os.environ if env is None else env
    asked = settings.get("GRADVIZ_PUBLIC", env)
    if asked is True:
        return "GRADVIZ_PUBLIC=1"
    if is_loopback(address):
        env["GRADVIZ_PUBLIC"] = "0"
        return f"listening on {address} only"
    if asked is False and settings.flag(TRUST_NETWORK, env):
        return f"GRADVIZ_PUBLIC=0 and {TRUST_NETWORK}=1"
    env["GRADVIZ_PUBLIC"] = "1"
    return "reachable from other machines"


def host_allowed(host_header: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether a request's Host header names this machine as a local page may be opened.

    A page from another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own
    name as Host: local mode answers only loopback names and GRADVIZ_ALLOWED_HOSTS."""
    if not host_header:
        return False
    name = host_header.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    allowed = {h.lower() for h in settings.items("GRADVIZ_ALLOWED_HOSTS", env)}
    return is_loopback(name) or name in allowed
