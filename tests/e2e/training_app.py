"""Only the training page, for the real-browser test; settings come from the environment."""

import os
import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parents[2] / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

import streamlit as st  # noqa: E402

from gradviz.ui.training import page  # noqa: E402

st.set_page_config(page_title="gradviz training", layout="wide")
if "training_folder" not in st.session_state:
    st.session_state["training_folder"] = os.environ.get("GRADVIZ_E2E_FOLDER", "")
    st.session_state["training_preset"] = os.environ.get("GRADVIZ_E2E_PRESET", "tutorial")
    st.session_state["training_device"] = "cpu"
page.page()
