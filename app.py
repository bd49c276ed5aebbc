"""gradviz: Streamlit entry point. Routes to the pages in src/gradviz/ui/.

Run with `streamlit run app.py`. Each page is `page()` in its package's `page` module;
add a page by adding a line to PAGE_TABLE.
"""

import importlib
import sys
from pathlib import Path

# Let `streamlit run app.py` work from a plain checkout, before `pip install -e .`.
_SRC = Path(__file__).resolve().parent / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

import streamlit as st  # noqa: E402

from gradviz.ui.common import sidebar  # noqa: E402
from gradviz.ui.preload import preload_script  # noqa: E402
from gradviz.ui.training.uploads import budget_store, cap_server_uploads  # noqa: E402
from gradviz.util import first_page, hosting, settings  # noqa: E402
from gradviz.util.mdtext import escape  # noqa: E402


def lazy(module: str):
    """A page whose module is imported when the page is first opened, so the first
    visit does not wait for every page's imports (torchvision, benchmark tools, ...)."""

    def page() -> None:
        importlib.import_module(f"gradviz.ui.{module}.page").page()

    page.__name__ = module
    return page


# (page package in gradviz.ui, title, icon); the first is the landing page.
PAGE_TABLE = [
    ("autograd", "Autograd", ":material/account_tree:"),
    ("devices", "Devices", ":material/memory:"),
    ("speed", "Speed", ":material/speed:"),
    ("training", "CIFAR-10 training", ":material/model_training:"),
]
PAGES = [
    st.Page(lazy(module), title=title, icon=icon, url_path=module, default=i == 0)
    for i, (module, title, icon) in enumerate(PAGE_TABLE)
]


def check_settings() -> None:
    """A GRADVIZ_* variable set to a value its parser refuses stops every page with what is
    wrong (util.settings.problems), before any page or worker reads it."""
    wrong = settings.problems()
    if wrong:
        st.error(
            "This server's settings need fixing (environment variables, or root-level "
            "secrets on Community Cloud):\n\n" + "\n".join(f"- {escape(w)}" for w in wrong),
            icon=":material/settings:",
        )
        st.stop()


def settle_mode() -> None:
    """Public or local mode from where this server listens (hosting.settle_mode), before any
    worker starts; in local mode, refuse pages opened under another site's name (DNS
    rebinding). AppTest and bare runs send no Host header and keep GRADVIZ_PUBLIC as set."""
    host_header = st.context.headers.get("Host")
    if host_header is None:
        return
    why = hosting.settle_mode(st.get_option("server.address"))
    if settings.public_host():
        st.sidebar.caption(
            f"Public mode ({why}): visitors type no paths and jobs are capped. "
            "`make run` serves local mode on 127.0.0.1."
        )
    elif not hosting.host_allowed(host_header):
        st.error(
            f"This gradviz runs in local mode, which answers only pages opened as "
            f"http://localhost on this machine; this page was opened as "
            f"**{escape(host_header)}**. If that name is yours (a trusted proxy), add it to "
            "GRADVIZ_ALLOWED_HOSTS.",
            icon=":material/block:",
        )
        st.stop()


# The server's first run: background work (workers importing torch) waits until it is over.
first_page.hold()
try:
    st.set_page_config(page_title="gradviz", page_icon=":material/account_tree:", layout="wide")
    check_settings()
    settle_mode()
    cap_server_uploads()  # the mode is known: the server's upload cap follows it
    budget_store()  # uploads all sessions hold count against the server's budget
    navigation = st.navigation(PAGES)
    # the landing page's viewer: the browser fetches its scripts while this run goes on
    sidebar(preload_script() if navigation is PAGES[0] else "")
    navigation.run()
finally:
    first_page.release()
