"""The Autograd page's Tensors tab: every tensor the program named in one short row (shape,
device, grad_fn, its value and gradient cut short), their dtype, line, min, max, mean, norm
and notes in a folded table, and one tensor's values in full on request, a matrix as a grid,
saying so when the result carries only its first values."""

from __future__ import annotations

import math
import re

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


# The table fits the graph's column on a 1024 px screen: one short line a tensor, smaller
# type; the short columns never wrap, a value wraps at its spaces and a long one is cut (its
# whole value is under "Show all values of"). The dtype, line, summary numbers and notes are
# in their own table below.
TABLE_CLASS = "gv-tensors"
TABLE_CSS = (
    "<style>"
    ".gv-tensors table{width:100%;font-size:0.8rem;line-height:1.3}"
    ".gv-tensors th,.gv-tensors td{padding:0.2rem 0.35rem}"
    ".gv-tensors th,.gv-tensors td{white-space:nowrap}"
    ".gv-tensors td:nth-last-child(-n+3){white-space:normal;overflow-wrap:anywhere}"
    "</style>"
)
PREVIEW_CHARS = 40


NUMBER = re.compile(r"-?(?:\d[\d.]*(?:e[+-]?\d+)?|inf|nan)|True|False")


def _short(text: str) -> str:
    """A value in one short line: whole up to three numbers, else its first two and "…"."""
    numbers = list(NUMBER.finditer(text))
    if len(numbers) > 3:
        text = text[: numbers[1].end()] + ", …"
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1].rstrip() + "…"


def _row(t: TensorInfo) -> dict:
    return {
        "name": t.label,
        "shape": "×".join(map(str, t.shape)) or "scalar",
        "device": t.device,
        "requires_grad": "✓" if t.requires_grad else "",
        "grad_fn": t.grad_fn or ("leaf" if t.is_leaf and t.requires_grad else ""),
        "value": _short(t.preview),
        "grad": _short(t.grad_preview or ""),
    }


def _summary(t: TensorInfo) -> dict:
    stats = t.stats or {}
    return {
        "name": t.label,
        "line": t.line,
        "dtype": t.dtype,
        "min": stats.get("min"),
        "max": stats.get("max"),
        "mean": stats.get("mean"),
        "norm": stats.get("norm"),
        "note": t.note or "",
    }


def tensors_tab(trace: Trace) -> None:
    if not trace.tensors:
        st.info("The program has not named any tensor yet.")
        return
    st.html(TABLE_CSS)
    table([_row(t) for t in trace.tensors], html_class=TABLE_CLASS)
    _one_tensor(trace)
    with st.expander("Each tensor's line, min, max, mean, norm and notes"):
        table([_summary(t) for t in trace.tensors], html_class=TABLE_CLASS)
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
                ],
                html_class=TABLE_CLASS,
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
