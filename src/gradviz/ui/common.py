"""Pieces every page shares: the sidebar and how errors are shown."""

from __future__ import annotations

import base64
import platform

import streamlit as st
from streamlit.runtime import Runtime, exists
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gradviz.services import host
from gradviz.ui.visitor import cookie_script
from gradviz.util import mdtable
from gradviz.util.mdtext import escape, html_text
from gradviz.util.version import VERSION

# persist_state of a page's keyed widgets: their values survive a visit to another page
# (by default Streamlit forgets a widget's value once a run does not draw it).
KEEP = "session"


# Streamlit folds the sidebar by itself only below 768 px; between that and this width an
# open sidebar squeezes the page (buttons read "Run back…"), so it starts folded there too,
# once per browser tab: a visitor who opens it again keeps it open.
NARROW_PX = 1100
FOLD_WHEN_NARROW = (
    """<script>(() => {
  const key = "gradviz-sidebar-folded";
  if (window.innerWidth > NARROW_PX || sessionStorage.getItem(key)) return;
  let tries = 0;
  const fold = () => {
    const bar = document.querySelector('[data-testid="stSidebar"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && bar.dataset.collapsed === "true") { sessionStorage.setItem(key, "1"); return; }
    if (bar && button) { button.click(); sessionStorage.setItem(key, "1"); return; }
    if (++tries < 100) setTimeout(fold, 100);
  };
  fold();
})();</script>"""
).replace("NARROW_PX", str(NARROW_PX))


@st.fragment(run_every=1.0)
def _rerun_when_facts_known() -> None:
    """Until the host's facts arrive (a worker's first start), look every second; then run
    the page again, so what needs them (devices, the sidebar's status) appears by itself."""
    if host.facts_settled():  # a failure is said by the page's next run
        st.rerun()


def sidebar(scripts: str = "") -> None:
    """Shared sidebar: versions and what the host can do (asked of a worker once: the server
    itself never imports torch); folded at first on a narrow window. `scripts`: more of
    gradviz's own script for the page (gradviz.ui.preload), run with the folding one."""
    python = platform.python_version()
    with st.sidebar:
        # gradviz's own scripts, no visitor text in them (the cookie: the server's hex)
        st.html(FOLD_WHEN_NARROW + scripts + cookie_script(), unsafe_allow_javascript=True)
        try:
            facts = host.facts_now()
        except Exception as exc:  # noqa: BLE001 - the page still works; say what failed
            st.caption(f"gradviz {VERSION} · torch {host.torch_version()} · Python {python}")
            st.warning(f"Could not ask a worker process what this host offers: {escape(exc)}")
            return
        if facts is None:  # a worker is starting (torch's import): the page goes on meanwhile
            st.caption(f"gradviz {VERSION} · torch {host.torch_version()} · Python {python}")
            st.caption("Asking a worker process what this host offers…")
            _rerun_when_facts_known()
            return
        cuda = "available" if facts.cuda_available else "not available"
        st.caption(
            f"gradviz {VERSION} · torch {facts.torch_version} · Python {python} · CUDA {cuda}"
        )
        device_status(list(facts.devices))


def device_status(found: list) -> None:
    """CPU, each GPU (name, memory), MPS; a simulated CUDA device clearly labelled."""
    lines = []
    for d in found:
        memory = f", {d.total_memory / 2**30:.1f} GiB" if d.total_memory else ""
        if d.simulated:
            lines.append(f"- :orange[**{d.label}**]")
        else:
            lines.append(f"- **{d.label}**: {escape(d.name)}{memory}")
    st.markdown("**Devices**\n" + "\n".join(lines))
    if any(d.simulated for d in found):
        st.caption(
            "No CUDA GPU on this host: CUDA is **simulated** (values on the CPU, device "
            "rules from PyTorch), so every device lesson still works."
        )


def show_unexpected(exc: BaseException, what: str) -> None:
    """Last line of defence on a page: a plain message, never a traceback."""
    st.error(
        f"Something went wrong while {what}: {type(exc).__name__}: {escape(exc)}. "
        "Your input is kept; try again or change it. If it keeps happening, please report it."
    )


SCROLL_AFTER_ROWS = 15


def table(
    rows: list[dict], columns: list[str] | None = None, html_class: str | None = None
) -> None:
    """A table of plain rows, drawn as Markdown (gradviz.util.mdtable: no pandas or pyarrow in the
    server); more than SCROLL_AFTER_ROWS rows scroll inside a box. `html_class`: the class of
    a box around it, for the page's own CSS (gradviz's own name, never a program's)."""
    if not rows:
        return
    text = mdtable.to_markdown(rows, columns)
    if html_class is not None:
        text = f'<div class="{html_class}">\n\n{text}\n\n</div>'
    if len(rows) > SCROLL_AFTER_ROWS:
        with st.container(height=36 * (SCROLL_AFTER_ROWS + 1)):
            st.markdown(text, unsafe_allow_html=html_class is not None)
    else:
        st.markdown(text, unsafe_allow_html=html_class is not None)


def png(data: bytes, alt: str) -> None:
    """A PNG drawn by a worker, shown as an <img> (st.image would import numpy in the server)."""
    encoded = base64.b64encode(data).decode("ascii")
    st.markdown(
        f'<img alt="{html_text(alt)}" style="max-width:100%" '
        f'src="data:image/png;base64,{encoded}">',
        unsafe_allow_html=True,
    )


def tab_open() -> bool:
    """Whether this session's browser tab is still connected (True outside a Streamlit server)."""
    ctx = get_script_run_ctx()
    if ctx is None or not exists():
        return True
    return Runtime.instance().is_active_session(ctx.session_id)
