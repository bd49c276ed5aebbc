"""This session's training runs side by side: a small table (preset, device, seconds, images/s,
accuracy) and their curves overlaid, so the tutorial and fast presets, or one preset on two
devices, can be compared after each run has replaced the last one's results.

The rows are plain numbers kept in session state (at most MAX_RUNS runs, each curve thinned to
MAX_POINTS readings), drawn as Markdown and Vega-Lite specs: no pandas in the server.
"""

from __future__ import annotations

import streamlit as st

from gradviz.training.events import TrainingSummary
from gradviz.ui import charts
from gradviz.ui.common import table

RUNS_KEY = "training_runs"  # this session's finished runs, oldest first
MAX_RUNS = 8
MAX_POINTS = 120  # readings kept per curve
X_SEEN = "images seen"


def thin(rows: list[dict], most: int = MAX_POINTS) -> list[dict]:
    """At most `most` rows, evenly spread, always keeping the first and the last."""
    if len(rows) <= most:
        return list(rows)
    step = (len(rows) - 1) / (most - 1)
    return [rows[round(i * step)] for i in range(most)]


def run_label(number: int, result: TrainingSummary) -> str:
    return f"run {number}: {result.preset} on {result.device}"


def summary_row(number: int, result: TrainingSummary) -> dict:
    """The table's row for one run."""
    return {
        "run": number,
        "preset": result.preset,
        "device": result.device,
        "seconds": round(result.seconds, 1),
        "images/s": round(result.images_per_s),
        "test accuracy": f"{100 * result.accuracy:.1f}%",
        "epochs": round(result.epochs_done, 2),
        "ended": result.stopped or "all epochs",
    }


def keep(result: TrainingSummary, loss: list[dict], accuracy: list[dict]) -> None:
    """Add a finished run (its loss and accuracy curve rows) to this session's runs."""
    runs = st.session_state.setdefault(RUNS_KEY, [])
    number = runs[-1]["row"]["run"] + 1 if runs else 1
    label = run_label(number, result)
    runs.append(
        {
            "row": summary_row(number, result),
            "loss": [{**r, "run": label} for r in thin(loss)],
            "accuracy": [
                {**r, "run": label} for r in thin(accuracy) if r["series"] == "test accuracy"
            ],
        }
    )
    del runs[:-MAX_RUNS]


def overlay(runs: list[dict], curve: str) -> list[dict]:
    """The rows of one curve ("loss" or "accuracy") of every run, for one chart."""
    return [r for run in runs for r in run[curve]]


def section(cuda_off: str | None) -> None:
    """The table and the overlaid curves, once there are two runs to compare."""
    runs = st.session_state.get(RUNS_KEY, [])
    if len(runs) < 2:
        if runs:
            st.caption(
                "Train again (another preset, device or batch size) to compare the runs side by "
                "side here." + (f" CUDA is off here: {cuda_off}." if cuda_off else "")
            )
        return
    st.subheader("This session's runs")
    table([run["row"] for run in runs])
    left, right = st.columns(2)
    for box, curve, y in ((left, "loss", "loss"), (right, "accuracy", "test accuracy")):
        rows = overlay(runs, curve)
        if rows:
            spec = charts.line_chart(
                rows,
                X_SEEN,
                "loss" if curve == "loss" else "accuracy",
                color="run",
                y_title=y,
                points=len(rows) < 60,
                y_zero=False,
                height=240,
            )
            box.vega_lite_chart(spec=spec, width="stretch")
