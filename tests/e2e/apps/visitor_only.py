"""Shows the visitor key and writes its cookie as the sidebar does
(`streamlit run tests/e2e/apps/visitor_only.py`), for browser tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))

import streamlit as st  # noqa: E402

from gradviz.ui.visitor import cookie_script, visitor_key  # noqa: E402

st.html("<span></span>" + cookie_script(), unsafe_allow_javascript=True)
st.code(visitor_key(), language=None)
