"""The Training page's uploaded weights: handed to a worker that evaluates them on the chosen
data's test images (or refused), their bytes dropped from the server on the run that sees
them.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from gradviz.services.jobs import error_kind, start_in_line
from gradviz.training.events import WeightsEvaluation
from gradviz.training.settings import EVALUATE_SECONDS, MEGABYTE, evaluate_limits, max_upload_bytes
from gradviz.ui.common import png
from gradviz.ui.training import uploads
from gradviz.ui.training.data import Source
from gradviz.ui.training.live import QUEUE_S
from gradviz.util.busy import Busy
from gradviz.util.mdtext import escape, message
from gradviz.util.resources import available_cpus

UPLOAD_KEY = "training_upload_result"  # (file name, outcome) of the last upload, drawn on reruns
UPLOAD_WIDGET = "training_upload"  # the uploader's key, with UPLOAD_ROUND after it
UPLOAD_ROUND = "training_upload_round"  # one more per upload taken: the uploader starts empty


def evaluate_upload(source: Source | None) -> None:
    """Weights uploaded here are handed to a worker (or refused) on the run that sees them,
    and their bytes dropped from the server then: the page is drawn again with an empty
    uploader (a new key) and the evaluation, which stays shown until the next upload."""
    st.subheader("Evaluate uploaded weights")
    cap = max_upload_bytes()
    upload = st.file_uploader(
        "A state_dict saved by this page or the CLI (.pt)",
        type=["pt", "pth", "bin"],
        key=f"{UPLOAD_WIDGET}_{st.session_state.get(UPLOAD_ROUND, 0)}",
        max_upload_size=cap // MEGABYTE,
        disabled=source is None,
        help="Choose data above first: the weights are evaluated on its test images."
        if source is None
        else None,
    )
    if upload is not None:
        _take(upload, source, cap)
        st.rerun()  # drawn again with an empty uploader, the outcome below it
    done = st.session_state.get(UPLOAD_KEY)
    if done is None:
        return
    name, (status, value) = done
    if status == "refused":
        st.error(f"Weights refused: {message(value)}")
    elif status != "ok":
        st.error(f"Could not evaluate the weights: {message(value)}")
    else:
        _show_evaluation(value, name)


def _take(upload: UploadedFile, source: Source | None, cap: int) -> None:
    """Hand an upload to a worker, or refuse it; either way its bytes leave the server's
    upload store now, and the next run draws an empty uploader."""
    name = upload.name
    try:
        if upload.size > cap:
            outcome = (
                "refused",
                f"the file is {upload.size / MEGABYTE:.1f} MB; weights for these networks are "
                f"far smaller (limit {cap // MEGABYTE} MB).",
            )
        elif source is None:
            outcome = ("failed", "choose data above first, then upload the weights again.")
        else:
            outcome = _evaluate_in_worker(source, upload)
    finally:
        uploads.forget(upload)
        st.session_state[UPLOAD_ROUND] = st.session_state.get(UPLOAD_ROUND, 0) + 1
    st.session_state[UPLOAD_KEY] = (name, outcome)


def _evaluate_in_worker(
    source: Source, upload: UploadedFile
) -> tuple[str, WeightsEvaluation | str]:
    """("ok", the evaluation), or ("refused" | "data" | "failed", why). The upload's bytes
    leave the server's upload store before the job waits for its slot; the job hands its
    copy to the worker and keeps none."""
    with st.spinner("Evaluating the weights in a worker process..."):
        limits = evaluate_limits(available_cpus())
        args = (source.spec(), upload.getvalue())
        uploads.forget(upload)
        try:
            job = start_in_line("evaluate_weights", args, limits, "weights", QUEUE_S)
        except Busy as exc:
            return "failed", str(exc)
        finally:
            del args
        job.wait(EVALUATE_SECONDS + 30)
    if job.status == "done":
        return "ok", job.result
    if error_kind(job) == "checkpoint":
        return "refused", job.message
    if error_kind(job) == "data":
        return "data", job.message
    return "failed", job.describe_failure("evaluating the weights")


def _show_evaluation(value: WeightsEvaluation, name: str) -> None:
    st.success(
        f"{value.arch} weights: {100 * value.accuracy:.1f}% on {value.test_images:,} "
        f"test images ({escape(value.data)}); the file was {escape(name)}."
    )
    left, right = st.columns([2, 3])
    left.code("\n".join(value.report), language=None, wrap_lines=True)
    with right:
        png(value.confusion_png, "confusion matrix of the uploaded weights")
