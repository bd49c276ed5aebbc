"""gradviz: Streamlit entry point. Routes to the pages in src/gradviz/ui/.

Run with `streamlit run app.py`. Each page is a function in its own module;
add a page by adding a line to PAGES.
"""

import sys
from pathlib import Path

# Let `streamlit run app.py` work from a plain checkout, before `pip install -e .`.
_SRC = Path(__file__).resolve().parent / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

import streamlit as st  # noqa: E402

from gradviz.ui import autograd, devices, speed, training  # noqa: E402
from gradviz.ui.common import sidebar  # noqa: E402

PAGES = [
    st.Page(
        autograd.page,
        title="Autograd",
        icon=":material/account_tree:",
        url_path="autograd",
        default=True,
    ),
    st.Page(devices.page, title="Devices", icon=":material/memory:", url_path="devices"),
    st.Page(speed.page, title="Speed", icon=":material/speed:", url_path="speed"),
    st.Page(
        training.page,
        title="CIFAR-10 training",
        icon=":material/model_training:",
        url_path="training",
    ),
]

st.set_page_config(page_title="gradviz", page_icon=":material/account_tree:", layout="wide")
navigation = st.navigation(PAGES)
sidebar()
navigation.run()
