"""Runs only the Speed page (`streamlit run tests/e2e/apps/speed_only.py`), for browser tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))

import streamlit as st  # noqa: E402

from gradviz.ui.speed import page  # noqa: E402

st.set_page_config(page_title="gradviz speed", layout="wide")
page.page()
