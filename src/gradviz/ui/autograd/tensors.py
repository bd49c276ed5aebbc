"""The Autograd page's Tensors tab: every tensor the program named with its summary (shape,
dtype, device, min, max, mean, norm), and one tensor's values in full on request, a matrix
as a grid, saying so when the result carries only its first values."""

from __future__ import annotations

import math

import streamlit as st

from gradviz.graph.model import (
    MAX_RESULT_VALUES,
    MAX_STORED_ELEMENTS,
    MAX_TENSORS_WITH_VALUES,
    TensorInfo,
)
from gradviz.program.results.trace import Trace
from gradviz.ui import device_panel
from gradviz.ui.autograd import quiz
from gradviz.ui.common import table
from gradviz.util import mdtable
from gradviz.util.grid import grids

GRID_STYLE = "white-space:nowrap;overflow-x:auto;max-width:100%"


def _row(t: TensorInfo) -> dict:
    stats = t.stats or {}
    return {
        "name": t.label,
        "line": t.line,
        "shape": str(tuple(t.shape)),
        "dtype": t.dtype,
        "device": t.device,
        "requires_grad": t.requires_grad,
        "is_leaf": t.is_leaf,
        "grad_fn": t.grad_fn or "",
        "min": stats.get("min"),
        "max": stats.get("max"),
        "mean": stats.get("mean"),
        "norm": stats.get("norm"),
        "value": t.preview,
        "grad": t.grad_preview or "",
        "note": t.note or "",
    }


def tensors_tab(trace: Trace) -> None:
    if not trace.tensors:
        st.info("The program has not named any tensor yet.")
        return
    table([_row(t) for t in trace.tensors])
    _one_tensor(trace)
    if trace.updates:
        with st.expander("Optimizer steps: each parameter before and after `step()`"):
            table(
                [
                    {
                        "line": u.line,
                        "optimizer": u.optimizer,
                        "parameter": u.name,
                        "before": u.before,
                        "after": u.after,
                    }
                    for u in trace.updates
                ]
            )
    device_panel.memory(trace)


def _one_tensor(trace: Trace) -> None:
    """All of one tensor's values (and its gradient's), as grids."""
    by_label = {t.label: t for t in trace.tensors}
    label = st.selectbox(
        "Show all values of",
        list(by_label),
        index=None,
        key="tensor_values",
        placeholder="Pick a tensor…",
        help="Its values in full, a matrix as rows and columns.",
    )
    t = by_label.get(label)
    if t is None:
        return
    _values("Value", t.value, t.shape, t.preview)
    if t.grad_preview == quiz.HIDDEN:
        st.caption("Gradient (.grad): hidden until the quiz's gradients are revealed.")
    elif t.grad is not None or t.grad_preview:
        _values("Gradient (.grad)", t.grad, t.shape, t.grad_preview or "")


def _values(title: str, value, shape: list[int], preview: str) -> None:
    numel = math.prod(shape)
    if value is None and numel <= MAX_STORED_ELEMENTS:
        st.info(
            f"**{title}**: left out of this result, which carries the values of at most "
            f"{MAX_TENSORS_WITH_VALUES:,} tensors ({MAX_RESULT_VALUES:,} numbers in all); "
            f"only its first values came back: {preview}.",
            icon=":material/info:",
        )
        return
    if value is None:
        st.info(
            f"**{title}**: this tensor has {numel:,} values; a result carries a tensor's "
            f"values in full only up to {MAX_STORED_ELEMENTS:,} of them (and "
            f"{MAX_RESULT_VALUES:,} over all tensors), so only its first values came back: "
            f"{preview}. Its min, max, mean and norm above are over all {numel:,}.",
            icon=":material/info:",
        )
        return
    st.markdown(f"**{title}** ({numel:,} values)")
    for heading, rows in grids(value):
        if heading != "values":
            st.markdown(f"`{heading}`")
        # one line per row: numbers never wrap (a minus sign is a break point); a wide grid
        # scrolls sideways in its own box instead of running off the page
        text = f'<div style="{GRID_STYLE}">\n\n{mdtable.to_markdown(rows)}\n\n</div>'
        if len(rows) > 15:
            with st.container(height=36 * 16):
                st.markdown(text, unsafe_allow_html=True)
        else:
            st.markdown(text, unsafe_allow_html=True)
