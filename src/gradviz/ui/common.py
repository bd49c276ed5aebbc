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


@st.cache_resource
def _devices() -> list:
    from gradviz.devices import list_devices

    return list_devices()


def sidebar() -> None:
    """Shared sidebar: versions and what the host can do."""
    env = _environment()
    with st.sidebar:
        st.caption(
            f"gradviz {env['gradviz']} · torch {env['torch']} · Python {env['python']} · "
            f"CUDA {env['cuda']}"
        )
        device_status(_devices())


def device_status(found: list) -> None:
    """CPU, each GPU (name, memory), MPS; a simulated CUDA device clearly labelled."""
    lines = []
    for d in found:
        memory = f", {d.total_memory / 2**30:.1f} GiB" if d.total_memory else ""
        if d.simulated:
            lines.append(f"- :orange[**{d.label}**]")
        else:
            lines.append(f"- **{d.label}**: {d.name}{memory}")
    st.markdown("**Devices**\n" + "\n".join(lines))
    if any(d.simulated for d in found):
        st.caption(
            "No CUDA GPU on this host: CUDA is **simulated** (values on the CPU, device "
            "rules from PyTorch), so every device lesson still works."
        )


def show_unexpected(exc: BaseException, what: str) -> None:
    """Last line of defence on a page: a plain message, never a traceback."""
    st.error(
        f"Something went wrong while {what}: {type(exc).__name__}: {exc}. "
        "Your input is kept; try again or change it. If it keeps happening, please report it."
    )
