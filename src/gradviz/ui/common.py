"""Pieces every page shares: the sidebar and how errors are shown."""

from __future__ import annotations

import platform

import streamlit as st

from gradviz import __version__


@st.cache_resource
def _environment() -> dict[str, str]:
    import torch

    return {
        "gradviz": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cuda": "available" if torch.cuda.is_available() else "not available",
    }


def sidebar() -> None:
    """Shared sidebar: versions and what the host can do."""
    env = _environment()
    with st.sidebar:
        st.caption(
            f"gradviz {env['gradviz']} · torch {env['torch']} · Python {env['python']} · "
            f"CUDA {env['cuda']}"
        )


def show_unexpected(exc: BaseException, what: str) -> None:
    """Last line of defence on a page: a plain message, never a traceback."""
    st.error(
        f"Something went wrong while {what}: {type(exc).__name__}: {exc}. "
        "Your input is kept; try again or change it. If it keeps happening, please report it."
    )
