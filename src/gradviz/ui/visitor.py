"""Who is asking: one key per browser session, for the worker pool's turns and limits.

The pool (sandbox.Pool) gives each key one program in flight and, on a public host, a budget
of worker-seconds per minute; keys take turns. The key is the Streamlit session, not the
client's address: a classroom behind one address (a school's NAT, a reverse proxy) would
otherwise share one turn and one budget among thirty students.
"""

from __future__ import annotations

from streamlit.runtime.scriptrunner import get_script_run_ctx


def visitor_key() -> str:
    """ "session ID" for the running page; "" outside one (tests, scripts)."""
    ctx = get_script_run_ctx()
    return "" if ctx is None else f"session {ctx.session_id}"
