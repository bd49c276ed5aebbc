"""Open one of the autograd page's tabs in an AppTest, as a click on it does: the tabs
beside the Graph tab are made only while open (gradviz.ui.autograd.tabs.TABS)."""

from streamlit.testing.v1 import AppTest

from gradviz.ui.autograd.tabs import TAB_KEY, TABS


def open_tab(at: AppTest, label: str) -> AppTest:
    assert label in TABS, label
    at.session_state[TAB_KEY] = label
    at.run()
    assert not at.exception, at.exception
    return at
