"""The Training page's results: accuracy, time, speed, curves, per-class accuracy, the confusion
matrix, test images and the weights to download.
"""

from __future__ import annotations

import streamlit as st

from gradviz.training.events import TrainingSummary
from gradviz.ui.common import png
from gradviz.ui.training.curves import chart, curve_rows
from gradviz.util.mdtext import escape


def show_result(result: TrainingSummary) -> None:
    st.subheader("Results")
    if result.stopped:
        st.warning(
            f"Training ended early ({escape(result.stopped)}) after {result.epochs_done:.2f} epochs; "
            "these are the results of what it had learned."
        )
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(
        "Test accuracy",
        f"{100 * result.accuracy:.1f}%",
        help="Each test image scored together with its mirror image (the fast networks learn "
        "from flipped images too)"
        if result.flip_tta
        else "Each test image scored once, as the tutorial does",
    )
    m2.metric("Training time", f"{result.seconds:.1f} s")
    m3.metric("Images/s", f"{result.images_per_s:,.0f}")
    m4.metric("Device", result.device)
    st.caption(escape(f"{result.preset} preset, {result.arch} network, {result.data}."))
    loss, acc = curve_rows(result.history)
    if loss:
        left, right = st.columns(2)
        chart(left, loss, "loss")
        chart(right, acc, "accuracy", "series")
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Per-class accuracy** (as the tutorial prints it)")
        st.code("\n".join(result.report), language=None, wrap_lines=True)
    with right:
        st.markdown("**Confusion matrix**")
        png(result.confusion_png, "confusion matrix of the test images")
    st.markdown("**Test images: predicted and true labels**")
    png(result.grid_png, "test images with predicted and true labels")
    st.download_button(
        "Download weights (state_dict)",
        data=result.weights,
        file_name=f"gradviz-{result.arch}.pt",
        mime="application/octet-stream",
        key="training_download",
    )
