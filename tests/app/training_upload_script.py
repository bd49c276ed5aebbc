"""The training page, and what Streamlit's upload store holds for this session: the most any
run found before the page's code ran (the upload arrived), and what it holds after a run."""

import sys
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

_SRC = Path(__file__).resolve().parents[2] / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from gradviz.ui.training import page  # noqa: E402


def _held() -> int:
    ctx = get_script_run_ctx()
    files = ctx.uploaded_file_mgr.file_storage.get(ctx.session_id, {})
    return sum(len(f.data) for f in files.values())


st.session_state["held_seen"] = max(st.session_state.get("held_seen", 0), _held())
page.page()
st.session_state["held_after_run"] = _held()
